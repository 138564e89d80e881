"""Utility functions beyond all/any (those live with the reductions): diff."""
from __future__ import annotations

import numpy as np

from ._creation import asarray
from ._elementwise import not_equal, subtract
from ._manipulation import concat
from ._tensor import Tensor
from ._views import AxisError, broadcast_to

__all__ = ["diff"]


def diff(x, /, *, axis: int = -1, n: int = 1, prepend=None, append=None) -> Tensor:
    """n-th forward difference along axis: out[i] = x[i+1] - x[i], applied n times, after
    joining prepend and append to x (they match x off axis; a scalar is broadcast to one
    slice, as in NumPy). x, prepend and append may be array_like; n and axis may also be
    given by position, in NumPy's order."""
    if not isinstance(x, Tensor):
        if isinstance(x, (list, tuple, int, float, complex, bool, np.ndarray, np.generic)):
            x = asarray(x)
        else:
            raise TypeError(f"diff() expects a hipfer Tensor, got {type(x).__name__}")
    if x.ndim == 0:
        raise ValueError("diff() needs at least one axis")
    if not -x.ndim <= axis < x.ndim:
        raise AxisError(f"diff(): axis {axis} is out of range for a {x.ndim}-d tensor")
    if not isinstance(n, int) or n < 0:
        raise ValueError(f"diff(): n must be a non-negative int, got {n!r}")
    if n == 0:
        return x  # NumPy's: no difference taken, prepend and append not joined
    axis %= x.ndim
    off = lambda s: s[:axis] + s[axis + 1:]  # noqa: E731
    ends = []
    for what, p in (("prepend", prepend), ("append", append)):
        if p is None:
            ends.append(None)
            continue
        if not isinstance(p, Tensor):
            p = asarray(p, device=x.device)  # host data the user passed
        if p.ndim == 0:  # NumPy broadcasts a scalar to one slice along axis
            p = broadcast_to(p, x.shape[:axis] + (1,) + x.shape[axis + 1:])
        if p.ndim != x.ndim or off(p.shape) != off(x.shape):
            raise ValueError(f"diff(): {what} of shape {p.shape} does not match x of shape "
                             f"{x.shape} off axis {axis}")
        ends.append(p)
    prepend, append = ends
    parts = [p for p in (prepend, x, append) if p is not None]
    if len(parts) > 1:
        x = concat(parts, axis=axis)
    step = not_equal if x.dtype.kind == "b" else subtract  # bool: NumPy's "changed" test
    lead = (slice(None),) * axis
    for _ in range(n):
        if x.shape[axis] == 0:
            break
        x = step(x[lead + (slice(1, None),)], x[lead + (slice(None, -1),)])
    return x
