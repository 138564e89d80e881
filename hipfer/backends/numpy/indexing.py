"""Indexing prims on NumPy: IndexSelect, Gather, Scatter, IndexPut, Nonzero.

Valid indices are [-n, n) (negatives wrap once); anything else raises
IndexError("index 7 is out of bounds for axis 1 with size 5"). Repeated destinations
resolve deterministically in C order of the index: plain writes keep the last one,
accumulation adds in that order (``np.add.at`` is unbuffered and ordered).
"""
from __future__ import annotations

import numpy as np

from ...prims import descriptors as d
from ._common import Handler, conj_flags, conj_loader


def _out_of_bounds(value, axis, n) -> IndexError:
    return IndexError(f"index {int(value)} is out of bounds for axis {axis} with size {n}")


def _check_uint64(idx, axis, n):
    """NumPy casts uint64 indices to intp, so huge ones would wrap to valid negatives."""
    if idx.dtype == np.uint64 and idx.size:
        bad = idx >= n
        if bad.any():
            raise _out_of_bounds(idx[bad][0], axis, n)


def checked_index(idx, axis, n) -> np.ndarray:
    """idx as intp in [0, n), or IndexError naming the first bad entry (C order)."""
    if idx.dtype.kind == "u":
        bad = idx >= n
    else:
        bad = (idx < -n) | (idx >= n)
    if bad.any():
        raise _out_of_bounds(idx[bad][0], axis, n)
    idx = idx.astype(np.intp, copy=False)
    if idx.dtype.kind == "i" and idx.size:
        idx = np.where(idx < 0, idx + n, idx)
    return idx


def _last_writes(flat_dest) -> np.ndarray:
    """Positions (into flat_dest) of the last occurrence of each destination. NumPy makes
    no promise about which of several advanced-index writes to one place wins, so
    plain scatters write each destination once."""
    _, first_from_end = np.unique(flat_dest[::-1], return_index=True)
    return flat_dest.size - 1 - first_from_end


def _conj_out(flip):
    """Gathers commute with conjugation: fix the output up in place."""
    return (lambda out: np.conjugate(out, out=out)) if flip else (lambda out: None)


# ------------------------------------------------------------------- gathers
def _make_index_select(desc, dtypes, shapes, outs, strides, conj):
    axis = desc.axis % len(shapes[0])
    n = shapes[0][axis]
    fix = _conj_out(conj_flags(dtypes, conj)[0])

    def run(inputs, out):
        if out.size == 0:
            return
        a, idx = inputs
        _check_uint64(idx, axis, n)
        if idx.size and (idx.min() < -n or idx.max() >= n):
            checked_index(idx, axis, n)  # raises, naming the first bad entry
        # checked above, so mode="wrap" gives what "raise" would (negatives wrap once);
        # with out= and mode="raise", NumPy buffers the whole output (1.8x slower)
        np.take(a, idx, axis=axis, out=out, mode="wrap")
        fix(out)
    return run


def _make_gather(desc, dtypes, shapes, outs, strides, conj):
    axis = desc.axis % len(shapes[0])
    n = shapes[0][axis]
    # torch.gather: the index may be smaller than a on the other axes
    window = tuple(slice(None) if k == axis else slice(0, s) for k, s in enumerate(shapes[1]))
    fix = _conj_out(conj_flags(dtypes, conj)[0])

    def run(inputs, out):
        if out.size == 0:
            return
        a, idx = inputs
        _check_uint64(idx, axis, n)
        np.copyto(out, np.take_along_axis(a[window], idx, axis))
        fix(out)
    return run


