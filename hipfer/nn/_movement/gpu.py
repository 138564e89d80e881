"""Fused movement ops on the GPU (fused_movement.cuh).

All kernels of the file are compiled together, once. The byte-moving ops pick their
copy unit per call from the row sizes and the operands' addresses (a view may start
anywhere). gather_rows and scatter_add_rows read the error flag (one 8-byte sync) and
raise IndexError for an index outside [0, n). gather_rows waits for its index check
alone (the copy is queued behind it; on an error its out is never returned);
scatter_add_rows waits for its sort's count, before it adds, so out is untouched then.
scatter_add_rows sums repeated rows without atomics: a stable radix sort of the index
(kernels/radix.cuh: one pass per 8 bits of n - 1), then each output row adds its run in
increasing i.
"""
from __future__ import annotations

from math import prod

import cupy
import numpy as np

from ...backends.cupy import sort
from ...backends.cupy._engine import BLOCK, error_flag, get_kernels, grid_for
from ...kernels import radix
from ...prims import descriptors as d
from ...prims.fused_ops import makers
from . import kernels as K, ops
from .ops import bad_row, copy_2d_geometry, overlap_error, spans_overlap, top_k_params

_compiled: dict = {}


def _kernel(expr: str):
    if not _compiled:
        _compiled.update(zip(K.EXPRS, get_kernels(K.FILE, K.EXPRS)))
    return _compiled[expr]


def _unit(*sizes: int) -> int:
    """The widest copy unit (bytes) dividing every size and address given."""
    for u in (16, 8, 4):
        if all(s % u == 0 for s in sizes):
            return u
    raise AssertionError(f"float32/float64 operands are 4-byte aligned, got {sizes}")


def _group_log2(units: int) -> int:
    """log2 of the threads per row: the power of two covering a row, at most BLOCK."""
    return max(0, min(units, BLOCK) - 1).bit_length()


