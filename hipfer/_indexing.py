"""Indexing: ``x[key]`` and ``x[key] = value`` with the standard's full key (ints,
slices with any step, ``...``, ``None``, integer arrays, boolean masks) and what NumPy
adds (integer arrays next to slices and ``...``, several arrays broadcast together, lists
as arrays, 0-d masks); ``nonzero``; the index-tensor functions take, take_along_axis,
scatter and index_put.

Basic keys give zero-copy views; assigning to one is one PointwiseCast (or Generate for
a scalar) into the view. A key with arrays is lowered onto the indexing prims:
- its basic part (ints, slices, None) is applied first, as a view ``v`` of x; each index
  array then addresses one axis of ``v`` (a boolean mask: its Nonzero coordinates, one
  array per mask axis; a 0-d mask: a new axis indexed by [0] or []);
- reads: one array is one IndexSelect along its axis; several are turned into element
  offsets (per axis a table index -> offset, looked up with IndexSelect, which also checks
  bounds and wraps negatives) and read with one IndexSelect from a 1-d view spanning v;
- writes: IndexPut(accumulate=False) into v with the indexed axes in front (repeated
  destinations: the last in C order wins); ``x[mask] = value`` with a value that does not
  vary over the selected elements is one in-place ScalarWhere (no Nonzero, no sync).
Where the result's index axes go is NumPy's rule: in place of the indexed axes when the
advanced entries (arrays and ints) sit next to each other in the key, else in front.
Everything works on x's stored data: reads keep x's conjugation flag, writes store
conj(value) when x reads conjugated.
"""
from __future__ import annotations

import math
import operator
import re

import numpy as np

from . import _ops
from ._creation import _in_range, asarray, full
from ._elementwise import not_equal
from ._tensor import Tensor, _is_cupy, xp_of
from ._views import _axis, broadcast_shapes, broadcast_to, reshape
from .prims import descriptors as d
from .prims.optable import BinaryOp
from .prims.registry import get_backend

__all__ = ["index_put", "nonzero", "scatter", "take", "take_along_axis"]

_I64 = np.dtype(np.int64)


# ------------------------------------------------------------------- the key
def _array_entry(k, x: Tensor) -> Tensor:
    """A list, tuple, NumPy or CuPy array used as an index, as a Tensor on x's device."""
    if _is_cupy(k):
        return _tensor_entry(Tensor(k), x)
    a = np.asarray(k)
    if a.size == 0 and a.dtype.kind not in "biu":
        a = a.astype(np.intp)  # [] is an empty integer index, as in NumPy
    return _tensor_entry(asarray(a, device=x.device), x)


def _tensor_entry(k: Tensor, x: Tensor) -> Tensor:
    if k.device != x.device:
        raise ValueError(f"an index on {k.device} cannot index a tensor on {x.device}; "
                         "move it with to_device() first")
    if k.dtype.kind not in "biu":
        raise IndexError(f"arrays used as indices must be of integer or boolean type, got {k.dtype}")
    return k


def _entries(x: Tensor, key) -> list:
    """The key as a list of None, Ellipsis, slices, ints, Python bools (0-d masks) and
    Tensors (integer or bool)."""
    if not isinstance(key, tuple):
        key = (key,)
    out = []
    for k in key:
        if isinstance(k, Tensor):
            k = _tensor_entry(k, x)
        elif isinstance(k, (bool, np.bool_)):
            k = bool(k)
        elif isinstance(k, (int, np.integer)):
            k = int(k)
        elif k is None or k is Ellipsis or isinstance(k, slice):
            pass
        elif isinstance(k, (list, tuple, np.ndarray)) or _is_cupy(k):
            k = _array_entry(k, x)
        else:
            try:
                k = operator.index(k)
            except TypeError:
                raise IndexError(f"unsupported index {k!r}: use ints, slices, ..., None, "
                                 "integer arrays or boolean masks") from None
        if isinstance(k, Tensor) and k.ndim == 0 and k.dtype == np.bool_:
            k = bool(k)  # a 0-d mask: its value decides the new axis' length
        elif isinstance(k, Tensor) and k.ndim == 0:
            k = int(k)  # a 0-d integer index is an int, as in NumPy (checked, even next
            # to arrays that broadcast to nothing)
        out.append(k)
    if sum(k is Ellipsis for k in out) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    n_axes = sum(_axes_used(k) for k in out)
    if n_axes > x.ndim:
        raise IndexError(f"too many indices: {n_axes} for a {x.ndim}-d tensor")
    return out


