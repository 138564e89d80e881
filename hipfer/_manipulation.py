"""Shape manipulation that makes new tensors (the views are in hipfer._views): concat,
stack, roll, tile and repeat write the operands piece by piece with PointwiseCast into
views of the output, which promotes dtypes and folds the lazy conjugation flag on the
way.

NumPy's manipulation functions follow, with NumPy's signatures and array_like operands:
its views (transpose, swapaxes, rollaxis, ravel, atleast_*, fliplr, flipud, rot90: built on
hipfer._views, no copy), joins and splits, insert / delete / resize, trim_zeros, copyto,
ix_ and pad (NumPy's own algorithm, axis by axis, as slice writes on the device)."""
from __future__ import annotations

import itertools
from operator import index as _index

import numpy as np

from . import _dtypes, _ops
from ._creation import _in_range, asarray, full, ones, zeros
from ._data_type_functions import astype
from ._indexing import nonzero, scatter, take
from ._statistical import cumulative_sum, min as smallest
from ._tensor import Tensor, xp_of
from ._views import (AxisError, _axes, _axis, _tensors, expand_dims, flip, memory_order,
                     moveaxis, permute_dims, reshape)
from .prims import descriptors as d
from .prims.registry import get_backend

__all__ = ["append", "array_split", "atleast_1d", "atleast_2d", "atleast_3d", "block",
           "column_stack", "concat", "concatenate", "copyto", "delete", "dsplit", "dstack",
           "fliplr", "flipud", "hsplit", "hstack", "insert", "ix_", "pad", "ravel", "repeat",
           "resize", "roll", "rollaxis", "rot90", "row_stack", "split", "stack", "swapaxes",
           "tile", "transpose", "trim_zeros", "vsplit", "vstack"]


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
    return _join(ts, axis, _dtypes.result_type(*(t.dtype for t in ts)), "concat")


def _join(ts, axis, dt, name, dest=None) -> Tensor:
    """ts joined along axis (flattened first when None) into a new tensor of dtype dt, or
    into the backend array dest; name: the function called, for its errors."""
    dev = _ops.device_of(ts)
    if axis is None:
        ts, axis = [reshape(t, (-1,)) for t in ts], 0
    nd = ts[0].ndim
    if nd == 0 or any(t.ndim != nd for t in ts):
        raise ValueError(f"{name}() needs tensors with the same number (>= 1) of axes, got "
                         f"shapes {[t.shape for t in ts]}")
    ax = _axis(axis, nd)
    rest = [t.shape[:ax] + t.shape[ax + 1:] for t in ts]
    if any(r != rest[0] for r in rest):
        raise ValueError(f"{name}(): shapes {[t.shape for t in ts]} differ off axis {ax}")
    shape = ts[0].shape[:ax] + (sum(t.shape[ax] for t in ts),) + ts[0].shape[ax + 1:]
    be = get_backend(dev)
    if dest is not None and tuple(dest.shape) != shape:
        raise ValueError(f"{name}(): out has shape {tuple(dest.shape)}, the result has shape "
                         f"{shape}")
    out = be.empty(shape, dt) if dest is None else dest
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


# ------------------------------------------------------------------ NumPy's array_like operands
def _as_tensor(v, device=None) -> Tensor:
    """A Tensor as it is; NumPy's array_like (lists, scalars, host arrays the user passed)
    made a tensor on device (the default device when None)."""
    return v if isinstance(v, Tensor) else asarray(v, device=device)


def _as_tensors(arrays, name) -> list:
    """NumPy's sequence of array_likes as tensors on the device of the tensors among them."""
    if isinstance(arrays, Tensor) or not isinstance(arrays, (list, tuple)):
        raise TypeError(f"hipfer.{name}: expected a list or tuple of arrays, got "
                        f"{type(arrays).__name__}")
    found = [a for a in arrays if isinstance(a, Tensor)]
    dev = _ops.device_of(found) if found else None
    return [_as_tensor(a, dev) for a in arrays]


# ------------------------------------------------------------------ NumPy's views
# (views of the operand, as NumPy's: built on hipfer._views; array_likes become tensors)
def transpose(a, axes=None) -> Tensor:
    """NumPy's transpose: the axes reversed (axes=None) or permuted as axes; a view."""
    a = _as_tensor(a)
    return permute_dims(a, tuple(range(a.ndim))[::-1] if axes is None else tuple(axes))


def swapaxes(a, axis1, axis2) -> Tensor:
    """a with axes axis1 and axis2 interchanged: a view."""
    a = _as_tensor(a)
    order = list(range(a.ndim))
    i, j = _axis(axis1, a.ndim, "axis1"), _axis(axis2, a.ndim, "axis2")
    order[i], order[j] = j, i
    return Tensor(a._data.transpose(order), a._conj)


