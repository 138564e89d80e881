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
from ._core import materialize
from ._creation import _in_range, arange, asarray, empty, full, ones, tril, triu
from ._data_type_functions import astype, result_type
from ._elementwise import (clip, equal, floor_divide, greater_equal, less, less_equal,
                           not_equal, remainder, where)
from ._statistical import any as any_, cumulative_sum
from ._tensor import Tensor, _is_cupy, xp_of
from ._views import _axis, broadcast_shapes, broadcast_to, reshape
from .prims import descriptors as d
from .prims.optable import BinaryOp
from .prims.registry import get_backend

__all__ = ["argwhere", "choose", "compress", "diag_indices", "diag_indices_from", "extract",
           "fill_diagonal", "flatnonzero", "index_put", "mask_indices", "nonzero", "place",
           "put", "put_along_axis", "putmask", "ravel_multi_index", "scatter", "select",
           "take", "take_along_axis", "tril_indices", "tril_indices_from", "triu_indices",
           "triu_indices_from", "unravel_index"]

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


def take_along_axis(x: Tensor, indices, /, *, axis=-1) -> Tensor:
    """out[..., i, ...] = x[..., indices[..., i, ...], ...] along axis (Gather); axis=None
    takes from the flattened x (indices 1-d), as NumPy. x and indices have the same
    number of axes and broadcast against each other on all but axis (stride-0 views,
    nothing copied), as NumPy and the standard have it."""
    if not isinstance(x, Tensor):
        raise TypeError(f"take_along_axis() expects a hipfer Tensor, got {type(x).__name__}")
    if not isinstance(indices, Tensor):
        indices = _int_index(indices, "take_along_axis", x.device)
    _index_tensor(indices, "take_along_axis(): indices")
    if axis is None:
        if indices.ndim != 1:
            raise ValueError("take_along_axis(): with axis=None, indices must be 1-d")
        x, axis = _flat(x), 0
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


# ------------------------------------------- NumPy's indexing routines (issue 21)
# Compositions of the functions above and the elementwise ones. Index checks in 'raise'
# mode run on the device (one IndexSelect from an iota table, as take and setitem check:
# the error flag is all that comes back). Functions whose result size depends on the
# data (argwhere, flatnonzero, compress, extract, the *_indices of triangles) read one
# count back to the host (Nonzero's).

_MODES = ("raise", "wrap", "clip")


def _as_tensor(x, fn, device=None) -> Tensor:
    """x as a Tensor (array-likes and scalars become one, on device when given)."""
    if isinstance(x, Tensor):
        if device is not None and x.device != device:
            raise ValueError(f"hipfer.{fn}: a tensor on {x.device} cannot be combined with "
                             f"one on {device}; move it with to_device() first")
        return x
    if _is_cupy(x):
        raise TypeError(f"hipfer.{fn}: got a CuPy array; wrap it with hipfer.asarray first")
    try:
        return asarray(x, device=device)
    except (TypeError, ValueError) as e:
        raise TypeError(f"hipfer.{fn}: expected an array-like, got {type(x).__name__}") from e


def _target(a, fn) -> Tensor:
    """The tensor an in-place function writes into (NumPy wants an ndarray there)."""
    if not isinstance(a, Tensor):
        raise TypeError(f"hipfer.{fn}: the array to modify must be a hipfer Tensor, got "
                        f"{type(a).__name__}")
    return a


def _int_index(t, fn, device) -> Tensor:
    """An integer index array (list, scalar or Tensor) as an int64 Tensor on device."""
    t = _as_tensor(t, fn, device)
    if t.dtype.kind not in "iu":
        if t.size == 0 and t.dtype.kind == "f":  # [] is an empty integer index
            return astype(t, _I64)
        raise TypeError(f"hipfer.{fn}: indices must be integers, got {t.dtype}")
    return t if t.dtype == _I64 else astype(t, _I64)


