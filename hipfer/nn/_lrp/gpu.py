"""Fused lrp ops on the GPU (fused_lrp.cuh).

Elementwise passes are one kernel each; the products of lrp_linear, lrp_conv and
lrp_bilinear_matmul are hipBLAS/cuBLAS GEMMs (cupy.matmul) between a quotient kernel
(s = r / stab(z)) and a multiply kernel that runs in place on the GEMM's output. The
two row/window sums (lrp_softmax_rows, lrp_avg_pool) have a fixed order chosen from the
shapes alone, so results repeat bit for bit.
"""
from __future__ import annotations

from math import prod

import cupy
import numpy as np

from ...backends.cupy._engine import BLOCK, get_kernels, grid_for, struct_arg
from ...prims.fused_ops import makers
from .._conv.ops import geometry
from . import kernels as K, ops
from .ops import eps_scalar, gate_of

WHOLE_BLOCK_ROW = 1024  # rows this long take a block each in lrp_softmax_rows, else 32 lanes

#: hf::lrp_pool_geom, field for field
POOL_GEOM = np.dtype([(f, "<i8") for f in ("h", "w", "oh", "ow")]
                     + [(f, "<i4") for f in ("kh", "kw", "sh", "sw", "ph", "pw")], align=True)


def _kernel(dt, expr: str):
    """One kernel of fused_lrp.cuh: all of a dtype's kernels compile together, once."""
    exprs = K.exprs(dt)
    return get_kernels(K.FILE, exprs)[exprs.index(expr)]


def _divider(dt, gate="none", scale=1):
    """s = r / (scale * stab(den)) (gated), into out."""
    kernel = _kernel(dt, K.divide_expr(dt, gate))

    def divide(r, den, out, eps):
        if out.size:
            kernel((grid_for(out.size),), (BLOCK,), (r, den, out, np.int64(out.size),
                                                     dt.type(eps), dt.type(scale)))
        return out
    return divide


def _multiplier(dt):
    """out = x * out, in place (out holds the GEMM's back-projection)."""
    kernel = _kernel(dt, K.mul_expr(dt))

    def mul(x, out):
        if out.size:
            kernel((grid_for(out.size),), (BLOCK,), (x, out, out, np.int64(out.size)))
    return mul


def _gemm(a, b, out):
    """out = a @ b (hipBLAS/cuBLAS, batched and broadcast as cupy.matmul); an empty inner
    size gives zeros."""
    if out.size == 0:
        return
    if a.shape[-1] == 0:
        out.fill(0)
    else:
        cupy.matmul(a, b, out=out)


def _stabilized_divide(desc, dtypes, shapes, outs):
    dt = outs[0][1]
    divide = _divider(dt, gate_of(desc))

    def run(inputs, out, eps=1e-6):
        divide(inputs[0], inputs[1], out, eps_scalar(eps))
    return run


def _elementwise(expr):
    """lrp_residual_split / lrp_bilinear_elementwise: one thread per element."""
    def make(desc, dtypes, shapes, outs):
        dt = outs[0][1]
        n = prod(shapes[0])
        kernel = _kernel(dt, expr(dt))

        def run(inputs, out, eps=1e-6):
            e = dt.type(eps_scalar(eps))
            if n:
                outs_ = out if isinstance(out, tuple) else (out,)
                kernel((grid_for(n),), (BLOCK,), tuple(inputs) + outs_ + (np.int64(n), e))
        return run
    return make


def _linear(desc, dtypes, shapes, outs):
    dt = outs[0][1]
    divide, mul = _divider(dt), _multiplier(dt)

    def run(inputs, out, eps=1e-6):
        x, w, z, r = inputs
        s = divide(r, z, cupy.empty(r.shape, dt), eps_scalar(eps))
        _gemm(s, w.T, out)
        mul(x, out)
    return run


def _bilinear_matmul(desc, dtypes, shapes, outs):
    dt = outs[0][1]
    tb = bool(desc.get("trans_b", False))
    divide, mul = _divider(dt, scale=2), _multiplier(dt)

    def run(inputs, outs, eps=1e-6):
        a, b, o, r = inputs
        s = divide(r, o, cupy.empty(r.shape, dt), eps_scalar(eps))
        _gemm(s, b if tb else cupy.swapaxes(b, -1, -2), outs[0])
        if tb:
            _gemm(cupy.swapaxes(s, -1, -2), a, outs[1])
        else:
            _gemm(cupy.swapaxes(a, -1, -2), s, outs[1])
        mul(a, outs[0])
        mul(b, outs[1])
    return run


def _conv(desc, dtypes, shapes, outs):
    dt = outs[0][1]
    divide, mul = _divider(dt), _multiplier(dt)

    def run(inputs, out, eps=1e-6):
        p, w, z, r = inputs
        s = divide(r, z, cupy.empty(r.shape, dt), eps_scalar(eps))
        _gemm(w.T, s, out)  # (CK, Cout) @ (N, Cout, L), over the batch
        mul(p, out)
    return run


def _softmax_rows(desc, dtypes, shapes, outs):
    dt = outs[0][1]
    shape = shapes[0]
    n = shape[-1]
    rows = prod(shape[:-1])
    whole_block = n >= WHOLE_BLOCK_ROW
    kernel = _kernel(dt, K.softmax_rows_expr(dt, whole_block))
    grid = grid_for(rows, block=1 if whole_block else BLOCK // K.LANES)

    def run(inputs, out):
        if rows and n:
            kernel((grid,), (BLOCK,), tuple(inputs) + (out, np.int64(rows), np.int64(n)))
    return run


def _rope(desc, dtypes, shapes, outs):
    dt = outs[0][1]
    x = shapes[0]
    pairs, length, half = prod(x) // 2, x[-2], x[-1] // 2
    kernel = _kernel(dt, K.rope_expr(dt))

    def run(inputs, out, eps=1e-6):
        e = dt.type(eps_scalar(eps))
        if pairs:
            kernel((grid_for(pairs),), (BLOCK,), tuple(inputs) + (out, np.int64(pairs),
                                                                  np.int64(length), np.int64(half), e))
    return run


def _avg_pool(desc, dtypes, shapes, outs):
    (n, c, h, w), dt = outs[0]
    k, s, p, _, o = geometry(desc, (h, w), pool=True)
    g = struct_arg(POOL_GEOM, zip(POOL_GEOM.names, (h, w) + o + k + s + p))
    planes = n * c
    share_k, gather_k = _kernel(dt, K.pool_share_expr(dt)), _kernel(dt, K.pool_gather_expr(dt))

    def run(inputs, out, eps=1e-6):
        e = dt.type(eps_scalar(eps))
        if planes:
            x, r = inputs
            share = cupy.empty(r.shape, dt)
            share_k((grid_for(share.size),), (BLOCK,), (x, r, share, np.int64(planes), g, e))
            gather_k((grid_for(out.size),), (BLOCK,), (x, share, out, np.int64(planes), g))
    return run


MAKERS = makers(ops.OPS, {
    ops.LRP_STABILIZED_DIVIDE: _stabilized_divide,
    ops.LRP_RESIDUAL_SPLIT: _elementwise(K.residual_split_expr),
    ops.LRP_BILINEAR_ELEMENTWISE: _elementwise(K.bilinear_elementwise_expr),
    ops.LRP_LINEAR: _linear, ops.LRP_BILINEAR_MATMUL: _bilinear_matmul,
    ops.LRP_SOFTMAX_ROWS: _softmax_rows, ops.LRP_ROPE: _rope, ops.LRP_CONV: _conv,
    ops.LRP_AVG_POOL: _avg_pool})
