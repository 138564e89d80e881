"""Creating tensors: asarray and the filled constructors (Generate on the device)."""
from __future__ import annotations

import math
import operator

import numpy as np

from . import _dtypes, _ops
from ._core import fill
from ._data_type_functions import astype
from ._device import as_device, get_default_device
from ._elementwise import (add, divide, equal, greater_equal, less_equal, logical_and, multiply,
                           not_equal, subtract, where)
from ._tensor import Tensor, _device_of_data, _is_cupy
from ._views import broadcast_to, diagonal, reshape
from .prims import descriptors as d
from .prims.registry import get_backend

__all__ = ["arange", "asarray", "empty", "empty_like", "eye", "full", "full_like", "linspace", "meshgrid",
           "ones", "ones_like", "tril", "triu", "zeros", "zeros_like"]


def _dev(device):
    return get_default_device() if device is None else as_device(device)


def asarray(obj, /, *, dtype=None, device=None, copy=None) -> Tensor:
    """A Tensor from a Tensor, NumPy/CuPy array, Python scalar or nested sequence.

    copy=None copies only when needed; copy=False raises if a copy would be needed;
    copy=True always copies.
    """
    dt = None if dtype is None else _dtypes.as_dtype(dtype)
    if isinstance(obj, Tensor):
        x = obj
        dev = x.device if device is None else as_device(device)
        if copy is False and (dev != x.device or (dt is not None and dt != x.dtype)):
            raise ValueError("asarray(copy=False): a copy is needed (device or dtype change)")
        if dev != x.device:
            x = x.to_device(dev)
            copied = True
        else:
            copied = False
        if dt is not None and dt != x.dtype:
            return astype(x, dt)
        if copy and not copied:
            return Tensor(_ops.run(d.MakeContiguous(), [x]))
        return x
    if _is_cupy(obj):
        src_dev = _device_of_data(obj)
        dev = src_dev if device is None else as_device(device)
        return asarray(Tensor(obj), dtype=dt, device=dev, copy=copy)
    dev = _dev(device)
    if isinstance(obj, np.ndarray) or hasattr(obj, "__array__") or hasattr(obj, "__dlpack__"):
        host = np.asarray(obj)
    else:
        host = _from_python(obj, dt)
    if host.dtype.kind in "OUSVMm":
        raise TypeError(f"cannot make a tensor from {type(obj).__name__} of dtype {host.dtype}")
    if dt is None:
        dt = _dtypes.as_dtype(host.dtype)
    if dev.kind == "cpu":
        shares = isinstance(obj, np.ndarray) and obj.dtype == dt
        if copy is False and not shares:
            raise ValueError("asarray(copy=False): a copy is needed (dtype change or Python data)")
        if copy or host.dtype != dt:
            host = host.astype(dt, copy=True)
        return Tensor(host)
    if copy is False:
        raise ValueError(f"asarray(copy=False): moving host data to {dev} needs a copy")
    return Tensor(get_backend(dev).asarray(np.asarray(host, dtype=dt, order="C")))


def _from_python(obj, dt=None) -> np.ndarray:
    """Python scalars and nested sequences; default dtypes int64 / float64 / complex128.
    With a dtype, the values convert to it directly: Python ints stay exact (a list
    holding ints past int64 would go through float64 first) or raise OverflowError."""
    if isinstance(obj, (list, tuple)) and any(isinstance(v, Tensor) for v in _flat(obj)):
        obj = _replace_tensors(obj)
    try:
        a = np.asarray(obj) if dt is None else np.asarray(obj, dtype=dt)
    except MemoryError:
        size = f" of {len(obj)} elements" if hasattr(obj, "__len__") else ""
        raise MemoryError(f"asarray(): a {type(obj).__name__}{size} does not fit in host "
                          "memory") from None
    if a.dtype.kind == "i":
        a = a.astype(np.int64)
    return a


def _flat(obj):
    if isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _flat(v)
    else:
        yield obj


def _replace_tensors(obj):
    if isinstance(obj, (list, tuple)):
        return [_replace_tensors(v) for v in obj]
    if isinstance(obj, Tensor):
        return obj._host()
    return obj


def _norm_shape(shape) -> tuple:
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    shape = tuple(int(n) for n in shape)
    if any(n < 0 for n in shape):
        raise ValueError(f"negative dimensions are not allowed: {shape}")
    return shape


def empty(shape, *, dtype=None, device=None) -> Tensor:
    """A tensor of shape `shape`, its values unset (whatever the memory held).
    dtype defaults to the default float dtype (float64), device to the default device.
    """
    dt = _dtypes.default_float if dtype is None else _dtypes.as_dtype(dtype)
    return Tensor(get_backend(_dev(device)).empty(_norm_shape(shape), dt))


def full(shape, fill_value, *, dtype=None, device=None) -> Tensor:
    """A tensor of shape `shape` filled with fill_value.

    dtype defaults to fill_value's kind: bool, the default int (int64), float (float64) or
    complex (complex128); a 0-d tensor fill_value gives its own dtype. A Python int out of
    the dtype's range is an OverflowError; a complex value for a real dtype a TypeError.
    """
    return _full(shape, fill_value, dtype, device, "full")


