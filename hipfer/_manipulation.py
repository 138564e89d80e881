"""Shape manipulation that makes new tensors (the views are in hipfer._views): concat,
stack, roll, tile and repeat write the operands piece by piece with PointwiseCast into
views of the output, which promotes dtypes and folds the lazy conjugation flag on the
way."""
from __future__ import annotations

import itertools
from operator import index as _index

import numpy as np

from . import _dtypes, _ops
from ._creation import ones, zeros
from ._indexing import scatter
from ._statistical import cumulative_sum, min as smallest
from ._tensor import Tensor, xp_of
from ._views import _axis, _tensors, expand_dims, reshape
from .prims import descriptors as d
from .prims.registry import get_backend

__all__ = ["concat", "repeat", "roll", "stack", "tile"]


def _write(be, dest, src: Tensor, key=None) -> None:
    """dest[...] = src (broadcast, cast to dest's dtype, conjugation folded); one launch.
    key, if given, first selects a basic-index view of src."""
    data = src._data if key is None else src._data[key + (Ellipsis,)]  # a view, even 0-d
    if dest.size:
        data = xp_of(dest).broadcast_to(data, dest.shape)
        _ops.run_arrays(be, d.PointwiseCast(dest.dtype), [data],
                        conj=(True,) if src._conj else None, out=dest)


def concat(arrays, /, *, axis=0) -> Tensor:
    """The tensors joined along an existing axis (flattened first when axis is None);
    dtypes are promoted."""
    ts = _tensors(arrays, "concat")
    if not ts:
        raise ValueError("concat() needs at least one tensor")
    dev = _ops.device_of(ts)
    dt = _dtypes.result_type(*(t.dtype for t in ts))
    if axis is None:
        ts, axis = [reshape(t, (-1,)) for t in ts], 0
    nd = ts[0].ndim
    if nd == 0 or any(t.ndim != nd for t in ts):
        raise ValueError(f"concat() needs tensors with the same number (>= 1) of axes, got "
                         f"shapes {[t.shape for t in ts]}")
    ax = _axis(axis, nd)
    rest = [t.shape[:ax] + t.shape[ax + 1:] for t in ts]
    if any(r != rest[0] for r in rest):
        raise ValueError(f"concat(): shapes {[t.shape for t in ts]} differ off axis {ax}")
    shape = ts[0].shape[:ax] + (sum(t.shape[ax] for t in ts),) + ts[0].shape[ax + 1:]
    be = get_backend(dev)
    out = be.empty(shape, dt)
    lead, pos = (slice(None),) * ax, 0
    for t in ts:
        n = t.shape[ax]
        _write(be, out[lead + (slice(pos, pos + n),)], t)
        pos += n
    return Tensor(out)


def stack(arrays, /, *, axis: int = 0) -> Tensor:
    """The tensors (all one shape) joined along a new axis; dtypes are promoted."""
    ts = _tensors(arrays, "stack")
    if not ts:
        raise ValueError("stack() needs at least one tensor")
    if any(t.shape != ts[0].shape for t in ts):
        raise ValueError(f"stack() needs tensors of one shape, got {[t.shape for t in ts]}")
    ax = _axis(axis, ts[0].ndim + 1)
    return concat([expand_dims(t, ax) for t in ts], axis=ax)


def _count(n, what) -> int:
    if isinstance(n, bool):
        raise TypeError(f"{what} must be an int, got bool")
    n = _index(n)
    if n < 0:
        raise ValueError(f"{what} must be non-negative, got {n}")
    return n


def roll(x: Tensor, /, shift, *, axis=None) -> Tensor:
    """x with elements shifted along axis (over the flattened tensor when None), wrapping
    round; shift and axis may be tuples (broadcast against each other, repeats add up)."""
    if axis is None:
        if not isinstance(shift, (int, np.integer)):
            raise TypeError("roll(): shift must be an int when axis is None")
        return reshape(roll(reshape(x, (-1,)), shift, axis=0), x.shape)
    shifts = (shift,) if isinstance(shift, (int, np.integer)) else tuple(shift)
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    if len(shifts) != len(axes) and 1 not in (len(shifts), len(axes)):
        raise ValueError(f"roll(): shift {shift} and axis {axis} have different lengths")
    total = [0] * x.ndim
    for s, a in zip(shifts * (len(axes) if len(shifts) == 1 else 1),
                    axes * (len(shifts) if len(axes) == 1 else 1)):
        total[_axis(a, x.ndim)] += _index(s)
    # per axis: the output's [0, s) comes from the input's [n - s, n), [s, n) from [0, n - s)
    # (an axis not shifted is one whole part, so the piece count is 2 ** (axes shifted))
    parts = []
    for n, s in zip(x.shape, total):
        s = s % n if n else 0
        parts.append([(slice(0, s), slice(n - s, n)), (slice(s, n), slice(0, n - s))] if s
                     else [(slice(None), slice(None))])
    be = get_backend(x.device)
    out = be.empty(x.shape, x.dtype)
    for piece in itertools.product(*parts):
        dst = tuple(p[0] for p in piece)
        _write(be, out[dst], x, key=tuple(p[1] for p in piece))
    return Tensor(out)


