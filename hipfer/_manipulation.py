"""Shape manipulation: zero-copy views where the strides allow one (permute_dims, flip,
moveaxis, expand_dims, squeeze, broadcasts, unstack, reshape when possible); otherwise a new
tensor written piece by piece with PointwiseCast into views of the output (concat, stack,
roll, tile, repeat), which promotes dtypes and folds the lazy conjugation flag on the way."""
from __future__ import annotations

import itertools
import math
from operator import index as _index

import numpy as np

from . import _dtypes, _ops
from ._tensor import Tensor, xp_of
from .prims import descriptors as d
from .prims.registry import get_backend


__all__ = ["broadcast_arrays", "broadcast_shapes", "broadcast_to", "concat", "diagonal",
           "expand_dims", "flip", "matrix_transpose", "moveaxis", "permute_dims", "repeat",
           "reshape", "roll", "squeeze", "stack", "tile", "unstack"]

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
    axes = _axes(tuple(axes), x.ndim)
    if len(axes) != x.ndim:
        raise ValueError(f"permute_dims: axes {axes} are not a permutation of {x.ndim} axes")
    return Tensor(x._data.transpose(axes), x._conj)


def matrix_transpose(x: Tensor, /) -> Tensor:
    return x.mT


def expand_dims(x: Tensor, /, axis) -> Tensor:
    """x with singleton axes inserted at the output positions axis (an int or a tuple)."""
    n_new = 1 if isinstance(axis, (int, np.integer)) else len(tuple(axis))
    new = set(_axes(axis, x.ndim + n_new))
    key = tuple(None if i in new else slice(None) for i in range(x.ndim + n_new))
    return Tensor(x._data[key], x._conj)


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


def broadcast_arrays(*arrays) -> list:
    """Views of arrays broadcast to one shape (stride 0 along the broadcast axes)."""
    ts = _tensors(arrays, "broadcast_arrays")
    _ops.device_of(ts)
    shape = broadcast_shapes(*(t.shape for t in ts))
    return [broadcast_to(t, shape) for t in ts]


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


# ------------------------------------------------------------------ new tensors
def _tensors(arrays, what) -> list:
    ts = list(arrays)
    for t in ts:
        if not isinstance(t, Tensor):
            raise TypeError(f"{what}() expects hipfer Tensors, got {type(t).__name__}")
    return ts


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
    from ._creation import ones, zeros
    from ._indexing import scatter
    from ._statistical import cumulative_sum, min as smallest
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