def _mode(mode, fn) -> str:
    if mode not in _MODES:
        raise ValueError(f"hipfer.{fn}: mode must be one of {_MODES}, got {mode!r}")
    return mode


def _bounded(idx: Tensor, n: int, mode: str, fn, *, negative_ok=True,
             error=IndexError, message=None) -> Tensor:
    """idx (int64) made a valid index into an axis of length n under NumPy's mode:
    'raise' checks it on the device (negatives count from the end when negative_ok, else
    they are errors too), 'wrap' takes it modulo n, 'clip' clips it to [0, n-1]."""
    if idx.size == 0:
        return idx
    if n == 0:
        raise error(message or f"hipfer.{fn}: cannot index into an empty axis")
    if mode == "wrap":
        return remainder(idx, n)
    if mode == "clip":
        return clip(idx, 0, n - 1)
    if not negative_ok:  # a negative index becomes n, which the lookup rejects
        idx = where(less(idx, 0), n, idx)
    be = get_backend(idx.device)
    table = _ops.generate(d.Generate(d.GenerateKind.IOTA), (n,), _I64, idx.device,
                          start=0, step=1)
    try:
        out = _ops.run_arrays(be, d.IndexSelect(0), [table, _flat(idx)._data])
    except IndexError:
        raise error(message or f"hipfer.{fn}: an index is out of bounds for size {n}") from None
    return Tensor(out.reshape(idx.shape))


def _cycled(v: Tensor, n: int) -> Tensor:
    """The first n elements of v's flattened values repeated cyclically (NumPy's put)."""
    v = _flat(v)
    if v.shape[0] == n:
        return v
    return take(v, remainder(arange(n, dtype=_I64, device=v.device), v.shape[0]))


def _unravel(flat: Tensor, shape, order="C") -> tuple:
    """Coordinates (int64 tensors) of valid flat indices into shape."""
    out, stride = [], 1
    axes = range(len(shape) - 1, -1, -1) if order == "C" else range(len(shape))
    for j in axes:
        c = floor_divide(flat, stride) if stride != 1 else flat
        out.append(remainder(c, shape[j]) if j != axes[-1] else c)
        stride *= shape[j]
    return tuple(out[::-1]) if order == "C" else tuple(out)


def _values_for(a: Tensor, v, fn) -> Tensor:
    """Values to store into a: a tensor on a's device cast to a's dtype (unsafely, as
    NumPy's put/putmask/place do); complex into a real tensor is refused."""
    v = _as_tensor(v, fn, a.device)
    if v.dtype.kind == "c" and a.dtype.kind != "c":
        raise TypeError(f"hipfer.{fn}: cannot store complex values in a {a.dtype} tensor")
    return v if v.dtype == a.dtype else astype(v, a.dtype)


def _put_flat(a: Tensor, flat: Tensor, vals: Tensor) -> None:
    """a.flat[flat] = vals for valid non-negative flat indices (same sizes)."""
    if a.ndim == 0:
        a[...] = vals[-1]  # one place: the last write wins
        return
    a[_unravel(flat, a.shape)] = vals


def put(a: Tensor, ind, v, mode="raise") -> None:
    """a.flat[ind] = v in place, v repeated cyclically over ind; mode 'raise' (negatives
    count from the end), 'wrap' or 'clip'. Repeated indices: the last one wins."""
    a = _target(a, "put")
    ind = _int_index(ind, "put", a.device)
    vals = _values_for(a, v, "put")
    if ind.size == 0 or vals.size == 0:
        return None
    flat = _bounded(_flat(ind), a.size, _mode(mode, "put"), "put")
    _put_flat(a, flat, _cycled(vals, flat.shape[0]))
    return None


