"""SortPrims: Sort, Argsort, Topk, Select and Partition along one axis."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import rules as r
from ._base import Descriptor

__all__ = ["Sort", "Argsort", "Topk", "Select", "Partition"]


def _sorted_axis(desc, dtypes, shapes):
    """The checks the three share: one real (or bool) operand of >= 1 axis; returns
    (dtype, shape, normalised axis)."""
    r.expect(desc, dtypes, shapes, 1)
    dt, shape = dtypes[0], shapes[0]
    r.check_kind(desc, r.name(desc), dt, "biuf")
    return dt, shape, r.nonempty_axis(desc, shape, desc.axis)


@dataclass(frozen=True)
class Sort(Descriptor, family="sort"):
    axis: int = -1
    descending: bool = False
    stable: bool = True

    def infer(self, dtypes, shapes):
        dt, shape, _ = _sorted_axis(self, dtypes, shapes)
        return ((shape, dt),)

    def probe_shapes(self, n_inputs):
        return (r.axis_probe(self.axis),) * n_inputs


@dataclass(frozen=True)
class Argsort(Descriptor, family="sort"):
    axis: int = -1
    descending: bool = False
    stable: bool = True

    def infer(self, dtypes, shapes):
        _, shape, _ = _sorted_axis(self, dtypes, shapes)
        return ((shape, np.dtype(np.int64)),)

    def probe_shapes(self, n_inputs):
        return (r.axis_probe(self.axis),) * n_inputs


@dataclass(frozen=True)
class Topk(Descriptor, family="sort"):
    """k largest (or smallest) along axis, values and int64 indices; NaN ranks above every
    number; equal values keep the lower index first. sorted=False still returns rank order."""
    axis: int
    k: int
    largest: bool = True
    sorted: bool = True

    def infer(self, dtypes, shapes):
        dt, shape, axis = _sorted_axis(self, dtypes, shapes)
        if not 0 <= self.k <= shape[axis]:
            raise ValueError(f"Topk: k={self.k} is out of range for an axis of size "
                             f"{shape[axis]}")
        out = shape[:axis] + (self.k,) + shape[axis + 1:]
        return ((out, dt), (out, np.dtype(np.int64)))

    def probe_shapes(self, n_inputs):
        base = list(r.axis_probe(self.axis))
        base[self.axis] = max(self.k, 1)  # room for k
        return (tuple(base),) * n_inputs


@dataclass(frozen=True)
class Select(Descriptor, family="sort"):
    """Order statistics along the last axis: out[..., j] is the k[..., j]-th smallest
    (0-based) value of x[...] in Sort's order (-0.0 == 0.0, NaN last): what a sort would
    put there, found without sorting. x real or bool with a nonempty last axis; k int64 of
    shape x.shape[:-1] + (Q,), each in [0, n) (the caller's check: a rank outside is
    clamped to it). A -0.0 answer may come out as 0.0 and a NaN as the one NaN."""

    def infer(self, dtypes, shapes):
        r.expect(self, dtypes, shapes, 2)
        (dt, k_dt), (shape, k_shape) = dtypes, shapes
        r.check_kind(self, "x", dt, "biuf")
        if k_dt != np.int64:
            raise TypeError(f"Select: k must be int64, got {k_dt}")
        r.nonempty_axis(self, shape, -1)
        if shape[-1] == 0:
            raise ValueError("Select: x's last axis is empty: it has no order statistics")
        if tuple(k_shape[:-1]) != tuple(shape[:-1]) or len(k_shape) != len(shape):
            raise ValueError(f"Select: k of shape {tuple(k_shape)} does not match x of shape "
                             f"{tuple(shape)} (x.shape[:-1] + (Q,) expected)")
        return ((tuple(k_shape), dt),)

    def probe_shapes(self, n_inputs):
        return (4,), (2,)


@dataclass(frozen=True)
class Partition(Descriptor, family="sort"):
    """x rearranged along axis so that the value at each rank in kth (sorted, distinct, in
    [0, n)) is the one a sort puts there, no value before it larger and none after it
    smaller (Sort's order; NumPy's partition); indices=True: the int64 positions of that
    arrangement instead (argpartition). Which valid arrangement is the backend's."""
    axis: int
    kth: tuple
    indices: bool = False

    def infer(self, dtypes, shapes):
        dt, shape, axis = _sorted_axis(self, dtypes, shapes)
        n = shape[axis]
        if not self.kth or list(self.kth) != sorted(set(self.kth)) or \
                not all(0 <= k < n for k in self.kth):
            raise ValueError(f"Partition: kth must be distinct ascending ranks in [0, {n}), "
                             f"got {self.kth}")
        return ((shape, np.dtype(np.int64) if self.indices else dt),)

    def probe_shapes(self, n_inputs):
        base = list(r.axis_probe(self.axis))
        base[self.axis] = max(base[self.axis], max(self.kth) + 1)
        return (tuple(base),) * n_inputs
