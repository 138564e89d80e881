"""IndexingPrims: IndexSelect, Gather, Scatter, IndexPut, Nonzero and Bincount."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from .. import rules as r
from ._base import Descriptor

__all__ = ["IndexSelect", "Gather", "Scatter", "IndexPut", "Nonzero", "Bincount", "Histogram"]


def _along_axis(desc, dtypes, shapes, n_in):
    """The checks IndexSelect, Gather and Scatter share: (a, index[, src]) with an
    integer index and an axis of a; returns the normalised axis."""
    r.expect(desc, dtypes, shapes, n_in)
    a = shapes[0]
    if dtypes[1].kind not in r.INDEX_KINDS:
        raise TypeError(f"{r.name(desc)}: index must be an integer tensor, got {dtypes[1]}")
    if len(a) == 0:
        raise ValueError(f"{r.name(desc)}: operand must have at least one axis")
    return r.norm_axis(desc, desc.axis, len(a))


def _index_fits(desc, a, ix, axis):
    """Gather and Scatter: index has a's rank and fits a off the axis."""
    if len(ix) != len(a):
        raise ValueError(f"{r.name(desc)}: index has {len(ix)} axes, the operand {len(a)}")
    for k in range(len(a)):
        if k != axis and ix[k] > a[k]:
            raise ValueError(f"{r.name(desc)}: index shape {ix} exceeds operand shape {a} on "
                             f"axis {k}")


@dataclass(frozen=True)
class IndexSelect(Descriptor, family="indexing"):
    """out = take(a, index, axis) with a 1-D integer index (negative entries wrap once)."""
    axis: int

    def infer(self, dtypes, shapes):
        axis = _along_axis(self, dtypes, shapes, 2)
        a, ix = shapes
        if len(ix) != 1:
            raise ValueError(f"IndexSelect: index must be 1-d, got shape {ix}")
        return ((a[:axis] + (ix[0],) + a[axis + 1:], dtypes[0]),)

    def probe_shapes(self, n_inputs):
        return r.axis_probe(self.axis), (1,)


@dataclass(frozen=True)
class Gather(Descriptor, family="indexing"):
    """out[..., i, ...] = a[..., index[..., i, ...], ...] along axis (torch.gather)."""
    axis: int

    def infer(self, dtypes, shapes):
        axis = _along_axis(self, dtypes, shapes, 2)
        a, ix = shapes
        _index_fits(self, a, ix, axis)
        return ((tuple(ix), dtypes[0]),)

    def probe_shapes(self, n_inputs):
        return (r.axis_probe(self.axis),) * n_inputs


@dataclass(frozen=True)
class Scatter(Descriptor, family="indexing"):
    """out = a; out[..., index[..., i, ...], ...] (=|+=) src[..., i, ...] along axis.
    reduce None: the last write in index order wins; 'add': accumulate."""
    axis: int
    reduce: Optional[str] = None

    def infer(self, dtypes, shapes):
        axis = _along_axis(self, dtypes, shapes, 3)
        a, ix, src = shapes
        _index_fits(self, a, ix, axis)
        if self.reduce not in (None, "add"):
            raise ValueError(f"Scatter: reduce must be None or 'add', got {self.reduce!r}")
        if dtypes[2] != dtypes[0]:
            raise TypeError(f"Scatter: src dtype {dtypes[2]} differs from {dtypes[0]}")
        if len(src) != len(a) or any(i > s for i, s in zip(ix, src)):
            raise ValueError(f"Scatter: index shape {ix} exceeds src shape {src}")
        return ((tuple(a), dtypes[0]),)

    def probe_shapes(self, n_inputs):
        return (r.axis_probe(self.axis),) * n_inputs


@dataclass(frozen=True)
class IndexPut(Descriptor, family="indexing"):
    """out = a; out[idx_0, ..., idx_{k-1}] (=|+=) values, with k broadcast integer index
    tensors over the leading k axes (NumPy advanced-index assignment)."""
    accumulate: bool = False

    def infer(self, dtypes, shapes):
        if len(dtypes) < 3 or len(shapes) != len(dtypes):
            raise ValueError("IndexPut takes (a, index_0, ..., index_k-1, values)")
        a, vals = shapes[0], shapes[-1]
        idx = shapes[1:-1]
        for it in dtypes[1:-1]:
            if it.kind not in r.INDEX_KINDS:
                raise TypeError(f"IndexPut: index tensors must be integer, got {it}")
        if dtypes[-1] != dtypes[0]:
            raise TypeError(f"IndexPut: values dtype {dtypes[-1]} differs from {dtypes[0]}")
        if len(idx) > len(a):
            raise ValueError(f"IndexPut: {len(idx)} index tensors for a {len(a)}-d operand")
        target = r.broadcast_shapes(*idx, what="IndexPut indices") + tuple(a[len(idx):])
        if r.broadcast_shapes(vals, target, what="IndexPut values") != target:
            raise ValueError(f"IndexPut: values of shape {vals} do not broadcast to {target}")
        return ((tuple(a), dtypes[0]),)

    def probe_shapes(self, n_inputs):
        k = max(n_inputs - 2, 1)
        return (r.ones(k),) + ((),) * (n_inputs - 1)