def _rope(desc, dtypes, shapes, outs):
    dt = outs[0][1]
    x_shape = shapes[0]
    slices, pairs = prod(x_shape[:-2]), prod(x_shape[-2:]) // 2
    kernel = _kernel(K.rope_expr(dt))
    gx = grid_for(pairs)
    grid = (gx, max(1, min(slices, 65535, grid_for(slices * pairs) // gx)))
    tail = (np.int64(slices), np.int64(pairs), np.bool_(desc.get("inverse", False)))

    def run(inputs, out):
        if out.size:
            kernel(grid, (BLOCK,), tuple(inputs) + (out,) + tail)
    return run


def _permute_0213(desc, dtypes, shapes, outs):
    a, b, c, dim = shapes[0]
    vec = dim * outs[0][1].itemsize  # bytes of one D vector
    n = a * b * c * dim

    def launch(x, out):
        unit = _unit(vec, x.data.ptr)
        du = vec // unit
        sizes = (np.int64(a), np.int64(b), np.int64(c))
        if vec <= 16:  # short vectors: transpose tiles of 32 x 32 through shared memory
            tiles = a * -(-b // 32) * -(-c // 32)
            smem = 32 * (32 * du + 1) * unit
            _kernel(K.permute_tiled_expr(unit))(
                (grid_for(tiles * BLOCK),), (BLOCK,),
                (x, out) + sizes + (np.int32(du), np.int32(5)), shared_mem=smem)
        else:
            g = _group_log2(du)
            _kernel(K.permute_rows_expr(unit))(
                (grid_for((a * b * c) << g),), (BLOCK,),
                (x, out) + sizes + (np.int64(du), np.int32(g)))

    def run(inputs, out):
        if n:
            launch(inputs[0], out)
    return run


def _copy_2d(desc, dtypes, shapes, outs):
    geometry = copy_2d_geometry(desc)
    rows, cols, so, ss, do, ds = geometry
    item = outs[0][1].itemsize
    geo_bytes = tuple(v * item for v in (cols, so, ss, do, ds))

    def run(inputs, out):
        src = inputs[0]
        if spans_overlap(src.data.ptr, out.data.ptr, item, geometry):
            raise overlap_error(desc.op)
        if not rows or not cols:
            return
        unit = _unit(src.data.ptr, out.data.ptr, *geo_bytes)
        cu, so_u, ss_u, do_u, ds_u = (np.int64(v // unit) for v in geo_bytes)
        g = _group_log2(int(cu))
        _kernel(K.copy_2d_expr(unit))(
            (grid_for(rows << g),), (BLOCK,),
            (src, out, np.int64(rows), cu, so_u, ss_u, do_u, ds_u, np.int32(g)))
    return run


def _gather_rows(desc, dtypes, shapes, outs):
    x_shape, (m,) = shapes
    n, row = x_shape[0], prod(x_shape[1:]) * outs[0][1].itemsize

    def run(inputs, out):
        if not m:
            return
        x, idx = inputs
        unit = _unit(row, x.data.ptr)
        g = _group_log2(row // unit)
        flag = error_flag()
        # the check first, the copy queued behind it: the host waits for the check alone,
        # so back-to-back calls keep the device busy (waiting for the copy as well cost
        # 0.045 ms a call at 65536 rows of 4 KiB on an H200: 0.191 -> 0.155 ms)
        _kernel(K.CHECK_ROWS_EXPR)((grid_for(m),), (BLOCK,), (idx, np.int64(m), np.int64(n),
                                                             flag.buf))
        read = flag.queue_read()
        _kernel(K.gather_rows_expr(unit))(
            (grid_for(m << g),), (BLOCK,),
            (x, idx, out, np.int64(m), np.int64(n), np.int64(row // unit), np.int32(g)))
        flag.wait_read(read, lambda pos: bad_row(desc.op, int(idx[pos]), n))
    return run


def _scatter_add_rows(desc, dtypes, shapes, outs):
    (m,), (n, dt) = shapes[1], (shapes[2][0], outs[0][1])
    row = prod(shapes[2][1:])
    plan = radix.plan(m, n, runs=row > 0) if m else None
    # per vector width (elements) that divides the row: the kernel, its grid and sizes
    adds = {}
    for vec in K.SCATTER_VECS[dt]:
        if row % vec == 0:
            g = _group_log2(row // vec)
            adds[vec] = (_kernel(K.scatter_add_rows_expr(dt, vec)), (grid_for(n << g),),
                         (np.int64(n), np.int64(row // vec), np.int32(g)))

    def run(inputs, out):
        if not m:
            return
        src, idx, _ = inputs
        flag = error_flag()
        # The sort checks the indices as it counts them and writes only its workspace, so
        # it runs before the one sync (the flag), and out is touched only after that. Its
        # buffers go to the kernels as addresses in the workspace (views cost host time).
        ws = cupy.empty(plan.nbytes, np.uint8)
        steps, _, perm, runs = radix.launches(plan, idx, n, flag.buf, ws.data.ptr)
        for expr, blocks, threads, args in steps if row else steps[:1]:  # [:1]: the check
            _kernel(expr)((blocks,), (threads,), args)
        flag.check(lambda pos: bad_row(desc.op, int(idx[pos]), n))
        if row:
            vec = _unit(row * dt.itemsize, src.data.ptr, out.data.ptr) // dt.itemsize
            add, grid, tail = adds[vec]
            add(grid, (BLOCK,), (src, perm, runs, out) + tail)
    return run


def _top_k_rows(desc, dtypes, shapes, outs):
    k, largest = top_k_params(desc)
    dt, x_shape = outs[0][1], shapes[0]
    cols = x_shape[-1]
    rows = prod(x_shape[:-1])
    if k > K.TOP_K_SORT_MAX or cols >= 2 ** 31:  # beyond the shared-memory sort: a full one
        c_strides = tuple(prod(x_shape[i + 1:]) * dt.itemsize for i in range(len(x_shape)))
        return sort.HANDLERS[d.Topk].make(d.Topk(axis=-1, k=k, largest=largest), dtypes,
                                          shapes, outs, (c_strides,), (False,))
    kernel = _kernel(K.top_k_rows_expr(dt))
    sort_n = 1 << max(0, k - 1).bit_length()
    smem = sort_n * (8 + dt.itemsize)
    splits = K.top_k_splits(rows, cols, sort_n)
    tail = (np.int64(k), np.int32(sort_n), np.bool_(largest))
    # stage 1: k candidates per (row, segment); stage 2 (split rows): the k of each row's
    # splits * k candidates, their columns read from the first stage's indices
    first = (np.int64(rows), np.int64(cols), np.int64(splits), np.int64(cols // splits)) + tail
    second = (np.int64(rows), np.int64(splits * k), np.int64(1), np.int64(splits * k)) + tail
    grids = ((grid_for(rows * splits * BLOCK),), (grid_for(rows * BLOCK),))

    def run(inputs, out):
        if not (k and rows):
            return
        if splits == 1:
            kernel(grids[0], (BLOCK,), (inputs[0], None) + tuple(out) + first, shared_mem=smem)
            return
        cand_v, cand_i = cupy.empty(rows * splits * k, dt), cupy.empty(rows * splits * k, np.int64)
        kernel(grids[0], (BLOCK,), (inputs[0], None, cand_v, cand_i) + first, shared_mem=smem)
        kernel(grids[1], (BLOCK,), (cand_v, cand_i) + tuple(out) + second, shared_mem=smem)
    return run


MAKERS = makers(ops.OPS, {
    ops.ROPE: _rope, ops.PERMUTE_0213: _permute_0213, ops.COPY_2D: _copy_2d,
    ops.GATHER_ROWS: _gather_rows, ops.SCATTER_ADD_ROWS: _scatter_add_rows,
    ops.TOP_K_ROWS: _top_k_rows})
