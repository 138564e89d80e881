"""GPU reductions (ScalarReduce, AnalyticReduce, MetadataReduce, ComplexRealReduce) and the
scaled diagonal ops of SemiringCore (ReduceAdd, Trace, AntiTrace, AntiDiag).

All reductions run the kernels of kernels/reduction.cuh; hipfer.kernels.reduction maps the
operand onto them (pure Python, planned once). A warm call checks its arguments, picks
the output layout from a small cache and launches one kernel (two when K is split).
"""
from __future__ import annotations

import math

import cupy
import numpy as np

from ...kernels import CTYPE
from ...kernels import reduction as kr
from ...prims import descriptors as d
from ...prims.optable import ReduceOp
from ._engine import get_kernels, shape_arg, strides_arg

_U8 = np.dtype(np.uint8)


# ---------------------------------------------------------------- coefficients
class _Coefs:
    """alpha / beta as scalars of the output dtype (the kernels compute in it), cast
    unsafely as the NumPy backend does; the common (1, 0) is converted once."""

    def __init__(self, dtype: np.dtype):
        self.dtype = dtype
        self.one, self.zero = dtype.type(1), dtype.type(0)

    def __call__(self, alpha, beta):
        a = self.one if alpha == 1 else np.asarray(alpha).astype(self.dtype)[()]
        b = self.zero if beta == 0 else np.asarray(beta).astype(self.dtype)[()]
        return a, b


def _operand_strides(strides, shape, dtype):
    """(byte strides the run must see or None, element strides to plan with)."""
    given = strides[0] if strides is not None else None
    return given, kr.elem_strides(given, shape, dtype.itemsize)


def _check(a, dtype, a_strides, out, out_shape, out_dtype):
    if a.dtype != dtype:
        raise TypeError(f"operand dtype {a.dtype} differs from the plan's {dtype}")
    if a_strides is not None and a.strides != a_strides:
        raise ValueError(f"operand strides {a.strides} differ from the plan's {a_strides}")
    if out.shape != out_shape or out.dtype != out_dtype:
        raise ValueError(f"out must have shape {out_shape} and dtype {out_dtype}, "
                         f"got {out.shape} and {out.dtype}")


def _address(a) -> int:
    """Device address of a's first element (the kernels' `a`)."""
    return a.data.ptr


