"""SortPrims: Sort, Argsort and Topk along one axis."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import rules as r
from ._base import Descriptor

__all__ = ["Sort", "Argsort", "Topk"]


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