def put_along_axis(arr: Tensor, indices, values, axis) -> None:
    """arr[..., indices[..., i, ...], ...] = values along axis, in place; indices and
    values broadcast against arr off axis, as in NumPy. axis=None writes arr.flat[indices]
    (NumPy 2.4 writes into a temporary copy there, so arr stays unchanged)."""
    arr = _target(arr, "put_along_axis")
    indices = _int_index(indices, "put_along_axis", arr.device)
    vals = _values_for(arr, values, "put_along_axis")
    if axis is None:
        if indices.ndim != 1:
            raise ValueError("hipfer.put_along_axis: with axis=None, indices must be 1-d")
        flat = _bounded(indices, arr.size, "raise", "put_along_axis")
        try:
            vals = broadcast_to(vals, indices.shape)
        except ValueError:
            raise ValueError(f"hipfer.put_along_axis: values of shape {vals.shape} do not "
                             f"broadcast to indices' {indices.shape}") from None
        if flat.size:
            _put_flat(arr, flat, vals)
        return None
    if indices.ndim != arr.ndim:
        raise ValueError("hipfer.put_along_axis: indices and arr must have the same number "
                         f"of dimensions ({indices.ndim} and {arr.ndim})")
    ax = _axis(axis, arr.ndim)
    key = tuple(indices if j == ax else
                reshape(arange(n, dtype=_I64, device=arr.device),
                        (1,) * j + (n,) + (1,) * (arr.ndim - j - 1))
                for j, n in enumerate(arr.shape))
    try:
        arr[key] = vals
    except IndexError as e:
        raise IndexError(f"hipfer.put_along_axis: {e}") from None
    return None


def _same_size_mask(a: Tensor, mask, fn) -> Tensor:
    mask = _as_tensor(mask, fn, a.device)
    if mask.size != a.size:
        raise ValueError(f"hipfer.{fn}: mask and data must be the same size")
    mask = reshape(mask, a.shape)
    return mask if mask.dtype == np.bool_ else not_equal(mask, 0)


def putmask(a: Tensor, mask, values) -> None:
    """a.flat[n] = values.flat[n % len(values)] where mask.flat[n], in place (one where;
    no sync). values is cast to a's dtype as NumPy does (unsafely)."""
    a = _target(a, "putmask")
    mask = _same_size_mask(a, mask, "putmask")
    vals = _values_for(a, values, "putmask")
    if vals.size == 0 or a.size == 0:
        return None
    a[...] = where(mask, reshape(_cycled(vals, a.size), a.shape), a)
    return None


def place(arr: Tensor, mask, vals) -> None:
    """The True places of mask get vals in order (repeated cyclically), in place: a
    running count of mask picks each value, so no count is read back (only an empty vals
    with a True in mask, NumPy's error, reads one flag)."""
    arr = _target(arr, "place")
    mask = _same_size_mask(arr, mask, "place")
    vals = _flat(_values_for(arr, vals, "place"))
    if arr.size == 0:
        return None
    if vals.size == 0:
        if bool(any_(mask)._data):
            raise ValueError("hipfer.place: cannot insert from an empty array")
        return None
    rank = cumulative_sum(_flat(astype(mask, _I64)))  # 1 + the rank of each True place
    picked = take(vals, remainder(clip(rank - 1, 0, None), vals.shape[0]))
    arr[...] = where(mask, reshape(picked, arr.shape), arr)
    return None


def choose(a, choices, out=None, mode="raise") -> Tensor:
    """choices[a[i]][i] for every i of the broadcast shape of a and the choices (one where
    per choice); mode 'raise' (ValueError for an index outside [0, n)), 'wrap' or 'clip'."""
    idx_src = a
    if isinstance(choices, Tensor):
        device = choices.device
        choices = [choices[j] for j in range(choices.shape[0])] if choices.ndim else [choices]
    else:
        device = idx_src.device if isinstance(idx_src, Tensor) else None
        choices = list(choices)
        device = next((c.device for c in choices if isinstance(c, Tensor)), device)
    if not choices:
        raise ValueError("hipfer.choose: choices must not be empty")
    a = _int_index(a, "choose", device)
    weak = (bool, int, float, complex)  # Python scalars promote weakly (NEP 50)
    choices = [c if isinstance(c, weak) else _as_tensor(c, "choose", a.device)
               for c in choices]
    dt = result_type(*choices) if not all(isinstance(c, weak) for c in choices) else \
        np.result_type(*choices)  # Python scalars alone: NumPy's default dtypes
    choices = [full((), c, dtype=dt, device=a.device) if isinstance(c, weak) else c
               for c in choices]
    shape = broadcast_shapes(a.shape, *(c.shape for c in choices))
    idx = _bounded(a, len(choices), _mode(mode, "choose"), "choose", negative_ok=False,
                   error=ValueError, message="hipfer.choose: invalid entry in choice array")
    res = broadcast_to(astype(choices[-1], dt), shape)
    for j in range(len(choices) - 2, -1, -1):
        res = where(equal(idx, j), astype(choices[j], dt), res)
    if len(choices) == 1:  # no where ran: a fresh tensor, not a broadcast view
        res = materialize(res)
    return _to_out(res, out, "choose")