def tile(x: Tensor, repetitions, /) -> Tensor:
    """x repeated repetitions[i] times along axis i (shapes aligned at the right)."""
    reps = tuple(_count(r, "tile(): repetitions") for r in
                 ((repetitions,) if isinstance(repetitions, (int, np.integer)) else repetitions))
    nd = max(x.ndim, len(reps))
    reps = (1,) * (nd - len(reps)) + reps
    shape = (1,) * (nd - x.ndim) + x.shape
    # out viewed as (r0, n0, r1, n1, ...) takes x viewed as (1, n0, 1, n1, ...): one launch
    be = get_backend(x.device)
    out = be.empty(tuple(r * n for r, n in zip(reps, shape)), x.dtype)
    src = reshape(x, shape)
    _write(be, out.reshape(tuple(v for rn in zip(reps, shape) for v in rn)),
           src, key=tuple(k for _ in shape for k in (None, slice(None))))
    return Tensor(out)


def repeat(x: Tensor, repeats, /, *, axis=None) -> Tensor:
    """Each element of x repeated along axis (over the flattened tensor when None), either
    repeats times (an int) or repeats[i] times for element i (a 1-d integer tensor)."""
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    ax = _axis(axis, x.ndim)
    n = x.shape[ax]
    if isinstance(repeats, Tensor):
        _ops.device_of([x, repeats])
        if repeats.dtype.kind not in "iu":
            raise TypeError(f"repeat(): repeats must be an integer tensor, got {repeats.dtype}")
        if repeats.ndim > 1 or (repeats.ndim == 1 and repeats.shape[0] not in (1, n)):
            raise ValueError(f"repeat(): repeats of shape {repeats.shape} do not broadcast to ({n},)")
        if repeats.size == 1:
            repeats = int(repeats.reshape(()))
        else:
            return _repeat_each(x, repeats, ax)
    r = _count(repeats, "repeat(): repeats")
    # out viewed as (..., n, r, ...) takes x viewed as (..., n, 1, ...): one launch
    be = get_backend(x.device)
    shape = x.shape[:ax] + (n * r,) + x.shape[ax + 1:]
    out = be.empty(shape, x.dtype)
    key = (slice(None),) * (ax + 1) + (None,)
    _write(be, out.reshape(x.shape[:ax] + (n, r) + x.shape[ax + 1:]), x, key=key)
    return Tensor(out)


def _repeat_each(x: Tensor, counts: Tensor, ax: int) -> Tensor:
    """repeat with per-element counts, the source index built on the device: with ends the
    running sum of counts, output j takes element #{i : ends[i] <= j}, i.e. the running sum
    of marks with marks[ends[i]] += 1. The output length depends on the counts, so the total
    (and the smallest count, to reject negatives) are read back once."""
    i64 = _dtypes.int64
    if counts.size == 0:  # x has no elements along ax either
        return Tensor(_ops.run(d.MakeContiguous(), [x]))
    ends = cumulative_sum(counts, dtype=i64)
    low = Tensor(_ops.run(d.PointwiseCast(i64), [smallest(counts)]))
    low, total = (int(v) for v in stack([low, ends[-1]])._host())
    if low < 0:
        raise ValueError("repeat(): repeats must be non-negative")
    marks = scatter(zeros(total + 1, dtype=i64, device=x.device), 0, ends,
                    ones(counts.shape, dtype=i64, device=x.device), reduce="add")
    idx = cumulative_sum(marks[:total])
    return Tensor(_ops.run(d.IndexSelect(ax), [x, idx]))
