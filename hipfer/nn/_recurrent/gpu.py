"""Fused recurrent ops on the GPU (fused_recurrent.cuh).

Cells run one thread per (row, unit). Scans run one thread per lane looping over time;
their sums across lanes (over the batch or the channels) are fused_blas's fixed-order
row and column sums, so every result repeats bit for bit.
"""
from __future__ import annotations

import cupy
import numpy as np

from ...backends.cupy._engine import BLOCK, get_kernels, grid_for
from ...prims.fused_ops import makers
from .._blas import gpu as blas_gpu, ops as blas_ops
from . import kernels as K, ops
from .ops import lrp_eps

# Threads per block of a scan: each runs a whole sequence, so small blocks spread few
# lanes over more multiprocessors.
SCAN_BLOCK = 64


def _kernel(name: str, dt, state: int = None):
    """One kernel of fused_recurrent.cuh (a dtype's kernels compile together, once); a
    scan whose lane state has `state` values gets its register variant when it fits."""
    exprs = K.exprs(dt)
    regs = None if state is None else K.regs_for(state)
    return get_kernels(K.FILE, exprs)[exprs.index(K.expr(name, dt, regs))]


def _row_sums(dt, m: int, n: int):
    """run(x, out): out (m,) = the sums of x's rows (m, n), fused_blas's fixed order."""
    make = blas_gpu.MAKERS[blas_ops.ACCUMULATE_ROWS.name]
    run = make(None, (dt, dt), ((m, n), (m,)), (((m,), dt),))
    return lambda x, out: run((x.reshape(m, n), out.reshape(m)), out.reshape(m), beta=0.0)


def _column_sums(dt, m: int, n: int):
    """run(x, out): out (n,) = the sums of x's columns (m, n), fused_blas's fixed order."""
    make = blas_gpu.MAKERS[blas_ops.COLUMN_SUMS.name]
    run = make(None, (dt, dt), ((m, n), (n,)), (((n,), dt),))
    return lambda x, out: run((x.reshape(m, n), out.reshape(n)), out.reshape(n), beta=0.0)


def _cell(width: int):
    """The op's own elementwise cell kernel (kernels.py names it after the op) over (N, H),
    H = the first operand's columns / width."""
    def make(desc, dtypes, shapes, outs):
        dt = outs[0][1]
        n, hid = shapes[0][0], shapes[0][1] // width
        kernel = _kernel(desc.op, dt)
        size = n * hid

        def run(inputs, out, **scalars):
            if size:
                extra = tuple(dt.type(s) for s in scalars.values())
                kernel((grid_for(size),), (BLOCK,),
                       tuple(inputs) + tuple(out) + (np.int64(n), np.int64(hid)) + extra)
        return run
    return make


def _gru_lrp_prev(desc, dtypes, shapes, outs):
    cell = _cell(4)(desc, dtypes, shapes, outs)

    def run(inputs, out, eps=1e-6):
        cell(inputs, (out,), eps=lrp_eps(eps))
    return run


def _scan_grid(lanes: int):
    return (grid_for(lanes, block=SCAN_BLOCK),), (SCAN_BLOCK,)


def _selective_scan(desc, dtypes, shapes, outs):
    dt = outs[0][1]
    (b, l, d), n = shapes[0], shapes[2][1]
    kernel = _kernel(desc.op, dt, n)
    dims = tuple(np.int64(v) for v in (b, l, d, n))

    def run(inputs, out):
        if b * d:
            state = cupy.empty((n, b * d), dt)
            kernel(*_scan_grid(b * d), tuple(inputs) + (out, state) + dims)
    return run