# ------------------------------------------------------------------ scatters
def _make_scatter(desc, dtypes, shapes, outs, strides, conj):
    a_shape, ix_shape = shapes[0], shapes[1]
    axis = desc.axis % len(a_shape)
    window = tuple(slice(0, s) for s in ix_shape)
    # the other axes of the destination are the index's own coordinates
    grids = [np.arange(s).reshape((-1,) + (1,) * (len(ix_shape) - k - 1)) if k != axis else None
             for k, s in enumerate(ix_shape)]
    load = conj_loader(dtypes, conj)
    accumulate = desc.reduce == "add"

    def run(inputs, out):
        if out.size == 0:
            return
        a, index, src = load(inputs)
        if out is not a:
            np.copyto(out, a)
        if index.size == 0:
            return
        idx = checked_index(index, axis, a_shape[axis])
        dest = tuple(idx if g is None else g for g in grids)
        src = src[window]
        if accumulate:
            np.add.at(out, dest, src)
            return
        flat = np.ravel_multi_index(np.broadcast_arrays(*dest), a_shape).ravel()
        keep = _last_writes(flat)
        out[np.unravel_index(flat[keep], a_shape)] = src.reshape(-1)[keep]
    return run


def _make_index_put(desc, dtypes, shapes, outs, strides, conj):
    a_shape = shapes[0]
    k = len(shapes) - 2
    lead, rest = a_shape[:k], a_shape[k:]
    load = conj_loader(dtypes, conj)
    accumulate = desc.accumulate

    def run(inputs, out):
        if out.size == 0:
            return
        a, *indices, values = load(inputs)
        if out is not a:
            np.copyto(out, a)
        idx = tuple(checked_index(ix, j, lead[j]) for j, ix in enumerate(indices))
        idx = np.broadcast_arrays(*idx)
        if idx[0].size == 0:
            return
        if accumulate:
            np.add.at(out, tuple(idx), values)
            return
        flat = np.ravel_multi_index(idx, lead).ravel()
        keep = _last_writes(flat)
        vals = np.broadcast_to(values, idx[0].shape + rest).reshape((-1,) + rest)
        out[np.unravel_index(flat[keep], lead)] = vals[keep]
    return run


HANDLERS = {
    d.IndexSelect: Handler(_make_index_select),
    d.Gather: Handler(_make_gather),
    d.Scatter: Handler(_make_scatter),
    d.IndexPut: Handler(_make_index_put),
}


# ------------------------------------------------------------------- nonzero
def _make_nonzero(desc, dtypes, shapes, outs, strides, conj):
    def run(inputs, out):
        coords, count = out
        rows = np.nonzero(inputs[0]) if inputs[0].ndim else ()
        n = rows[0].size if rows else int(bool(inputs[0]))
        for j, r in enumerate(rows):
            coords[j, :n] = r
        count[()] = n
    return run


HANDLERS[d.Nonzero] = Handler(_make_nonzero)


# ------------------------------------------------------------------- bincount
def _make_bincount(desc, dtypes, shapes, outs, strides, conj):
    length = desc.length

    def run(inputs, out):
        x = np.ravel(inputs[0]).astype(np.intp, copy=False)
        w = np.ravel(inputs[1]) if desc.weighted else None
        out[...] = np.bincount(x, w, minlength=length)[:length]
    return run


HANDLERS[d.Bincount] = Handler(_make_bincount)


def _make_histogram(desc, dtypes, shapes, outs, strides, conj):
    """np.histogram's counting with explicit edges: searchsorted of the sorted data."""
    def run(inputs, out):
        x, edges = np.ravel(inputs[0]), inputs[1]
        if edges.shape[0] == 1:  # no bins
            return
        c = np.result_type(x.dtype, edges.dtype)
        x = x[~np.isnan(x)] if x.dtype.kind == "f" else x
        s = np.sort(x.astype(c, copy=False))
        e = edges.astype(c, copy=False)
        cum = np.concatenate([np.searchsorted(s, e[:-1], side="left"),
                              np.searchsorted(s, e[-1:], side="right")])
        out[...] = np.diff(cum)
    return run


HANDLERS[d.Histogram] = Handler(_make_histogram)