def rollaxis(a, axis, start=0) -> Tensor:
    """NumPy's rollaxis: axis moved to sit before position start (a view); moveaxis is
    the clearer spelling, this keeps NumPy's start semantics (start may be ndim)."""
    a = _as_tensor(a)
    n = a.ndim
    ax = _axis(axis, n)
    if isinstance(start, bool) or not isinstance(start, (int, np.integer)):
        raise TypeError(f"start must be an int, got {type(start).__name__}")
    start = int(start) + n if start < 0 else int(start)
    if not 0 <= start <= n:
        raise AxisError(f"hipfer.rollaxis: start must be in [{-n}, {n}], got {start}")
    if ax < start:
        start -= 1
    if ax == start:
        return a[...]
    order = [i for i in range(n) if i != ax]
    order.insert(start, ax)
    return Tensor(a._data.transpose(order), a._conj)


def ravel(a, order="C") -> Tensor:
    """a flattened to 1-d in order 'C' (rows), 'F' (columns), 'A' (F when a is
    Fortran-contiguous only, else C) or 'K' (memory order); a view when the strides allow
    (always for contiguous data read in its own order), else one copy."""
    a = _as_tensor(a)
    if order not in ("C", "F", "A", "K"):
        raise ValueError(f"hipfer.ravel: order must be one of 'C', 'F', 'A', 'K', got {order!r}")
    flags = a._data.flags
    if order == "A":
        order = "F" if flags.f_contiguous and not flags.c_contiguous else "C"
    if order == "F":
        return reshape(transpose(a), (-1,))
    if order == "K":
        return reshape(permute_dims(a, memory_order(a)), (-1,))
    return reshape(a, (-1,))


def _atleast(arys, nd: int):
    out = []
    for a in arys:
        a = _as_tensor(a)
        if a.ndim < nd:
            # NumPy's placement: 1-d (n,) -> (1, n) -> (1, n, 1); 0-d -> (1, 1, 1)
            if nd == 3 and a.ndim == 2:
                a = expand_dims(a, -1)
            elif nd == 3 and a.ndim == 1:
                a = expand_dims(a, (0, -1))
            else:
                a = reshape(a, (1,) * (nd - a.ndim) + a.shape)
        else:
            a = a[...]  # a view, as NumPy's asanyarray gives the array itself
        out.append(a)
    return out[0] if len(out) == 1 else tuple(out)


def atleast_1d(*arys):
    """Each array viewed with at least one axis (one tensor for one input, else a tuple)."""
    return _atleast(arys, 1)


def atleast_2d(*arys):
    """Each tensor viewed with at least two axes ((n,) -> (1, n))."""
    return _atleast(arys, 2)


def atleast_3d(*arys):
    """Each tensor viewed with at least three axes ((n,) -> (1, n, 1), (m, n) -> (m, n, 1))."""
    return _atleast(arys, 3)


def fliplr(m) -> Tensor:
    """m reversed along axis 1 (left/right): a view; m needs at least 2 axes."""
    m = _as_tensor(m)
    if m.ndim < 2:
        raise ValueError("hipfer.fliplr: the input must have at least 2 axes")
    return flip(m, axis=1)


def flipud(m) -> Tensor:
    """m reversed along axis 0 (up/down): a view; m needs at least 1 axis."""
    m = _as_tensor(m)
    if m.ndim < 1:
        raise ValueError("hipfer.flipud: the input must have at least 1 axis")
    return flip(m, axis=0)


def rot90(m, k=1, axes=(0, 1)) -> Tensor:
    """m rotated by 90 degrees k times in the plane of axes (from the first towards the
    second): a view (flips and a transpose)."""
    m = _as_tensor(m)
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("hipfer.rot90: len(axes) must be 2")
    if m.ndim < 2:
        raise ValueError("hipfer.rot90: the input must have at least 2 axes")
    a0, a1 = (_axis(a, m.ndim, "axes") for a in axes)
    if a0 == a1:
        raise ValueError("hipfer.rot90: axes must be different")
    k = _index(k) % 4
    if k == 0:
        return m[...]
    if k == 2:
        return flip(flip(m, axis=a0), axis=a1)
    order = list(range(m.ndim))
    order[a0], order[a1] = order[a1], order[a0]
    if k == 1:
        return permute_dims(flip(m, axis=a1), order)
    return flip(permute_dims(m, order), axis=a1)


# ------------------------------------------------------------------ NumPy's joins and splits
def _check_casting(ts, dt, casting, name) -> None:
    if casting not in ("no", "equiv", "safe", "same_kind", "unsafe"):
        raise ValueError(f"hipfer.{name}: casting must be one of 'no', 'equiv', 'safe', "
                         f"'same_kind', or 'unsafe', got {casting!r}")
    for t in ts:
        if not np.can_cast(t.dtype, dt, casting):
            raise TypeError(f"hipfer.{name}: cannot cast array data from {t.dtype} to {dt} "
                            f"according to the rule {casting!r}")