def _in_range(value, dt, where: str) -> None:
    """A Python int for an integer dtype must fit it (NumPy 2's rule, and that of hipfer's
    weak scalars): OverflowError rather than a wrapped value. where: what the user called."""
    if dt.kind in "iu" and isinstance(value, int) and not isinstance(value, bool):
        info = np.iinfo(dt)
        if not int(info.min) <= value <= int(info.max):
            raise OverflowError(f"{where}: Python int {value} is out of bounds for {dt}")


def _full(shape, fill_value, dtype, device, name: str) -> Tensor:
    """full() for the function `name` (full or full_like: its errors)."""
    if isinstance(fill_value, Tensor):
        if fill_value.ndim != 0:
            raise ValueError(f"{name}(): fill_value must be a scalar or a 0-d tensor")
        if dtype is None:
            dtype = fill_value.dtype
        fill_value = fill_value._host()[()].item()
    if dtype is None:
        if isinstance(fill_value, bool):
            dtype = _dtypes.bool
        elif isinstance(fill_value, int):
            dtype = _dtypes.default_int
        elif isinstance(fill_value, float):
            dtype = _dtypes.default_float
        elif isinstance(fill_value, complex):
            dtype = _dtypes.default_complex
        else:
            dtype = np.asarray(fill_value).dtype
    dt = _dtypes.as_dtype(dtype)
    if dt.kind != "c" and isinstance(fill_value, complex):
        raise TypeError(f"{name}(): complex fill value for dtype {dt}")
    _in_range(fill_value, dt, f"{name}()")
    return fill(_norm_shape(shape), fill_value, dt, _dev(device))


def zeros(shape, *, dtype=None, device=None) -> Tensor:
    """A tensor of shape `shape` filled with 0 (dtype: the default float unless given)."""
    return full(shape, 0, dtype=dtype or _dtypes.default_float, device=device)


def ones(shape, *, dtype=None, device=None) -> Tensor:
    """A tensor of shape `shape` filled with 1 (dtype: the default float unless given)."""
    return full(shape, 1, dtype=dtype or _dtypes.default_float, device=device)


def _like(x, dtype, device):
    return (x.dtype if dtype is None else dtype), (x.device if device is None else device)


def empty_like(x: Tensor, /, *, dtype=None, device=None) -> Tensor:
    """empty(x.shape) with x's dtype and device unless dtype / device are given."""
    dt, dev = _like(x, dtype, device)
    return empty(x.shape, dtype=dt, device=dev)


def zeros_like(x: Tensor, /, *, dtype=None, device=None) -> Tensor:
    """zeros(x.shape) with x's dtype and device unless dtype / device are given."""
    dt, dev = _like(x, dtype, device)
    return zeros(x.shape, dtype=dt, device=dev)


def ones_like(x: Tensor, /, *, dtype=None, device=None) -> Tensor:
    """ones(x.shape) with x's dtype and device unless dtype / device are given."""
    dt, dev = _like(x, dtype, device)
    return ones(x.shape, dtype=dt, device=dev)


def full_like(x: Tensor, /, fill_value, *, dtype=None, device=None) -> Tensor:
    """full(x.shape, fill_value) with x's dtype and device unless given."""
    dt, dev = _like(x, dtype, device)
    return _full(x.shape, fill_value, dt, dev, "full_like")


def arange(start, /, stop=None, step=1, *, dtype=None, device=None) -> Tensor:
    """Evenly spaced values start, start + step, ... below stop (a 1-d tensor).

    arange(n) is arange(0, n). dtype: the default int when start, stop and step are all Python
    ints, else the default float. The length is ceil((stop - start) / step), at least 0.
    """
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise ValueError("arange(): step must not be zero")
    if dtype is None:
        dtype = _dtypes.default_int if all(isinstance(v, int) for v in (start, stop, step)) \
            else _dtypes.default_float
    dt = _dtypes.as_dtype(dtype)
    n = max(0, math.ceil((stop - start) / step))
    out = _ops.generate(d.Generate(d.GenerateKind.IOTA), (n,), dt, _dev(device),
                        start=start, step=step)
    return Tensor(out)


def eye(n_rows, n_cols=None, /, *, k=0, dtype=None, device=None) -> Tensor:
    """Ones on the k-th diagonal, zeros elsewhere: a zero fill, then the diagonal view set."""
    n_rows = operator.index(n_rows)
    shape = _norm_shape((n_rows, n_rows if n_cols is None else operator.index(n_cols)))
    out = zeros(shape, dtype=dtype, device=device)
    diagonal(out, offset=operator.index(k))[...] = 1
    return out