def _axes_used(k) -> int:
    if k is None or k is Ellipsis or isinstance(k, bool):
        return 0
    if isinstance(k, Tensor) and k.dtype == np.bool_:
        return k.ndim
    return 1


def _is_advanced(k) -> bool:
    """Arrays and 0-d masks (a 0-d integer tensor is an int by now: _entries)."""
    return isinstance(k, bool) or (isinstance(k, Tensor) and (k.ndim > 0 or k.dtype == np.bool_))


def _basic_key(entries) -> tuple:
    """Ints, slices, ``...``, None as a key that always yields a view (never a scalar)."""
    out = [int(k) if isinstance(k, Tensor) else k for k in entries]
    if not any(k is Ellipsis for k in out):
        out.append(Ellipsis)  # NumPy/CuPy then return a 0-d view, not a scalar
    return tuple(out)


class _Advanced:
    """A key with index arrays, split into a basic view ``view`` of x's stored data and
    ``items`` (v_axis, x_axis, index) on axes of that view, where index is an integer
    Tensor, a bool mask Tensor (covering mask.ndim axes from v_axis) or a Python bool
    (a 0-d mask on a new axis of size one). ``front`` tells whether the broadcast index
    shape goes first in the result, else it replaces the indexed axes."""

    def __init__(self, x: Tensor, entries):
        n_ellipsis = x.ndim - sum(_axes_used(k) for k in entries)
        if not any(k is Ellipsis for k in entries):
            entries = list(entries) + [Ellipsis]
        basic, self.items, at = [], [], []  # at: (position in the key, v axis) per advanced entry
        v_ax = x_ax = 0
        for i, k in enumerate(entries):
            if k is None:
                basic.append(None)
                v_ax += 1
            elif k is Ellipsis:
                basic += [slice(None)] * n_ellipsis
                v_ax += n_ellipsis
                x_ax += n_ellipsis
            elif isinstance(k, slice):
                basic.append(k)
                v_ax += 1
                x_ax += 1
            elif isinstance(k, bool):
                basic.append(None)
                self.items.append((v_ax, None, k))
                at.append((i, v_ax))
                v_ax += 1
            elif isinstance(k, int):
                basic.append(k)
                at.append((i, v_ax))
                x_ax += 1
            else:
                m = k.ndim if k.dtype == np.bool_ else 1
                if k.dtype == np.bool_:
                    _check_mask(k, x.shape[x_ax:x_ax + m], x_ax)
                basic += [slice(None)] * m
                self.items.append((v_ax, x_ax, k))
                at.append((i, v_ax))
                v_ax += m
                x_ax += m
        self.view = x._data[tuple(basic)]
        self.n_advanced = len(at)
        self.front = at[-1][0] - at[0][0] + 1 != len(at)
        self.device = x.device

    def arrays(self) -> list:
        """[(v_axis, x_axis, integer Tensor)]: masks replaced by their coordinates. x_axis
        is None for indices known to be valid and non-negative (from masks)."""
        out = []
        for v_ax, x_ax, k in self.items:
            if isinstance(k, bool):
                out.append((v_ax, None, asarray(np.zeros(int(k), _I64), device=self.device)))
            elif k.dtype == np.bool_:
                out += [(v_ax + j, None, r) for j, r in enumerate(_nonzero_rows(k))]
            else:
                out.append((v_ax, x_ax, k))
        return out

    def layout(self, arrays):
        """(broadcast index shape B, indexed v axes, other v axes, result shape)."""
        shapes = [t.shape for _, _, t in arrays]
        try:
            b = tuple(np.broadcast_shapes(*shapes))
        except ValueError:
            raise IndexError("shape mismatch: indexing arrays could not be broadcast together "
                             f"with shapes {' '.join(map(str, shapes))}") from None
        axes = [a for a, _, _ in arrays]
        others = [a for a in range(self.view.ndim) if a not in axes]
        vs = self.view.shape
        if self.front:
            res = b + tuple(vs[a] for a in others)
        else:
            res = vs[:axes[0]] + b + vs[axes[-1] + 1:]
        return b, axes, others, res


