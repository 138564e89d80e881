"""The Tensor's NumPy-style methods and attributes (numpy.ndarray's names, signatures and
semantics), each a thin composition of namespace functions, so they run on the tensor's
device through the prims: nothing is copied to the host except by the methods whose
result lives there (item, tolist, tobytes, tofile, get, __format__, dumps; repr copies only
the elements it shows). ``METHODS`` is installed on Tensor by hipfer._array_methods.install.

Array arguments (indices, values, ``b`` of dot, ``v`` of searchsorted, ...) may be
Tensors, Python scalars, lists, tuples or NumPy arrays: non-Tensors are host data and are
moved onto the tensor's device (``asarray(v, device=x.device)``), as NumPy's methods accept
them. ``out=`` must be a Tensor of the result's shape; the result is cast into it as
``out[...] = result`` casts. Arguments NumPy has and hipfer does not support raise
TypeError naming the method and the argument.

Coverage against ``[m for m in dir(numpy.ndarray) if not m.startswith('_')]`` (NumPy 2):

| numpy.ndarray | hipfer Tensor |
| --- | --- |
| all any argmax argmin max min mean std var sum prod cumsum cumprod | methods (out, keepdims, dtype, ddof; where= and initial= as NumPy) |
| ptp | method (removed from ndarray in NumPy 2; CuPy keeps it) |
| astype copy fill item tolist tobytes tofile view dump dumps | methods |
| reshape ravel flatten transpose swapaxes squeeze | methods (order 'C', 'F', 'A', 'K') |
| repeat take put choose compress clip round nonzero | methods (mode 'raise', 'wrap', 'clip') |
| sort argsort partition argpartition searchsorted | methods; sort/partition in place; a full sort is a valid partition |
| dot trace diagonal conj conjugate | methods (conj: O(1), the lazy flag) |
| byteswap | method (a byte view flipped on the device) |
| real imag | properties, settable; views of the data (imag of a conj-flagged tensor: negated, a new tensor) |
| nbytes itemsize flat | properties; flat: a FlatIter (len, iteration, [] read and write) |
| T mT ndim shape size dtype device to_device | Tensor's own (strides: in elements, not bytes) |
| get (CuPy) | method: an explicit host copy (numpy.ndarray) on every device |
| resize | absent: reallocating in place would detach views hipfer cannot track |
| getfield setfield | absent: hipfer has no structured dtypes |
| flags setflags base ctypes data | absent: backend-array internals (use strides, is_conj, __dlpack__) |

Conversions: ``__cuda_array_interface__`` is the CuPy array's for GPU data (zero-copy for
CuPy, Numba, PyTorch); a conj-flagged tensor has none (its stored bytes are not what it
reads as: resolve_conj() first). ``__array_interface__`` is the NumPy array's for CPU data
without a conj flag, and absent elsewhere (GPU data, a conj flag, the refuse-host test
mode): NumPy reads it before ``__array__``, so it exists only where it is exactly
``__array__``'s zero-copy answer, and everywhere else NumPy goes on to ``__array__``,
which copies (the flag) or refuses (device data) with its reasons. ``view(dtype)`` of a
conj-flagged tensor resolves the flag first (a copy, as NumPy's conj() is).
"""
from __future__ import annotations

import builtins
import operator
import pickle

import numpy as np

from . import _dtypes, _tensor
from ._core import materialize, store_out
from ._creation import arange, asarray, full
from ._data_type_functions import astype as _astype
from ._elementwise import (abs as _abs, add, clip as _clip, conj, divide, imag as _imag,
                           maximum, minimum, multiply, negative, real as _real,
                           remainder, sqrt, square, subtract,
                           where as _where)
from ._indexing import nonzero as _nonzero, take as _take, take_along_axis
from ._linear_algebra import matmul
from ._manipulation import repeat as _repeat
from ._searching import argmax as _argmax, argmin as _argmin, searchsorted as _searchsorted
from ._sorting import argsort as _argsort, sort as _sort
from ._statistical import (all as _all, any as _any, cumulative_prod, cumulative_sum,
                           max as _max, mean as _mean, min as _min, prod as _prod,
                           std as _std, sum as _sum, var as _var)
from ._printing import array_repr
from ._tensor import Tensor, _is_cupy
from ._views import (broadcast_arrays, broadcast_to, diagonal as _diagonal, flip, memory_order,
                     moveaxis, permute_dims, reshape as _reshape, squeeze as _squeeze)
from .linalg import tensordot


class _No:
    """NumPy's <no value>: an argument not given."""
    def __repr__(self):
        return "<no value>"


_NO = _No()