def _to_out(res: Tensor, out, fn) -> Tensor:
    if out is None:
        return res
    out = _target(out, fn)
    if out.shape != res.shape:
        raise ValueError(f"hipfer.{fn}: out has shape {out.shape}, the result {res.shape}")
    out[...] = res
    return out


def compress(condition, a, axis=None, out=None) -> Tensor:
    """The slices of a along axis (the flattened a for axis=None) where the 1-d condition
    is true; a shorter condition counts as False beyond its end. Reads one count (sync)."""
    a = _as_tensor(a, "compress")
    cond = _as_tensor(condition, "compress", a.device)
    if cond.ndim != 1:
        raise ValueError("hipfer.compress: condition must be a 1-d array")
    if axis is None:
        a, axis = _flat(a), 0
    ax = _axis(axis, a.ndim)
    (idx,) = nonzero(cond)
    try:
        res = take(a, idx, axis=ax)
    except IndexError:
        raise IndexError(f"hipfer.compress: condition has a True beyond the {a.shape[ax]} "
                         f"elements of axis {ax}") from None
    return _to_out(res, out, "compress")


def extract(condition, arr) -> Tensor:
    """The elements of the flattened arr where the flattened condition is non-zero
    (1-d, arr's dtype). Reads one count (sync)."""
    arr = _as_tensor(arr, "extract")
    cond = _as_tensor(condition, "extract", arr.device)
    (idx,) = nonzero(_flat(cond))
    try:
        return take(_flat(arr), idx)
    except IndexError:
        raise IndexError("hipfer.extract: condition has a True beyond arr's "
                         f"{arr.size} elements") from None


def select(condlist, choicelist, default=0) -> Tensor:
    """choicelist[i] where condlist[i] holds first, default elsewhere (everything
    broadcast together; the choices' result dtype, default promoting like a Python
    scalar). One where per condition."""
    condlist, choicelist = list(condlist), list(choicelist)
    if len(condlist) != len(choicelist):
        raise ValueError("hipfer.select: list of cases must be same length as list of conditions")
    if not condlist:
        raise ValueError("hipfer.select: select with an empty condition list is not possible")
    dev = next((t.device for t in condlist + choicelist + [default] if isinstance(t, Tensor)),
               None)
    conds = [_as_tensor(c, "select", dev) for c in condlist]
    dev = conds[0].device
    for i, c in enumerate(conds):
        if c.dtype != np.bool_:
            raise TypeError(f"hipfer.select: invalid entry {i} in condlist: should be boolean")
    choices = [_as_tensor(c, "select", dev) for c in choicelist]
    dflt = default if _is_scalar(default) else _as_tensor(default, "select", dev)
    dt = result_type(*choices, dflt)
    shape = broadcast_shapes(*(t.shape for t in conds + choices),
                             *(() if _is_scalar(dflt) else (dflt.shape,)))
    res = full(shape, dflt, dtype=dt, device=dev) if _is_scalar(dflt) else \
        broadcast_to(astype(dflt, dt), shape)
    for c, v in zip(conds[::-1], choices[::-1]):
        res = where(c, astype(v, dt), res)
    return broadcast_to(res, shape) if res.shape != shape else res


