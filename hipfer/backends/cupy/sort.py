"""SortPrims on the GPU: Sort, Argsort, Topk, Select and Partition.

Our own kernel (kernels/sort.cuh) turns the values into integer keys carrying hipfer's
order (-0.0 == 0.0; NaN last ascending, first descending, via ~key), laid out with the
sorted axis last and contiguous; CuPy's stable argsort of those integers ranks them
(stable in both directions, since descending is a key transform, not a reversal);
the indexing gather writes values into the given output, any layout. Topk is the first
k of the descending (largest) or ascending rank, which puts NaN above every number and
keeps the lower index first among equals.

Select and Partition use the radix select of kernels/select.cuh where it pays (few ranks,
rows long enough: kernels/select.worth_it): key_bits / 8 reads of the rows instead of a
sort. Partition then places each value by its class against its row's answers in two
more reads (select_tally, select_split), in index order within a class. Elsewhere both
are the sort above.
"""
from __future__ import annotations

import cupy
import numpy as np

from ...kernels import CTYPE
from ...kernels import indexing as geometry
from ...kernels import select as S
from ...kernels import sort as K
from ...prims import descriptors as d
from ._engine import BLOCK, elem_strides, error_flag, get_kernels, grid_for, shape_arg, strides_arg
from .indexing import Copy, Gather

_I64 = np.dtype(np.int64)


class Ranker:
    """perm(x): the stable argsort of x along axis in hipfer's order, shaped like x with
    that axis moved last (C-contiguous int64). ``idx_st`` are perm's element strides in
    x's axis order (the moveaxis view back)."""

    def __init__(self, dt, shape, x_st, axis, descending):
        (self.kernel,) = get_kernels(K.FILE, (K.keys_expr(dt),))
        n = geometry.size_of(shape)
        self.length = shape[axis]
        self.moved = shape[:axis] + shape[axis + 1:] + (self.length,)
        self.key_dt = K.key_dtype(dt)
        cm = geometry.c_strides(self.moved)
        self.idx_st = cm[:axis] + (cm[-1],) + cm[axis:-1]
        mshape, (xs, ks) = geometry.merge_axes(shape, [x_st, self.idx_st])
        self.grid = (grid_for(max(n, 1)),)
        self.args = (np.int64(n), shape_arg(mshape), strides_arg(xs), strides_arg(ks),
                     np.bool_(descending))
        # one row: sort it as 1-d (CuPy's radix path rather than its segmented one)
        self.one_row = geometry.size_of(self.moved[:-1]) == 1

    def perm(self, x):
        keys = cupy.empty(self.moved, dtype=self.key_dt)
        self.kernel(self.grid, (BLOCK,), (keys, x) + self.args)
        if self.one_row:
            return cupy.argsort(keys.reshape(self.length)).reshape(self.moved)
        return cupy.argsort(keys, axis=-1)


def _ranker(desc, dt, shape, x_byte_st, descending):
    """(axis, x's element strides, Ranker) of a sort plan."""
    axis = desc.axis % len(shape)
    x_st = elem_strides(x_byte_st, dt.itemsize)
    return axis, x_st, Ranker(dt, shape, x_st, axis, descending)


def _gather(dt, out_shape, axis, x_st, ranker):
    """Values at the ranks: out[c] = x[c with axis -> perm]."""
    zeros = (0,) * len(out_shape)
    return Gather(dt, _I64, out_shape, axis, x_st, ranker.idx_st, zeros, ranker.length)


class _Handler:
    def supports(self, desc, dtypes) -> bool:
        if dtypes is None:
            return True
        return len(dtypes) == 1 and dtypes[0] in CTYPE and dtypes[0].kind in "biuf"


class _Sort(_Handler):
    def make(self, desc, dtypes, shapes, outs, strides, conj):
        dt, shape = dtypes[0], shapes[0]
        axis, x_st, ranker = _ranker(desc, dt, shape, strides[0], desc.descending)
        gather = _gather(dt, shape, axis, x_st, ranker)

        def run(inputs, out):
            if gather.n == 0:
                return
            x = inputs[0]
            # perm is in range by construction: the flag is never set, never read
            gather(out, x, ranker.perm(x), error_flag().buf)
        return run


class _Argsort(_Handler):
    def make(self, desc, dtypes, shapes, outs, strides, conj):
        dt, shape = dtypes[0], shapes[0]
        _, _, ranker = _ranker(desc, dt, shape, strides[0], desc.descending)
        copy = Copy(_I64, shape, ranker.idx_st)
        n = geometry.size_of(shape)

        def run(inputs, out):
            if n:
                copy(out, ranker.perm(inputs[0]))
        return run


