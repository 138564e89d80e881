"""IndexingPrims on the GPU: IndexSelect, Gather, Scatter and IndexPut (kernels/indexing.cuh);
Nonzero on CuPy's nonzero (see _Nonzero); Bincount (kernels/bincount.cuh for counts, the
Scatter kernels for weighted sums; see _Bincount).

Indices are checked in the kernels: an out-of-range one is never dereferenced but
recorded in the device error flag, which ``run`` reads after the launches (the one
device->host sync of these ops) and turns into IndexError("index 7 is out of bounds for
axis 1 with size 5"). Scatter and IndexPut with repeated destinations are deterministic
without atomics: destination keys, CuPy's stable argsort, then one write per run of
equal keys (the last element; or the whole run summed in order when accumulating).

The output may be any strided view, known only at run time: each launcher keeps the
kernel arguments of the output layouts it has seen.
"""
from __future__ import annotations

import functools

import cupy
import numpy as np

from ...kernels import CTYPE
from ...kernels import indexing as K
from ...prims import descriptors as d
from ...prims.infer import broadcast_shapes
from ._engine import (BLOCK, elem_strides, error_flag, get_kernels, grid_for, shape_arg,
                      strides_arg)

#: output layouts remembered per launcher
_LAYOUTS = 32
_I64 = np.dtype(np.int64)


def _est(arr):
    return elem_strides(arr.strides, arr.itemsize)


def _geo(shape, *strides):
    return (shape_arg(shape),) + tuple(strides_arg(s) for s in strides)


def _bad_index(value: int, axis: int, size: int) -> IndexError:
    return IndexError(f"index {value} is out of bounds for axis {axis} with size {size}")


def _value_at(arr, coords) -> int:
    """One element of a device index array (error path only: a tiny copy)."""
    return int(arr[tuple(coords)])


# ------------------------------------------------------------------- launchers
class Gather:
    """idx_gather: out[c] = a[c with the axis -> index], c over out_shape (out any layout).
    Strides are in elements; a_st, idx_st and pos_st are over out_shape (see
    hipfer.kernels.indexing.gather_geometry). Also used by the sorts."""

    def __init__(self, dt, index_dt, out_shape, axis, a_st, idx_st, pos_st, axis_size,
                 cj=False):
        (self.kernel,) = get_kernels(K.FILE, (K.gather_expr(dt, index_dt),))
        self.n = K.size_of(out_shape)
        self.tail = (np.int64(axis_size), np.bool_(cj))
        static = (tuple(out_shape), axis, a_st, idx_st, pos_st)
        self._layout = functools.lru_cache(maxsize=_LAYOUTS)(
            lambda out_st: self._args(out_st, *static))

    @staticmethod
    def _args(out_st, out_shape, axis, a_st, idx_st, pos_st):
        g = K.gather_geometry(out_shape, axis, out_st, a_st, idx_st, pos_st)
        return ((grid_for(g.n),),
                (np.int64(g.n),) + _geo(g.shape, g.out_st, g.a_st, g.idx_st, g.pos_st)
                + (np.int64(g.a_axis_stride),))

    def __call__(self, out, a, idx, err):
        """Launch (n > 0); err is the error flag's buffer."""
        grid, args = self._layout(_est(out))
        self.kernel(grid, (BLOCK,), (out, a, idx) + args + self.tail + (err,))


class Copy:
    """idx_copy: out = a (conjugated when cj) over shape, both any layout (a's strides
    fixed by the plan)."""

    def __init__(self, dt, shape, a_st, cj=False):
        (self.kernel,) = get_kernels(K.FILE, (K.copy_expr(dt),))
        self.cj = bool(cj)
        shape = tuple(shape)
        self._layout = functools.lru_cache(maxsize=_LAYOUTS)(
            lambda out_st: self._args(shape, out_st, a_st))

    def _args(self, shape, out_st, a_st):
        n, mshape, o, a = K.copy_geometry(shape, out_st, a_st)
        return (grid_for(n),), (np.int64(n),) + _geo(mshape, o, a) + (np.bool_(self.cj),)

    def __call__(self, out, a):
        if out.size == 0:
            return
        if not self.cj and out.data.ptr == a.data.ptr and out.strides == a.strides:
            return  # in place: out already is a
        grid, args = self._layout(_est(out))
        self.kernel(grid, (BLOCK,), (out, a) + args)