def concatenate(arrays, /, axis=0, out=None, *, dtype=None, casting="same_kind") -> Tensor:
    """NumPy's concatenate: the arrays joined along an existing axis (all flattened first when
    axis is None), in NumPy's result dtype unless dtype (or out's dtype) is given; every
    input must cast to it under `casting`. out, if given, is written and returned."""
    ts = _as_tensors(arrays, "concatenate")
    if not ts:
        raise ValueError("hipfer.concatenate: need at least one array to concatenate")
    if out is not None and dtype is not None:
        raise TypeError("hipfer.concatenate: only takes `out` or `dtype` as an argument, but "
                        "both were provided")
    if axis is not None and any(t.ndim == 0 for t in ts):
        raise ValueError("hipfer.concatenate: zero-dimensional arrays cannot be concatenated")
    if out is not None and not isinstance(out, Tensor):
        raise TypeError(f"hipfer.concatenate: out must be a hipfer Tensor, got "
                        f"{type(out).__name__}")
    dt = out.dtype if out is not None else (np.result_type(*(t.dtype for t in ts))
                                            if dtype is None else _dtypes.as_dtype(dtype))
    _check_casting(ts, dt, casting, "concatenate")
    if out is None:
        return _join(ts, axis, dt, "hipfer.concatenate")
    if out._conj:
        raise ValueError("hipfer.concatenate: out must not carry a conjugation flag")
    _join(ts, axis, dt, "hipfer.concatenate", dest=out._data)
    return out


def append(arr, values, axis=None) -> Tensor:
    """arr with values appended along axis (both flattened when axis is None)."""
    arr = _as_tensor(arr)
    values = _as_tensor(values, arr.device)
    if axis is None:
        return concatenate((ravel(arr), ravel(values)), axis=0)
    return concatenate((arr, values), axis=axis)


def hstack(tup, *, dtype=None, casting="same_kind") -> Tensor:
    """The arrays joined column-wise: along axis 1 (axis 0 for 1-d arrays)."""
    ts = [atleast_1d(t) for t in _as_tensors(tup, "hstack")]
    axis = 0 if ts and ts[0].ndim == 1 else 1
    return concatenate(ts, axis=axis, dtype=dtype, casting=casting)


def vstack(tup, *, dtype=None, casting="same_kind") -> Tensor:
    """The arrays joined row-wise (along axis 0), 1-d arrays as rows (1, n)."""
    ts = [atleast_2d(t) for t in _as_tensors(tup, "vstack")]
    return concatenate(ts, axis=0, dtype=dtype, casting=casting)


def row_stack(tup, *, dtype=None, casting="same_kind") -> Tensor:
    """vstack under its old name (deprecated in NumPy 2.0, still there in 2.4): warns as
    NumPy does."""
    import warnings
    warnings.warn("`row_stack` alias is deprecated. Use `hipfer.vstack` directly.",
                  DeprecationWarning, stacklevel=2)
    return vstack(tup, dtype=dtype, casting=casting)


def dstack(tup) -> Tensor:
    """The arrays joined depth-wise (along axis 2), each seen with at least 3 axes."""
    return concatenate([atleast_3d(t) for t in _as_tensors(tup, "dstack")], axis=2)


def column_stack(tup) -> Tensor:
    """1-d arrays as the columns of a 2-d tensor; 2-d arrays joined along axis 1."""
    ts = [reshape(t, (-1, 1)) if t.ndim < 2 else t for t in _as_tensors(tup, "column_stack")]
    return concatenate(ts, axis=1)


def _block_depth(x, where: str):
    """(list nesting depth, largest leaf ndim) of block's argument; NumPy's errors."""
    if isinstance(x, tuple):
        raise TypeError(f"hipfer.block: {where} is a tuple. Only lists can be used to arrange "
                        "blocks, and hipfer.block does not allow implicit conversion from "
                        "tuple to tensor.")
    if not isinstance(x, list):
        return 0, (x.ndim if isinstance(x, Tensor) else np.ndim(x))
    if not x:
        raise ValueError(f"hipfer.block: list at {where} cannot be empty")
    found = [_block_depth(e, f"{where}[{i}]") for i, e in enumerate(x)]
    depths = {f[0] for f in found}
    if len(depths) != 1:
        raise ValueError(f"hipfer.block: list depths are mismatched in {where}")
    return depths.pop() + 1, max(f[1] for f in found)


def block(arrays) -> Tensor:
    """A tensor assembled from nested lists of blocks: the innermost lists joined along the
    last axis, the next ones along the second last, and so on."""
    depth, leaf_nd = _block_depth(arrays, "arrays")
    nd = max(depth, leaf_nd)
    leaves = []

    def collect(x):
        if isinstance(x, list):
            for e in x:
                collect(e)
        elif isinstance(x, Tensor):
            leaves.append(x)
    collect(arrays)
    dev = _ops.device_of(leaves) if leaves else None

    def build(x, level):
        if level == depth:
            t = _as_tensor(x, dev)
            return reshape(t, (1,) * (nd - t.ndim) + t.shape)
        return concatenate([build(e, level + 1) for e in x], axis=-(depth - level))
    if depth == 0:  # a single array: a copy with the same value
        t = _as_tensor(arrays)
        return Tensor(_ops.run(d.MakeContiguous(), [t]))
    return build(arrays, 0)