# ---------------------------------------------------------------- argument helpers
def _unsupported(name: str, arg: str, why: str = ""):
    return TypeError(f"{name}(): the argument {arg}= is not supported by hipfer{why}")


def _axis_arg(axis):
    """axis as the namespace takes it: None, an int or a tuple of ints (NumPy ints too)."""
    if axis is None:
        return None
    if isinstance(axis, (tuple, list)):
        return tuple(operator.index(a) for a in axis)
    return operator.index(axis)


def _operand(v, x: Tensor) -> Tensor:
    """An array argument as a Tensor on x's device (host data moves there)."""
    if isinstance(v, Tensor):
        return v
    return asarray(v, device=x.device)


def _out(res: Tensor, out, name: str) -> Tensor:
    """res, or res written into out (NumPy's out= rules: _core.store_out) and out returned."""
    return store_out(res, out, f"{name}()")


def _reduced_axes(axis, ndim) -> tuple:
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, tuple) else (axis,)
    return tuple(a % builtins.max(ndim, 1) for a in axes) if ndim else ()


def _reduced_shape(shape, axis, keepdims) -> tuple:
    axes = _reduced_axes(axis, len(shape))
    if keepdims:
        return tuple(1 if i in axes else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in axes)


def _is_empty_reduction(x: Tensor, axis) -> bool:
    return any(x.shape[a] == 0 for a in _reduced_axes(axis, x.ndim))


def _masked(x: Tensor, where, filler, name: str) -> Tensor:
    """x with filler where the mask where= is False (where=True: x itself)."""
    if where is True:
        return x
    mask = _operand(where, x)
    if mask.dtype != np.bool_:
        raise TypeError(f"{name}(): where= must be a boolean mask, got {mask.dtype}")
    return _where(broadcast_to(mask, x.shape), x, filler)


def _count(x: Tensor, where, axis, keepdims, dt) -> Tensor:
    """How many elements the mask where= selects per reduction, in dtype dt."""
    mask = broadcast_to(_operand(where, x), x.shape)
    return _astype(_sum(mask, axis=axis, keepdims=keepdims), dt)


def _zero_of(dt):
    return False if dt.kind == "b" else 0


# ---------------------------------------------------------------- reductions
def _sum_like(fn, step, identity, name):
    def method(self, axis=None, dtype=None, out=None, keepdims=False, initial=_NO, where=True):
        axis = _axis_arg(axis)
        x = _masked(self, where, identity, name)
        r = fn(x, axis=axis, dtype=dtype, keepdims=keepdims)
        if initial is not _NO:
            r = _astype(step(r, _value(initial, r)), r.dtype, copy=False)
        return _out(r, out, name)
    method.__doc__ = f"numpy.ndarray.{name}: the {name} over axis (all axes when None)."
    return method


def _is_py(v) -> bool:
    return isinstance(v, (builtins.bool, int, float, complex))


def _value(v, x: Tensor):
    """A value argument: a Python scalar as it is (weak, as in operators), anything else
    a Tensor on x's device."""
    return v if _is_py(v) else _operand(v, x)


def _float_of(x: Tensor, dtype):
    """x in dtype, or, with none given, integers and bools as float64 (NumPy's mean)."""
    if dtype is not None:
        return _astype(x, np.dtype(dtype), copy=False)
    if x.dtype.kind in "biu":
        return _astype(x, _dtypes.default_float)
    return x