class Keys:
    """One idx_keys launch over an index tensor (see the kernel)."""

    def __init__(self, index_dt, geom: K.KeysGeom, axis_size, accumulate=False, pos_base=0):
        (self.kernel,) = get_kernels(K.FILE, (K.keys_expr(index_dt),))
        self.grid = (grid_for(max(geom.n, 1)),)
        self.args = ((np.int64(geom.n),) + _geo(geom.shape, geom.idx_st, geom.key_st)
                     + (np.int64(geom.mult), np.int64(axis_size), np.bool_(accumulate),
                        np.int64(pos_base)))

    def __call__(self, keys, idx, err):
        self.kernel(self.grid, (BLOCK,), (keys, idx) + self.args + (err,))


class KeyedWrite:
    """out = a, then the values written at their sorted destination keys (idx_apply).
    ``geometry(out_st)`` gives the ApplyGeom for an output layout."""

    def __init__(self, dt, accumulate, a_shape, a_st, cj_a, cj_vals, geometry):
        self.copy = Copy(dt, a_shape, a_st, cj_a)
        (self.kernel,) = get_kernels(K.FILE, (K.apply_expr(dt, accumulate),))
        self.cj = np.bool_(cj_vals)
        self._layout = functools.lru_cache(maxsize=_LAYOUTS)(
            lambda out_st: self._args(geometry(out_st)))

    @staticmethod
    def _args(g: K.ApplyGeom):
        n = g.nb * g.nr
        return ((grid_for(max(n, 1)),),
                (np.int64(g.nb), np.int64(g.nr))
                + _geo(g.dshape, g.out_d_st) + _geo(g.bshape, g.vals_b_st)
                + _geo(g.rshape, g.out_r_st, g.vals_r_st), n)

    def __call__(self, out, a, vals, keys, perm):
        if out.size == 0:
            return
        self.copy(out, a)
        if keys is None:
            return
        grid, args, n = self._layout(_est(out))
        if n:
            self.kernel(grid, (BLOCK,), (out, vals, keys, perm) + args + (self.cj,))


def _sorted_keys(n, launches, make_error):
    """Run the key launches [(Keys, index array)], check the error flag (the sync), and
    return (keys, stable argsort of keys); (None, None) for an empty index."""
    if n == 0:
        return None, None
    keys = cupy.empty(n, dtype=_I64)
    flag = error_flag()
    for launch, idx in launches:
        launch(keys, idx, flag.buf)
    flag.check(make_error)
    return keys, cupy.argsort(keys)


def _checked(gather: Gather, out, inputs, make_error):
    """One gather launch, then the error-flag check (the sync); nothing for n == 0."""
    if gather.n == 0:
        return
    flag = error_flag()
    gather(out, inputs[0], inputs[1], flag.buf)
    flag.check(make_error)


# -------------------------------------------------------------------- handlers
def _value_ok(dt) -> bool:
    return dt in CTYPE


def _index_ok(dt) -> bool:
    return dt.kind in "iu" and dt in CTYPE


class _Handler:
    """supports() from the subclass' operand count (n_min, exact when n_fixed) and
    split(dtypes) -> (value dtypes, index dtypes)."""

    def supports(self, desc, dtypes) -> bool:
        if dtypes is None:
            return True
        if len(dtypes) < self.n_min or (self.n_fixed and len(dtypes) != self.n_min):
            return False
        vals, idxs = self.split(dtypes)
        return all(map(_value_ok, vals)) and all(map(_index_ok, idxs))


class _IndexSelect(_Handler):
    n_min, n_fixed = 2, True

    @staticmethod
    def split(dtypes):
        return (dtypes[0],), (dtypes[1],)

    def make(self, desc, dtypes, shapes, outs, strides, conj):
        a_shape = shapes[0]
        axis = desc.axis % len(a_shape)
        a_st = elem_strides(strides[0], dtypes[0].itemsize)
        (i_st,) = elem_strides(strides[1], dtypes[1].itemsize)
        idx_st, pos_st = K.select_strides(len(a_shape), axis, i_st)
        gather = Gather(dtypes[0], dtypes[1], outs[0][0], axis, a_st, idx_st, pos_st,
                        a_shape[axis], conj[0])
        size = a_shape[axis]

        def run(inputs, out):
            idx = inputs[1]
            _checked(gather, out, inputs,
                     lambda pos: _bad_index(_value_at(idx, (pos,)), axis, size))
        return run


