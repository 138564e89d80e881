"""RngPrims on the GPU: Uniform, Normal and Integer with the counter-based generator of
hipfer.prims.counter_rng (kernels/rng.cuh), written straight into any output layout;
the samplers LogGamma, Poisson and Binomial read float64 parameters of any layout.

run(inputs, out, seed=..., offset=0): output element i (C order) uses counter offset + i;
seed and offset wrap modulo 2^64.
"""
from __future__ import annotations

import functools

import numpy as np

from ...kernels import indexing as geometry
from ...kernels import rng as K
from ...prims import descriptors as d
from ._engine import (BLOCK, broadcast_strides, elem_strides, get_kernels, grid_for, shape_arg,
                      strides_arg)

_LAYOUTS = 32


class _Rng:
    """One handler per descriptor type: expr(dtype) names the kernel, kinds the dtypes."""

    def __init__(self, expr, kinds, per_thread=1):
        self.expr, self.kinds, self.per_thread = expr, kinds, per_thread

    def supports(self, desc, dtypes) -> bool:
        if dtypes is None:
            return True
        return len(dtypes) == 1 and dtypes[0] in (K.FLOAT_DTYPES + K.INT_DTYPES) \
            and dtypes[0].kind in self.kinds

    def extra_args(self, desc) -> tuple:
        if isinstance(desc, d.Integer):
            return tuple(np.uint64(v) for v in K.integer_range(desc.low, desc.high))
        return ()

    def make(self, desc, dtypes, shapes, outs, strides, conj):
        (kernel,) = get_kernels(K.FILE, (self.expr(dtypes[0]),))
        shape = tuple(outs[0][0])
        n = geometry.size_of(shape)
        threads = -(-n // self.per_thread)
        extra = self.extra_args(desc)

        @functools.lru_cache(maxsize=_LAYOUTS)
        def layout(out_st):
            mshape, (st,) = geometry.merge_axes(shape, [out_st])
            return (grid_for(threads),), (np.int64(n), shape_arg(mshape), strides_arg(st))

        def run(inputs, out, *, seed, offset=0):
            if n == 0:
                return
            grid, args = layout(elem_strides(out.strides, out.itemsize))
            kernel(grid, (BLOCK,), (out,) + args
                   + (np.uint64(int(seed) & K.MASK64), np.uint64(int(offset) & K.MASK64)) + extra)
        return run


class _Sampler:
    """LogGamma / Poisson / Binomial: float64 parameter operands (broadcast to the output,
    any strides) and one fixed output dtype; one kernel each."""

    def __init__(self, expr):
        self.expr = expr

    def supports(self, desc, dtypes) -> bool:
        return dtypes is None or all(np.dtype(t) == np.float64 for t in dtypes)

    def make(self, desc, dtypes, shapes, outs, strides, conj):
        (kernel,) = get_kernels(K.FILE, (self.expr(),))
        shape = tuple(outs[0][0])
        n = geometry.size_of(shape)

        @functools.lru_cache(maxsize=_LAYOUTS)
        def layout(out_st, in_sts):
            mshape, sts = geometry.merge_axes(shape, [out_st, *in_sts])
            return ((grid_for(n),), (np.int64(n), shape_arg(mshape))
                    + tuple(strides_arg(s) for s in sts))

        def run(inputs, out, *, seed, offset=0):
            if n == 0:
                return
            in_sts = tuple(broadcast_strides(x.shape, elem_strides(x.strides, x.itemsize),
                                             shape) for x in inputs)
            grid, (count, mshape, *sts) = layout(elem_strides(out.strides, out.itemsize),
                                                 in_sts)
            kernel(grid, (BLOCK,), (out, *inputs, count, mshape, *sts,
                                    np.uint64(int(seed) & K.MASK64),
                                    np.uint64(int(offset) & K.MASK64)))
        return run


HANDLERS = {
    d.Uniform: _Rng(K.uniform_expr, "f"),
    d.Normal: _Rng(K.normal_expr, "f", per_thread=2),
    d.Integer: _Rng(K.integer_expr, "iu"),
    d.LogGamma: _Sampler(K.log_gamma_expr),
    d.Poisson: _Sampler(K.poisson_expr),
    d.Binomial: _Sampler(K.binomial_expr),
}
