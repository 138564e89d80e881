"""Utility functions beyond all/any (those live with the reductions): diff."""
from __future__ import annotations

from ._elementwise import not_equal, subtract
from ._manipulation import concat
from ._tensor import Tensor
from ._views import AxisError

__all__ = ["diff"]


def diff(x: Tensor, /, *, axis: int = -1, n: int = 1, prepend: Tensor | None = None,
         append: Tensor | None = None) -> Tensor:
    """n-th forward difference along axis: out[i] = x[i+1] - x[i], applied n times, after
    joining prepend and append (which must match x on the other axes) to x."""
    if not isinstance(x, Tensor):
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
    for what, p in (("prepend", prepend), ("append", append)):
        if p is None:
            continue
        if not isinstance(p, Tensor):
            raise TypeError(f"diff(): {what} must be a hipfer Tensor, got {type(p).__name__}")
        if p.ndim != x.ndim or off(p.shape) != off(x.shape):
            raise ValueError(f"diff(): {what} of shape {p.shape} does not match x of shape "
                             f"{x.shape} off axis {axis}")
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
