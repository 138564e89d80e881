"""Zero-copy views of a tensor (and the shape rules they share): permute_dims,
matrix_transpose, expand_dims, squeeze, broadcast_to / broadcast_arrays, diagonal, flip,
moveaxis, unstack, and reshape (a view whenever the strides allow; else one copy).

Every result shares the operand's memory and keeps its conjugation flag. Imports only
the Tensor and the op path: everything above may build on these.
"""
from __future__ import annotations

import math
from operator import index as _index

import numpy as np

from . import _ops
from ._tensor import Tensor, xp_of
from .prims import descriptors as d

__all__ = ["broadcast_arrays", "broadcast_shapes", "broadcast_to", "diagonal", "expand_dims",
           "flip", "matrix_transpose", "moveaxis", "permute_dims", "reshape", "squeeze",
           "unstack"]

# Invalid axes raise NumPy's AxisError: it is both the IndexError the standard names and
# the ValueError NumPy users catch.
AxisError = np.exceptions.AxisError


def _axis(axis, ndim: int, what="axis") -> int:
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{what} must be an int, got {type(axis).__name__}")
    if not -ndim <= axis < ndim:
        raise AxisError(f"{what} {axis} is out of range for a {ndim}-d tensor")
    return int(axis) % ndim


def _axes(axis, ndim: int, what="axis") -> tuple:
    """An int or a sequence of ints as normalised, distinct axes (in the order given)."""
    seq = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = tuple(_axis(a, ndim, what) for a in seq)
    if len(set(out)) != len(out):
        raise AxisError(f"repeated {what} in {seq}")
    return out


def _view(x: Tensor, shape, strides_elems) -> Tensor:
    item = x.dtype.itemsize
    xp = xp_of(x._data)
    v = xp.lib.stride_tricks.as_strided(x._data, shape=tuple(shape),
                                        strides=tuple(s * item for s in strides_elems))
    return Tensor(v, x._conj)


def permute_dims(x: Tensor, /, axes) -> Tensor:
    """x with its axes reordered: axis i of the result is axis axes[i] of x.
    A view (no copy; the lazy conjugation flag is kept); NumPy's transpose(x, axes).
    """
    axes = _axes(tuple(axes), x.ndim)
    if len(axes) != x.ndim:
        raise ValueError(f"permute_dims: axes {axes} are not a permutation of {x.ndim} axes")
    return Tensor(x._data.transpose(axes), x._conj)


def matrix_transpose(x: Tensor, /) -> Tensor:
    """x with its last two axes swapped (x.mT): a view, no copy."""
    return x.mT


def expand_dims(x: Tensor, /, axis) -> Tensor:
    """x with singleton axes inserted at the output positions axis (an int or a tuple)."""
    n_new = 1 if isinstance(axis, (int, np.integer)) else len(tuple(axis))
    new = set(_axes(axis, x.ndim + n_new))
    key = tuple(None if i in new else slice(None) for i in range(x.ndim + n_new))
    return Tensor(x._data[key], x._conj)


def squeeze(x: Tensor, /, axis) -> Tensor:
    """x without the size-1 axes named by axis (an int or a tuple; required, as the
    standard says): a view. An axis of another size is a ValueError.
    """
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    axes = tuple(sorted({_axis(a, x.ndim) for a in axes}))
    for a in axes:
        if x.shape[a] != 1:
            raise ValueError(f"squeeze: axis {a} has size {x.shape[a]}, not 1")
    return Tensor(x._data.squeeze(axes), x._conj)


def broadcast_to(x: Tensor, /, shape) -> Tensor:
    """x as a read-only view of shape `shape` (NumPy's broadcasting rules:
    stride 0 on the broadcast axes); ValueError when the shapes do not broadcast.
    """
    shape = tuple(int(n) for n in shape)
    try:
        return Tensor(xp_of(x._data).broadcast_to(x._data, shape), x._conj)
    except ValueError:
        raise ValueError(f"cannot broadcast shape {x.shape} to {shape}") from None


def diagonal(x: Tensor, /, *, offset: int = 0) -> Tensor:
    """Diagonal of the last two axes (linalg.diagonal) as a strided view."""
    if x.ndim < 2:
        raise ValueError(f"diagonal needs at least 2 axes, got {x.ndim}")
    m, n = x.shape[-2:]
    r0, c0 = (-offset, 0) if offset < 0 else (0, offset)
    length = max(0, min(m - r0, n - c0))
    corner = Tensor(x._data[..., min(r0, m):, min(c0, n):], x._conj)  # starts at (r0, c0)
    *bstr, sm, sn = x.strides
    return _view(corner, (*x.shape[:-2], length), (*bstr, sm + sn))


def _nocopy_strides(old_shape, old_strides, new_shape):
    """Element strides for viewing (old_shape, old_strides) as new_shape without a copy,
    or None if impossible (NumPy's _attempt_nocopy_reshape)."""
    old = [(n, s) for n, s in zip(old_shape, old_strides) if n != 1]
    new = list(new_shape)
    out = [0] * len(new)
    oi, oj, ni, nj = 0, 1, 0, 1
    while ni < len(new) and oi < len(old):
        np_, op = new[ni], old[oi][0]
        while np_ != op:
            if np_ < op:
                np_ *= new[nj]
                nj += 1
            else:
                op *= old[oj][0]
                oj += 1
        for k in range(oi, oj - 1):
            if old[k][1] != old[k + 1][0] * old[k + 1][1]:
                return None
        out[nj - 1] = old[oj - 1][1]
        for k in range(nj - 1, ni, -1):
            out[k - 1] = out[k] * new[k]
        ni, nj = nj, nj + 1
        oi, oj = oj, oj + 1
    last = out[ni - 1] if ni > 0 else 1
    for k in range(ni, len(new)):
        out[k] = last  # trailing size-1 axes
    return out