def _check_mask(mask: Tensor, shape, x_ax: int):
    for j, (n, m) in enumerate(zip(shape, mask.shape)):
        if n != m:
            raise IndexError(f"boolean index did not match indexed array along axis {x_ax + j}; "
                             f"size of axis is {n} but size of corresponding boolean axis is {m}")


def _move(a, src: int, n: int, dst: int):
    """a with its n axes from src moved to start at dst (a view)."""
    if src == dst or n == 0:
        return a
    rest = [k for k in range(a.ndim) if not src <= k < src + n]
    return a.transpose(rest[:dst] + list(range(src, src + n)) + rest[dst:])


_AXIS_IN_MESSAGE = re.compile(r"for axis (\d+) ")


def _on_axes(err: IndexError, axes: dict) -> IndexError:
    """The prim's out-of-bounds error with its axis renamed to the axis of x."""
    def rename(m):
        k = int(m.group(1))
        return f"for axis {axes[k] if axes.get(k) is not None else k} "
    return IndexError(_AXIS_IN_MESSAGE.sub(rename, str(err), count=1))


def _flat(t: Tensor) -> Tensor:
    return reshape(t, (-1,))


def _check_unread(be, device, idx, n: int, x_ax: int) -> None:
    """Bounds-check a non-empty index for an axis of size n when no element is read or
    written (another axis is empty, so the gather or scatter has nothing to do and checks
    nothing): one IndexSelect of idx from an iota table of that axis, which checks every
    index on any backend and names axis x_ax of x in its error."""
    table = _ops.generate(d.Generate(d.GenerateKind.IOTA), (1,) * x_ax + (n,), _I64, device,
                          start=0, step=1)
    _ops.run_arrays(be, d.IndexSelect(x_ax), [table, _flat(idx)._data])


# ---------------------------------------------------------------------- reads
def getitem(x: Tensor, key) -> Tensor:
    entries = _entries(x, key)
    if not any(map(_is_advanced, entries)):
        return Tensor(x._data[_basic_key(entries)], x._conj)
    return Tensor(_read(_Advanced(x, entries)), x._conj)


def _read(adv: _Advanced):
    v = adv.view
    arrays = adv.arrays()
    b, axes, others, res = adv.layout(arrays)
    be = get_backend(adv.device)
    if len(arrays) == 1:
        ((ax, x_ax, idx),) = arrays
        if x_ax is not None and idx.size and 0 in res:
            _check_unread(be, adv.device, idx, v.shape[ax], x_ax)
        try:
            r = _ops.run_arrays(be, d.IndexSelect(ax), [v, _flat(idx)._data])
        except IndexError as e:
            raise _on_axes(e, {ax: x_ax}) from None
        r = r.reshape(v.shape[:ax] + idx.shape + v.shape[ax + 1:])
        return _move(r, ax, len(b), 0) if adv.front else r
    if int(np.prod(b)) == 0:  # the indices broadcast to nothing: none is read or checked
        return be.empty(res, v.dtype)
    offsets = _offsets(be, adv.device, v, arrays)
    if int(np.prod(res)) == 0:
        return be.empty(res, v.dtype)
    r = _ops.run_arrays(be, d.IndexSelect(0), [_span_view(v, axes, others), offsets])
    r = r.reshape(b + tuple(v.shape[a] for a in others))
    return r if adv.front else _move(r, 0, len(b), axes[0])


def _offsets(be, device, v, arrays):
    """Element offsets of the indexed elements from the lowest address the indexed axes
    of v reach, flattened from the broadcast index shape (int64): the sum over the axes
    of i * stride, shifted by (n - 1) * |stride| for a negative stride. User indices go
    through a table offset[i] looked up with IndexSelect, which brings the bounds check
    and the negative wrap, its error naming x's axis (the table's axis); mask coordinates
    are valid already and are scaled directly (no check, no sync)."""
    item = v.dtype.itemsize
    total = None
    for ax, x_ax, idx in arrays:
        n, s = v.shape[ax], v.strides[ax] // item
        shift = (n - 1) * -s if s < 0 else 0
        if x_ax is None:
            term = _affine(be, device, idx._data, s, shift)
        else:
            table = _ops.generate(d.Generate(d.GenerateKind.IOTA), (1,) * x_ax + (n,), _I64,
                                  device, start=shift, step=s)
            term = _ops.run_arrays(be, d.IndexSelect(x_ax), [table, _flat(idx)._data])
            term = term.reshape(idx.shape)
        total = term if total is None else \
            _ops.run_arrays(be, d.MetadataBinary(BinaryOp.ADD), [total, term])
    return total.reshape(-1)