def _split_points(n: int, indices_or_sections, equal: bool, name: str) -> list:
    """[(start, stop), ...] of the pieces along an axis of length n."""
    if isinstance(indices_or_sections, (int, np.integer)) and \
            not isinstance(indices_or_sections, bool):
        k = int(indices_or_sections)
        if k <= 0:
            raise ValueError(f"hipfer.{name}: number sections must be larger than 0")
        if equal and n % k:
            raise ValueError(f"hipfer.{name}: array split does not result in an equal division")
        each, extra = divmod(n, k)
        sizes = [each + 1] * extra + [each] * (k - extra)
        ends = list(itertools.accumulate(sizes))
        return list(zip([0] + ends[:-1], ends))
    if isinstance(indices_or_sections, Tensor):
        raise TypeError(f"hipfer.{name}: indices_or_sections must be Python ints (a tensor "
                        "would be read to the host)")
    points = [_index(i) for i in indices_or_sections]
    bounds = [0] + points + [n]
    return list(zip(bounds[:-1], bounds[1:]))


def _split(ary, indices_or_sections, axis, equal, name) -> list:
    ary = _as_tensor(ary)
    ax = _axis(axis, ary.ndim)
    lead = (slice(None),) * ax
    return [ary[lead + (slice(a, b), Ellipsis)]
            for a, b in _split_points(ary.shape[ax], indices_or_sections, equal, name)]


def split(ary, indices_or_sections, axis=0) -> list:
    """ary split into views along axis: an int N gives N equal pieces (ValueError when the
    length does not divide), a sequence of indices the pieces between them."""
    return _split(ary, indices_or_sections, axis, True, "split")


def array_split(ary, indices_or_sections, axis=0) -> list:
    """split, allowing N pieces that do not divide the length (the first ones one longer)."""
    return _split(ary, indices_or_sections, axis, False, "array_split")


def hsplit(ary, indices_or_sections) -> list:
    """split along axis 1 (axis 0 for 1-d arrays)."""
    ary = _as_tensor(ary)
    if ary.ndim == 0:
        raise ValueError("hipfer.hsplit: only works on arrays of 1 or more dimensions")
    return _split(ary, indices_or_sections, 1 if ary.ndim > 1 else 0, True, "hsplit")


def vsplit(ary, indices_or_sections) -> list:
    """split along axis 0 (arrays of 2 or more axes)."""
    ary = _as_tensor(ary)
    if ary.ndim < 2:
        raise ValueError("hipfer.vsplit: only works on arrays of 2 or more dimensions")
    return _split(ary, indices_or_sections, 0, True, "vsplit")


def dsplit(ary, indices_or_sections) -> list:
    """split along axis 2 (arrays of 3 or more axes)."""
    ary = _as_tensor(ary)
    if ary.ndim < 3:
        raise ValueError("hipfer.dsplit: only works on arrays of 3 or more dimensions")
    return _split(ary, indices_or_sections, 2, True, "dsplit")


# ------------------------------------------------------------------ insert, delete, resize
def _flat_axis(arr: Tensor, axis):
    """(arr, axis) with NumPy's axis=None: the flattened array, axis 0."""
    if axis is None:
        return ravel(arr), 0
    return arr, _axis(axis, arr.ndim)


def _host_indices(obj, n: int, name: str) -> np.ndarray:
    """obj (Python ints, a slice, a host array) as host int64 positions along an axis of
    length n, negatives wrapped; bools as a mask of length n; NumPy's errors."""
    if isinstance(obj, slice):
        return np.arange(*obj.indices(n), dtype=np.int64)
    idx = np.asarray(obj)
    if idx.dtype == np.bool_:
        if idx.ndim != 1 or idx.shape[0] != n:
            raise ValueError(f"hipfer.{name}: boolean array argument obj must be one "
                             f"dimensional and match the axis length of {n}")
        return np.flatnonzero(idx)
    if idx.size == 0:
        idx = idx.astype(np.int64)
    if idx.dtype.kind not in "iu":
        raise IndexError(f"hipfer.{name}: arrays used as indices must be of integer (or "
                         "boolean) type")
    return idx.astype(np.int64)


def delete(arr, obj, axis=None) -> Tensor:
    """arr without the sub-arrays at obj (an int, a slice, a sequence of ints or a boolean
    mask) along axis (of the flattened array when None); repeated indices are removed once.
    With a tensor obj the kept positions come from nonzero(), which reads their count once."""
    arr, ax = _flat_axis(_as_tensor(arr), axis)
    n = arr.shape[ax]
    if isinstance(obj, Tensor):
        keep = ones((n,), dtype=_dtypes.bool, device=arr.device)
        if obj.dtype == _dtypes.bool:
            if obj.shape != (n,):
                raise ValueError(f"hipfer.delete: boolean array argument obj must be one "
                                 f"dimensional and match the axis length of {n}")
            keep = ~obj
        else:
            keep[obj] = False
        return take(arr, nonzero(keep)[0], axis=ax)
    idx = _host_indices(obj, n, "delete")
    if idx.ndim > 1:
        raise ValueError("hipfer.delete: index array argument obj must be one dimensional "
                         "or scalar")
    bad = (idx < -n) | (idx >= n)
    if bad.any():
        raise IndexError(f"hipfer.delete: index {int(idx[bad][0])} is out of bounds for "
                         f"axis {ax} with size {n}")
    keep = np.ones(n, dtype=bool)
    keep[idx] = False
    return take(arr, asarray(np.flatnonzero(keep), device=arr.device), axis=ax)