def _selective_scan_backward(desc, dtypes, shapes, outs):
    dt = outs[0][1]
    (b, l, d), n = shapes[0], shapes[2][1]
    lanes = b * d
    kernel = _kernel(desc.op, dt, n)
    dims = tuple(np.int64(v) for v in (b, l, d, n))
    sum_d = _row_sums(dt, b * l * n, d)           # dBm, dC: over the channels
    sum_b_dA, sum_b_dD = _column_sums(dt, b, d * n), _column_sums(dt, b, d)  # over the batch

    def run(inputs, out):
        dx, ddelta, dA, dBm, dC, dD = out
        hs, gc = cupy.empty((b, l, n, d), dt), cupy.empty((b, l, n, d), dt)
        dA_lanes, dD_lanes = cupy.empty((b, d * n), dt), cupy.empty((b, d), dt)
        if lanes:
            carry, dA_acc = cupy.empty((n, lanes), dt), cupy.empty((n, lanes), dt)
            kernel(*_scan_grid(lanes), tuple(inputs) + (dx, ddelta, hs, gc, carry, dA_acc,
                                                       dA_lanes, dD_lanes) + dims)
        sum_d(hs, dBm)
        sum_d(gc, dC)
        sum_b_dA(dA_lanes, dA)
        sum_b_dD(dD_lanes, dD)
    return run


def _wkv(desc, dtypes, shapes, outs):
    dt = outs[0][1]
    b, l, c = shapes[2]
    kernel = _kernel(desc.op, dt)
    dims = tuple(np.int64(v) for v in (b, l, c))

    def run(inputs, out):
        if b * c:
            kernel(*_scan_grid(b * c), tuple(inputs) + (out,) + dims)
    return run


def _wkv_backward(desc, dtypes, shapes, outs):
    dt = outs[0][1]
    b, l, c = shapes[2]
    kernel = _kernel(desc.op, dt)
    dims = tuple(np.int64(v) for v in (b, l, c))
    sum_b = _column_sums(dt, b, c)

    def run(inputs, out):
        dw, du, dk, dv = out
        gw, gu = cupy.empty((b, c), dt), cupy.empty((b, c), dt)
        if b * c:
            zexp = cupy.empty((b, l, c), dt)
            kernel(*_scan_grid(b * c), tuple(inputs) + (dk, dv, zexp, gw, gu) + dims)
        sum_b(gw, dw)
        sum_b(gu, du)
    return run


def _retention(desc, dtypes, shapes, outs):
    dt = outs[0][1]
    (b, l, dk), dv = shapes[0], shapes[2][2]
    kernel = _kernel(desc.op, dt, dk)
    dims = tuple(np.int64(v) for v in (b, l, dk, dv))

    def run(inputs, out):
        if b * dv:
            state = cupy.empty((dk, b * dv), dt)
            kernel(*_scan_grid(b * dv), tuple(inputs) + (out, state) + dims)
    return run


def _retention_backward(desc, dtypes, shapes, outs):
    dt = outs[0][1]
    (b, l, dk), dv = shapes[0], shapes[2][2]
    rows = _kernel("retention_backward_rows", dt, dv)
    cols = _kernel("retention_backward_cols", dt, dk)
    dims = tuple(np.int64(v) for v in (b, l, dk, dv))
    sum_i = _row_sums(dt, b, dk)

    def run(inputs, out):
        q, k, v, gamma, do = inputs
        dq, dk_, dv_, dgamma = out
        dg_lanes = cupy.empty((b, dk), dt)
        if b * dk:
            s, sg = cupy.empty((dv, b * dk), dt), cupy.empty((dv, b * dk), dt)
            rows(*_scan_grid(b * dk), (q, k, v, gamma, do, dq, dk_, dg_lanes, s, sg) + dims)
        if b * dv:
            ds = cupy.empty((dk, b * dv), dt)
            cols(*_scan_grid(b * dv), (q, k, gamma, do, dv_, ds) + dims)
        sum_i(dg_lanes, dgamma)
    return run


MAKERS = makers(ops.OPS, {
    ops.LSTM_CELL: _cell(4), ops.LSTM_CELL_BACKWARD: _cell(4), ops.GRU_CELL: _cell(3),
    ops.GRU_CELL_BACKWARD: _cell(4), ops.GRU_LRP_PREV: _gru_lrp_prev,
    ops.SELECTIVE_SCAN: _selective_scan, ops.SELECTIVE_SCAN_BACKWARD: _selective_scan_backward,
    ops.WKV: _wkv, ops.WKV_BACKWARD: _wkv_backward, ops.RETENTION: _retention,
    ops.RETENTION_BACKWARD: _retention_backward})
