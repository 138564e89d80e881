"""numpy.lib.stride_tricks on tensors: sliding_window_view and as_strided, views of the
tensor's memory (no copy; the conjugation flag is kept).

Unlike NumPy's, the views are writeable (hipfer has no read-only tensors): writing
through a view whose windows overlap writes every window that shares the element.
"""
from __future__ import annotations

import operator

from .._tensor import Tensor
from .._views import AxisError, _view

__all__ = ["as_strided", "sliding_window_view"]


def _tensor(x, fn: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"hipfer.lib.stride_tricks.{fn}: expected a hipfer Tensor, got "
                        f"{type(x).__name__}")
    return x


def as_strided(x, shape=None, strides=None, subok=False, writeable=True) -> Tensor:
    """A view of x's memory with the given shape and strides (in bytes, as NumPy's; each a
    multiple of the item size). Nothing checks that the view stays inside x's memory:
    as with NumPy's, that is the caller's promise."""
    x = _tensor(x, "as_strided")
    shape = x.shape if shape is None else tuple(operator.index(n) for n in shape)
    item = x.dtype.itemsize
    if strides is None:
        elems = x.strides if shape == x.shape else None
        if elems is None:
            raise ValueError("hipfer.lib.stride_tricks.as_strided: strides are needed when the "
                             "shape changes")
    else:
        strides = tuple(operator.index(s) for s in strides)
        if len(strides) != len(shape):
            raise ValueError("hipfer.lib.stride_tricks.as_strided: shape and strides differ "
                             "in length")
        if any(s % item for s in strides):
            raise ValueError(f"hipfer.lib.stride_tricks.as_strided: strides {strides} are not "
                             f"multiples of the item size {item}")
        elems = tuple(s // item for s in strides)
    return _view(x, shape, elems)


def sliding_window_view(x, window_shape, axis=None, *, subok=False, writeable=False) -> Tensor:
    """Every window of window_shape over x's axes (all of them, or axis), as NumPy's: the
    result's shape is x's with each windowed axis shortened by its window less one, then
    the window's axes. A view; see the module note on writeable."""
    x = _tensor(x, "sliding_window_view")
    fn = "hipfer.lib.stride_tricks.sliding_window_view"
    window = (tuple(operator.index(w) for w in window_shape)
              if hasattr(window_shape, "__iter__") else (operator.index(window_shape),))
    if any(w < 0 for w in window):
        raise ValueError(f"{fn}: window_shape cannot contain negative values")
    if axis is None:
        axes = tuple(range(x.ndim))
        if len(window) != x.ndim:
            raise ValueError(f"{fn}: since axis is None, window_shape must have one entry per "
                             f"axis of x ({x.ndim}), got {len(window)}")
    else:
        axes = (axis,) if not hasattr(axis, "__iter__") else tuple(axis)
        norm = []
        for a in axes:
            a = operator.index(a)
            if not -x.ndim <= a < x.ndim:
                raise AxisError(f"{fn}: axis {a} is out of range for a {x.ndim}-d tensor")
            norm.append(a % x.ndim)
        axes = tuple(norm)  # repeats allowed, as in NumPy
        if len(window) != len(axes):
            raise ValueError(f"{fn}: window_shape and axis differ in length")
    shape = list(x.shape)
    for a, w in zip(axes, window):
        if shape[a] < w:
            raise ValueError(f"{fn}: window shape cannot be larger than input array shape")
        shape[a] -= w - 1
    strides = tuple(x.strides) + tuple(x.strides[a] for a in axes)
    return _view(x, tuple(shape) + window, strides)