@dataclass(frozen=True)
class Nonzero(Descriptor, family="indexing"):
    """Coordinates of the True elements of a bool tensor, in C order. Two outputs:
    coords (a.ndim, a.size) int64, whose first ``count`` columns hold the coordinates
    (column c: the c-th True element; the other columns are unspecified), and count
    (0-d int64). The output is sized for the worst case because the count is data; the
    caller reads count (one device->host sync) and slices. A 0-d operand gives zero rows."""

    def infer(self, dtypes, shapes):
        r.expect(self, dtypes, shapes, 1)
        if dtypes[0] != np.bool_:
            raise TypeError(f"Nonzero: the operand must be bool, got {dtypes[0]} (compare "
                            "with 0 first)")
        shape = shapes[0]
        i64 = np.dtype(np.int64)
        return (((len(shape), int(np.prod(shape))), i64), ((), i64))


@dataclass(frozen=True)
class Bincount(Descriptor, family="indexing"):
    """out[k] = how many elements of the integer tensor x (any shape and layout, read in
    C order) equal k, for k in [0, length): int64 (NumPy's bincount of x.ravel() with
    minlength=length). weighted: a second operand, float64 weights of x's shape, and
    out[k] = the sum of the weights of the elements equal to k, added in C order
    (float64; NumPy's bincount with weights). The caller makes every x in [0, length)
    (hipfer.bincount: length = max(minlength, max(x) + 1)); the backends do not write out
    of range for others. Deterministic: integer counts, and weighted sums in C order
    (no float atomics)."""
    length: int
    weighted: bool = False

    def infer(self, dtypes, shapes):
        r.expect(self, dtypes, shapes, 2 if self.weighted else 1)
        if dtypes[0].kind not in r.INDEX_KINDS:
            raise TypeError(f"Bincount: x must be an integer tensor, got {dtypes[0]}")
        if not isinstance(self.length, int) or isinstance(self.length, bool) \
                or self.length < 0:
            raise ValueError(f"Bincount: length must be a non-negative int, got "
                             f"{self.length!r}")
        if self.weighted:
            if dtypes[1] != np.float64:
                raise TypeError(f"Bincount: weights must be float64, got {dtypes[1]}")
            if tuple(shapes[1]) != tuple(shapes[0]):
                raise ValueError(f"Bincount: weights of shape {shapes[1]} differ from x's "
                                 f"{shapes[0]}")
        dt = np.dtype(np.float64 if self.weighted else np.int64)
        return (((self.length,), dt),)

    def probe_shapes(self, n_inputs):
        return ((1,),) * n_inputs


@dataclass(frozen=True)
class Histogram(Descriptor, family="indexing"):
    """out[b] = how many elements v of x (real, not bool; any shape and layout) fall in
    bin b of the 1-d edges (increasing; the caller checks): edges[b] <= v < edges[b + 1],
    the last bin closed (v == edges[-1] counts in it); int64, len(edges) - 1 bins. v and
    the edges compare in NumPy's result type of the two dtypes (np.histogram's
    searchsorted); NaN and values outside the edges are not counted. Deterministic
    (integer counts). uniform: a hint that the edges are about evenly spaced (a backend may
    start each search at the interpolated bin); the counts are the same either way."""
    uniform: bool = False

    def infer(self, dtypes, shapes):
        r.expect(self, dtypes, shapes, 2)
        for what, dt in zip(("x", "edges"), dtypes):
            if dt.kind not in "iuf":
                raise TypeError(f"Histogram: {what} must be a real tensor, got {dt}")
        if len(shapes[1]) != 1 or shapes[1][0] < 1:
            raise ValueError(f"Histogram: edges must be 1-d with at least one edge, got "
                             f"shape {tuple(shapes[1])}")
        return (((shapes[1][0] - 1,), np.dtype(np.int64)),)

    def probe_shapes(self, n_inputs):
        return (1,), (2,)