def insert(arr, obj, values, axis=None) -> Tensor:
    """arr with values inserted before the positions obj along axis (the flattened array
    when None), values cast to arr's dtype (NumPy's rules: a scalar obj inserts values as
    one block, a sequence one sub-array before each index, stable for repeats). obj is
    host data (ints, a slice, a sequence); a tensor obj is refused."""
    arr, ax = _flat_axis(_as_tensor(arr), axis)
    if isinstance(obj, Tensor):
        raise TypeError("hipfer.insert: obj must be Python ints, a slice or a host sequence "
                        "(the output layout depends on it)")
    n = arr.shape[ax]
    scalar = not isinstance(obj, slice) and np.ndim(obj) == 0
    idx = _host_indices(obj, n, "insert")
    if idx.ndim > 1:
        raise ValueError("hipfer.insert: index array argument obj must be one dimensional "
                         "or scalar")
    if idx.size == 1:
        i = int(idx.reshape(-1)[0])
        if not -n <= i <= n:
            raise IndexError(f"hipfer.insert: index {obj} is out of bounds for axis {ax} with "
                             f"size {n}")
        i += n if i < 0 else 0
        vals = _insert_values(values, arr)
        vals = reshape(vals, (1,) * (arr.ndim - vals.ndim) + vals.shape)
        if scalar:  # NumPy: a scalar obj inserts values like a[:, i:i+1] = values
            vals = moveaxis(vals, 0, ax)
        shape = list(arr.shape)
        shape[ax] = vals.shape[ax]
        vals = _broadcast(vals, tuple(shape), "insert")
        lead = (slice(None),) * ax
        return concat([arr[lead + (slice(0, i),)], vals, arr[lead + (slice(i, None),)]],
                      axis=ax)
    # each index must be in [-n, n] (NumPy itself lets some below -n through to results
    # that depend on its arithmetic: a legacy accident, refused here)
    bad = (idx < -n) | (idx > n)
    if bad.any():
        raise IndexError(f"hipfer.insert: index {int(idx[bad][0])} is out of bounds for "
                         f"axis {ax} with size {n}")
    k = idx.size
    idx = np.where(idx < 0, idx + n, idx)
    new_pos = idx.copy()  # each index moves up by the insertions sorted before it (stable)
    new_pos[np.argsort(idx, kind="stable")] += np.arange(k)
    old = np.ones(n + k, dtype=bool)  # the output positions arr's values go to
    old[new_pos] = False
    src = np.empty(n + k, dtype=np.int64)  # output position -> position in concat(arr, values)
    src[old] = np.arange(n)
    src[new_pos] = n + np.arange(k)
    shape = list(arr.shape)
    shape[ax] = k
    vals = _broadcast(_insert_values(values, arr), tuple(shape), "insert")
    both = concat([arr, vals], axis=ax)
    return take(both, asarray(src, device=arr.device), axis=ax)


def _insert_values(values, arr: Tensor) -> Tensor:
    """values in arr's dtype: Python data converts directly (an int out of range is NumPy's
    OverflowError), a tensor casts."""
    if isinstance(values, Tensor):
        return astype(values, arr.dtype)
    return asarray(values, dtype=arr.dtype, device=arr.device)


def _broadcast(t: Tensor, shape, name) -> Tensor:
    from ._views import broadcast_to
    try:
        return broadcast_to(t, shape)
    except ValueError:
        raise ValueError(f"hipfer.{name}: could not broadcast values of shape {t.shape} into "
                         f"shape {shape}") from None