def linspace(start, stop, /, num, *, dtype=None, device=None, endpoint=True) -> Tensor:
    """num evenly spaced values from start to stop (stop included when endpoint).

    As NumPy: computed in float64 (complex128 for complex bounds) as start + i * step, step
    = (stop - start) / div, the last value set to exactly stop, then cast to dtype."""
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"linspace(): num must be non-negative, got {num}")
    for v in (start, stop):
        if isinstance(v, Tensor):
            if v.ndim != 0:
                raise ValueError(f"linspace(): a tensor start or stop must be 0-d, got shape {v.shape}")
        elif isinstance(v, bool) or not isinstance(v, (int, float, complex, np.number)):
            raise TypeError("linspace(): start and stop must be numbers or 0-d tensors, "
                            f"got {type(v).__name__}")
    is_c = any(isinstance(v, (complex, np.complexfloating))
               or (isinstance(v, Tensor) and v.dtype.kind == "c") for v in (start, stop))
    dt = (_dtypes.default_complex if is_c else _dtypes.default_float) if dtype is None \
        else _dtypes.as_dtype(dtype)
    if dt.kind not in "fc" or (is_c and dt.kind != "c"):
        raise TypeError(f"linspace(): dtype must be a {'complex' if is_c else 'floating'} "
                        f"dtype, got {dt}")
    work = np.dtype(np.complex128 if is_c else np.float64)
    ts = [v for v in (start, stop) if isinstance(v, Tensor)]
    if ts:
        # 0-d tensor bounds (SciPy: linspace(asarray(0.), asarray(1.), n)): the same values
        # computed on their device, nothing read to the host; where() stands in for the
        # data-dependent test of an underflowed step below
        dev = _ops.device_of(ts) if device is None else as_device(device)
        a, b = (asarray(v, dtype=work, device=dev) for v in (start, stop))
        div = (num - 1) if endpoint else num
        i, delta = arange(num, dtype=work, device=dev), subtract(b, a)
        if div > 0:
            step = divide(delta, div)
            tiny = logical_and(equal(step, 0), not_equal(delta, 0))
            y = add(where(tiny, multiply(divide(i, div), delta), multiply(i, step)), a)
        else:
            y = add(multiply(i, delta), a)
        if endpoint and num > 1:
            y[-1] = b
        return y if dt == work else Tensor(_ops.run(d.PointwiseCast(dt), [y]))
    a, b = work.type(start), work.type(stop)
    div, dev = (num - 1) if endpoint else num, _dev(device)
    with np.errstate(all="ignore"):
        delta = b - a
        step = delta / div if div > 0 else delta  # div == 0: only y[0] = start + 0 * delta
    if step == 0 and delta != 0:  # step underflowed (NumPy's gh-5437): (i / div) * delta
        y = add(multiply(divide(arange(num, dtype=work, device=dev), div), delta), a)
    else:
        y = Tensor(_ops.generate(d.Generate(d.GenerateKind.IOTA), (num,), work, dev,
                                 start=a, step=step))
    if endpoint and num > 1:
        y[-1] = b
    if dt != work:
        y = Tensor(_ops.run(d.PointwiseCast(dt), [y]))
    return y


def meshgrid(*arrays, indexing="xy") -> tuple:
    """Coordinate grids from 1-d tensors (each output a new contiguous tensor of its input's
    dtype); indexing 'xy' swaps the first two output axes, 'ij' does not."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid(): indexing must be 'xy' or 'ij', got {indexing!r}")
    for t in arrays:
        if not isinstance(t, Tensor):
            raise TypeError(f"meshgrid() expects hipfer Tensors, got {type(t).__name__}")
        if t.ndim != 1:
            raise ValueError(f"meshgrid() expects 1-d tensors, got shape {t.shape}")
    _ops.device_of(arrays)
    n = len(arrays)
    shape = [t.shape[0] for t in arrays]
    if indexing == "xy" and n > 1:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, t in enumerate(arrays):
        pos = (1 - i if i < 2 else i) if indexing == "xy" and n > 1 else i
        line = reshape(t, tuple(-1 if j == pos else 1 for j in range(n)))
        out.append(Tensor(_ops.run(d.MakeContiguous(), [broadcast_to(line, tuple(shape))])))
    return tuple(out)  # 2025.12: a tuple (a list before)


def _triangle(x: Tensor, k, keep_below: bool) -> Tensor:
    """x with the elements off one side of the k-th diagonal (of the last two axes) zeroed:
    where(col <= row + k, x, 0) for tril, where(col >= row + k, x, 0) for triu."""
    if not isinstance(x, Tensor):
        raise TypeError(f"expected a hipfer Tensor, got {type(x).__name__}")
    if x.ndim < 2:
        raise ValueError(f"tril/triu need at least 2 axes, got shape {x.shape}")
    k = operator.index(k)
    m, n = x.shape[-2:]
    row_k = arange(k, m + k, device=x.device).reshape(m, 1)
    col = arange(n, device=x.device).reshape(1, n)
    mask = less_equal(col, row_k) if keep_below else greater_equal(col, row_k)
    return where(mask, x, zeros((), dtype=x.dtype, device=x.device))


def tril(x: Tensor, /, *, k=0) -> Tensor:
    """The lower triangle of x (on and below the k-th diagonal), the rest zero."""
    return _triangle(x, k, keep_below=True)


def triu(x: Tensor, /, *, k=0) -> Tensor:
    """The upper triangle of x (on and above the k-th diagonal), the rest zero."""
    return _triangle(x, k, keep_below=False)
