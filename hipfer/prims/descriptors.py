"""Descriptors: frozen, hashable descriptions of one operation, one class per op kind.

A descriptor says *what* to compute; a backend's ``plan(desc, dtypes, shapes)`` decides
*how* (and is cached by key), ``execute(plan, inputs, out)`` does it. Each descriptor
class belongs to exactly one family (``FAMILY_OF``).

Mode labels (``modes_*``) name axes as in einsum: any hashable labels, one per axis of
the operand. In reductions a label of ``modes_a`` missing from ``modes_c`` is reduced,
and ``modes_c`` may reorder the kept labels.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Hashable, Optional, Tuple

import numpy as np

from .optable import BinaryOp, ReduceOp, UnaryOp
from .semiring import Semiring

Modes = Tuple[Hashable, ...]


class GemmOp(Enum):
    """How BatchedGemm reads an operand: as stored, transposed, or conjugate-transposed."""
    N = "N"
    T = "T"
    C = "C"


class GenerateKind(Enum):
    IOTA = "iota"          # out[i] = start + i * step over the flattened (C-order) output
    CONSTANT = "constant"  # out[...] = value


# --------------------------------------------------------------- SemiringCore
@dataclass(frozen=True)
class BatchedGemm:
    """out[b] = alpha * op_a(a[b]) (x) op_b(b[b]) + beta * out[b] over the semiring.
    Operands are (batch, m, k) and (batch, k, n) after their op; batch may be 1 on one
    side (broadcast)."""
    semiring: Semiring = Semiring.STANDARD
    op_a: GemmOp = GemmOp.N
    op_b: GemmOp = GemmOp.N


@dataclass(frozen=True)
class ReduceAdd:
    """Sum over the labels of modes_a missing from modes_c; modes_a has no repeats."""
    modes_a: Modes
    modes_c: Modes


@dataclass(frozen=True)
class Trace:
    """Single-operand einsum: modes_a may repeat labels (the diagonal is taken), labels
    missing from modes_c are summed. E.g. ('i','i') -> () is the matrix trace."""
    modes_a: Modes
    modes_c: Modes


@dataclass(frozen=True)
class AntiTrace:
    """Adjoint of Trace: out (modes_c, may repeat labels) is a on the diagonals where
    repeated labels agree and 0 elsewhere; labels of modes_c missing from modes_a are
    broadcast (the adjoint of a sum). The output shape is given to plan."""
    modes_a: Modes
    modes_c: Modes


@dataclass(frozen=True)
class AntiDiag:
    """Adjoint of taking a diagonal: every label of modes_c is in modes_a; repeated
    labels of modes_c put a onto that diagonal, zeros elsewhere."""
    modes_a: Modes
    modes_c: Modes


@dataclass(frozen=True)
class MakeContiguous:
    """C-contiguous copy (the conjugation flag is resolved on the way)."""


# ----------------------------------------------------------- SemiringFastPath
@dataclass(frozen=True)
class Contract:
    """out(modes_c) = alpha * sum over the other labels of a(modes_a) b(modes_b) + beta * out."""
    modes_a: Modes
    modes_b: Modes
    modes_c: Modes
    semiring: Semiring = Semiring.STANDARD


@dataclass(frozen=True)
class ElementwiseBinary:
    """out = alpha * (a op b) + beta * out, op the semiring's ADD or MUL."""
    op: BinaryOp
    semiring: Semiring = Semiring.STANDARD


# ----------------------------------------------------------------- ScalarPrims
@dataclass(frozen=True)
class ScalarUnary:
    op: UnaryOp


@dataclass(frozen=True)
class ScalarBinary:
    op: BinaryOp


@dataclass(frozen=True)
class ScalarWhere:
    """out = cond ? a : b; dtypes (bool, T, T)."""


@dataclass(frozen=True)
class ScalarReduce:
    op: ReduceOp
    modes_a: Modes
    modes_c: Modes


# --------------------------------------------------------------- AnalyticPrims
@dataclass(frozen=True)
class AnalyticUnary:
    op: UnaryOp


@dataclass(frozen=True)
class AnalyticBinary:
    op: BinaryOp


@dataclass(frozen=True)
class AnalyticReduce:
    """VAR or STD with the given correction (degrees of freedom removed)."""
    op: ReduceOp
    modes_a: Modes
    modes_c: Modes
    correction: float = 0.0


# --------------------------------------------------------------- IndexingPrims
@dataclass(frozen=True)
class IndexSelect:
    """out = take(a, index, axis) with a 1-D integer index (negative entries wrap once)."""
    axis: int


@dataclass(frozen=True)
class Gather:
    """out[..., i, ...] = a[..., index[..., i, ...], ...] along axis (torch.gather)."""
    axis: int


