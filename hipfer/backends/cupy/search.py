"""ArgReduce, Cumulative and SearchSorted on the GPU (kernels/scan.cuh, search.cuh).

An operand is seen as independent *lines* (every axis but the one reduced or scanned:
N-d shape and element strides) times the axis. The output may be any strided view, so
its strides are read at execute; the launch arguments per output layout are cached.
Launch choices depend on the shapes only, so float scans repeat bit-for-bit.
"""
from __future__ import annotations

import functools

import cupy
import numpy as np

from ...kernels import CTYPE, calc_dtype
from ...kernels import scan as KS
from ...kernels import search as KR
from ...kernels.indexing import size_of
from ...prims import descriptors as d
from ...prims.optable import ReduceOp
from ._engine import BLOCK, elem_strides, get_kernels, grid_for, shape_arg, strides_arg

_LAYOUTS = 32
MAX_GRID = 1 << 16


def _est(arr):
    return elem_strides(arr.strides, arr.itemsize)


def _drop(t, axis):
    return tuple(t[:axis]) + tuple(t[axis + 1:])


class _Lines:
    """lines x axis geometry of one operand: the lines' shape and x's strides, fixed by
    the plan; ``out_args(out)`` adds the output's (cached per layout)."""

    def __init__(self, shape, x_st, axis):
        self.n_lines = size_of(_drop(shape, axis))
        self.length = shape[axis]
        self.lines = shape_arg(_drop(shape, axis))
        self.x_lines = strides_arg(_drop(x_st, axis))
        self.x_ax = np.int64(x_st[axis])
        self.axis = axis
        self.out_args = functools.lru_cache(maxsize=_LAYOUTS)(self._out_args)

    def _out_args(self, out_st):
        return strides_arg(_drop(out_st, self.axis)), np.int64(out_st[self.axis])


# ----------------------------------------------------------------------- ArgReduce
class _ArgReduce:
    def supports(self, desc, dtypes) -> bool:
        return dtypes is None or (len(dtypes) == 1 and dtypes[0] in KR.SEARCH_DTYPES)

    def make(self, desc, dtypes, shapes, outs, strides, conj):
        dt, shape = dtypes[0], shapes[0]
        axis = desc.axis % len(shape)
        g = _Lines(shape, elem_strides(strides[0], dt.itemsize), axis)
        lines_k, block_k = get_kernels(KR.FILE, KR.arg_exprs(desc.op is ReduceOp.MAX, dt))
        if KR.one_thread_per_output(g.n_lines, g.length):
            kernel, grid, block = lines_k, (grid_for(max(g.n_lines, 1)),), (BLOCK,)
        else:
            kernel, grid, block = block_k, (min(g.n_lines, MAX_GRID),), (KR.BLOCK,)
        n_out, length = np.int64(g.n_lines), np.int64(g.length)

        def run(inputs, out):
            if g.n_lines == 0:
                return
            # out has the lines' shape: its strides are the lines' output strides
            ost = strides_arg(_est(out))
            kernel(grid, block, (inputs[0], out, n_out, length, g.lines, g.x_lines, ost, g.x_ax))
        return run


# ---------------------------------------------------------------------- Cumulative
class _Scanner:
    """out = scan(x) along axis for one (op, dtype, shape, x strides): a thread per line,
    or tiles whose carries come from a (recursive) scan of the tile totals."""

    def __init__(self, op, dt, shape, x_st, axis, include_initial, cj):
        self.g = g = _Lines(shape, x_st, axis)
        self.dt, self.cj, self.init = dt, np.bool_(cj), np.bool_(include_initial)
        self.lines_k, self.tiles_k = get_kernels(
            KS.FILE, (KS.lines_expr(op, dt), KS.tiles_expr(op, dt)))
        self.per_thread = KS.one_thread_per_line(g.n_lines, g.length)
        self.n_tiles = KS.n_tiles(g.length)
        self.carries = None
        self.acc_dt = calc_dtype(dt)  # the tile totals and carries (float32 for float16)
        if not self.per_thread and self.n_tiles > 1:
            # the carries: an include_initial scan of the (n_lines, n_tiles) tile totals
            self.carries = _Scanner(op, self.acc_dt, (g.n_lines, self.n_tiles), (self.n_tiles, 1), 1,
                                    True, False)

    def __call__(self, x, out):
        g = self.g
        out_lines, out_ax = g.out_args(_est(out))
        common = (np.int64(g.n_lines), np.int64(g.length), g.lines, g.x_lines, out_lines,
                  g.x_ax, out_ax, self.init)
        if self.per_thread:
            self.lines_k((grid_for(max(g.n_lines, 1)),), (BLOCK,), (x, self.cj, out) + common)
            return
        nt = self.n_tiles
        grid = (min(g.n_lines * nt, MAX_GRID),)
        if self.carries is None:
            self.tiles_k(grid, (KS.BLOCK,), (x, self.cj, out, out, out, np.int32(KS.MODE_PLAIN))
                         + common + (np.int64(g.length), np.int64(1)))
            return
        tail = (np.int64(KS.TILE), np.int64(nt))
        totals = cupy.empty((g.n_lines, nt), self.acc_dt)
        carry = cupy.empty((g.n_lines, nt + 1), self.acc_dt)
        self.tiles_k(grid, (KS.BLOCK,), (x, self.cj, out, totals, out, np.int32(KS.MODE_TOTALS))
                     + common + tail)
        self.carries(totals, carry)
        self.tiles_k(grid, (KS.BLOCK,), (x, self.cj, out, totals, carry, np.int32(KS.MODE_CARRY))
                     + common + tail)


class _Cumulative:
    def supports(self, desc, dtypes) -> bool:
        return dtypes is None or (len(dtypes) == 1 and dtypes[0] in CTYPE)

    def make(self, desc, dtypes, shapes, outs, strides, conj):
        dt, shape = dtypes[0], shapes[0]
        scan = _Scanner(desc.op.value, dt, shape, elem_strides(strides[0], dt.itemsize),
                        desc.axis % len(shape), desc.include_initial,
                        conj[0] and dt.kind == "c")
        n_out = size_of(outs[0][0])

        def run(inputs, out):
            if n_out:
                scan(inputs[0], out)
        return run


# -------------------------------------------------------------------- SearchSorted
class _SearchSorted:
    def supports(self, desc, dtypes) -> bool:
        return dtypes is None or all(t in KR.SEARCH_DTYPES for t in dtypes)

    def make(self, desc, dtypes, shapes, outs, strides, conj):
        dt = dtypes[0]
        (kernel,) = get_kernels(KR.FILE, (KR.sorted_expr(dt, desc.side == "right"),))
        n1 = np.int64(shapes[0][0])
        x1_st = np.int64(elem_strides(strides[0], dt.itemsize)[0])
        shape = shapes[1]
        n = size_of(shape)
        args = (np.int64(n), shape_arg(shape), strides_arg(elem_strides(strides[1], dt.itemsize)))
        grid = (grid_for(max(n, 1)),)

        def run(inputs, out):
            if n:
                kernel(grid, (BLOCK,), (inputs[0], n1, x1_st, inputs[1], out) + args
                       + (strides_arg(_est(out)),))
        return run


HANDLERS = {d.ArgReduce: _ArgReduce(), d.Cumulative: _Cumulative(), d.SearchSorted: _SearchSorted()}