def _out_elem_strides(out):
    size = out.dtype.itemsize
    return tuple(s // size for s in out.strides)


# ------------------------------------------------------------------ reductions
class _ReduceRun:
    """run(inputs, out[, alpha, beta]) for one planned reduction."""

    def __init__(self, g: kr.ReduceGeometry, red: kr.Reducer, dtype: np.dtype, conj: bool,
                 a_strides, out_shape, corr: float = 0.0):
        self.g, self.dtype, self.a_strides = g, dtype, a_strides
        self.out_shape, self.out_dtype = out_shape, red.out_dtype
        self.coefs = _Coefs(red.out_dtype)
        self.layouts: dict = {}
        self.fresh = None  # see run_fresh
        if g.M == 0:
            return
        k_block, k_thread, self.k_finish, k_vec = get_kernels(kr.FILE, red.kernels)
        self.k_main = {"block": k_block, "thread": k_thread, "vec": k_vec}[g.path]
        self.cj = np.bool_(conj)
        self.red_args = (shape_arg(g.red_shape), strides_arg(g.red_a), np.int64(g.M),
                         np.int64(g.n_split), np.int64(g.chunk), np.int64(g.K),
                         np.float64(corr), np.int32(red.mode))
        # red_vec: (lanes, vec) after alpha / beta; vec when a's pointer is aligned too
        self.vec_tails = None
        if g.path == "vec":
            tail = np.int32(g.lanes)
            self.vec_tails = ((tail, np.bool_(False)), (tail, np.bool_(True)))
            self.vec_ok = g.vec_aligned(dtype.itemsize)
        self.finish_args = (np.int64(g.M), np.int64(g.n_split), np.int64(g.K),
                            np.float64(corr), np.int32(red.mode))
        self.finish_grid = (min(g.M, kr.MAX_GRID),)
        # run_fresh's one launch (no split): everything after (a, cj, out, out) for a
        # C-contiguous out, alpha 1 and beta 0
        if g.n_split == 1:
            c_out = tuple(math.prod(out_shape[k + 1:]) for k in range(len(out_shape)))
            shape, ka, ko = kr.keep_layout(g, c_out)
            self.fresh = ((shape_arg(shape), strides_arg(ka), strides_arg(ko)) + self.red_args
                          + (self.coefs.one, self.coefs.zero))

    def _layout(self, out):
        """(keep shape, keep a strides, keep out strides) as kernel args, per out layout."""
        lay = self.layouts.get(out.strides)
        if lay is None:
            shape, ka, ko = kr.keep_layout(self.g, _out_elem_strides(out))
            lay = (shape_arg(shape), strides_arg(ka), strides_arg(ko))
            if len(self.layouts) < 64:
                self.layouts[out.strides] = lay
        return lay

    def run_fresh(self, inputs, out):
        """__call__ (alpha 1, beta 0) for an out the backend has just allocated:
        C-contiguous, of the plan's shape and dtype, so only a is checked -- the warm path
        of Backend.runner."""
        (a,) = inputs
        head = self.fresh
        if head is None or a.dtype != self.dtype or (self.a_strides is not None and a.strides != self.a_strides):
            return self(inputs, out)  # the general path (and its errors)
        g, args = self.g, (a, self.cj, out, out) + head
        tails = self.vec_tails
        if tails is None:
            self.k_main((g.grid,), (g.block,), args)
        elif not (self.vec_ok and self.k_main((g.grid,), (g.block,), args + tails[1], align=(kr.PACK_BYTES - 1,))):
            self.k_main((g.grid,), (g.block,), args + tails[0])

    def __call__(self, inputs, out, alpha=1, beta=0):
        (a,) = inputs
        _check(a, self.dtype, self.a_strides, out, self.out_shape, self.out_dtype)
        al, be = self.coefs(alpha, beta)
        g = self.g
        if g.M == 0:
            return
        keep, ka, ko = self._layout(out)
        part = cupy.empty(g.M * g.n_split * kr.ACC_BYTES, _U8) if g.n_split > 1 else out
        args = (a, self.cj, out, part, keep, ka, ko) + self.red_args + (al, be)
        if self.vec_tails is not None:
            args += self.vec_tails[self.vec_ok and _address(a) % kr.PACK_BYTES == 0]
        self.k_main((g.grid,), (g.block,), args)
        if g.n_split > 1:
            self.k_finish(self.finish_grid, (g.finish_block,),
                          (part, out, keep, ko) + self.finish_args + (al, be))


def _unscaled(run):
    """Reductions outside SemiringCore take no alpha / beta."""
    def call(inputs, out):
        run(inputs, out)
    call.run_fresh = run.run_fresh
    return call


def _reduction(desc, dtypes, shapes, outs, strides, conj, red, *, corr=0.0):
    (dt,), (shape,) = dtypes, shapes
    given, st = _operand_strides(strides, shape, dt)
    g = kr.plan_reduce(desc.modes_a, desc.modes_c, shape, st)
    out_shape, out_dtype = outs[0]
    if red.out_dtype != out_dtype:  # the kernel tables and infer() must agree
        raise RuntimeError(f"{desc!r}: reducer gives {red.out_dtype}, infer {out_dtype}")
    return _ReduceRun(g, red, dt, conj[0], given, tuple(out_shape), corr)


# -------------------------------------------------------------------- handlers
def _dtype_ok(dtypes, kinds: str) -> bool:
    if dtypes is None:
        return True
    return len(dtypes) == 1 and np.dtype(dtypes[0]) in CTYPE and np.dtype(dtypes[0]).kind in kinds


class _OpReduce:
    """ScalarReduce / AnalyticReduce / MetadataReduce: kinds per op."""

    def __init__(self, kinds: dict):
        self.kinds = kinds

    def supports(self, desc, dtypes) -> bool:
        kinds = self.kinds.get(desc.op)
        return kinds is not None and _dtype_ok(dtypes, kinds)

    def make(self, desc, dtypes, shapes, outs, strides, conj):
        red = kr.reducer(desc.op, dtypes[0])
        corr = float(getattr(desc, "correction", 0.0))
        return _unscaled(_reduction(desc, dtypes, shapes, outs, strides, conj, red, corr=corr))


class _ComplexRealReduce:
    def supports(self, desc, dtypes) -> bool:
        return (desc.unary in kr.COMPLEX_PRE and desc.reduce in kr.COMPLEX_REDUCE
                and _dtype_ok(dtypes, "c"))

    def make(self, desc, dtypes, shapes, outs, strides, conj):
        red = kr.reducer(desc.reduce, dtypes[0], pre=desc.unary)
        return _unscaled(_reduction(desc, dtypes, shapes, outs, strides, conj, red))


class _ReduceAdd:
    """out = alpha * sum + beta * out (bool sums count into int64, as infer says)."""

    def supports(self, desc, dtypes) -> bool:
        return _dtype_ok(dtypes, kr.SCALED_KINDS)

    def make(self, desc, dtypes, shapes, outs, strides, conj):
        red = kr.reducer(ReduceOp.SUM, dtypes[0])
        return _reduction(desc, dtypes, shapes, outs, strides, conj, red)


class _Trace:
    """Single-operand einsum: the diagonal of repeated labels, then a sum in the operand
    dtype (bool: or), scaled."""

    def supports(self, desc, dtypes) -> bool:
        return _dtype_ok(dtypes, kr.SCALED_KINDS)

    def make(self, desc, dtypes, shapes, outs, strides, conj):
        red = kr.reducer(ReduceOp.SUM, dtypes[0], out_dtype=dtypes[0])
        return _reduction(desc, dtypes, shapes, outs, strides, conj, red)


class _AntiRun:
    """out = beta * out + alpha * (on the diagonal ? a : 0), one thread per output."""

    def __init__(self, desc, dt: np.dtype, a_strides, conj: bool, out_shape):
        self.dtype, self.out_shape = dt, tuple(out_shape)
        self.given, st = a_strides
        self.g = kr.plan_anti(desc.modes_a, desc.modes_c, st, out_shape)
        self.coefs = _Coefs(dt)
        self.layouts: dict = {}
        if self.g.n == 0:
            return
        (self.kernel,) = get_kernels(kr.FILE, (kr.anti_kernel(dt),))
        self.head = (np.bool_(conj),)
        self.geom = (shape_arg(self.g.shape), strides_arg(self.g.a_strides))
        self.tail = (np.int64(self.g.same_next), np.int64(self.g.n))
        self.grid = (max(1, min(-(-self.g.n // 256), kr.MAX_GRID)),)

    def _out_strides(self, out):
        st = self.layouts.get(out.strides)
        if st is None:
            el = _out_elem_strides(out)
            st = strides_arg(tuple(el[i] for i in self.g.perm))
            if len(self.layouts) < 64:
                self.layouts[out.strides] = st
        return st

    def __call__(self, inputs, out, alpha=1, beta=0):
        (a,) = inputs
        _check(a, self.dtype, self.given, out, self.out_shape, self.dtype)
        al, be = self.coefs(alpha, beta)
        if self.g.n == 0:
            return
        self.kernel(self.grid, (256,), (a,) + self.head + (out,) + self.geom
                    + (self._out_strides(out),) + self.tail + (al, be))


class _Anti:
    """AntiTrace and AntiDiag share the kernel (AntiDiag has no broadcast labels)."""

    def supports(self, desc, dtypes) -> bool:
        return _dtype_ok(dtypes, kr.SCALED_KINDS)

    def make(self, desc, dtypes, shapes, outs, strides, conj):
        (dt,) = dtypes
        a_strides = _operand_strides(strides, shapes[0], dt)
        return _AntiRun(desc, dt, a_strides, conj[0], outs[0][0])


HANDLERS = {
    d.ScalarReduce: _OpReduce(kr.SCALAR_KINDS),
    d.AnalyticReduce: _OpReduce(kr.ANALYTIC_KINDS),
    d.MetadataReduce: _OpReduce(kr.METADATA_KINDS),
    d.ComplexRealReduce: _ComplexRealReduce(),
    d.ReduceAdd: _ReduceAdd(),
    d.Trace: _Trace(),
    d.AntiTrace: _Anti(),
    d.AntiDiag: _Anti(),
}
