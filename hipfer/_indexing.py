"""Basic indexing (ints, slices with any step, ``...``, ``None``): zero-copy views, and
``__setitem__`` through one PointwiseCast (or Generate for a scalar) into the view."""
from __future__ import annotations

import numpy as np

from . import _ops
from ._tensor import Tensor, _is_cupy, xp_of
from .prims import descriptors as d
from .prims.registry import get_backend


__all__ = ["index_put", "scatter", "take", "take_along_axis"]


def _basic_key(key, ndim):
    """Normalise a basic index to a tuple that always yields a view (never a scalar)."""
    if not isinstance(key, tuple):
        key = (key,)
    out = []
    for k in key:
        if isinstance(k, Tensor):
            if k.ndim == 0 and k.dtype.kind in "iu":
                k = int(k)
            else:
                raise IndexError("integer-array and boolean-mask indexing are not basic indexing; "
                                 "use take() for integer arrays")
        elif isinstance(k, (bool, np.bool_)):
            raise IndexError("boolean scalars are not valid basic indices")
        elif isinstance(k, (int, np.integer)):
            k = int(k)
        elif not (k is None or k is Ellipsis or isinstance(k, slice)):
            raise IndexError(f"unsupported index {k!r} (basic indexing takes ints, slices, ..., None)")
        out.append(k)
    if sum(k is Ellipsis for k in out) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    n_axes = sum(1 for k in out if k is not None and k is not Ellipsis)
    if n_axes > ndim:
        raise IndexError(f"too many indices: {n_axes} for a {ndim}-d tensor")
    if Ellipsis not in out:
        out.append(Ellipsis)  # NumPy/CuPy then return a 0-d view, not a scalar
    return tuple(out)


def getitem(x: Tensor, key) -> Tensor:
    return Tensor(x._data[_basic_key(key, x.ndim)], x._conj)


def _extent(a):
    """(lowest, highest+1) byte address an array touches; None for empty."""
    if a.size == 0:
        return None
    ptr = a.data.ptr if _is_cupy(a) else a.__array_interface__["data"][0]
    lo = hi = ptr
    for n, s in zip(a.shape, a.strides):
        if s > 0:
            hi += (n - 1) * s
        else:
            lo += (n - 1) * s
    return lo, hi + a.dtype.itemsize


def _may_overlap(a, b) -> bool:
    ea, eb = _extent(a), _extent(b)
    return ea is not None and eb is not None and ea[0] < eb[1] and eb[0] < ea[1]


def setitem(x: Tensor, key, value) -> None:
    dest = x._data[_basic_key(key, x.ndim)]
    if dest.size == 0:
        return
    dt = dest.dtype
    if isinstance(value, (bool, int, float, complex, np.generic)):
        if isinstance(value, (complex, np.complexfloating)) and dt.kind != "c":
            raise TypeError(f"cannot assign a complex value to a {dt} tensor")
        if x._conj:
            value = complex(value).conjugate()
        _ops.generate(d.Generate(d.GenerateKind.CONSTANT), dest.shape, dt, x.device,
                      out=dest, value=value)
        return
    if not isinstance(value, Tensor):
        from ._creation import asarray
        value = asarray(value, device=x.device)
    if value.device != x.device:
        raise ValueError(f"cannot assign a tensor on {value.device} into a tensor on {x.device}")
    if value.dtype.kind == "c" and dt.kind != "c":
        raise TypeError(f"cannot assign a {value.dtype} tensor to a {dt} tensor")
    be = get_backend(x.device)
    try:
        src = xp_of(dest).broadcast_to(value._data, dest.shape)
    except ValueError:
        raise ValueError(f"cannot assign a tensor of shape {value.shape} to an index of shape "
                         f"{dest.shape}") from None
    if _may_overlap(src, dest):
        # x[1:] = x[:-1]: read everything before writing anything
        src = _ops.run_arrays(be, d.MakeContiguous(), [src])
    flip = value._conj != x._conj  # stored = conj(value) when x reads conjugated
    _ops.run_arrays(be, d.PointwiseCast(dt), [src], conj=(True,) if flip else None, out=dest)


# ------------------------------------------------------- index-tensor functions
def _index_tensor(t, what) -> Tensor:
    if not isinstance(t, Tensor):
        raise TypeError(f"{what} must be a hipfer Tensor, got {type(t).__name__}")
    if t.dtype.kind not in "iu":
        raise TypeError(f"{what} must be an integer tensor, got {t.dtype}")
    return t


def take(x: Tensor, indices: Tensor, /, *, axis=None) -> Tensor:
    """Elements of x at 1-d integer indices along axis (IndexSelect)."""
    _index_tensor(indices, "take(): indices")
    if axis is None:
        if x.ndim != 1:
            raise ValueError("take(): axis is required for tensors with more than one axis")
        axis = 0
    return Tensor(_ops.run(d.IndexSelect(int(axis)), [x, indices]))


def take_along_axis(x: Tensor, indices: Tensor, /, *, axis: int = -1) -> Tensor:
    """out[..., i, ...] = x[..., indices[..., i, ...], ...] along axis (Gather)."""
    _index_tensor(indices, "take_along_axis(): indices")
    return Tensor(_ops.run(d.Gather(int(axis)), [x, indices]))


def scatter(x: Tensor, axis: int, index: Tensor, src: Tensor, /, *, reduce=None) -> Tensor:
    """A copy of x with src written (reduce=None) or added (reduce='add') at index along axis."""
    _index_tensor(index, "scatter(): index")
    return Tensor(_ops.run(d.Scatter(int(axis), reduce), [x, index, src]))


def index_put(x: Tensor, indices, values: Tensor, /, *, accumulate: bool = False) -> Tensor:
    """A copy of x with x[indices] = values (or += with accumulate=True, repeats summed)."""
    indices = tuple(indices)
    for i, t in enumerate(indices):
        _index_tensor(t, f"index_put(): indices[{i}]")
    if not isinstance(values, Tensor):
        from ._creation import asarray
        values = asarray(values, dtype=x.dtype, device=x.device)
    return Tensor(_ops.run(d.IndexPut(bool(accumulate)), [x, *indices, values]))
