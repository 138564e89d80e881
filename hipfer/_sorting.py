"""sort, argsort and topk (SortPrims)."""
from __future__ import annotations

from . import _ops
from ._tensor import Tensor
from .prims import descriptors as d


__all__ = ["argsort", "sort", "topk"]


def _check(x):
    if not isinstance(x, Tensor):
        raise TypeError(f"expected a hipfer Tensor, got {type(x).__name__}")
    if x.dtype.kind == "c":
        raise TypeError("sorting is not defined for complex tensors")


def sort(x: Tensor, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Tensor:
    """Sorted copy along axis; NaN last ascending, first descending; stable by default."""
    _check(x)
    return Tensor(_ops.run(d.Sort(axis, bool(descending), bool(stable)), [x], called="sort"))


def argsort(x: Tensor, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Tensor:
    """Indices (int64) that sort x along axis; the order of sort(x) (NaN last
    ascending, first descending); stable (equal values keep their order) by default.
    """
    _check(x)
    return Tensor(_ops.run(d.Argsort(axis, bool(descending), bool(stable)), [x],
                           called="argsort"))


def topk(x: Tensor, k: int, /, *, axis: int = -1, largest: bool = True):
    """(values, indices) of the k largest (or smallest) along axis, in rank order.
    NaN ranks above every number; equal values keep the lower index first."""
    _check(x)
    vals, idx = _ops.run(d.Topk(axis, int(k), bool(largest), True), [x], called="topk")
    return Tensor(vals), Tensor(idx)