def _affine(be, device, a, scale: int, shift: int):
    """a * scale + shift over an int64 array (MetadataBinary with 0-d constants)."""
    def const(value):
        return _ops.generate(d.Generate(d.GenerateKind.CONSTANT), (), _I64, device, value=value)
    out = _ops.run_arrays(be, d.MetadataBinary(BinaryOp.MUL), [a, const(scale)])
    if shift:
        out = _ops.run_arrays(be, d.MetadataBinary(BinaryOp.ADD), [out, const(shift)])
    return out


def _span_view(v, axes, others):
    """v with its indexed axes replaced by one leading axis of stride one element that
    starts at the lowest address they reach (so element o of it is the element at offset o
    of _offsets); the other axes keep their sizes and strides. Needs every indexed axis
    non-empty."""
    corner = tuple((v.shape[a] - 1 if v.strides[a] < 0 else 0) if a in axes else slice(None)
                   for a in range(v.ndim))
    base = v[corner + (Ellipsis,)]
    span = 1 + sum((v.shape[a] - 1) * abs(v.strides[a]) // v.itemsize for a in axes)
    return xp_of(v).lib.stride_tricks.as_strided(
        base, shape=(span,) + tuple(v.shape[a] for a in others),
        strides=(v.itemsize,) + tuple(v.strides[a] for a in others))


# ---------------------------------------------------------------------- writes
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


def _apart(be, a, dest):
    """a, or a contiguous copy of it when it may share memory with dest (x[1:] = x[:-1]:
    read everything before writing anything)."""
    return _ops.run_arrays(be, d.MakeContiguous(), [a]) if _may_overlap(a, dest) else a


def _is_scalar(value) -> bool:
    return isinstance(value, (bool, int, float, complex, np.generic))


def _scalar_value(x: Tensor, value):
    """A Python/NumPy scalar as x must store it (conjugated when x reads conjugated); a
    Python int out of an integer x's range raises OverflowError (NumPy 2's rule)."""
    if isinstance(value, (complex, np.complexfloating)) and x.dtype.kind != "c":
        raise TypeError(f"cannot assign a complex value to a {x.dtype} tensor")
    _in_range(value, x.dtype, f"assignment to a {x.dtype} tensor")
    if x.dtype.kind in "iu" and isinstance(value, float) and value != value:
        raise ValueError(f"cannot assign a NaN to a {x.dtype} tensor")  # as NumPy
    if x.dtype.kind in "iu" and isinstance(value, float) and value in (math.inf, -math.inf):
        raise OverflowError(f"cannot assign {value} to a {x.dtype} tensor")
    if x.dtype.kind in "iu" and isinstance(value, float):  # truncated, then it must fit
        _in_range(int(value), x.dtype, f"assignment of {value} to a {x.dtype} tensor")
    return complex(value).conjugate() if x._conj else value


def _tensor_value(x: Tensor, value) -> Tensor:
    """An assigned tensor (or array-like) checked against x: same device, no complex into real."""
    if not isinstance(value, Tensor):
        value = asarray(value, device=x.device)
    if value.device != x.device:
        raise ValueError(f"cannot assign a tensor on {value.device} into a tensor on {x.device}")
    if value.dtype.kind == "c" and x.dtype.kind != "c":
        raise TypeError(f"cannot assign a {value.dtype} tensor to a {x.dtype} tensor")
    return value


def _value(x: Tensor, value) -> Tensor:
    """value as a Tensor of x's dtype holding what x must store (conj(value) when x
    reads conjugated); scalars become 0-d tensors."""
    dt = x.dtype
    if _is_scalar(value):
        return full((), _scalar_value(x, value), dtype=dt, device=x.device)
    value = _tensor_value(x, value)
    flip = value._conj != x._conj
    if value.dtype == dt and not flip:
        return Tensor(value._data)
    return Tensor(_store(get_backend(x.device), value._data, flip, dt))


def _shape_error(value_shape, shape) -> ValueError:
    return ValueError(f"cannot assign a tensor of shape {value_shape} to an index of shape {shape}")


def _drop_leading_ones(shape, ndim) -> tuple:
    """NumPy lets an assigned value carry extra leading axes of size one."""
    while len(shape) > ndim and shape[0] == 1:
        shape = shape[1:]
    return shape


def setitem(x: Tensor, key, value) -> None:
    entries = _entries(x, key)
    if any(map(_is_advanced, entries)):
        _write(x, _Advanced(x, entries), value)
        return
    dest = x._data[_basic_key(entries)]
    if _is_scalar(value):
        scalar = _scalar_value(x, value)
        if dest.size:
            _ops.generate(d.Generate(d.GenerateKind.CONSTANT), dest.shape, dest.dtype,
                          x.device, out=dest, value=scalar)
        return
    value = _tensor_value(x, value)
    be = get_backend(x.device)
    shape = _drop_leading_ones(value.shape, dest.ndim)
    try:  # checked for an empty destination too: the value must fit it
        src = xp_of(dest).broadcast_to(value._data.reshape(shape), dest.shape)
    except ValueError:
        raise _shape_error(value.shape, dest.shape) from None
    if dest.size == 0:
        return
    src = _apart(be, src, dest)
    _store(be, src, value._conj != x._conj, dest.dtype, out=dest)


def _store(be, src, flip: bool, dt, out=None):
    """src cast to dt -- conjugated when flip (x reads conjugated: it stores conj(value))
    -- into out (a new array when None). A real src bound for a conjugated complex view is
    made complex first, so its zero imaginary parts are stored as -0.0 and read back as
    +0.0 (conj(v + 0j)), as NumPy and the standard have them."""
    if flip and src.dtype.kind != "c":
        src = _ops.run_arrays(be, d.PointwiseCast(dt), [src])
    return _ops.run_arrays(be, d.PointwiseCast(dt), [src], conj=(True,) if flip else None,
                           out=out)


def _write(x: Tensor, adv: _Advanced, value) -> None:
    vals = _value(x, value)
    be = get_backend(x.device)
    if _masked_fill(be, adv, vals):
        return
    v = adv.view
    arrays = adv.arrays()
    b, axes, others, res = adv.layout(arrays)
    shape = _drop_leading_ones(vals.shape, len(res))
    try:
        src = xp_of(v).broadcast_to(vals._data.reshape(shape), res)
    except ValueError:
        raise _shape_error(vals.shape, res) from None
    if not adv.front:
        src = _move(src, axes[0], len(b), 0)  # IndexPut wants the index axes first
    dest = v.transpose(axes + others)
    if dest.size == 0 and int(np.prod(b)):  # nothing is written: check the indices alone
        for ax, x_ax, t in arrays:
            if x_ax is not None:
                _check_unread(be, x.device, t, v.shape[ax], x_ax)
    idx = [_apart(be, t._data, dest) for _, _, t in arrays]
    try:
        _ops.run_arrays(be, d.IndexPut(False), [dest, *idx, _apart(be, src, dest)], out=dest)
    except IndexError as e:
        raise _on_axes(e, {j: x_ax for j, (_, x_ax, _) in enumerate(arrays)}) from None


def _masked_fill(be, adv: _Advanced, vals: Tensor) -> bool:
    """x[mask] = value as an in-place where(mask, value, x) when the value does not vary
    over the selected elements (its axis facing them is absent or of size one): no
    Nonzero, no sync. False when the key or the value do not allow it."""
    if adv.n_advanced != 1 or isinstance(adv.items[0][2], bool) \
            or adv.items[0][2].dtype != np.bool_:
        return False
    v_ax, _, mask = adv.items[0]
    v = adv.view
    m, after = mask.ndim, v.ndim - v_ax - mask.ndim
    shape = _drop_leading_ones(vals.shape, v.ndim - m + 1)
    if len(shape) > after:
        c = len(shape) - after - 1  # the value's axis facing the selected elements
        if shape[c] != 1:
            return False
        shape = shape[:c] + (1,) * m + shape[c + 1:]
    src = vals._data.reshape(shape)
    cond = mask._data.reshape(mask.shape + (1,) * after)
    try:
        ok = np.broadcast_shapes(cond.shape, src.shape, v.shape) == v.shape
    except ValueError:
        ok = False
    if not ok:
        raise _shape_error(vals.shape, v.shape[:v_ax] + ("n",) + v.shape[v_ax + m:])
    if v.size:
        _ops.run_arrays(be, d.ScalarWhere(), [_apart(be, cond, v), _apart(be, src, v), v], out=v)
    return True


# --------------------------------------------------------------------- nonzero
def _nonzero_rows(mask: Tensor, compact: bool = False) -> list:
    """The coordinates of mask's True elements, one int64 Tensor per axis (Nonzero, then
    one device->host read of the count). compact copies them out of the worst-case
    buffer, so a result kept by the caller does not hold mask.size entries per axis."""
    be = get_backend(mask.device)
    coords, count = _ops.run_arrays(be, d.Nonzero(), [mask._data])
    n = int(count)
    if compact and n < coords.shape[1]:
        coords = _ops.run_arrays(be, d.MakeContiguous(), [coords[:, :n]])
    else:
        coords = coords[:, :n]
    return [Tensor(coords[j]) for j in range(mask.ndim)]


def nonzero(x: Tensor, /) -> tuple:
    """Indices of the non-zero elements of x, one int64 tensor per axis, in C order
    (row-major). x must have at least one axis."""
    if not isinstance(x, Tensor):
        raise TypeError(f"nonzero() expects a hipfer Tensor, got {type(x).__name__}")
    if x.ndim == 0:
        raise ValueError("nonzero() needs a tensor with at least one axis (got a 0-d tensor)")
    if x.dtype != np.bool_:
        x = not_equal(x, 0)
    return tuple(_nonzero_rows(x, compact=True))


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
    if isinstance(x, Tensor) and x.ndim and indices.size and 0 in x.shape:
        ax = _axis(int(axis), x.ndim)
        if 0 in x.shape[:ax] + x.shape[ax + 1:]:  # an empty result: nothing checks them
            _check_unread(get_backend(x.device), x.device, indices, x.shape[ax], ax)
    return Tensor(_ops.run(d.IndexSelect(int(axis)), [x, indices], called="take"))


def take_along_axis(x: Tensor, indices: Tensor, /, *, axis: int = -1) -> Tensor:
    """out[..., i, ...] = x[..., indices[..., i, ...], ...] along axis (Gather). x and
    indices have the same number of axes and broadcast against each other on all but
    axis (stride-0 views, nothing copied), as NumPy and the standard have it."""
    if not isinstance(x, Tensor):
        raise TypeError(f"take_along_axis() expects a hipfer Tensor, got {type(x).__name__}")
    _index_tensor(indices, "take_along_axis(): indices")
    if x.ndim == 0:
        raise ValueError("take_along_axis(): x must have at least one axis")
    if indices.ndim != x.ndim:
        raise ValueError(f"take_along_axis(): indices has {indices.ndim} axes and x has "
                         f"{x.ndim}: they must have the same number")
    ax = _axis(axis, x.ndim)
    off = lambda s: s[:ax] + s[ax + 1:]  # noqa: E731
    try:
        lead = broadcast_shapes(off(x.shape), off(indices.shape))
    except ValueError:
        raise ValueError(f"take_along_axis(): x of shape {x.shape} and indices of shape "
                         f"{indices.shape} do not broadcast off axis {ax}") from None
    x = broadcast_to(x, lead[:ax] + (x.shape[ax],) + lead[ax:])
    indices = broadcast_to(indices, lead[:ax] + (indices.shape[ax],) + lead[ax:])
    return Tensor(_ops.run(d.Gather(ax), [x, indices], called="take_along_axis"))


def scatter(x: Tensor, axis: int, index: Tensor, src: Tensor, /, *, reduce=None) -> Tensor:
    """A copy of x with src written (reduce=None) or added (reduce='add') at index along axis."""
    _index_tensor(index, "scatter(): index")
    return Tensor(_ops.run(d.Scatter(int(axis), reduce), [x, index, src], called="scatter"))


def index_put(x: Tensor, indices, values: Tensor, /, *, accumulate: bool = False) -> Tensor:
    """A copy of x with x[indices] = values (or += with accumulate=True, repeats summed)."""
    indices = tuple(indices)
    for i, t in enumerate(indices):
        _index_tensor(t, f"index_put(): indices[{i}]")
    if not isinstance(values, Tensor):
        values = asarray(values, dtype=x.dtype, device=x.device)
    return Tensor(_ops.run(d.IndexPut(bool(accumulate)), [x, *indices, values],
                           called="index_put"))
