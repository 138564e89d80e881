"""Fused movement ops on NumPy (the reference; rules in ops.py)."""
from __future__ import annotations

import numpy as np

from ...backends.numpy.sort import argsort
from ...prims.fused_ops import makers
from . import ops
from .ops import bad_row, copy_2d_geometry, overlap_error, spans_overlap, top_k_params


def check_rows(op: str, idx, n: int) -> None:
    """IndexError naming the first index outside [0, n)."""
    bad = np.flatnonzero((idx < 0) | (idx >= n))
    if bad.size:
        raise bad_row(op, int(idx[bad[0]]), n)


def _rope(desc, dtypes, shapes, outs):
    inverse = desc.get("inverse", False)

    def run(inputs, out):
        x, cos, sin = inputs
        if not out.size:
            return
        x0, x1 = x[..., 0::2], x[..., 1::2]
        if inverse:
            out[..., 0::2] = x0 * cos + x1 * sin
            out[..., 1::2] = x1 * cos - x0 * sin
        else:
            out[..., 0::2] = x0 * cos - x1 * sin
            out[..., 1::2] = x0 * sin + x1 * cos
    return run


def _permute_0213(desc, dtypes, shapes, outs):
    def run(inputs, out):
        np.copyto(out, inputs[0].transpose(0, 2, 1, 3))
    return run


def _address(a) -> int:
    return a.__array_interface__["data"][0]


def _copy_2d(desc, dtypes, shapes, outs):
    geometry = copy_2d_geometry(desc)
    rows, cols, so, ss, do, ds = geometry

    def block(a, off, st):
        flat = a.reshape(-1)[off:]
        return np.lib.stride_tricks.as_strided(flat, (rows, cols), (st * a.itemsize, a.itemsize))

    def run(inputs, out):
        src = inputs[0]
        if spans_overlap(_address(src), _address(out), src.itemsize, geometry):
            raise overlap_error(desc.op)
        if rows and cols:
            np.copyto(block(out, do, ds), block(src, so, ss))
    return run


def _gather_rows(desc, dtypes, shapes, outs):
    n = shapes[0][0]

    def run(inputs, out):
        x, idx = inputs
        check_rows(desc.op, idx, n)
        np.take(x, idx, axis=0, out=out)
    return run


def _scatter_add_rows(desc, dtypes, shapes, outs):
    n = shapes[2][0]

    def run(inputs, out):
        src, idx, _ = inputs
        check_rows(desc.op, idx, n)
        np.add.at(out, idx, src)  # unbuffered, in increasing i: the order the GPU repeats
    return run


def _top_k_rows(desc, dtypes, shapes, outs):
    k, largest = top_k_params(desc)

    def run(inputs, out):
        values, indices = out
        if values.size:
            x = inputs[0]
            idx = argsort(x, -1, descending=largest, stable=True)[..., :k]
            np.copyto(indices, idx)
            np.copyto(values, np.take_along_axis(x, idx, -1))
    return run


MAKERS = makers(ops.OPS, {
    ops.ROPE: _rope, ops.PERMUTE_0213: _permute_0213, ops.COPY_2D: _copy_2d,
    ops.GATHER_ROWS: _gather_rows, ops.SCATTER_ADD_ROWS: _scatter_add_rows,
    ops.TOP_K_ROWS: _top_k_rows})