def resize(a, new_shape) -> Tensor:
    """A new tensor of shape new_shape filled with a's flattened values, repeated as often as
    needed (zeros when a is empty)."""
    a = _as_tensor(a)
    shape = (new_shape,) if isinstance(new_shape, (int, np.integer)) else tuple(new_shape)
    shape = tuple(_index(n) for n in shape)
    if any(n < 0 for n in shape):
        raise ValueError("hipfer.resize: all elements of `new_shape` must be non-negative")
    size = int(np.prod(shape, dtype=np.int64))
    if a.size == 0 or size == 0:
        return zeros(shape, dtype=a.dtype, device=a.device)
    flat = tile(ravel(a), (-(-size // a.size),))[:size]
    return reshape(flat, shape)


# ------------------------------------------------------------------ trim_zeros, copyto, ix_
def trim_zeros(filt, trim="fb", axis=None) -> Tensor:
    """filt without its leading ('f') and/or trailing ('b') zeros along the axes (all when
    None): the bounding box of the nonzero values, a view. The box's ends are data, so they
    are read to the host once (one small transfer). A list input gives a tensor (NumPy
    gives a list)."""
    from ._elementwise import not_equal
    from ._searching import argmax
    from ._statistical import any as any_
    from ._views import flip
    filt = _as_tensor(filt)
    trim = str(trim).lower()
    if trim not in ("fb", "bf", "f", "b"):
        raise ValueError(f"hipfer.trim_zeros: unexpected character(s) in `trim`: {trim!r}")
    axes = tuple(range(filt.ndim)) if axis is None else _axes(axis, filt.ndim)
    if not axes:
        return filt
    if filt.size == 0:  # nothing nonzero: every trimmed axis becomes empty, as NumPy's
        return filt[tuple(slice(0, 0) if i in axes else slice(None)
                          for i in range(filt.ndim)) + (Ellipsis,)]
    mask = not_equal(filt, 0)
    ends = []
    for ax in range(filt.ndim):
        m = any_(mask, axis=tuple(i for i in range(filt.ndim) if i != ax))
        ends += [argmax(m), argmax(flip(m))]  # the first nonzero from each end
    ends.append(any_(mask))
    found = astype(stack([astype(e, _dtypes.int64) for e in ends]), _dtypes.int64)._host()
    if not found[-1]:  # all zero: every box is empty
        start = stop = [0] * filt.ndim
    else:
        start = [int(found[2 * i]) if "f" in trim else None for i in range(filt.ndim)]
        stop = [filt.shape[i] - int(found[2 * i + 1]) if "b" in trim else None
                for i in range(filt.ndim)]
    key = tuple(slice(start[i], stop[i]) if i in axes else slice(None)
                for i in range(filt.ndim))
    return filt[key + (Ellipsis,)]


def _scalar_kind(v) -> str:
    return "b" if isinstance(v, bool) else "i" if isinstance(v, int) else \
        "f" if isinstance(v, float) else "c"


def copyto(dst, src, casting="same_kind", where=True) -> None:
    """Write src (broadcast) into dst, cast to dst's dtype under `casting`, at the places
    where `where` is True."""
    from ._elementwise import where as where_
    if not isinstance(dst, Tensor):
        raise TypeError(f"hipfer.copyto: dst must be a hipfer Tensor, got {type(dst).__name__}")
    if casting not in ("no", "equiv", "safe", "same_kind", "unsafe"):
        raise ValueError(f"hipfer.copyto: casting must be one of 'no', 'equiv', 'safe', "
                         f"'same_kind', or 'unsafe', got {casting!r}")
    if isinstance(src, (bool, int, float, complex)):  # NumPy 2: Python scalars are weak
        kinds = "biufc"
        if casting != "unsafe" and kinds.index(_scalar_kind(src)) > kinds.index(
                "i" if dst.dtype.kind == "u" else dst.dtype.kind):
            raise TypeError(f"hipfer.copyto: cannot cast scalar from {type(src).__name__} to "
                            f"{dst.dtype} according to the rule {casting!r}")
        if casting != "unsafe":
            _in_range(src, dst.dtype, "hipfer.copyto")
        src = full((), src, dtype=dst.dtype, device=dst.device)
    else:
        src = _as_tensor(src, dst.device)
        if not np.can_cast(src.dtype, dst.dtype, casting):
            raise TypeError(f"hipfer.copyto: cannot cast array data from {src.dtype} to "
                            f"{dst.dtype} according to the rule {casting!r}")
        src = _broadcast(astype(src, dst.dtype), dst.shape, "copyto")
    if where is True:
        dst[...] = src
        return None
    mask = _as_tensor(where, dst.device)
    if mask.dtype != _dtypes.bool:
        raise TypeError(f"hipfer.copyto: where must be a boolean array, got {mask.dtype}")
    mask = _broadcast(mask, dst.shape, "copyto")
    dst[...] = where_(mask, src, dst)
    return None


def ix_(*args) -> tuple:
    """Open-mesh index tensors from 1-d sequences: the k-th has shape (1, .., n, .., 1), for
    indexing a cross product (x[ix_(rows, cols)]). A boolean sequence stands for its
    nonzero positions (for a tensor, nonzero reads their count once)."""
    found = [a for a in args if isinstance(a, Tensor)]
    dev = _ops.device_of(found) if found else None
    out = []
    nd = len(args)
    for k, a in enumerate(args):
        if not isinstance(a, Tensor):
            host = np.asarray(a)
            a = asarray(host.astype(np.int64) if host.size == 0 else host, device=dev)
        if a.ndim != 1:
            raise ValueError("hipfer.ix_: cross index must be 1 dimensional")
        if a.dtype == _dtypes.bool:
            a = nonzero(a)[0]
        out.append(reshape(a, (1,) * k + (a.shape[0],) + (1,) * (nd - k - 1)))
    return tuple(out)


# ------------------------------------------------------------------ pad
_PAD_KWARGS = {"empty": (), "edge": (), "wrap": (), "constant": ("constant_values",),
               "linear_ramp": ("end_values",), "maximum": ("stat_length",),
               "mean": ("stat_length",), "median": ("stat_length",),
               "minimum": ("stat_length",), "reflect": ("reflect_type",),
               "symmetric": ("reflect_type",)}


def _as_pairs(x, ndim: int, as_index: bool = False) -> list:
    """NumPy's pad argument forms (a scalar, (before, after), ((b0, a0), ...)) as one
    (before, after) pair per axis; as_index: rounded non-negative ints."""
    if x is None:
        return [(None, None)] * ndim
    if isinstance(x, Tensor):
        raise TypeError("hipfer.pad: pad widths and values must be Python numbers or "
                        "sequences (a tensor would be read to the host)")
    x = np.array(x)
    if as_index:
        x = np.round(x).astype(np.int64)
        if x.size and x.min() < 0:
            raise ValueError("hipfer.pad: index can't contain negative values")
    if x.ndim < 3 and x.size == 1:
        v = x.reshape(-1)[0].item()
        return [(v, v)] * ndim
    if x.ndim < 3 and x.size == 2 and x.shape != (2, 1):
        a, b = (v.item() for v in x.reshape(-1))
        return [(a, b)] * ndim
    try:
        return [tuple(v.item() for v in row) for row in np.broadcast_to(x, (ndim, 2))]
    except ValueError:
        raise ValueError(f"hipfer.pad: could not broadcast {x.shape} to ({ndim}, 2)") from None


def _at(axis: int, sl) -> tuple:
    return (slice(None),) * axis + (sl, Ellipsis)


def _cast_into(value: Tensor, dt) -> Tensor:
    """A pad value tensor ready to store in a dt tensor: NumPy rounds float statistics for
    integer arrays, and casts unsafely."""
    if dt.kind in "iu" and value.dtype.kind in "fc":
        from ._elementwise import round as round_
        value = round_(value)
    return astype(value, dt) if value.dtype != dt else value


def _set_pad_area(padded, axis, width, values) -> None:
    n = padded.shape[axis]
    padded[_at(axis, slice(0, width[0]))] = _value_for(padded, values[0])
    padded[_at(axis, slice(n - width[1], n))] = _value_for(padded, values[1])


def _value_for(padded: Tensor, v) -> Tensor:
    """A pad value (a tensor, or a Python number: cast unsafely, as NumPy's assignment)."""
    if isinstance(v, Tensor):
        return _cast_into(v, padded.dtype)
    return asarray(np.asarray(v).astype(padded.dtype), device=padded.device)


def _edges(padded, axis, width):
    n = padded.shape[axis]
    left = padded[_at(axis, slice(width[0], width[0] + 1))]
    right = padded[_at(axis, slice(n - width[1] - 1, n - width[1]))]
    return left, right


def _ramps(padded, axis, width, end_values):
    from ._creation import _linspace_arrays
    from ._views import flip, squeeze
    ramps = []
    for end, edge, w in zip(end_values, _edges(padded, axis, width), width):
        ramps.append(_linspace_arrays(end, squeeze(edge, axis), w, False, False, padded.dtype,
                                      axis, padded.device))
    return ramps[0], flip(ramps[1], axis=axis)


def _median(x: Tensor, axis: int) -> Tensor:
    """NumPy's median along axis, keepdims: the middle of the sorted values (the mean of
    the two middle ones for an even count); NaN where the slice holds a NaN."""
    from ._elementwise import isnan, where
    from ._sorting import sort
    from ._statistical import mean
    s = sort(x, axis=axis)
    n = x.shape[axis]
    if s.dtype.kind not in "fc":
        s = astype(s, _dtypes.default_float)
    mid = s[_at(axis, slice((n - 1) // 2, n // 2 + 1))]
    m = mean(mid, axis=axis, keepdims=True)
    if s.dtype.kind in "fc":
        last = s[_at(axis, slice(n - 1, n))]
        m = where(isnan(last), last, m)
    return m


def _stats(padded, axis, width, lengths, mode):
    from ._statistical import max as max_, mean, min as min_
    lo, hi = width[0], padded.shape[axis] - width[1]
    most = hi - lo
    ln = [most if v is None or v > most else v for v in lengths]
    if 0 in ln and mode in ("maximum", "minimum"):
        raise ValueError("hipfer.pad: stat_length of 0 yields no value for padding")

    def stat(chunk):
        if mode == "maximum":
            return max_(chunk, axis=axis, keepdims=True)
        if mode == "minimum":
            return min_(chunk, axis=axis, keepdims=True)
        if mode == "median":
            return _median(chunk, axis)
        if chunk.dtype.kind not in "fc":
            chunk = astype(chunk, _dtypes.default_float)
        return mean(chunk, axis=axis, keepdims=True)
    left = stat(padded[_at(axis, slice(lo, lo + ln[0]))])
    if ln[0] == ln[1] == most:
        return left, left
    return left, stat(padded[_at(axis, slice(hi - ln[1], hi))])


def _reflect_both(padded, axis, width, method, period, include_edge):
    """One round of NumPy's iterative reflection (_set_reflect_both): returns what is left."""
    left, right = width
    old = padded.shape[axis] - right - left
    if include_edge:
        old, offset = old // period * period, 1
    else:
        old, offset = (old - 1) // (period - 1) * (period - 1) + 1 - 1, 0
    n = padded.shape[axis]
    if left > 0:
        k = min(old, left)
        stop = left - offset
        chunk = padded[_at(axis, slice(stop + k, stop if stop >= 0 else None, -1))]
        if method == "odd":
            chunk = _odd(padded[_at(axis, slice(left, left + 1))], chunk)
        padded[_at(axis, slice(left - k, left))] = chunk
        left -= k
    if right > 0:
        k = min(old, right)
        start = n - right + offset - 2
        stop = start - k
        chunk = padded[_at(axis, slice(start, stop if stop >= 0 else None, -1))]
        if method == "odd":
            chunk = _odd(padded[_at(axis, slice(n - right - 1, n - right))], chunk)
        padded[_at(axis, slice(n - right, n - right + k))] = chunk
        right -= k
    return left, right


def _odd(edge, chunk):
    from ._elementwise import multiply, subtract
    return subtract(multiply(edge, 2), chunk)


def _wrap_both(padded, axis, width, period0):
    """One round of NumPy's iterative wrapping (_set_wrap_both): returns what is left."""
    left, right = width
    n = padded.shape[axis]
    period = (n - right - left) // period0 * period0
    new_left = new_right = 0
    if left > 0:
        end = left + period
        chunk = padded[_at(axis, slice(end - min(period, left), end))]
        if left > period:
            area, new_left = slice(left - period, left), left - period
        else:
            area = slice(0, left)
        padded[_at(axis, area)] = chunk
    if right > 0:
        start = n - right - period
        chunk = padded[_at(axis, slice(start, start + min(period, right)))]
        if right > period:
            area, new_right = slice(n - right, n - right + period), right - period
        else:
            area = slice(n - right, n)
        padded[_at(axis, area)] = chunk
    return new_left, new_right


def pad(array, pad_width, mode="constant", **kwargs) -> Tensor:
    """array padded on each side of each axis by pad_width (NumPy's forms: an int, (before,
    after), or one pair per axis) in NumPy's mode: 'constant' (constant_values), 'edge',
    'linear_ramp' (end_values), 'maximum' / 'mean' / 'median' / 'minimum' (stat_length),
    'reflect' / 'symmetric' (reflect_type 'even' or 'odd'), 'wrap' or 'empty'. NumPy's
    algorithm, axis by axis, on the device. A callable mode is not supported (it would run
    Python per 1-d slice)."""
    x = _as_tensor(array)
    if callable(mode):
        raise TypeError("hipfer.pad: a callable mode is not supported")
    if mode not in _PAD_KWARGS:
        raise ValueError(f"hipfer.pad: mode '{mode}' is not supported")
    extra = set(kwargs) - set(_PAD_KWARGS[mode])
    if extra:
        raise ValueError(f"hipfer.pad: unsupported keyword arguments for mode '{mode}': "
                         f"{extra}")
    width = _as_pairs(pad_width, x.ndim, as_index=True)
    shape = tuple(lft + n + r for n, (lft, r) in zip(x.shape, width))
    be = get_backend(x.device)
    padded = Tensor(be.empty(shape, x.dtype))
    inner = tuple(slice(lft, lft + n) for n, (lft, _) in zip(x.shape, width))
    padded[inner] = x

    def roi(axis):  # the part axis by axis: corners once, by the later axes
        return padded[(slice(None),) * (axis + 1) + inner[axis + 1:]]

    if mode == "empty":
        return padded
    if mode == "constant":
        values = _as_pairs(kwargs.get("constant_values", 0), x.ndim)
        for axis, (w, v) in enumerate(zip(width, values)):
            _set_pad_area(roi(axis), axis, w, v)
        return padded
    if x.size == 0:
        for axis, w in enumerate(width):
            if x.shape[axis] == 0 and any(w):
                raise ValueError(f"hipfer.pad: can't extend empty axis {axis} using modes "
                                 "other than 'constant' or 'empty'")
        return padded
    if mode == "edge":
        for axis, w in enumerate(width):
            r = roi(axis)
            _set_pad_area(r, axis, w, _edges(r, axis, w))
    elif mode == "linear_ramp":
        ends = _as_pairs(kwargs.get("end_values", 0), x.ndim)
        for axis, (w, e) in enumerate(zip(width, ends)):
            r = roi(axis)
            _set_pad_area(r, axis, w, _ramps(r, axis, w, e))
    elif mode in ("maximum", "minimum", "mean", "median"):
        if mode != "mean" and x.dtype.kind == "c":  # NumPy orders complex numbers by parts
            raise TypeError(f"hipfer.pad: mode '{mode}' is not supported for complex tensors")
        lengths = _as_pairs(kwargs.get("stat_length"), x.ndim, as_index=True)
        for axis, (w, ln) in enumerate(zip(width, lengths)):
            r = roi(axis)
            _set_pad_area(r, axis, w, _stats(r, axis, w, ln, mode))
    elif mode in ("reflect", "symmetric"):
        method = kwargs.get("reflect_type", "even")
        if method not in ("even", "odd"):
            raise ValueError(f"hipfer.pad: reflect_type must be 'even' or 'odd', got "
                             f"{method!r}")
        for axis, w in enumerate(width):
            if x.shape[axis] == 1 and any(w):  # NumPy's legacy: a singleton axis as 'edge'
                _set_pad_area(padded, axis, w, _edges(padded, axis, w))
                continue
            r = roi(axis)
            while any(w):
                w = _reflect_both(r, axis, w, method, x.shape[axis], mode == "symmetric")
    else:  # wrap
        for axis, w in enumerate(width):
            r = roi(axis)
            period = r.shape[axis] - w[0] - w[1]
            while any(w):
                w = _wrap_both(r, axis, w, period)
    return padded
