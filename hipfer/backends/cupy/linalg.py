"""LinalgPrims on the GPU: Factorize through cupy.linalg, i.e. the GPU stack's solver
library (cuSOLVER on CUDA, hipSOLVER / rocSOLVER on ROCm).

The library reads plain arrays, so a conjugation-flagged operand is resolved first (one
pass of our cast kernel); results are copied into the given outputs by the same kernel
(any layout, any precision widening such as eig's real eigenvalues to complex). Solver
failures (singular matrix, not positive-definite, no convergence) are read from the
library's info array -- one sync -- and raised as hipfer's LinAlgError. Zero-size
matrices (M or N == 0) hold no data: their results (e.g. det == 1) come from NumPy on an
empty array and are copied up.
"""
from __future__ import annotations

import cupy
import cupyx
import numpy as np

from ...prims import descriptors as d
from ..numpy.linalg import _solver as _host_solver
from .elementwise import HANDLERS as _EW

K = d.FactorKind
_CACHE = 64  # source layouts remembered per copier


class Copier:
    """copy(src, dst, conj=False): dst[...] = src (conjugated if asked) with our cast
    kernel, for a fixed shape and destination dtype; launch plans cached per source layout."""

    def __init__(self, shape, dst_dtype):
        self.shape, self.dt = tuple(shape), np.dtype(dst_dtype)
        self.desc = d.PointwiseCast(self.dt)
        self.runs: dict = {}

    def __call__(self, src, dst, conj=False):
        key = (src.dtype, src.strides, conj)
        run = self.runs.get(key)
        if run is None:
            if len(self.runs) >= _CACHE:
                self.runs.clear()
            run = self.runs[key] = _EW[d.PointwiseCast].make(
                self.desc, (src.dtype,), (self.shape,), ((self.shape, self.dt),),
                (src.strides,), (conj,))
        run((src,), dst)

    def fresh(self, src, conj=False):
        """A new C-contiguous copy of src (conjugated if asked)."""
        dst = cupy.empty(self.shape, self.dt)
        self(src, dst, conj)
        return dst


# kind -> (the cupy.linalg function it calls, how: 'one' result / 'many' / 'solve').
# Looked up per kind at plan time, never all at once: cupy.linalg.eig and eigvals first
# appear in CuPy 14.0, and reading them eagerly broke every kind on CuPy 13.
_CALLS = {
    K.CHOLESKY: ("cholesky", "one"), K.INV: ("inv", "one"), K.DET: ("det", "one"),
    K.EIGVALSH: ("eigvalsh", "one"), K.EIGVALS: ("eigvals", "one"),
    K.SVDVALS: ("svd", "one"), K.SLOGDET: ("slogdet", "many"), K.EIGH: ("eigh", "many"),
    K.EIG: ("eig", "many"), K.SVD: ("svd", "many"), K.QR: ("qr", "many"),
    K.QR_RAW: ("qr", "many"),
    K.SOLVE: ("solve", "solve"),
}


def _missing(kind) -> str:
    """Why CuPy here cannot run this kind, or ''."""
    name, _ = _CALLS[kind]
    if kind in (K.EIG, K.EIGVALS) and cupy.cuda.runtime.is_hip:
        return ("general (non-Hermitian) eigenvalues need geev, which CuPy runs on CUDA "
                "only, not on ROCm")
    if getattr(cupy.linalg, name, None) is None:
        return (f"{kind.value} needs cupy.linalg.{name}, which this CuPy "
                f"({cupy.__version__}) lacks: it needs CuPy >= 14")
    if kind in (K.EIG, K.EIGVALS) and not _has_geev():
        return (f"{kind.value} needs cuSOLVER's Xgeev, which this CUDA's cuSOLVER lacks "
                "(cupyx.cusolver.check_availability('geev') is False)")
    return ""


def _has_geev() -> bool:
    """Whether CuPy finds cuSOLVER's Xgeev (CuPy 14's eig raises RuntimeError without it)."""
    try:
        from cupyx.cusolver import check_availability
        return bool(check_availability("geev"))
    except (ImportError, AttributeError, KeyError, ValueError):  # an older cupyx: eig says
        return True


def _solver(desc):
    """inputs -> tuple of results, per kind (the library calls)."""
    name, how = _CALLS[desc.kind]
    f = getattr(cupy.linalg, name)
    if desc.kind is K.SVDVALS:
        return lambda xs: (f(xs[0], compute_uv=False),)
    if desc.kind is K.SVD:
        return lambda xs: tuple(f(xs[0], full_matrices=desc.full))
    if desc.kind is K.QR:
        return lambda xs: tuple(f(xs[0], mode="complete" if desc.full else "reduced"))
    if desc.kind is K.QR_RAW:  # CuPy >= 13.3 batches it (_qr_batched), in the input's precision
        return lambda xs: tuple(f(xs[0], mode="raw"))
    if how == "solve":
        return lambda xs: (f(xs[0], xs[1]),)
    if how == "one":
        return lambda xs: (f(xs[0]),)
    return lambda xs: tuple(f(xs[0]))


class _Factorize:
    def supports(self, desc, dtypes) -> bool:
        if _missing(desc.kind):
            return False
        # no float16: the solver libraries have no half routines (NumPy's LAPACK neither)
        return dtypes is None or all(np.dtype(t).kind in "fc" and np.dtype(t).itemsize > 2 for t in dtypes)

    def why_not(self, desc, dtypes) -> str:
        return _missing(desc.kind) or "Factorize takes float32/64 and complex64/128 operands"

    def make(self, desc, dtypes, shapes, outs, strides, conj):
        solve = _solver(desc)
        resolve = [Copier(s, dt) if c and dt.kind == "c" else None
                   for s, dt, c in zip(shapes, dtypes, conj)]
        copy_out = [Copier(s, dt) for s, dt in outs]
        empty_matrices = 0 in shapes[0][-2:]
        host = _host_solver(desc)

        def compute(inputs):
            if empty_matrices:  # no data: NumPy's conventions (det 1, ...), copied up
                return tuple(cupy.asarray(r) for r in host([np.empty(a.shape, a.dtype) for a in inputs]))
            xs = [r.fresh(x, conj=True) if r is not None else x for x, r in zip(inputs, resolve)]
            try:
                with cupyx.errstate(linalg="raise"):
                    return solve(xs)
            except cupy.linalg.LinAlgError as e:
                raise d.LinAlgError(f"{desc.kind.value}: {e}") from None

        def run(inputs, out):
            outs_ = out if isinstance(out, tuple) else (out,)
            if all(o.size == 0 for o in outs_):
                return
            for o, r, cp in zip(outs_, compute(inputs), copy_out):
                cp(r, o)
        return run


HANDLERS = {d.Factorize: _Factorize()}
