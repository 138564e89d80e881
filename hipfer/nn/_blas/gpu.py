"""Fused BLAS-like ops on the GPU (fused_blas.cuh).

The launch geometry of every sum is a function of the shapes alone (never of the device
or of the data's alignment), so results repeat bit for bit from call to call.
"""
from __future__ import annotations

from math import prod

import cupy
import numpy as np

from ...backends.cupy import reduction
from ...backends.cupy._engine import BLOCK, get_kernels, grid_for
from ...prims import descriptors as d
from ...prims.fused_ops import makers
from . import kernels as K, ops
from .ops import adam_scalars

MAX_PARTS = 1024  # blocks of a full reduction's first stage (partials then one block)
UNROLL = 4        # packs a thread loads at once (sum_packs)
MIN_PART_ROWS = 64  # rows of x one column_sums part sums at the least


def _kernel(dt, expr: str):
    """One kernel of fused_blas.cuh: all of a dtype's kernels compile together, once."""
    exprs = K.exprs(dt)
    return get_kernels(K.FILE, exprs)[exprs.index(expr)]


def _aligned(*arrays) -> np.int32:
    """1 when every array starts on a pack (16-byte) boundary: packs load as vectors."""
    return np.int32(all(a.data.ptr % K.PACK_BYTES == 0 for a in arrays))


def _packs(n: int, dt) -> int:
    per = K.PACK_BYTES // dt.itemsize
    return -(-n // per)


def _axpby(desc, dtypes, shapes, outs):
    dt = outs[0][1]
    n = prod(shapes[0])
    kernel = _kernel(dt, K.axpby_expr(dt))

    def run(inputs, out, alpha=1.0, beta=1.0):
        if n:
            x, y = inputs
            kernel((grid_for(n),), (BLOCK,), (x, y, out, np.int64(n), dt.type(alpha), dt.type(beta)))
    return run


def _full_sum(dot: bool):
    """sum / dot: MAX_PARTS blocks at most write partials, one block adds them in order."""
    def make(desc, dtypes, shapes, outs):
        dt = outs[0][1]
        n = prod(shapes[0])
        first, finish = _kernel(dt, K.sum_expr(dt, dot)), _kernel(dt, K.sum_expr(dt, False))
        parts = max(1, min(MAX_PARTS, -(-_packs(n, dt) // (BLOCK * UNROLL))))

        def run(inputs, out):
            x, y = inputs if dot else (inputs[0], inputs[0])
            part = out if parts == 1 else cupy.empty(parts, dt)
            first((parts,), (BLOCK,), (x, y, part, np.int64(n), _aligned(x, y)))
            if parts > 1:
                finish((1,), (BLOCK,), (part, part, out, np.int64(parts), np.int32(1)))
        return run
    return make


def _column_sums(desc, dtypes, shapes, outs):
    dt = outs[0][1]
    m, n = shapes[0]
    kernel = _kernel(dt, K.column_sums_expr(dt))
    finish = _kernel(dt, K.column_sums_finish_expr(dt))
    tiles = -(-n // K.LANES)
    # split the rows into parts when the column tiles alone would leave the GPU idle
    parts = max(1, min(-(-MAX_PARTS // max(tiles, 1)), m // MIN_PART_ROWS))
    rows_per_part = -(-m // parts)
    parts = -(-m // rows_per_part) if m else 1

    def run(inputs, out, beta=0.0):
        if not n:
            return
        b = dt.type(beta)
        part = out if parts == 1 else cupy.empty((parts, n), dt)
        kernel((tiles, parts), (BLOCK,), (inputs[0], part, np.int64(m), np.int64(n),
                                          np.int64(rows_per_part), b))
        if parts > 1:
            finish((grid_for(n),), (BLOCK,), (part, out, np.int64(parts), np.int64(n), b))
    return run


def _accumulate_rows(desc, dtypes, shapes, outs):
    """The library's row sum (SemiringCore ReduceAdd: its vec path, 16-byte loads, lanes
    sized to the rows) with beta; its order too is a function of the shape alone."""
    dt = outs[0][1]
    # x is C-contiguous (fused operands are): planned as such, strides not re-checked
    red = reduction.HANDLERS[d.ReduceAdd].make(d.ReduceAdd(("i", "j"), ("i",)), (dt,),
                                                shapes[:1], outs, None, (False,))

    def run(inputs, out, beta=1.0):
        red(inputs[:1], out, 1, beta)
    return run


def _add_vector(desc, dtypes, shapes, outs):
    """x + v along axis 1: v[(i / inner) % c] for element i."""
    dt = outs[0][1]
    shape = shapes[0]
    size, c, inner = prod(shape), shape[1], prod(shape[2:])
    kernel = _kernel(dt, K.add_vector_expr(dt))

    def run(inputs, out):
        if size:
            x, v = inputs
            kernel((grid_for(size),), (BLOCK,), (x, v, out, np.int64(size), np.int64(c),
                                                 np.int64(inner)))
    return run


def _adam_step(desc, dtypes, shapes, outs):
    dt = outs[0][1]
    n = prod(shapes[0])
    kernel = _kernel(dt, K.adam_step_expr(dt))

    def run(inputs, outs, **scalars):
        s = tuple(dt.type(v) for v in adam_scalars(**scalars))
        param, grad, m, v = inputs
        if any(o is not x for o, x in zip(outs, (param, m, v))):
            for o, x in zip(outs, (param, m, v)):  # out of place: update copies
                o[...] = x
            param, m, v = outs
        if n:
            kernel((grid_for(n),), (BLOCK,), (param, grad, m, v, np.int64(n)) + s)
    return run


MAKERS = makers(ops.OPS, {
    ops.AXPBY: _axpby, ops.SUM: _full_sum(False), ops.DOT: _full_sum(True),
    ops.COLUMN_SUMS: _column_sums, ops.ACCUMULATE_ROWS: _accumulate_rows,
    ops.ADD_ROW_VECTOR: _add_vector, ops.ADD_CHANNEL_VECTOR: _add_vector,
    ops.ADAM_STEP: _adam_step})