@dataclass(frozen=True)
class Scatter:
    """out = a; out[..., index[..., i, ...], ...] (=|+=) src[..., i, ...] along axis.
    reduce None: the last write in index order wins; 'add': accumulate."""
    axis: int
    reduce: Optional[str] = None


@dataclass(frozen=True)
class IndexPut:
    """out = a; out[idx_0, ..., idx_{k-1}] (=|+=) values, with k broadcast integer index
    tensors over the leading k axes (NumPy advanced-index assignment)."""
    accumulate: bool = False


# --------------------------------------------------------------- MetadataPrims
@dataclass(frozen=True)
class Generate:
    kind: GenerateKind


@dataclass(frozen=True)
class MetadataBinary:
    op: BinaryOp


@dataclass(frozen=True)
class MetadataWhere:
    """cond ? a : b over integer/bool tensors."""


@dataclass(frozen=True)
class MetadataReduce:
    op: ReduceOp
    modes_a: Modes
    modes_c: Modes


# ----------------------------------------------------------- MetadataCastPrims
@dataclass(frozen=True)
class PointwiseCast:
    """out = dtype(a) (any source dtype; the conjugation flag is folded in)."""
    dtype: np.dtype

    def __post_init__(self):
        object.__setattr__(self, "dtype", np.dtype(self.dtype))


@dataclass(frozen=True)
class MaskWhere:
    """cond ? a : b with a bool mask over float/complex tensors."""


# --------------------------------------------------------------------- RngPrims
@dataclass(frozen=True)
class Uniform:
    """Uniform [0, 1) in the output dtype (float32/float64)."""


@dataclass(frozen=True)
class Normal:
    """Standard normal (Box-Muller over two counters per pair of outputs)."""


@dataclass(frozen=True)
class Integer:
    """Uniform integers in [low, high)."""
    low: int
    high: int


# -------------------------------------------------------------------- SortPrims
@dataclass(frozen=True)
class Sort:
    axis: int = -1
    descending: bool = False
    stable: bool = True


@dataclass(frozen=True)
class Argsort:
    axis: int = -1
    descending: bool = False
    stable: bool = True


@dataclass(frozen=True)
class Topk:
    """k largest (or smallest) along axis, values and int64 indices; NaN ranks above every
    number; equal values keep the lower index first. sorted=False still returns rank order."""
    axis: int
    k: int
    largest: bool = True
    sorted: bool = True


# -------------------------------------------------------------- ComplexRealPrims
@dataclass(frozen=True)
class ComplexRealUnary:
    """complex -> real: ABS, REAL or IMAG."""
    op: UnaryOp


@dataclass(frozen=True)
class ComplexRealReduce:
    """reduce(unary(a)) in one pass, unary in {ABS, REAL, IMAG}, reduce in {SUM, MAX, MIN, MEAN}."""
    unary: UnaryOp
    reduce: ReduceOp
    modes_a: Modes
    modes_c: Modes


# ------------------------------------------------------------- ComplexScalePrims
@dataclass(frozen=True)
class ComplexScale:
    """out = a * s with a complex and s real of the same precision (broadcasting)."""


FAMILY_OF = {
    BatchedGemm: "semiring_core", ReduceAdd: "semiring_core", Trace: "semiring_core",
    AntiTrace: "semiring_core", AntiDiag: "semiring_core", MakeContiguous: "semiring_core",
    Contract: "semiring_fast_path", ElementwiseBinary: "semiring_fast_path",
    ScalarUnary: "scalar", ScalarBinary: "scalar", ScalarWhere: "scalar", ScalarReduce: "scalar",
    AnalyticUnary: "analytic", AnalyticBinary: "analytic", AnalyticReduce: "analytic",
    IndexSelect: "indexing", Gather: "indexing", Scatter: "indexing", IndexPut: "indexing",
    Generate: "metadata", MetadataBinary: "metadata", MetadataWhere: "metadata",
    MetadataReduce: "metadata",
    PointwiseCast: "metadata_cast", MaskWhere: "metadata_cast",
    Uniform: "rng", Normal: "rng", Integer: "rng",
    Sort: "sort", Argsort: "sort", Topk: "sort",
    ComplexRealUnary: "complex_real", ComplexRealReduce: "complex_real",
    ComplexScale: "complex_scale",
}

FAMILIES = ("semiring_core", "semiring_fast_path", "scalar", "analytic", "indexing",
            "metadata", "metadata_cast", "rng", "sort", "complex_real", "complex_scale",
            "fused")


def family_of(desc) -> str:
    try:
        return FAMILY_OF[type(desc)]
    except KeyError:
        raise TypeError(f"unknown descriptor {desc!r}: not a hipfer.prims descriptor") from None
