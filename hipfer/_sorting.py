"""sort, argsort, topk (SortPrims) and NumPy's sorting routines built on them: lexsort,
sort_complex, partition and argpartition.

sort and argsort keep the standard's signature (axis keyword-only, so that array-API
consumers' calls bind as specified) and take NumPy's extras as keywords: axis=None
flattens, kind and order are accepted; np.sort(t, 0) binds NumPy's positional axis
through the dispatch. Complex tensors sort lexicographically (real part,
then imaginary part, NumPy's NaN classes last), as NumPy has them: three stable
argsorts, the least significant key first. partition / argpartition are the Partition
prim (a radix select on the GPU where it pays), and order_statistics, the values at given
ranks without a sort behind median and quantile, is the Select prim.
"""
from __future__ import annotations

import operator

import numpy as np

from . import _ops
from ._creation import arange, asarray, zeros
from ._data_type_functions import astype
from ._elementwise import add, imag, isnan, real
from ._tensor import Tensor
from ._views import AxisError, broadcast_to, reshape
from .prims import descriptors as d


__all__ = ["argpartition", "argsort", "lexsort", "partition", "sort", "sort_complex",
           "topk"]

_KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")


def _tensor(x, fn) -> Tensor:
    """x as a Tensor; array-likes (lists, NumPy arrays, scalars) become one."""
    if isinstance(x, Tensor):
        return x
    try:
        return asarray(x)
    except (TypeError, ValueError) as e:
        raise TypeError(f"hipfer.{fn}: expected an array-like, got {type(x).__name__}") from e


def _check(x, fn, kind=None, order=None):
    if kind not in _KINDS:
        raise ValueError(f"hipfer.{fn}: kind must be one of {_KINDS[1:]}, got {kind!r}")
    if order is not None:
        raise ValueError(f"hipfer.{fn}: order= needs a structured array (tensors have no fields)")
    return _tensor(x, fn)


def _flat_axis(x: Tensor, axis, fn):
    """(x, axis) with axis=None meaning the flattened tensor, as in NumPy."""
    if axis is None:
        return reshape(x, (-1,)), 0
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"hipfer.{fn}: axis must be an int or None, got {type(axis).__name__}")
    if not -max(x.ndim, 1) <= axis < max(x.ndim, 1) or x.ndim == 0:
        raise AxisError(f"hipfer.{fn}: axis {axis} is out of range for a {x.ndim}-d tensor")
    return x, int(axis)


def _argsort(x: Tensor, axis: int, descending: bool, stable: bool, fn) -> Tensor:
    if x.dtype.kind == "c":  # lexicographic, NumPy's NaN classes last (see _nan_class)
        p = _argsort(imag(x), axis, descending, True, fn)
        for key in (real(x), _nan_class(x)):
            q = _argsort(_gather(key, p, axis), axis, descending, True, fn)
            p = _gather(p, q, axis)
        return p
    return Tensor(_ops.run(d.Argsort(axis, bool(descending), bool(stable)), [x], called=fn))


def _nan_class(x: Tensor) -> Tensor:
    """NumPy's order of complex values with NaNs (uint8): 0 none, 1 NaN imaginary part,
    2 NaN real part, 3 both; within a class by real, then imaginary part."""
    re, im = astype(isnan(real(x)), np.uint8), astype(isnan(imag(x)), np.uint8)
    return add(add(re, re), im)


def _gather(x, idx, axis, fn="sort"):
    """x's elements at idx along axis (same shapes): take_along_axis' Gather."""
    return Tensor(_ops.run(d.Gather(axis), [x, idx], called=fn))


def sort(x, /, *, axis=-1, descending: bool = False, stable=True, kind=None,
         order=None) -> Tensor:
    """Sorted copy along axis (the flattened tensor for axis=None); NaN last ascending,
    first descending; stable unless stable=False (kind is accepted and changes nothing).
    Complex: lexicographic, as NumPy. ``descending`` is the standard's."""
    x, axis = _flat_axis(_check(x, "sort", kind, order), axis, "sort")
    if x.dtype.kind == "c":
        return _gather(x, _argsort(x, axis, descending, True, "sort"), axis % x.ndim)
    return Tensor(_ops.run(d.Sort(axis, bool(descending), stable is not False), [x],
                           called="sort"))


def argsort(x, /, *, axis=-1, descending: bool = False, stable=True, kind=None,
            order=None) -> Tensor:
    """Indices (int64) that sort x along axis (the flattened tensor for axis=None), the
    order of sort(x); stable (equal values keep their order) unless stable=False."""
    x, axis = _flat_axis(_check(x, "argsort", kind, order), axis, "argsort")
    return _argsort(x, axis % x.ndim, descending, stable is not False, "argsort")


def sort_complex(a, /) -> Tensor:
    """sort(a) along the last axis as a complex tensor: NumPy's result dtypes (complex64
    for (u)int8/16, else complex128)."""
    s = sort(_tensor(a, "sort_complex"))
    if s.dtype.kind == "c":
        return s
    small = s.dtype in (np.int8, np.int16, np.uint8, np.uint16)
    return astype(s, np.complex64 if small else np.complex128)