def mean(self, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    """numpy.ndarray.mean: the arithmetic mean over axis."""
    axis = _axis_arg(axis)
    x = _float_of(self, dtype)
    if where is True:
        return _out(_mean(x, axis=axis, keepdims=keepdims), out, "mean")
    total = _sum(_masked(x, where, 0, "mean"), axis=axis, keepdims=keepdims)
    return _out(divide(total, _count(x, where, axis, keepdims, total.dtype)), out, "mean")


def _spread(fn, name):
    def method(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *,
               where=True, mean=_NO, correction=_NO):
        if mean is not _NO:
            raise _unsupported(name, "mean")
        if correction is not _NO:
            if ddof != 0:
                raise ValueError(f"{name}(): ddof and correction can't be provided simultaneously.")
            ddof = correction
        axis = _axis_arg(axis)
        x = _float_of(self, dtype)
        if where is True:
            return _out(fn(x, axis=axis, correction=ddof, keepdims=keepdims), out, name)
        m = _sum(_masked(x, where, 0, name), axis=axis, keepdims=True)
        n = _count(x, where, axis, True, m.dtype)
        dev = _abs(subtract(x, divide(m, n)))
        ss = _sum(_masked(square(dev), where, 0, name), axis=axis, keepdims=keepdims)
        n = _count(x, where, axis, keepdims, ss.dtype)
        v = divide(ss, subtract(n, ddof))
        return _out(v if fn is _var else sqrt(v), out, name)
    method.__doc__ = f"numpy.ndarray.{name}: the {name} over axis, ddof: delta degrees of freedom."
    return method


def _extreme(fn, step, name):
    def method(self, axis=None, out=None, keepdims=False, initial=_NO, where=True):
        axis = _axis_arg(axis)
        if initial is _NO:
            if where is not True:
                op = "maximum" if name == "max" else "minimum"
                raise ValueError(f"{name}(): reduction operation '{op}' does not have an "
                                 "identity, so to use a where mask one has to specify 'initial'")
            return _out(fn(self, axis=axis, keepdims=keepdims), out, name)
        if _is_empty_reduction(self, axis):
            r = full(_reduced_shape(self.shape, axis, keepdims), initial, dtype=self.dtype,
                     device=self.device)
            return _out(r, out, name)
        x = _masked(self, where, initial, name)
        r = step(fn(x, axis=axis, keepdims=keepdims), initial)
        return _out(_astype(r, self.dtype, copy=False), out, name)
    method.__doc__ = f"numpy.ndarray.{name}: the {name}imum over axis (NaN propagates)."
    return method


def _arg(fn, name):
    def method(self, axis=None, out=None, *, keepdims=False):
        r = fn(self, axis=_axis_arg(axis), keepdims=keepdims)
        return _out(r, out, name)
    method.__doc__ = (f"numpy.ndarray.{name}: the flat (axis=None) or per-axis index of "
                      f"the {name[3:]}.")
    return method


def _logical(fn, identity, name):
    def method(self, axis=None, out=None, keepdims=False, *, where=True):
        x = _masked(self, where, identity, name)
        return _out(fn(x, axis=_axis_arg(axis), keepdims=keepdims), out, name)
    method.__doc__ = f"numpy.ndarray.{name}: whether {name} elements are true, over axis."
    return method


def _scan(fn, name):
    def method(self, axis=None, dtype=None, out=None):
        x = self
        if axis is None:  # NumPy scans the flattened tensor
            x, axis = ravel(self), 0
        r = fn(x, axis=operator.index(axis), dtype=dtype)
        return _out(r, out, name)
    method.__doc__ = (f"numpy.ndarray.{name}: the running {name[3:]} along axis (flattened "
                      "when None).")
    return method


def ptp(self, axis=None, out=None, keepdims=False):
    """numpy.ptp as a method (CuPy's): max - min over axis."""
    axis = _axis_arg(axis)
    r = subtract(_max(self, axis=axis, keepdims=keepdims), _min(self, axis=axis, keepdims=keepdims))
    return _out(r, out, "ptp")


# ---------------------------------------------------------------- layout and copies
def _c_contiguous(x: Tensor) -> bool:
    return x._data.flags.c_contiguous


def _f_contiguous(x: Tensor) -> bool:
    return x._data.flags.f_contiguous


def _memory_order(x: Tensor) -> tuple:
    """The axes from the largest stride to the smallest: NumPy's 'K' (_views.memory_order)."""
    return tuple(memory_order(x))


def _inverse(perm) -> tuple:
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return tuple(inv)


def _order(x: Tensor, order, name: str) -> str:
    """order as 'C', 'F' or 'K' ('A': F when x is F- and not C-contiguous, else C)."""
    o = "K" if order is None else str(order).upper()
    if o not in ("C", "F", "A", "K"):
        raise ValueError(f"{name}(): order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")
    if o == "A":
        return "F" if _f_contiguous(x) and not _c_contiguous(x) else "C"
    return o


def _arranged(x: Tensor, order: str, force: bool) -> Tensor:
    """x laid out in order ('C', 'F' or 'K'): x itself when it already is and not force,
    else a new buffer (the conjugation flag resolved)."""
    if order == "C":
        return materialize(x) if force or not _c_contiguous(x) else x
    if order == "F":
        if not force and _f_contiguous(x):
            return x
        rev = tuple(range(x.ndim))[::-1]
        return permute_dims(materialize(permute_dims(x, rev)), rev)
    perm = _memory_order(x)
    return permute_dims(materialize(permute_dims(x, perm)), _inverse(perm))


def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
    """numpy.ndarray.astype: the tensor in dtype, laid out in order (K keeps the layout)."""
    dt = np.dtype(dtype)
    if not np.can_cast(self.dtype, dt, casting=casting):
        raise TypeError(f"astype(): cannot cast from {self.dtype} to {dt} according to the "
                        f"rule {casting!r}")
    o = _order(self, order, "astype")
    x = self if o == "K" else _arranged(self, o, force=False)
    return _astype(x, dt, copy=bool(copy) and x is self)


def copy(self, order="C"):
    """numpy.ndarray.copy: a new tensor (order 'C' by default, as NumPy's method)."""
    return _arranged(self, _order(self, order, "copy"), force=True)


def fill(self, value):
    """numpy.ndarray.fill: every element set to value (cast to the tensor's dtype)."""
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise ValueError("fill(): value must be a scalar or a 0-d tensor")
        self[...] = _astype(value, self.dtype, copy=False)
        return
    v = np.asarray(value)
    if v.ndim != 0:
        raise ValueError("fill(): value must be a scalar")
    v = v[()].item()  # a Python scalar: assignment's rules (NaN into integers refused, as NumPy)
    if isinstance(v, complex) and self.dtype.kind != "c":
        v = v.real  # as NumPy: the imaginary part is discarded
    self[...] = v


def _flat_index(self, i: int) -> tuple:
    n = self.size
    if not -n <= i < n:
        raise IndexError(f"index {i} is out of bounds for size {n}")
    return tuple(int(k) for k in np.unravel_index(i % n, self.shape))


def item(self, *args):
    """numpy.ndarray.item: one element as a Python scalar (an explicit host copy of it)."""
    if len(args) == 1 and isinstance(args[0], tuple):
        args = args[0]
    if not args:
        if self.size != 1:
            raise ValueError("item(): can only convert a tensor of size 1 to a Python scalar")
        return self._host().reshape(())[()].item()
    idx = tuple(operator.index(a) for a in args)
    if len(idx) == 1 and self.ndim != 1:
        idx = _flat_index(self, idx[0])
    elif len(idx) != self.ndim:
        raise ValueError(f"item(): incorrect number of indices for a {self.ndim}-d tensor")
    return self[idx]._host()[()].item()


def tolist(self):
    """numpy.ndarray.tolist: nested Python lists (an explicit host copy)."""
    return self._host().tolist()


def tobytes(self, order="C"):
    """numpy.ndarray.tobytes: the raw bytes in order (an explicit host copy)."""
    return self._host().tobytes(order=order)


def tofile(self, fid, sep="", format="%s"):  # noqa: A002 - NumPy's parameter name
    """numpy.ndarray.tofile: written to a file (an explicit host copy)."""
    self._host().tofile(fid, sep=sep, format=format)


def dumps(self):
    """numpy.ndarray.dumps: the pickle of the tensor (bytes)."""
    return pickle.dumps(self, protocol=pickle.HIGHEST_PROTOCOL)


def dump(self, file):
    """numpy.ndarray.dump: the pickle of the tensor written to file (a path or open file)."""
    if isinstance(file, (str, bytes)) or hasattr(file, "__fspath__"):
        with open(file, "wb") as f:
            pickle.dump(self, f, protocol=pickle.HIGHEST_PROTOCOL)
    else:
        pickle.dump(self, file, protocol=pickle.HIGHEST_PROTOCOL)


def view(self, dtype=None, type=None):  # noqa: A002 - NumPy's parameter name
    """numpy.ndarray.view: the same memory read as dtype (NumPy's rules for another
    itemsize: the last axis must be contiguous and its bytes divisible). A conj-flagged
    tensor is resolved first (its stored bytes are not what it reads as)."""
    if type is not None or (isinstance(dtype, builtins.type) and issubclass(dtype, np.ndarray)):
        raise _unsupported("view", "type", " (a Tensor has no subclasses)")
    dt = self.dtype if dtype is None else np.dtype(dtype)
    if dt not in _dtypes._SUPPORTED:
        raise TypeError(f"view(): {dt} is not a hipfer dtype")
    if dt == self.dtype:
        return Tensor(self._data.view(), self._conj)
    src = materialize(self) if self._conj else self
    try:
        return Tensor(src._data.view(dt))
    except ValueError as e:
        raise ValueError(f"view(): {e}") from None


def byteswap(self, inplace=False):
    """numpy.ndarray.byteswap: every element's bytes reversed (a complex element's two
    parts each), on the device."""
    n = self.dtype.itemsize // (2 if self.dtype.kind == "c" else 1)
    if n == 1:
        return self if inplace else copy(self)
    c = _arranged(self, "C", force=True)
    b = flip(_reshape(Tensor(c._data.view(np.uint8)), (-1, n)), axis=-1)
    swapped = _reshape(Tensor(_reshape(materialize(b), (-1,))._data.view(self.dtype)),
                       self.shape)
    if inplace:
        self[...] = swapped
        return self
    return swapped


# ---------------------------------------------------------------- shape
def _shape_arg(shape) -> tuple:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return tuple(operator.index(s) for s in shape)


def _reshaped(x: Tensor, shape: tuple, order: str, copy) -> Tensor:
    if order == "F":  # F order: C order of the reversed axes
        rx = permute_dims(x, tuple(range(x.ndim))[::-1])
        r = _reshape(rx, shape[::-1], copy=copy)
        return permute_dims(r, tuple(range(r.ndim))[::-1])
    return _reshape(x, shape, copy=copy)


def reshape(self, *shape, order="C", copy=None, **kw):
    """numpy.ndarray.reshape: a view where the strides allow (copy=False: always, or
    ValueError), read and written in order 'C' or 'F'."""
    if "shape" in kw:
        shape = (kw.pop("shape"),)
    if kw:
        raise TypeError(f"reshape(): unexpected argument {next(iter(kw))!r}")
    o = _order(self, order, "reshape")
    if o == "K":
        raise ValueError("reshape(): order 'K' is not permitted for reshaping")
    return _reshaped(self, _shape_arg(shape), o, copy)


def ravel(self, order="C"):
    """numpy.ndarray.ravel: the flattened tensor, a view where the strides allow."""
    o = _order(self, order, "ravel")
    if o == "K":
        return _reshape(permute_dims(self, _memory_order(self)), (-1,))
    return _reshaped(self, (-1,), o, None)


def flatten(self, order="C"):
    """numpy.ndarray.flatten: a flattened copy."""
    o = _order(self, order, "flatten")
    if o == "K":
        return _reshape(permute_dims(self, _memory_order(self)), (-1,), copy=True)
    return _reshaped(self, (-1,), o, True)


def transpose(self, *axes):
    """numpy.ndarray.transpose: axes reversed (none given) or permuted (a view)."""
    if not axes or axes == (None,):
        return permute_dims(self, tuple(range(self.ndim))[::-1])
    if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        axes = tuple(axes[0])
    return permute_dims(self, tuple(operator.index(a) for a in axes))


def swapaxes(self, axis1, axis2):
    """numpy.ndarray.swapaxes: two axes interchanged (a view)."""
    perm = list(range(self.ndim))
    a, b = (_norm_axis(ax, self.ndim, "swapaxes") for ax in (axis1, axis2))
    perm[a], perm[b] = perm[b], perm[a]
    return permute_dims(self, tuple(perm))


def _norm_axis(axis, ndim, name):
    from ._views import AxisError
    a = operator.index(axis)
    if not -ndim <= a < ndim:
        raise AxisError(f"{name}(): axis {a} is out of bounds for a {ndim}-d tensor")
    return a % ndim


def squeeze(self, axis=None):
    """numpy.ndarray.squeeze: length-one axes removed (all of them when axis is None)."""
    if axis is None:
        axis = tuple(i for i, n in enumerate(self.shape) if n == 1)
    else:
        axis = _axis_arg(axis)
    return _squeeze(self, axis)


def repeat(self, repeats, axis=None):
    """numpy.ndarray.repeat: each element repeated (the flattened tensor when axis is None)."""
    if isinstance(repeats, (int, np.integer)):
        repeats = operator.index(repeats)
    else:
        repeats = _operand(repeats, self)
    return _repeat(self, repeats, axis=None if axis is None else operator.index(axis))


# ---------------------------------------------------------------- indexing
def _index_tensor(indices, x: Tensor, name: str) -> Tensor:
    idx = _operand(indices, x)
    if idx.dtype.kind not in "iu":
        if idx.size == 0 and idx.dtype.kind == "f":  # NumPy takes an empty list
            return _astype(idx, np.dtype(np.int64))
        raise TypeError(f"{name}(): indices must be integers, got {idx.dtype}")
    return idx


def _mode(idx: Tensor, n: int, mode: str, name: str) -> Tensor:
    """Indices under mode: 'raise' as they are (checked by the gather), 'wrap' modulo n,
    'clip' into [0, n)."""
    if mode == "raise":
        return idx
    if mode not in ("wrap", "clip"):
        raise ValueError(f"{name}(): mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    if n == 0:
        raise IndexError(f"{name}(): cannot do a non-empty take from an empty axis")
    if mode == "wrap":
        return remainder(idx, n)
    return _clip(idx, 0, n - 1)


def take(self, indices, axis=None, out=None, mode="raise"):
    """numpy.ndarray.take: elements at indices along axis (of the flattened tensor when
    None); the result's shape puts indices' shape in place of axis."""
    x = self
    if axis is None or self.ndim == 0:  # a 0-d tensor takes as its 1-d ravel (NumPy)
        if self.ndim == 0 and axis is not None:
            _norm_axis(axis, 1, "take")
        x, ax = ravel(self), 0
    else:
        ax = _norm_axis(axis, self.ndim, "take")
    idx = _mode(_index_tensor(indices, x, "take"), x.shape[ax], mode, "take")
    r = _take(x, _reshape(idx, (-1,)), axis=ax)
    r = _reshape(r, x.shape[:ax] + idx.shape + x.shape[ax + 1:])
    return _out(r, out, "take")


def _flat_set(self, idx: Tensor, values: Tensor) -> None:
    """self.flat[idx] = values, written through a flat view (or a flat copy written back
    when the strides allow no view)."""
    try:
        flat = _reshape(self, (-1,), copy=False)
    except ValueError:
        flat = None
    if flat is not None:
        flat[idx] = values
        return
    tmp = materialize(self)
    _reshape(tmp, (-1,))[idx] = values
    self[...] = tmp


def put(self, indices, values, mode="raise"):
    """numpy.ndarray.put: self.flat[indices] = values (values repeated as needed)."""
    idx = _mode(_index_tensor(indices, self, "put"), self.size, mode, "put")
    _put(self, _reshape(idx, (-1,)), values, "put")


def _put(self, idx: Tensor, values, name: str) -> None:
    """self.flat[idx] = values for 1-d indices, values cycled to their number (NumPy)."""
    vals = _reshape(_operand(values, self), (-1,))
    if idx.size == 0:
        return
    if vals.size == 0:
        raise ValueError(f"{name}(): cannot put with an empty values array")
    if vals.size != idx.size:
        vals = _take(vals, remainder(arange(idx.size, device=self.device), vals.size))
    _flat_set(self, idx, _astype(vals, self.dtype, copy=False))


def choose(self, choices, out=None, mode="raise"):
    """numpy.ndarray.choose: choices[self[i]][i] for every i (choices broadcast with self)."""
    arrays = [_operand(c, self) for c in choices]
    if not arrays:
        raise ValueError("choose(): choices must not be empty")
    dt = _dtypes.result_type(*arrays)
    idx, *arrays = broadcast_arrays(_index_tensor(self, self, "choose"), *arrays)
    from ._manipulation import stack
    stacked = stack([_astype(a, dt, copy=False) for a in arrays], axis=0)
    idx = _mode(idx, len(arrays), mode, "choose")
    r = take_along_axis(stacked, _reshape(idx, (1,) + idx.shape), axis=0)
    return _out(_reshape(r, idx.shape), out, "choose")


def compress(self, condition, axis=None, out=None):
    """numpy.ndarray.compress: the slices along axis where condition (1-d) is true."""
    x = self
    if axis is None:
        x, ax = ravel(self), 0
    else:
        ax = _norm_axis(axis, self.ndim, "compress")
    cond = _astype(_reshape(_operand(condition, self), (-1,)), np.dtype(np.bool_), copy=False)
    if cond.size > x.shape[ax]:
        raise IndexError(f"compress(): condition has {cond.size} entries, axis {ax} has "
                         f"only {x.shape[ax]}")
    (where_true,) = _nonzero(cond) if cond.size else (asarray([], dtype=np.int64,
                                                              device=self.device),)
    return _out(_take(x, where_true, axis=ax), out, "compress")


def nonzero(self):
    """numpy.ndarray.nonzero: a tuple of index tensors, one per axis."""
    return _nonzero(self)


def clip(self, min=None, max=None, out=None, **kwargs):  # noqa: A002 - NumPy's names
    """numpy.ndarray.clip: values limited to [min, max] (a copy when both are None)."""
    if kwargs:
        raise _unsupported("clip", next(iter(kwargs)))
    if min is None and max is None:
        return _out(copy(self), out, "clip")
    lo = None if min is None else _value(min, self)
    hi = None if max is None else _value(max, self)
    return _out(_clip(self, lo, hi), out, "clip")


def round(self, decimals=0, out=None):  # noqa: A001 - NumPy's name
    """numpy.ndarray.round: hipfer.around (half to even at decimals)."""
    from ._math import around
    return around(self, decimals, out)


# ---------------------------------------------------------------- sorting and searching
_SORT_KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")


def _check_sort(name, kind, order):
    if order is not None:
        raise ValueError(f"{name}(): cannot specify order when the tensor has no fields")
    if kind not in _SORT_KINDS:
        raise ValueError(f"{name}(): sort kind must be one of 'quick', 'heap', or 'stable' "
                         f"(got {kind!r})")


def sort(self, axis=-1, kind=None, order=None, *, stable=None):
    """numpy.ndarray.sort: sorted in place along axis (NaN last; always a stable sort)."""
    _check_sort("sort", kind, order)
    if axis is None:
        raise TypeError("sort(): axis must be an integer (the method sorts in place)")
    self[...] = _sort(self, axis=operator.index(axis))


def argsort(self, axis=-1, kind=None, order=None, *, stable=None):
    """numpy.ndarray.argsort: the indices that sort along axis (flattened when None)."""
    _check_sort("argsort", kind, order)
    if axis is None:
        return _argsort(ravel(self), axis=0)
    return _argsort(self, axis=operator.index(axis))


def _check_kth(self, kth, axis, name):
    ax = _norm_axis(axis, self.ndim, name) if self.ndim else 0
    n = self.shape[ax] if self.ndim else 1
    for k in np.atleast_1d(np.asarray(kth)).tolist():
        if not -n <= k < n:
            raise ValueError(f"{name}(): kth(={k}) out of bounds ({n})")


def partition(self, kth, axis=-1, kind="introselect", order=None):
    """numpy.ndarray.partition: partitioned in place around kth -- by a full sort, which
    is one of the valid partitions."""
    if order is not None:
        raise ValueError("partition(): cannot specify order when the tensor has no fields")
    _check_kth(self, kth, axis, "partition")
    sort(self, axis=axis)


def argpartition(self, kth, axis=-1, kind="introselect", order=None):
    """numpy.ndarray.argpartition: indices that partition around kth (those of a sort)."""
    if order is not None:
        raise ValueError("argpartition(): cannot specify order when the tensor has no fields")
    if axis is None:
        x = ravel(self)
        _check_kth(x, kth, 0, "argpartition")
        return _argsort(x, axis=0)
    _check_kth(self, kth, axis, "argpartition")
    return _argsort(self, axis=operator.index(axis))


def searchsorted(self, v, side="left", sorter=None):
    """numpy.ndarray.searchsorted: where v would be inserted to keep the 1-d tensor sorted."""
    if sorter is not None:
        sorter = _operand(sorter, self)
    return _searchsorted(self, _value(v, self), side=side, sorter=sorter)


# ---------------------------------------------------------------- linear algebra
def dot(self, b, out=None):
    """numpy.ndarray.dot: numpy.dot's rules (0-d: multiply; else a sum over the last
    axis of self and the second-to-last of b, or b's only axis)."""
    b = _operand(b, self)
    if self.ndim == 0 or b.ndim == 0:
        return _out(multiply(self, b), out, "dot")
    dt = _dtypes.result_type(self.dtype, b.dtype)
    x, y = _astype(self, dt, copy=False), _astype(b, dt, copy=False)
    if x.ndim <= 2 and y.ndim <= 2:
        return _out(matmul(x, y), out, "dot")
    r = tensordot(x, y, axes=([x.ndim - 1], [builtins.max(y.ndim - 2, 0)]))
    return _out(r, out, "dot")


def _diagonal_of(self, offset, axis1, axis2, name):
    a1, a2 = (_norm_axis(a, self.ndim, name) for a in (axis1, axis2))
    if a1 == a2:
        raise ValueError(f"{name}(): axis1 and axis2 cannot be the same")
    return _diagonal(moveaxis(self, (a1, a2), (-2, -1)), offset=operator.index(offset))


def diagonal(self, offset=0, axis1=0, axis2=1):
    """numpy.ndarray.diagonal: the diagonal of axes axis1, axis2 as the last axis (a view)."""
    return _diagonal_of(self, offset, axis1, axis2, "diagonal")


def trace(self, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """numpy.ndarray.trace: the sum along the diagonal of axes axis1, axis2."""
    d = _diagonal_of(self, offset, axis1, axis2, "trace")
    return _out(_sum(d, axis=-1, dtype=dtype), out, "trace")


def conjugate(self):
    """numpy.ndarray.conjugate: the complex conjugate (O(1): the lazy flag)."""
    return conj(self)


# ---------------------------------------------------------------- attributes
def _get_real(self):
    return _real(self)


def _set_real(self, value):
    target = Tensor(self._data.real) if self.dtype.kind == "c" else self
    target[...] = _value(value, self)


def _get_imag(self):
    return _imag(self)


def _set_imag(self, value):
    if self.dtype.kind != "c":
        raise TypeError("imag: a tensor with a real dtype has no imaginary part to set")
    v = _value(value, self)
    if self._conj:  # a conj-flagged tensor reads its stored imaginary part negated
        v = negative(v) if isinstance(v, Tensor) else -v
    Tensor(self._data.imag)[...] = v


def _nbytes(self):
    return self.size * self.dtype.itemsize


def _itemsize(self):
    return self.dtype.itemsize


class FlatIter:
    """Tensor.flat: the tensor as a 1-d sequence in C order. Reading ([i], [a:b], [idx],
    iteration) gives tensors; writing ([...] = v) goes to the tensor itself."""
    __slots__ = ("base",)

    def __init__(self, base: Tensor):
        self.base = base

    def __len__(self):
        return self.base.size

    def __iter__(self):
        flat = ravel(self.base)
        for i in range(flat.shape[0]):
            yield flat[i]

    def __getitem__(self, key):
        return ravel(self.base)[key]

    def __setitem__(self, key, value):
        # the flat positions key selects, as NumPy's flatiter reads them; values cycle
        positions = arange(self.base.size, device=self.base.device)[key]
        _put(self.base, _reshape(positions, (-1,)), value, "flat")

    def copy(self):
        return flatten(self.base)


def _flat(self):
    return FlatIter(self)


def _set_flat(self, value):
    FlatIter(self)[...] = value  # x.flat = v: v cycled over every element, as NumPy


def _cuda_interface(self):
    if not _is_cupy(self._data) or self._conj:
        raise AttributeError("__cuda_array_interface__: only for GPU tensors without a "
                             "conjugation flag (resolve_conj() first)")
    return self._data.__cuda_array_interface__


def _array_interface(self):
    # only where it is exactly __array__'s zero-copy answer: NumPy reads this attribute
    # first, so elsewhere (GPU data, a conj flag, the refuse-host mode) it is absent and
    # NumPy goes on to __array__, which copies or refuses with its reasons
    d = self._data
    if type(d) is not np.ndarray or self._conj or _tensor.REFUSE_HOST:
        raise AttributeError("__array_interface__: only for CPU tensors without a "
                             "conjugation flag")
    return d.__array_interface__


def get(self, stream=None, order="C", out=None, blocking=True):
    """CuPy's ndarray.get: an explicit host copy (a numpy.ndarray), on every device."""
    d = self._data
    if _is_cupy(d):
        h = d.get(stream=stream, order=order, out=out, blocking=blocking)
        if self._conj:
            np.conjugate(h, out=h)
        return h
    h = np.array(self._host(), order=order, copy=True)
    if out is not None:
        if out.shape != h.shape or out.dtype != h.dtype:
            raise ValueError("get(): out must have the tensor's shape and dtype")
        np.copyto(out, h)
        return out
    return h


# ---------------------------------------------------------------- formatting
def __format__(self, spec):
    """format(t, spec): a 0-d tensor formats as its scalar; others take no spec (NumPy)."""
    if self.ndim == 0:
        return format(self._host()[()], spec)
    if spec:
        raise TypeError("unsupported format string passed to Tensor.__format__")
    return str(self)


def __repr__(self):
    """tensor([...], dtype=...): NumPy's print options apply (hipfer._printing)."""
    return array_repr(self)


def __str__(self):
    return __repr__(self)


METHODS = {
    "sum": _sum_like(_sum, add, 0, "sum"), "prod": _sum_like(_prod, multiply, 1, "prod"),
    "mean": mean, "std": _spread(_std, "std"), "var": _spread(_var, "var"),
    "max": _extreme(_max, maximum, "max"), "min": _extreme(_min, minimum, "min"),
    "argmax": _arg(_argmax, "argmax"), "argmin": _arg(_argmin, "argmin"),
    "all": _logical(_all, True, "all"), "any": _logical(_any, False, "any"),
    "cumsum": _scan(cumulative_sum, "cumsum"), "cumprod": _scan(cumulative_prod, "cumprod"),
    "ptp": ptp,
    "astype": astype, "copy": copy, "fill": fill, "item": item, "tolist": tolist,
    "tobytes": tobytes, "tofile": tofile, "dump": dump, "dumps": dumps, "view": view,
    "byteswap": byteswap,
    "reshape": reshape, "ravel": ravel, "flatten": flatten, "transpose": transpose,
    "swapaxes": swapaxes, "squeeze": squeeze, "repeat": repeat,
    "take": take, "put": put, "choose": choose, "compress": compress, "nonzero": nonzero,
    "clip": clip, "round": round,
    "sort": sort, "argsort": argsort, "partition": partition, "argpartition": argpartition,
    "searchsorted": searchsorted,
    "dot": dot, "trace": trace, "diagonal": diagonal, "conjugate": conjugate,
    "get": get, "__format__": __format__, "__repr__": __repr__, "__str__": __str__,
    "real": property(_get_real, _set_real, doc="The real part (a view; settable)."),
    "imag": property(_get_imag, _set_imag, doc="The imaginary part (settable)."),
    "nbytes": property(_nbytes, doc="Bytes the elements take (size * itemsize)."),
    "itemsize": property(_itemsize, doc="Bytes one element takes."),
    "flat": property(_flat, _set_flat, doc="A FlatIter: the tensor as a 1-d sequence in C order."),
    "__cuda_array_interface__": property(_cuda_interface),
    "__array_interface__": property(_array_interface),
}