def reshape(x: Tensor, /, shape, *, copy=None) -> Tensor:
    """x with shape `shape` (one entry may be -1: inferred), in C order.

    copy=None: a view when the strides allow, else a copy; copy=True: always a copy;
    copy=False: a view or a ValueError. The dtype and the conjugation flag are kept.
    """
    shape = tuple(int(n) for n in ((shape,) if isinstance(shape, int) else shape))
    if shape.count(-1) > 1:
        raise ValueError("reshape: only one dimension can be -1")
    data = x._data
    if -1 in shape:
        known = math.prod(n for n in shape if n != -1)
        if known == 0 or data.size % known:
            raise ValueError(f"cannot reshape size {data.size} into {shape}")
        shape = tuple(data.size // known if n == -1 else n for n in shape)
    if math.prod(shape) != data.size or any(n < 0 for n in shape):
        raise ValueError(f"cannot reshape a tensor of shape {x.shape} into {shape}")
    if copy is not True:
        if data.size == 0:
            return Tensor(xp_of(data).empty(shape, x.dtype), x._conj)
        if data.flags.c_contiguous:  # always a view: the common case, without the stride walk
            return Tensor(data.reshape(shape), x._conj)
        st = _nocopy_strides(x.shape, x.strides, shape)
        if st is not None:
            return _view(x, shape, st)
        if copy is False:
            raise ValueError(f"reshape(copy=False): shape {x.shape} with strides {x.strides} "
                             f"cannot be viewed as {shape}")
    flat = Tensor(_ops.run(d.MakeContiguous(), [x]))  # resolves the flag too
    return Tensor(flat._data.reshape(shape))


# ------------------------------------------------------------------ broadcasting
def broadcast_shapes(*shapes) -> tuple:
    """The shape all of shapes broadcast to (() for no shapes); ValueError if incompatible."""
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for i, n in enumerate(s, ndim - len(s)):
            n = _index(n)
            if n < 0:
                raise ValueError(f"broadcast_shapes: negative dimension in {tuple(s)}")
            if n != out[i] and n != 1:
                if out[i] != 1:
                    raise ValueError(f"shapes {tuple(tuple(t) for t in shapes)} cannot be broadcast together")
                out[i] = n
    return tuple(out)


def broadcast_arrays(*arrays) -> tuple:
    """Views of arrays broadcast to one shape (stride 0 along the broadcast axes)."""
    ts = _tensors(arrays, "broadcast_arrays")
    _ops.device_of(ts)
    shape = broadcast_shapes(*(t.shape for t in ts))
    return tuple(broadcast_to(t, shape) for t in ts)  # 2025.12: a tuple (a list before)


# ------------------------------------------------------------------ views
def flip(x: Tensor, /, *, axis=None) -> Tensor:
    """x reversed along axis (all axes when None): a view with negated strides."""
    axes = range(x.ndim) if axis is None else _axes(axis, x.ndim)
    rev = slice(None, None, -1)
    key = tuple(rev if i in axes else slice(None) for i in range(x.ndim))
    return Tensor(x._data[key + (Ellipsis,)], x._conj)  # "...": a 0-d view, never a scalar


def moveaxis(x: Tensor, source, destination, /) -> Tensor:
    """x with the source axes moved to destination (the others keep their order): a view."""
    src = _axes(source, x.ndim, "source")
    dst = _axes(destination, x.ndim, "destination")
    if len(src) != len(dst):
        raise ValueError(f"moveaxis: source {source} and destination {destination} "
                         "must have the same number of elements")
    order = [i for i in range(x.ndim) if i not in src]
    for dest, s in sorted(zip(dst, src)):
        order.insert(dest, s)
    return Tensor(x._data.transpose(order), x._conj)


def unstack(x: Tensor, /, *, axis: int = 0) -> tuple:
    """The slices of x along axis, as a tuple of views."""
    ax = _axis(axis, x.ndim)
    lead = (slice(None),) * ax
    return tuple(Tensor(x._data[lead + (i, Ellipsis)], x._conj) for i in range(x.shape[ax]))


def _tensors(arrays, what) -> list:
    ts = list(arrays)
    for t in ts:
        if not isinstance(t, Tensor):
            raise TypeError(f"{what}() expects hipfer Tensors, got {type(t).__name__}")
    return ts


def memory_order(x: Tensor) -> list:
    """The axes from the largest stride to the smallest, as NumPy's order='K' has them (its
    insertion sort, in which an axis of length one or stride zero is not compared and stays
    in place). Not public: hipfer.ravel's and hipfer.copy's 'K'."""
    shape, strides = x.shape, [abs(s) for s in x.strides]
    perm = list(range(x.ndim))
    for i in range(1, x.ndim):
        a, pos = perm[i], i
        for j in range(i - 1, -1, -1):
            b = perm[j]
            if 1 in (shape[a], shape[b]) or 0 in (strides[a], strides[b]):
                continue  # ambiguous: look further left
            if strides[a] <= strides[b]:
                break
            pos = j
        if pos != i:
            perm.insert(pos, perm.pop(i))
    return perm