def diag_indices(n, ndim=2, *, device=None) -> tuple:
    """The indices of the main diagonal of an n x ... x n tensor (ndim int64 tensors)."""
    i = arange(operator.index(n), dtype=_I64, device=device)
    return (i,) * operator.index(ndim)


def diag_indices_from(arr) -> tuple:
    """diag_indices for arr (at least 2-d, all axes of one length), on arr's device."""
    arr = _as_tensor(arr, "diag_indices_from")
    if arr.ndim < 2:
        raise ValueError("hipfer.diag_indices_from: input array must be at least 2-d")
    if len(set(arr.shape)) != 1:
        raise ValueError("hipfer.diag_indices_from: all dimensions of input must be of "
                         "equal length")
    return diag_indices(arr.shape[0], arr.ndim, device=arr.device)


def _tri_indices(n, k, m, lower: bool, device) -> tuple:
    n = operator.index(n)
    m = n if m is None else operator.index(m)
    row = reshape(arange(n, dtype=_I64, device=device), (n, 1))
    col = reshape(arange(m, dtype=_I64, device=device), (1, m))
    diff = col - row  # the diagonal of each place
    return nonzero(less_equal(diff, k) if lower else greater_equal(diff, k))


def tril_indices(n, k=0, m=None, *, device=None) -> tuple:
    """(rows, cols) of the lower triangle (on and below diagonal k) of an n x m matrix,
    in C order. Reads one count (sync)."""
    return _tri_indices(n, operator.index(k), m, True, device)


def triu_indices(n, k=0, m=None, *, device=None) -> tuple:
    """(rows, cols) of the upper triangle (on and above diagonal k) of an n x m matrix,
    in C order. Reads one count (sync)."""
    return _tri_indices(n, operator.index(k), m, False, device)


def _tri_from(arr, k, lower, fn) -> tuple:
    arr = _as_tensor(arr, fn)
    if arr.ndim != 2:
        raise ValueError(f"hipfer.{fn}: input array must be 2-d")
    return _tri_indices(arr.shape[0], operator.index(k), arr.shape[1], lower, arr.device)


def tril_indices_from(arr, k=0) -> tuple:
    """tril_indices for the 2-d arr's shape, on its device. Reads one count (sync)."""
    return _tri_from(arr, k, True, "tril_indices_from")


def triu_indices_from(arr, k=0) -> tuple:
    """triu_indices for the 2-d arr's shape, on its device. Reads one count (sync)."""
    return _tri_from(arr, k, False, "triu_indices_from")


def mask_indices(n, mask_func, k=0, *, device=None) -> tuple:
    """The indices where mask_func(ones((n, n)), k) is non-zero (mask_func: e.g.
    hipfer.triu or numpy.triu, called on a hipfer tensor). Reads one count (sync)."""
    m = ones((operator.index(n),) * 2, dtype=_I64, device=device)
    a = mask_func(m, k=k) if mask_func in (tril, triu) else mask_func(m, k)
    return nonzero(_as_tensor(a, "mask_indices", m.device))


def _dims(shape, fn) -> tuple:
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    out = tuple(operator.index(s) for s in shape)
    if any(s < 0 for s in out):
        raise ValueError(f"hipfer.{fn}: dimensions must be non-negative")
    if math.prod(out) > np.iinfo(np.int64).max:
        raise ValueError(f"hipfer.{fn}: dimensions are too large")
    return out