class _Gather(_Handler):
    n_min, n_fixed = 2, True
    split = staticmethod(_IndexSelect.split)

    def make(self, desc, dtypes, shapes, outs, strides, conj):
        a_shape, ix_shape = shapes
        axis = desc.axis % len(a_shape)
        a_st = elem_strides(strides[0], dtypes[0].itemsize)
        i_st = elem_strides(strides[1], dtypes[1].itemsize)
        gather = Gather(dtypes[0], dtypes[1], ix_shape, axis, a_st, i_st,
                        K.c_strides(ix_shape), a_shape[axis], conj[0])
        size = a_shape[axis]

        def run(inputs, out):
            idx = inputs[1]
            _checked(gather, out, inputs, lambda pos: _bad_index(
                _value_at(idx, K.unravel(pos, ix_shape)), axis, size))
        return run


class _Scatter(_Handler):
    n_min, n_fixed = 3, True

    @staticmethod
    def split(dtypes):
        return (dtypes[0], dtypes[2]), (dtypes[1],)

    def make(self, desc, dtypes, shapes, outs, strides, conj):
        a_shape, ix_shape, _ = shapes
        axis = desc.axis % len(a_shape)
        a_st, i_st, s_st = (elem_strides(s, t.itemsize) for s, t in zip(strides, dtypes))
        size = a_shape[axis]
        keys = Keys(dtypes[1], K.scatter_keys_geometry(a_shape, ix_shape, i_st, axis), size)
        write = KeyedWrite(dtypes[0], desc.reduce == "add", a_shape, a_st, conj[0], conj[2],
                           lambda out_st: K.scatter_apply_geometry(a_shape, out_st,
                                                                   ix_shape, s_st))
        n_idx = K.size_of(ix_shape)

        def run(inputs, out):
            a, idx, src = inputs
            k, perm = _sorted_keys(n_idx, [(keys, idx)], lambda pos: _bad_index(
                _value_at(idx, K.unravel(pos, ix_shape)), axis, size))
            write(out, a, src, k, perm)
        return run


class _IndexPut(_Handler):
    n_min, n_fixed = 3, False

    @staticmethod
    def split(dtypes):
        return (dtypes[0], dtypes[-1]), tuple(dtypes[1:-1])

    def make(self, desc, dtypes, shapes, outs, strides, conj):
        a_shape, idx_shapes, v_shape = shapes[0], shapes[1:-1], shapes[-1]
        k = len(idx_shapes)
        b_shape = broadcast_shapes(*idx_shapes, what="IndexPut indices")
        nb = K.size_of(b_shape)
        est = [elem_strides(s, t.itemsize) for s, t in zip(strides, dtypes)]
        keys = [Keys(dtypes[1 + j],
                     K.put_keys_geometry(b_shape, idx_shapes[j], est[1 + j], a_shape[:k], j),
                     a_shape[j], accumulate=j > 0, pos_base=j * nb)
                for j in range(k)]
        write = KeyedWrite(dtypes[0], desc.accumulate, a_shape, est[0], conj[0], conj[-1],
                           lambda out_st: K.put_apply_geometry(a_shape, out_st, k, b_shape,
                                                               v_shape, est[-1]))

        def error(pos, inputs):
            j, b = divmod(pos, nb)
            coords = K.broadcast_coords(K.unravel(b, b_shape), idx_shapes[j])
            return _bad_index(_value_at(inputs[1 + j], coords), j, a_shape[j])

        def run(inputs, out):
            idxs = inputs[1:-1]
            kk, perm = _sorted_keys(nb, list(zip(keys, idxs)), lambda pos: error(pos, inputs))
            write(out, inputs[0], inputs[-1], kk, perm)
        return run


HANDLERS = {
    d.IndexSelect: _IndexSelect(),
    d.Gather: _Gather(),
    d.Scatter: _Scatter(),
    d.IndexPut: _IndexPut(),
}


# --------------------------------------------------------------------- nonzero
class _Nonzero:
    """Nonzero on CuPy's own nonzero (a scan over the mask, then the coordinates), as the
    sorts use CuPy's sort: its count needs a device->host sync, which the data-dependent
    output shape needs anyway. The coordinate rows are copied into the worst-case output;
    the count is written on the device (the caller's read of it is the second, idle sync)."""

    def supports(self, desc, dtypes) -> bool:
        return dtypes is None or (len(dtypes) == 1 and dtypes[0] == np.bool_)

    def make(self, desc, dtypes, shapes, outs, strides, conj):
        def run(inputs, out):
            coords, count = out
            a = inputs[0]
            if a.ndim == 0:
                count[...] = a.astype(count.dtype)  # zero coordinate rows; count = the element
                return
            if a.size == 0:
                count.fill(0)
                return
            rows = cupy.nonzero(a)
            n = rows[0].size
            for j, r in enumerate(rows):
                coords[j, :n] = r
            count.fill(n)
        return run


