"""Searching functions: argmax, argmin, count_nonzero, searchsorted.

(``where`` lives with the elementwise functions, ``nonzero`` with indexing.)
argmax / argmin run ArgReduce along one axis (the flattened tensor for axis=None);
count_nonzero is a sum of ``x != 0``; searchsorted is one SearchSorted over the promoted
operands (binary search; NaN sorts last, as in sort).
"""
from __future__ import annotations

from typing import Literal

import numpy as np

from . import _dtypes, _ops
from ._core import cast, operands
from ._creation import arange, asarray, empty, full, zeros
from ._data_type_functions import astype
from ._elementwise import clip, greater, greater_equal, less, logical_and, not_equal, where
from ._indexing import take
from ._naming import public
from ._sorting import argsort
from ._statistical import cumulative_sum, sum as _sum
from ._tensor import Tensor
from ._views import AxisError, reshape
from .prims import descriptors as d
from .prims.optable import ReduceOp

__all__ = ["argmax", "argmin", "count_nonzero", "searchsorted"]


def _tensor(x, fn) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}() expects a hipfer Tensor, got {type(x).__name__}")
    return x


def _real(x: Tensor, fn) -> Tensor:
    if x.dtype.kind == "c":
        raise TypeError(f"{fn}() is not defined for complex tensors (no total order)")
    return x


def _arg(op: ReduceOp, name: str):
    def fn(x: Tensor, /, *, axis: int | None = None, keepdims: bool = False) -> Tensor:
        _real(_tensor(x, name), name)
        if axis is None or x.ndim == 0:
            if x.size == 0:
                raise ValueError(f"{name}() of an empty tensor has no extreme")
            if axis is not None and axis not in (0, -1):
                raise AxisError(f"{name}(): axis {axis} is out of range for a 0-d tensor")
            out = Tensor(_ops.run(d.ArgReduce(op, 0), [x.reshape(-1)], called=name))
            return out.reshape((1,) * x.ndim) if keepdims else out
        axis = int(axis)
        if not -x.ndim <= axis < x.ndim:
            raise AxisError(f"{name}(): axis {axis} is out of range for a {x.ndim}-d tensor")
        axis %= x.ndim
        out = Tensor(_ops.run(d.ArgReduce(op, axis), [x], called=name))
        if keepdims:
            out = out.reshape(x.shape[:axis] + (1,) + x.shape[axis + 1:])
        return out
    fn.__name__ = name
    what = "maximum" if op is ReduceOp.MAX else "minimum"
    fn.__doc__ = (f"Index (default integer dtype) of the first {what} along axis (of the "
                  "flattened tensor when axis is None); NaN counts as the extreme.")
    return fn


argmax = public("argmax", _arg(ReduceOp.MAX, "argmax"))
argmin = public("argmin", _arg(ReduceOp.MIN, "argmin"))


def count_nonzero(x: Tensor, /, *, axis=None, keepdims: bool = False) -> Tensor:
    """Number of non-zero elements over axis (int or tuple; all axes when None), int64."""
    mask = not_equal(_tensor(x, "count_nonzero"), 0)
    return _sum(mask, axis=axis, dtype=_dtypes.default_int, keepdims=keepdims)


def searchsorted(x1, x2, /, *, side: Literal["left", "right"] = "left",
                 sorter=None) -> Tensor:
    """Indices (int64, x2's shape) where x2's elements go in the ascending 1-d x1 to keep
    it sorted: side 'left' before equal elements, 'right' after them (NaN sorts last).
    sorter: indices that sort x1. x2 may be a Python scalar (a 0-d result); a Python int
    outside x1's integer range goes to the start or the end, as in NumPy. Complex operands
    (x1 in NumPy's lexicographic order) are merged with x2 by one stable argsort instead
    of a binary search (see _complex_searchsorted)."""
    x1 = _as_tensor(x1, "searchsorted")
    if x1.ndim != 1:
        raise ValueError(f"hipfer.searchsorted: a must be 1-d, got shape {x1.shape}")
    if side not in ("left", "right"):
        raise ValueError(f"hipfer.searchsorted: side must be 'left' or 'right', got {side!r}")
    if sorter is not None:
        sorter = _as_tensor(sorter, "searchsorted")
        if sorter.shape != x1.shape:
            raise ValueError(f"hipfer.searchsorted: sorter shape {sorter.shape} differs "
                             f"from a's {x1.shape}")
        x1 = take(x1, sorter)
    if isinstance(x2, int) and not isinstance(x2, bool) and x1.dtype.kind in "iu":
        info = np.iinfo(x1.dtype)
        if not info.min <= x2 <= info.max:  # below or above every element
            return full((), 0 if x2 < info.min else x1.shape[0], dtype=np.int64,
                        device=x1.device)
    if not isinstance(x2, (Tensor, bool, int, float, np.generic)):
        x2 = asarray(x2, device=x1.device)
    if isinstance(x2, Tensor) and {x1.dtype.kind, x2.dtype.kind} == {"i", "u"} and \
            np.uint64 in (x1.dtype, x2.dtype):
        return _signed_unsigned(x1, x2, side)
    a, b, dt = operands(x1, x2)
    if np.dtype(dt).kind == "c":
        return _complex_searchsorted(cast(a, dt), cast(b, dt), side)
    return Tensor(_ops.run(d.SearchSorted(side), [cast(a, dt), cast(b, dt)],
                           called="searchsorted"))


def _signed_unsigned(a: Tensor, v: Tensor, side: str) -> Tensor:
    """uint64 with a signed integer (no integer dtype holds both): exact, without
    floats. A value below 0 or above int64's range goes to the start or the end."""
    if a.dtype == np.uint64:  # negative values go first
        inside = searchsorted(a, astype(clip(v, 0, None), np.uint64), side=side)
        return where(less(v, 0), 0, inside)
    big = np.iinfo(np.int64).max
    inside = searchsorted(astype(a, np.int64), astype(clip(v, None, big), np.int64),
                          side=side)
    return where(greater(v, big), a.shape[0], inside)


def _complex_searchsorted(a: Tensor, v: Tensor, side: str) -> Tensor:
    """searchsorted for complex a (sorted) and v: one stable argsort of v and a side by
    side (v first for 'left', so v goes before equal elements of a; after a for
    'right'); an element of v then lands after as many elements of a as sit before it
    in the merged order: its merged position minus the v elements before it."""
    n, m = a.shape[0], v.size
    flat = reshape(v, (-1,))
    if m == 0 or n == 0:
        return full(v.shape, 0, dtype=np.int64, device=a.device)
    both = empty((n + m,), dtype=a.dtype, device=a.device)
    v_at = slice(0, m) if side == "left" else slice(n, n + m)
    both[v_at] = flat
    both[slice(m, n + m) if side == "left" else slice(0, n)] = a
    order = argsort(both)
    v_start = 0 if side == "left" else n
    is_v = logical_and(greater_equal(order, v_start), less(order, v_start + m))
    v_before = cumulative_sum(astype(is_v, np.int64)) - 1  # v elements before, at a v
    pos = arange(n + m, dtype=np.int64, device=a.device) - v_before
    slot = where(is_v, order - v_start, m)  # elements of a go to a spare slot m
    out = zeros((m + 1,), dtype=np.int64, device=a.device)
    out[slot] = pos
    return reshape(out[:m], v.shape)


def _as_tensor(x, fn) -> Tensor:
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (list, tuple, np.ndarray, np.generic, bool, int, float)):
        return asarray(x)
    raise TypeError(f"hipfer.{fn}: expects a hipfer Tensor or array-like, got {type(x).__name__}")
