"""Shape manipulation as zero-copy views (a copy only where the strides make one necessary)."""
from __future__ import annotations

import numpy as np

from . import _ops
from ._tensor import Tensor, xp_of
from .prims import descriptors as d


__all__ = ["broadcast_to", "diagonal", "expand_dims", "matrix_transpose", "permute_dims", "reshape", "squeeze"]


def _axis(axis: int, ndim: int, what="axis") -> int:
    if not -ndim <= axis < ndim:
        raise IndexError(f"{what} {axis} is out of range for a {ndim}-d tensor")
    return axis % ndim


def _view(x: Tensor, shape, strides_elems) -> Tensor:
    item = x.dtype.itemsize
    xp = xp_of(x._data)
    v = xp.lib.stride_tricks.as_strided(x._data, shape=tuple(shape),
                                        strides=tuple(s * item for s in strides_elems))
    return Tensor(v, x._conj)


def permute_dims(x: Tensor, /, axes) -> Tensor:
    axes = tuple(int(a) for a in axes)
    if sorted(a % max(x.ndim, 1) for a in axes) != list(range(x.ndim)) or len(axes) != x.ndim:
        raise ValueError(f"permute_dims: axes {axes} are not a permutation of {x.ndim} axes")
    return Tensor(x._data.transpose(axes), x._conj)


def matrix_transpose(x: Tensor, /) -> Tensor:
    return x.mT


def expand_dims(x: Tensor, /, axis: int = 0) -> Tensor:
    ax = _axis(axis, x.ndim + 1)
    return Tensor(xp_of(x._data).expand_dims(x._data, ax), x._conj)


def squeeze(x: Tensor, /, axis) -> Tensor:
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    axes = tuple(sorted({_axis(a, x.ndim) for a in axes}))
    for a in axes:
        if x.shape[a] != 1:
            raise ValueError(f"squeeze: axis {a} has size {x.shape[a]}, not 1")
    return Tensor(x._data.squeeze(axes), x._conj)


def broadcast_to(x: Tensor, /, shape) -> Tensor:
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
    shape = tuple(int(n) for n in ((shape,) if isinstance(shape, int) else shape))
    if shape.count(-1) > 1:
        raise ValueError("reshape: only one dimension can be -1")
    if -1 in shape:
        known = int(np.prod([n for n in shape if n != -1]))
        if known == 0 or x.size % known:
            raise ValueError(f"cannot reshape size {x.size} into {shape}")
        shape = tuple(x.size // known if n == -1 else n for n in shape)
    if int(np.prod(shape)) != x.size or any(n < 0 for n in shape):
        raise ValueError(f"cannot reshape a tensor of shape {x.shape} into {shape}")
    if copy is not True:
        if x.size == 0:
            return Tensor(xp_of(x._data).empty(shape, x.dtype), x._conj)
        st = _nocopy_strides(x.shape, x.strides, shape)
        if st is not None:
            return _view(x, shape, st)
        if copy is False:
            raise ValueError(f"reshape(copy=False): shape {x.shape} with strides {x.strides} "
                             f"cannot be viewed as {shape}")
    flat = Tensor(_ops.run(d.MakeContiguous(), [x]))  # resolves the flag too
    return Tensor(flat._data.reshape(shape))