def lexsort(keys, axis=-1) -> Tensor:
    """Indices (int64) that sort by several keys along axis: the last key is the primary
    one (a 2-d tensor: its rows are the keys). One stable argsort per key."""
    if isinstance(keys, Tensor):
        if keys.ndim == 0:
            raise TypeError("hipfer.lexsort: need a sequence of keys with len > 0")
        keys = [keys[i] for i in range(keys.shape[0])]
    keys = [_tensor(k, "lexsort") for k in keys]
    if not keys:
        raise TypeError("hipfer.lexsort: need a sequence of keys with len > 0")
    if any(k.shape != keys[0].shape for k in keys):
        raise ValueError("hipfer.lexsort: all keys need to be the same shape")
    if any(k.device != keys[0].device for k in keys):
        raise ValueError("hipfer.lexsort: all keys must be on the same device")
    if axis is None:
        keys = [reshape(k, (-1,)) for k in keys]
    if keys[0].ndim == 0:  # one element: NumPy's answer is index 0
        return zeros((), dtype=np.int64, device=keys[0].device)
    k0, axis = _flat_axis(keys[0], -1 if axis is None else axis, "lexsort")
    axis %= k0.ndim
    perm = _argsort(k0, axis, False, True, "lexsort")
    for k in keys[1:]:
        q = _argsort(_gather(k, perm, axis), axis, False, True, "lexsort")
        perm = _gather(perm, q, axis)
    return perm


def _kths(kth, n: int, fn) -> tuple:
    """kth (an int or a sequence of ints) checked against an axis of length n, as the
    distinct ranks ascending."""
    if isinstance(kth, Tensor):  # its values decide shapes on the host: no read-back
        raise TypeError(f"hipfer.{fn}: kth must be Python ints, not a tensor")
    ks = np.atleast_1d(np.asarray(kth))
    if ks.dtype.kind == "b":
        raise ValueError(f"hipfer.{fn}: booleans unacceptable as partition index")
    if ks.dtype.kind not in "iu" or ks.ndim > 1:
        raise TypeError(f"hipfer.{fn}: kth must be an int or a sequence of ints")
    for k in ks.tolist():
        if not -n <= k < n:
            raise ValueError(f"hipfer.{fn}: kth(={k}) out of bounds ({n})")
    return tuple(sorted({k % n for k in ks.tolist()}))


def _partition(a, kth, axis, kind, order, fn, indices) -> Tensor:
    """The Partition prim after NumPy's checks of kind, order, axis and kth."""
    if kind != "introselect":
        raise ValueError(f"hipfer.{fn}: kind must be 'introselect', got {kind!r}")
    x, ax = _flat_axis(_check(a, fn, None, order), axis, fn)
    kths = _kths(kth, x.shape[ax], fn)
    if not kths:  # no rank to place: NumPy's identity
        if not indices:
            return asarray(x, copy=True)
        n = x.shape[ax]
        pos = reshape(arange(n, dtype=np.int64, device=x.device), (n,) + (1,) * (x.ndim - ax - 1))
        return asarray(broadcast_to(pos, x.shape), copy=True)
    if x.dtype.kind == "c":  # no radix key: a lexicographic sort is one valid partition
        return (argsort if indices else sort)(x, axis=ax)
    return Tensor(_ops.run(d.Partition(ax, kths, indices), [x], called=fn))


def partition(a, kth, axis=-1, kind="introselect", order=None) -> Tensor:
    """A copy of a with each kth element (int or sequence, negatives from the end) in its
    sorted place along axis (the flattened a for axis=None), smaller-or-equal ones before
    it and larger-or-equal after (NaN last). The order within the parts is the backend's
    (NumPy's introselect on the CPU; on the GPU a radix select of the kth values, then a
    stable split around them, or a full sort for short rows or many kth)."""
    return _partition(a, kth, axis, kind, order, "partition", False)


def argpartition(a, kth, axis=-1, kind="introselect", order=None) -> Tensor:
    """Indices (int64) that partition a along axis around kth (see partition)."""
    return _partition(a, kth, axis, kind, order, "argpartition", True)


def order_statistics(t: Tensor, k: Tensor, called: str) -> Tensor:
    """The k[..., j]-th smallest values of t along its last axis (Sort's order: NaN last;
    a zero may come out as +0.0), shape t.shape[:-1] + (Q,): k integer, of that shape or
    broadcastable to it, each in [0, n) (clamped). One Select: no sort where it pays."""
    k = astype(k, np.int64) if k.dtype != np.int64 else k
    k = broadcast_to(k, t.shape[:-1] + k.shape[-1:])
    return Tensor(_ops.run(d.Select(), [t, k], called=called))


def topk(x: Tensor, k: int, /, *, axis: int = -1, largest: bool = True):
    """(values, indices) of the k largest (or smallest) along axis, in rank order.
    NaN ranks above every number; equal values keep the lower index first."""
    if not isinstance(x, Tensor):
        raise TypeError(f"expected a hipfer Tensor, got {type(x).__name__}")
    if x.dtype.kind == "c":
        raise TypeError("hipfer.topk: not defined for complex tensors")
    vals, idx = _ops.run(d.Topk(axis, operator.index(k), bool(largest), True), [x],
                         called="topk")
    return Tensor(vals), Tensor(idx)