def ravel_multi_index(multi_index, dims, mode="raise", order="C") -> Tensor:
    """Flat indices (int64) of the coordinate arrays multi_index into shape dims (C or F
    order); mode 'raise' (ValueError outside [0, n)), 'wrap' or 'clip', one or per axis."""
    dims = _dims(dims, "ravel_multi_index")
    coords = list(multi_index)
    if len(coords) != len(dims):
        raise ValueError(f"hipfer.ravel_multi_index: parameter multi_index must be a "
                         f"sequence of length {len(dims)}")
    if order not in ("C", "F"):
        raise ValueError("hipfer.ravel_multi_index: order must be 'C' or 'F'")
    modes = (mode,) * len(dims) if isinstance(mode, str) else tuple(mode)
    if len(modes) != len(dims):
        raise ValueError("hipfer.ravel_multi_index: one mode or one per dimension")
    dev = next((c.device for c in coords if isinstance(c, Tensor)), None)
    total, stride = None, 1
    axes = range(len(dims) - 1, -1, -1) if order == "C" else range(len(dims))
    for j in axes:
        c = _int_index(coords[j], "ravel_multi_index", dev)
        c = _bounded(c, dims[j], _mode(modes[j], "ravel_multi_index"), "ravel_multi_index",
                     negative_ok=False, error=ValueError,
                     message="hipfer.ravel_multi_index: invalid entry in coordinates array")
        term = c if stride == 1 else c * stride
        total = term if total is None else total + term
        stride *= dims[j]
    if total is None:
        raise ValueError("hipfer.ravel_multi_index: dims must not be empty")
    return total


def unravel_index(indices, shape, order="C") -> tuple:
    """Coordinate arrays (int64, indices' shape) of flat indices into shape (C or F
    order); an index outside [0, size) raises ValueError (checked on the device)."""
    dims = _dims(shape, "unravel_index")
    if order not in ("C", "F"):
        raise ValueError("hipfer.unravel_index: order must be 'C' or 'F'")
    idx = _int_index(indices, "unravel_index", None)
    size = math.prod(dims)
    idx = _bounded(idx, size, "raise", "unravel_index", negative_ok=False, error=ValueError,
                   message=f"hipfer.unravel_index: an index is out of bounds for array "
                           f"with size {size}")
    return _unravel(idx, dims, order) if dims else ()


def fill_diagonal(a: Tensor, val, wrap=False) -> None:
    """Fill the main diagonal of a (at least 2-d; all axes equal beyond 2-d) with val in
    place, val repeated cyclically; wrap: a tall matrix's diagonal restarts every
    n+1 rows, as in NumPy."""
    a = _target(a, "fill_diagonal")
    if a.ndim < 2:
        raise ValueError("hipfer.fill_diagonal: array must be at least 2-d")
    if a.ndim == 2:
        step = a.shape[1] + 1
        end = a.size if wrap else min(a.size, a.shape[1] * a.shape[1])
    else:
        if len(set(a.shape)) != 1:
            raise ValueError("hipfer.fill_diagonal: all dimensions of input must be of "
                             "equal length")
        step = 1 + sum(math.prod(a.shape[:j]) for j in range(1, a.ndim))
        end = a.size
    vals = _values_for(a, val, "fill_diagonal")
    flat = arange(0, end, step, dtype=_I64, device=a.device)
    if flat.size and vals.size:
        _put_flat(a, flat, _cycled(vals, flat.shape[0]))
    return None


def argwhere(a) -> Tensor:
    """Coordinates (int64, shape (N, a.ndim)) of a's non-zero elements in C order; a 0-d
    a gives shape (1, 0) or (0, 0). Reads one count (sync)."""
    a = _as_tensor(a, "argwhere")
    if a.ndim == 0:
        n = nonzero(reshape(a, (1,)))[0].shape[0]
        return empty((n, 0), dtype=_I64, device=a.device)
    mask = a if a.dtype == np.bool_ else not_equal(a, 0)
    be = get_backend(a.device)
    coords, count = _ops.run_arrays(be, d.Nonzero(), [mask._data])
    return Tensor(_ops.run_arrays(be, d.MakeContiguous(), [coords[:, :int(count)].T]))


def flatnonzero(a) -> Tensor:
    """Indices (int64) of the non-zero elements of the flattened a. Reads one count (sync)."""
    return nonzero(_flat(_as_tensor(a, "flatnonzero")))[0]
