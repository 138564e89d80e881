"""The operation families as runtime-checkable Protocols.

Every family has the same shape:

    plan(desc, dtypes, shapes, *, strides=None, conj=None) -> Plan   (cached by key)
    execute(plan, inputs, out, **params) -> out
    has_<family>_support(desc, dtypes=None) -> bool                  (honest: True only
                                                                       if plan would work)

``inputs`` and ``out`` are backend arrays (numpy or cupy), possibly strided views;
``out`` is a tuple for multi-output plans (Topk). ``conj`` gives one flag per input: a
flagged complex input is read conjugated (folded into the kernel or GEMM, never a pass
of its own). Scaled families (SemiringCore, SemiringFastPath) take ``alpha`` and
``beta`` and compute ``out = alpha * op(inputs) + beta * out``; beta == 0 never reads out.

A backend object implements all of them (``isinstance(backend, ScalarPrims)`` holds).
Each descriptor class names its family in its class statement (``family="scalar"``,
checked against ``ALL_FAMILIES``, whose order is ``descriptors.FAMILIES``); the classes
of a family live in ``hipfer/prims/descriptors/<family>.py``, collected in
``descriptors.FAMILY_OF``.
"""
from __future__ import annotations

from typing import Any, Optional, Protocol, Sequence, runtime_checkable


class _Family(Protocol):
    def plan(self, desc: Any, dtypes: Sequence[Any], shapes: Sequence[tuple], *,
             strides: Optional[Sequence[tuple]] = None,
             conj: Optional[Sequence[bool]] = None) -> Any: ...

    def execute(self, plan: Any, inputs: Sequence[Any], out: Any, **params: Any) -> Any: ...


@runtime_checkable
class SemiringCore(_Family, Protocol):
    """BatchedGemm, ReduceAdd, Trace, AntiTrace, AntiDiag, MakeContiguous (scaled)."""
    def has_semiring_core_support(self, desc: Any, dtypes: Any = None) -> bool: ...


@runtime_checkable
class SemiringFastPath(_Family, Protocol):
    """Contract (a library contraction: hipTENSOR / cuTENSOR, or NumPy's einsum on the CPU)
    and ElementwiseBinary(ADD/MUL) (scaled)."""
    def has_fast_path_support(self, desc: Any, dtypes: Any = None) -> bool: ...


@runtime_checkable
class ScalarPrims(_Family, Protocol):
    def has_scalar_support(self, desc: Any, dtypes: Any = None) -> bool: ...


@runtime_checkable
class AnalyticPrims(_Family, Protocol):
    def has_analytic_support(self, desc: Any, dtypes: Any = None) -> bool: ...


@runtime_checkable
class IndexingPrims(_Family, Protocol):
    """Out-of-range indices raise IndexError (after the launch on a GPU, never a fault)."""
    def has_indexing_support(self, desc: Any, dtypes: Any = None) -> bool: ...


@runtime_checkable
class MetadataPrims(_Family, Protocol):
    def has_metadata_support(self, desc: Any, dtypes: Any = None) -> bool: ...


@runtime_checkable
class MetadataCastPrims(_Family, Protocol):
    def has_metadata_cast_support(self, desc: Any, dtypes: Any = None) -> bool: ...


@runtime_checkable
class RngPrims(_Family, Protocol):
    """Counter-based: execute(plan, (), out, seed=..., offset=...) fills out with the
    numbers of counters offset, offset+1, ... -- the same on every backend."""
    def has_rng_support(self, desc: Any, dtypes: Any = None) -> bool: ...


@runtime_checkable
class SortPrims(_Family, Protocol):
    def has_sort_support(self, desc: Any, dtypes: Any = None) -> bool: ...


@runtime_checkable
class ComplexRealPrims(_Family, Protocol):
    def has_complex_real_support(self, desc: Any, dtypes: Any = None) -> bool: ...


@runtime_checkable
class ComplexScalePrims(_Family, Protocol):
    def has_complex_scale_support(self, desc: Any, dtypes: Any = None) -> bool: ...


@runtime_checkable
class FusedPrims(_Family, Protocol):
    """The device-backend op set (softmax, norms, Adam, dropout, RoPE, ...); its
    descriptors arrive with hipfer.nn."""
    def has_fused_support(self, desc: Any, dtypes: Any = None) -> bool: ...


ALL_FAMILIES = {
    "semiring_core": SemiringCore, "semiring_fast_path": SemiringFastPath,
    "scalar": ScalarPrims, "analytic": AnalyticPrims, "indexing": IndexingPrims,
    "metadata": MetadataPrims, "metadata_cast": MetadataCastPrims, "rng": RngPrims,
    "sort": SortPrims, "complex_real": ComplexRealPrims, "complex_scale": ComplexScalePrims,
    "fused": FusedPrims,
}

SUPPORT_METHOD = {
    "semiring_core": "has_semiring_core_support", "semiring_fast_path": "has_fast_path_support",
    "scalar": "has_scalar_support", "analytic": "has_analytic_support",
    "indexing": "has_indexing_support", "metadata": "has_metadata_support",
    "metadata_cast": "has_metadata_cast_support", "rng": "has_rng_support",
    "sort": "has_sort_support", "complex_real": "has_complex_real_support",
    "complex_scale": "has_complex_scale_support", "fused": "has_fused_support",
}


# ------------------------------------------- linalg and fft (appended: linalg/fft helper)
@runtime_checkable
class LinalgPrims(_Family, Protocol):
    """Factorize: decompositions and solves by the backend's solver library. A singular
    or non-positive-definite operand raises descriptors.LinAlgError (a ValueError)."""
    def has_linalg_support(self, desc: Any, dtypes: Any = None) -> bool: ...


@runtime_checkable
class FftPrims(_Family, Protocol):
    """Fft: C2C / R2C / C2R transforms by the backend's FFT library."""
    def has_fft_support(self, desc: Any, dtypes: Any = None) -> bool: ...


ALL_FAMILIES.update({"linalg": LinalgPrims, "fft": FftPrims})
SUPPORT_METHOD.update({"linalg": "has_linalg_support", "fft": "has_fft_support"})