class _Topk(_Handler):
    def make(self, desc, dtypes, shapes, outs, strides, conj):
        dt, shape = dtypes[0], shapes[0]
        axis, x_st, ranker = _ranker(desc, dt, shape, strides[0], desc.largest)
        out_shape = outs[0][0]
        gather = _gather(dt, out_shape, axis, x_st, ranker)
        copy = Copy(_I64, out_shape, ranker.idx_st)

        def run(inputs, out):
            if gather.n == 0:
                return
            values, indices = out
            perm = ranker.perm(inputs[0])  # the first k along its last axis are taken
            gather(values, inputs[0], perm, error_flag().buf)
            copy(indices, perm)
        return run


class _Selector:
    """The radix select of rows x n contiguous values of dt, q ranks a row:
    select(x, ranks, answers) fills answers (rows x q, C order; None: only the keys) and
    returns (workspace, address of the answers' keys); split(...) partitions around them."""

    def __init__(self, dt, rows, n, q):
        self.dt, self.plan = dt, S.plan(dt, rows, n, q)
        exprs = (S.count_expr(dt), S.PICK, S.store_expr(dt), S.tally_expr(dt), S.split_expr(dt))
        self.kernels = dict(zip(exprs, get_kernels(S.FILE, exprs)))

    def _run(self, steps):
        for expr, blocks, threads, args in steps:
            self.kernels[expr]((blocks,), (threads,), args)

    def __call__(self, x, ranks, answers):
        ws = cupy.zeros(self.plan.nbytes // 8, dtype=np.uint64)
        steps, keys = S.launches(self.plan, self.dt, x, ranks, ws.data.ptr, answers)
        self._run(steps)
        return ws, keys

    def split(self, x, keys, values, indices):
        counts = cupy.empty(self.plan.tally, dtype=np.uint32)
        self._run(S.split_launches(self.plan, self.dt, x, keys, counts, values, indices))


class _Select(_Handler):
    def supports(self, desc, dtypes) -> bool:
        return dtypes is None or (len(dtypes) == 2 and super().supports(desc, dtypes[:1]))

    def make(self, desc, dtypes, shapes, outs, strides, conj):
        dt, shape, q = dtypes[0], tuple(shapes[0]), shapes[1][-1]
        n, rows = shape[-1], geometry.size_of(shape[:-1])
        if rows * q == 0:
            return lambda inputs, out: None
        if not S.worth_it(dt, rows, n, q):  # the sort's ranks, then the values at k
            _, _, ranker = _ranker(d.Sort(-1), dt, shape, strides[0], False)

            def by_sort(inputs, out):
                x, k = inputs
                idx = cupy.take_along_axis(ranker.perm(x), cupy.clip(k, 0, n - 1), axis=-1)
                out[...] = cupy.take_along_axis(x, idx, axis=-1)
            return by_sort
        select = _Selector(dt, rows, n, q)

        def run(inputs, out):
            x, k = inputs
            ranks = cupy.ascontiguousarray(cupy.clip(k, 0, n - 1)).reshape(-1)
            buf = out if out.flags.c_contiguous else cupy.empty(out.shape, dtype=dt)
            select(cupy.ascontiguousarray(x), ranks, buf)
            if buf is not out:
                out[...] = buf
        return run


class _Partition(_Handler):
    def make(self, desc, dtypes, shapes, outs, strides, conj):
        dt, shape = dtypes[0], tuple(shapes[0])
        axis, q = desc.axis % len(shape), len(desc.kth)
        n, total = shape[axis], geometry.size_of(shape)
        rows = total // n if n else 0
        if not total or not S.worth_it(dt, rows, n, q):  # a sort is one valid partition
            sort = d.Sort(axis)
            return (_Argsort() if desc.indices else _Sort()).make(sort, dtypes, shapes, outs,
                                                                  strides, conj)
        select = _Selector(dt, rows, n, q)
        moved = shape[:axis] + shape[axis + 1:] + (n,)
        res_dt = _I64 if desc.indices else dt

        def run(inputs, out):
            x = cupy.ascontiguousarray(cupy.moveaxis(inputs[0], axis, -1))
            ranks = cupy.tile(cupy.asarray(desc.kth, dtype=_I64), rows)
            _ws, keys = select(x, ranks, None)  # _ws holds the keys until the split is done
            direct = axis == len(shape) - 1 and out.flags.c_contiguous
            res = out if direct else cupy.empty(moved, dtype=res_dt)
            select.split(x, keys, None if desc.indices else res, res if desc.indices else None)
            if not direct:
                out[...] = cupy.moveaxis(res, -1, axis)
        return run


HANDLERS = {d.Sort: _Sort(), d.Argsort: _Argsort(), d.Topk: _Topk(), d.Select: _Select(),
            d.Partition: _Partition()}