HANDLERS[d.Nonzero] = _Nonzero()


# -------------------------------------------------------------------- bincount
class _Histogram:
    """Histogram: bincount.cuh's histogram, one read of x (a binary search of the edges
    per element, or the interpolated bin walked to the edges for uniform ones;
    shared-memory counts for few bins, 64-bit integer atomics); a (data,
    edges) dtype pair without its own instantiation is cast to its result type first."""

    def supports(self, desc, dtypes) -> bool:
        return dtypes is None or (len(dtypes) == 2 and
                                  all(t in K.HISTOGRAM_DTYPES for t in dtypes))

    def make(self, desc, dtypes, shapes, outs, strides, conj):
        x_dt, e_dt = dtypes
        pair = (x_dt, e_dt) in K.histogram_pairs()
        c = K.histogram_compare(x_dt, e_dt)
        kx, ke = (x_dt, e_dt) if pair else (c, c)
        (kernel,) = get_kernels(K.BINCOUNT_FILE, (K.histogram_expr(kx, ke),))
        x_shape = tuple(shapes[0])
        n = K.size_of(x_shape)
        x_st = elem_strides(strides[0], x_dt.itemsize) if pair else K.c_strides(x_shape)
        mshape, (mst,) = K.merge_axes(x_shape, [x_st])
        n_edges = np.int64(shapes[1][0])
        grid = (grid_for(max(n, 1)),)

        def run(inputs, out):
            x, edges = inputs
            if not pair:
                x, edges = x.astype(c, order="C"), edges.astype(c)
            buf = out if out.flags.c_contiguous else cupy.empty(out.shape, dtype=_I64)
            buf.fill(0)
            if n and n_edges > 1:
                kernel(grid, (BLOCK,), (buf, x, np.int64(n)) + _geo(mshape, mst)
                       + (cupy.ascontiguousarray(edges), n_edges, np.bool_(desc.uniform)))
            if buf is not out:
                out[...] = buf
        return run


class _Bincount:
    """Bincount. Counts: bincount.cuh, 64-bit integer atomics into the zeroed counts
    (through a contiguous scratch when out is a strided view). Weighted: Scatter's
    deterministic keyed accumulation, no float atomics: the keys are the values of x
    (checked against length by idx_keys, the error flag's read being the sync), CuPy's
    stable argsort, then each run of equal keys summed in C order of x into zeros (NumPy's
    order)."""

    def supports(self, desc, dtypes) -> bool:
        if dtypes is None:
            return True
        if len(dtypes) != (2 if desc.weighted else 1) or not _index_ok(dtypes[0]):
            return False
        return not desc.weighted or dtypes[1] == np.float64

    def make(self, desc, dtypes, shapes, outs, strides, conj):
        length = desc.length
        x_shape = tuple(shapes[0])
        n = K.size_of(x_shape)
        x_st = elem_strides(strides[0], dtypes[0].itemsize)
        if desc.weighted:
            return self._weighted(dtypes, x_shape, x_st, n, length,
                                  elem_strides(strides[1], dtypes[1].itemsize))
        (kernel,) = get_kernels(K.BINCOUNT_FILE, (K.bincount_expr(dtypes[0]),))
        mshape, (mst,) = K.merge_axes(x_shape, [x_st])
        grid = (grid_for(max(n, 1)),)
        args = (np.int64(n),) + _geo(mshape, mst) + (np.int64(length),)

        def run(inputs, out):
            if length == 0:
                return
            buf = out if out.flags.c_contiguous else cupy.empty(length, dtype=_I64)
            buf.fill(0)
            if n:
                kernel(grid, (BLOCK,), (buf, inputs[0]) + args)
            if buf is not out:
                out[...] = buf
        return run

    @staticmethod
    def _weighted(dtypes, x_shape, x_st, n, length, w_st):
        keys = Keys(dtypes[0], K.put_keys_geometry(x_shape, x_shape, x_st, (length,), 0),
                    length)
        write = KeyedWrite(np.dtype(np.float64), True, (length,), (0,), False, False,
                           lambda out_st: K.scatter_apply_geometry((length,), out_st,
                                                                   x_shape, w_st))
        zero = cupy.zeros(1, dtype=np.float64)

        def run(inputs, out):
            x, w = inputs
            k, perm = _sorted_keys(n, [(keys, x)], lambda pos: _bad_index(
                _value_at(x, K.unravel(pos, x_shape)), 0, length))
            write(out, zero, w, k, perm)
        return run


HANDLERS[d.Bincount] = _Bincount()
HANDLERS[d.Histogram] = _Histogram()
