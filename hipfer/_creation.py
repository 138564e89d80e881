"""Creating tensors: asarray and the filled constructors (Generate on the device), and
NumPy's creation functions (array and the as*array family, copy, identity, diag, tri,
indices, fromfunction, linspace with array bounds, logspace, geomspace; frombuffer and
fromiter, which read host data by nature)."""
from __future__ import annotations

import math
import operator

import numpy as np

from . import _dtypes, _ops
from ._core import fill
from ._data_type_functions import astype
from ._device import as_device, get_default_device
from ._elementwise import (add, divide, equal, greater_equal, less_equal, multiply, subtract,
                           where)
from ._tensor import Tensor, _device_of_data, _is_cupy
from ._views import broadcast_to, diagonal, reshape
from .prims import descriptors as d
from .prims.registry import get_backend

__all__ = ["arange", "array", "asanyarray", "asarray", "asarray_chkfinite", "ascontiguousarray",
           "asfortranarray", "require",
           "copy", "diag", "diagflat", "empty", "empty_like", "eye", "frombuffer",
           "fromfunction", "fromiter", "full", "full_like", "geomspace", "identity", "indices",
           "linspace", "logspace", "meshgrid", "ones", "ones_like", "tri", "tril", "triu",
           "zeros", "zeros_like"]


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
    if isinstance(obj, (list, tuple)) and any(isinstance(v, Tensor) for v in _flat(obj)):
        if copy is False:
            raise ValueError("asarray(copy=False): a nested sequence needs a copy")
        return _nested(obj, dt, device)
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
    try:
        a = np.asarray(obj) if dt is None else np.asarray(obj, dtype=dt)
    except MemoryError:
        size = f" of {len(obj)} elements" if hasattr(obj, "__len__") else ""
        raise MemoryError(f"asarray(): a {type(obj).__name__}{size} does not fit in host "
                          "memory") from None
    if a.dtype.kind == "i":
        a = a.astype(np.int64)
    return a


def _nested(obj, dt, device) -> Tensor:
    """A nested sequence holding Tensors, built where they live (device=None: the first
    tensor's device): one result allocated, each Tensor copied into its place on the
    device, each tensor-free sub-sequence converted on the host as the user's data is.
    NumPy's rules: equal shapes at every level, dtypes promoted (Python ints as int64)."""
    leaves = []  # (index, Tensor or host array)

    def walk(o, idx):
        if isinstance(o, (list, tuple)) and any(isinstance(v, Tensor) for v in _flat(o)):
            shapes = [walk(v, idx + (i,)) for i, v in enumerate(o)]
            if len(set(shapes)) > 1:
                raise ValueError("asarray(): the nested sequence has an inhomogeneous shape "
                                 f"(parts of shapes {sorted(set(shapes))} at depth {len(idx)})")
            return (len(o),) + shapes[0]
        leaf = o if isinstance(o, Tensor) else _from_python(o)
        leaves.append((idx, leaf))
        return tuple(leaf.shape)

    shape = walk(obj, ())
    if dt is None:
        dt = _dtypes.as_dtype(np.result_type(*(leaf.dtype for _, leaf in leaves)))
    dev = as_device(device) if device is not None else \
        next(leaf.device for _, leaf in leaves if isinstance(leaf, Tensor))
    out = empty(shape, dtype=dt, device=dev)
    for idx, leaf in leaves:
        part = leaf.to_device(dev) if isinstance(leaf, Tensor) else asarray(leaf, device=dev)
        out[idx] = astype(part, dt) if part.dtype != dt else part
    return out


def _flat(obj):
    if isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _flat(v)
    else:
        yield obj


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


def _like(x, dtype, device, shape):
    """(dtype, device, shape) of a *_like result: x's unless given (shape: NumPy's
    keyword, what Dask's creation routines pass)."""
    return ((x.dtype if dtype is None else dtype), (x.device if device is None else device),
            (x.shape if shape is None else shape))


def empty_like(x: Tensor, /, *, dtype=None, device=None, shape=None) -> Tensor:
    """empty(x.shape) with x's dtype and device unless dtype / device / shape are given."""
    dt, dev, shape = _like(x, dtype, device, shape)
    return empty(shape, dtype=dt, device=dev)


def zeros_like(x: Tensor, /, *, dtype=None, device=None, shape=None) -> Tensor:
    """zeros(x.shape) with x's dtype and device unless dtype / device / shape are given."""
    dt, dev, shape = _like(x, dtype, device, shape)
    return zeros(shape, dtype=dt, device=dev)


def ones_like(x: Tensor, /, *, dtype=None, device=None, shape=None) -> Tensor:
    """ones(x.shape) with x's dtype and device unless dtype / device / shape are given."""
    dt, dev, shape = _like(x, dtype, device, shape)
    return ones(shape, dtype=dt, device=dev)


def full_like(x: Tensor, /, fill_value, *, dtype=None, device=None, shape=None) -> Tensor:
    """full(x.shape, fill_value) with x's dtype and device unless given."""
    dt, dev, shape = _like(x, dtype, device, shape)
    return _full(_norm_shape(shape), fill_value, dt, dev, "full_like")


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


def linspace(start, stop, /, num, *, dtype=None, device=None, endpoint=True,
             retstep=False, axis=0):
    """num evenly spaced values from start to stop (stop included when endpoint).

    As NumPy: start + i * step, step = (stop - start) / div, the last value set to exactly
    stop, then cast to dtype (an integer dtype floors first). Python-number and 0-d tensor
    bounds compute in float64 (complex128 for complex bounds, the array API's default);
    array bounds (tensors with axes, lists) compute in NumPy's result_type(start, stop,
    float) and give a result with the new axis at `axis`. retstep=True also returns the
    step (a Python number for number bounds, a tensor for tensor bounds)."""
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"hipfer.linspace: num must be non-negative, got {num}")
    arrays = any(isinstance(v, (list, tuple, np.ndarray)) or
                 (isinstance(v, Tensor) and v.ndim > 0) for v in (start, stop))
    if arrays:
        return _linspace_arrays(start, stop, num, endpoint, retstep, dtype, axis, device)
    if axis not in (0, -1):
        raise np.exceptions.AxisError(f"hipfer.linspace: axis {axis} is out of range for "
                                      "a 1-d result")
    for v in (start, stop):
        if not isinstance(v, Tensor) and (
                isinstance(v, bool) or not isinstance(v, (int, float, complex, np.number))):
            raise TypeError("hipfer.linspace: start and stop must be numbers or tensors, "
                            f"got {type(v).__name__}")
    is_c = any(isinstance(v, (complex, np.complexfloating))
               or (isinstance(v, Tensor) and v.dtype.kind == "c") for v in (start, stop))
    work = np.dtype(np.complex128 if is_c else np.float64)
    dt = _linspace_dtype(dtype, work)
    div = (num - 1) if endpoint else num
    if any(isinstance(v, Tensor) for v in (start, stop)):
        # 0-d tensor bounds (SciPy: linspace(asarray(0.), asarray(1.), n)): the same values
        # computed on their device, nothing read to the host
        ts = [v for v in (start, stop) if isinstance(v, Tensor)]
        dev = _ops.device_of(ts) if device is None else as_device(device)
        a, b = (asarray(v, dtype=work, device=dev) for v in (start, stop))
        y, step = _ramp(a, b, num, div, work, dev)
    else:
        a, b = work.type(start), work.type(stop)
        dev = _dev(device)
        with np.errstate(all="ignore"):
            delta = b - a
            step = delta / div if div > 0 else delta  # div == 0: only y[0] = start
        if step == 0 and delta != 0:  # step underflowed (NumPy's gh-5437): (i / div) * delta
            y = add(multiply(divide(arange(num, dtype=work, device=dev), div), delta), a)
        else:
            y = Tensor(_ops.generate(d.Generate(d.GenerateKind.IOTA), (num,), work, dev,
                                     start=a, step=step))
        step = step.item() if div > 0 else float("nan")
    if endpoint and num > 1:
        y[-1] = b
    y = _linspace_cast(y, dt)
    return (y, step) if retstep else y


def _linspace_dtype(dtype, work):
    """linspace's result dtype: work unless given; a complex work dtype needs a complex one."""
    dt = work if dtype is None else _dtypes.as_dtype(dtype)
    if work.kind == "c" and dt.kind != "c":
        raise TypeError(f"hipfer.linspace: dtype must be a complex dtype for complex bounds, "
                        f"got {dt}")
    if dt.kind == "b":
        raise TypeError("hipfer.linspace: dtype must be numeric, got bool")
    return dt


def _linspace_cast(y: Tensor, dt) -> Tensor:
    if dt.kind in "iu" and y.dtype.kind == "f":  # NumPy floors before an integer cast
        from ._elementwise import floor
        y = floor(y)
    return y if dt == y.dtype else Tensor(_ops.run(d.PointwiseCast(dt), [y]))


def _ramp(a: Tensor, b: Tensor, num: int, div: int, work, dev):
    """start + i * step along a new leading axis (a, b broadcast), or where any step is 0
    (underflowed), (i / div) * span for all (NumPy's gh-5437 path: chosen on the device by
    where() on a 0-d any(), so nothing is read to the host). Returns (y, step)."""
    from ._statistical import any as any_
    i = reshape(arange(num, dtype=work, device=dev), (num,) + (1,) * max(a.ndim, b.ndim))
    delta = subtract(b, a)
    if div > 0:
        step = divide(delta, div)
        tiny = any_(equal(step, 0))
        y = add(where(tiny, multiply(divide(i, div), delta), multiply(i, step)), a)
    else:
        step = full(delta.shape, float("nan"), dtype=work, device=dev)
        y = add(multiply(i, delta), a)
    if y.shape != (num,) + delta.shape:  # num == 0 and friends: keep the full shape
        y = broadcast_to(y, (num,) + delta.shape)
    return y, step


def _linspace_arrays(start, stop, num, endpoint, retstep, dtype, axis, device):
    """linspace with array bounds: NumPy's computation dtype and the new axis at `axis`."""
    ts = [v for v in (start, stop) if isinstance(v, Tensor)]
    dev = (_ops.device_of(ts) if ts else _dev(None)) if device is None else as_device(device)
    # Python numbers stay weak in the dtype rule (NumPy 2: float32 bounds and 5.0 -> float32)
    weak = [v if isinstance(v, (int, float, complex)) and not isinstance(v, bool) else None
            for v in (start, stop)]
    a, b = (v if isinstance(v, Tensor) else asarray(v, device=dev) for v in (start, stop))
    work = np.result_type(*(w if w is not None else t.dtype for w, t in zip(weak, (a, b))), 1.0)
    if work.kind not in "fc":
        work = _dtypes.default_float
    dt = _linspace_dtype(dtype, work)
    a, b = (asarray(v, dtype=work, device=dev) for v in (a, b))
    y, step = _ramp(a, b, num, (num - 1) if endpoint else num, work, dev)
    y = Tensor(_ops.run(d.MakeContiguous(), [y]))  # writable, one new buffer
    if endpoint and num > 1:
        y[-1] = b
    y = _linspace_cast(y, dt)
    if axis != 0:
        from ._views import moveaxis
        y = moveaxis(y, 0, axis)
    return (y, step) if retstep else y


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


# ------------------------------------------------------------------ NumPy's creation
def _like_device(like, device):
    """NEP 35's like=: a Tensor's device (NumPy's own dispatch does this for np.<name>)."""
    if device is None and isinstance(like, Tensor):
        return like.device
    return device


def _fortran(x: Tensor) -> Tensor:
    """A new column-major (Fortran-ordered) copy of x: the reversed shape allocated C-ordered
    and seen transposed, x written into it in one launch (the conjugation flag folded)."""
    be = get_backend(x.device)
    out = be.empty(x.shape[::-1], x.dtype).transpose()
    if x.size:
        _ops.run(d.PointwiseCast(x.dtype), [x], out=out)
    return Tensor(out)


def _contiguous(x: Tensor) -> Tensor:
    return Tensor(_ops.run(d.MakeContiguous(), [x]))


def _is_f_only(x) -> bool:
    f = x._data.flags if isinstance(x, Tensor) else getattr(x, "flags", None)
    return f is not None and f.f_contiguous and not f.c_contiguous


def array(object, dtype=None, *, copy=True, order="K", subok=False, ndmin=0, like=None,
          device=None) -> Tensor:
    """NumPy's array: asarray that copies by default (copy=None: only when needed,
    copy=False: never, else ValueError), in memory order `order` ('K' and 'A' keep a
    Fortran-ordered input's order, 'C' rows, 'F' columns), with at least ndmin axes (ones
    prepended). subok is accepted and has no effect (hipfer has no subclasses); device=
    is hipfer's (like=t means t's device)."""
    if order is None:
        order = "K"
    if order not in ("K", "A", "C", "F"):
        raise ValueError(f"hipfer.array: order must be one of 'K', 'A', 'C', 'F', got {order!r}")
    device = _like_device(like, device)
    if order == "K" and isinstance(object, Tensor) and not object._data.flags.c_contiguous:
        x = asarray(object, dtype=dtype, device=device, copy=False if copy is False else None)
        return _ndmin(_in_memory_order(x) if copy and x is object else x, ndmin)
    want_f = order == "F" or (order == "A" and _is_f_only(object))
    if want_f or order == "C":
        x = asarray(object, dtype=dtype, device=device, copy=False if copy is False else None)
        ok = x._data.flags.f_contiguous if want_f else x._data.flags.c_contiguous
        if copy is False and not ok:
            raise ValueError(f"hipfer.array(copy=False): order {order!r} needs a copy")
        if copy or not ok:  # one new buffer in the order asked for
            x = _fortran(x) if want_f else _contiguous(x)
    else:
        x = asarray(object, dtype=dtype, device=device, copy=copy)
    return _ndmin(x, ndmin)


def _ndmin(x: Tensor, ndmin) -> Tensor:
    ndmin = operator.index(ndmin)
    return reshape(x, (1,) * (ndmin - x.ndim) + x.shape) if x.ndim < ndmin else x


def _in_memory_order(x: Tensor) -> Tensor:
    """A copy of x whose strides keep x's axis order in memory (NumPy's order='K'): the
    axes sorted by stride, made contiguous, then seen in x's axis order again."""
    from ._views import memory_order, permute_dims
    perm = memory_order(x)
    back = sorted(range(x.ndim), key=perm.__getitem__)
    return permute_dims(_contiguous(permute_dims(x, perm)), back)


def asanyarray(a, dtype=None, order=None, *, device=None, copy=None, like=None) -> Tensor:
    """asarray (hipfer has no array subclasses to pass through)."""
    return array(a, dtype, copy=copy, order=order, device=_like_device(like, device))


def ascontiguousarray(a, dtype=None, *, like=None) -> Tensor:
    """a as a C-contiguous tensor with at least one axis (a itself when it is one)."""
    return array(a, dtype, copy=None, order="C", ndmin=1, like=like)


def asfortranarray(a, dtype=None, *, like=None) -> Tensor:
    """a as a Fortran-ordered (column-major strided) tensor with at least one axis (a itself
    when it is one)."""
    return array(a, dtype, copy=None, order="F", ndmin=1, like=like)


def asarray_chkfinite(a, dtype=None, order=None) -> Tensor:
    """asarray, checked to hold no NaN or inf (ValueError, as NumPy's); the check reads one
    bool back (a sync)."""
    x = array(a, dtype, copy=None, order=order or "K")
    if x.dtype.kind in "fc":
        from ._statistical import all as _all
        from ._elementwise import isfinite
        if not bool(_all(isfinite(x))):
            raise ValueError("hipfer.asarray_chkfinite: array must not contain infs or NaNs")
    return x


_REQUIREMENTS = {"C": "C", "C_CONTIGUOUS": "C", "CONTIGUOUS": "C", "F": "F",
                 "F_CONTIGUOUS": "F", "FORTRAN": "F", "A": "A", "ALIGNED": "A", "W": "W",
                 "WRITEABLE": "W", "O": "O", "OWNDATA": "O", "E": "E", "ENSUREARRAY": "E"}


def require(a, dtype=None, requirements=None, *, like=None) -> Tensor:
    """NumPy's require: a as a tensor of dtype meeting requirements ('C' / 'F' contiguous,
    'O' its own data: a copy; 'A' aligned, 'W' writeable and 'E' a base-class array hold
    for every tensor). a itself when it meets them."""
    if isinstance(requirements, str):
        requirements = [requirements]
    try:
        req = {_REQUIREMENTS[r.upper()] for r in (requirements or ())}
    except (KeyError, AttributeError):
        raise ValueError(f"hipfer.require: unknown requirement in {requirements!r}") from None
    if "C" in req and "F" in req:
        raise ValueError("hipfer.require: cannot specify both 'C' and 'F' order")
    order = "C" if "C" in req else "F" if "F" in req else "K"
    x = array(a, dtype, copy=None, order=order, like=like)
    if "O" in req and isinstance(a, Tensor) and x is a:
        x = copy(x, order="K")
    return x


def copy(a, order="K", subok=False) -> Tensor:
    """A new tensor holding a's values, in memory order `order` ('K' and 'A' keep a
    Fortran-ordered input's order, else C order)."""
    return array(a, copy=True, order=order)


def identity(n, dtype=None, *, like=None, device=None) -> Tensor:
    """The n x n identity matrix (float64 unless dtype is given)."""
    return eye(n, dtype=dtype, device=_like_device(like, device))


def diag(v, k=0) -> Tensor:
    """The k-th diagonal of a 2-d v (a view, as NumPy's), or a 2-d tensor with the 1-d v on
    its k-th diagonal and zeros elsewhere."""
    v = v if isinstance(v, Tensor) else asarray(v)
    k = operator.index(k)
    if v.ndim == 2:
        return diagonal(v, offset=k)
    if v.ndim != 1:
        raise ValueError("hipfer.diag: input must be 1-d or 2-d")
    n = v.shape[0] + abs(k)
    out = zeros((n, n), dtype=v.dtype, device=v.device)
    diagonal(out, offset=k)[...] = v
    return out


def diagflat(v, k=0) -> Tensor:
    """A 2-d tensor with the flattened v on its k-th diagonal."""
    v = v if isinstance(v, Tensor) else asarray(v)
    return diag(reshape(v, (-1,)), k)


def tri(N, M=None, k=0, dtype=float, *, like=None, device=None) -> Tensor:
    """An N x M tensor with ones at and below the k-th diagonal, zeros elsewhere."""
    N = max(operator.index(N), 0)  # NumPy: a negative size gives an empty axis
    M = N if M is None else max(operator.index(M), 0)
    dev = _dev(_like_device(like, device))
    rows = reshape(arange(operator.index(k), N + operator.index(k), device=dev), (N, 1))
    mask = less_equal(reshape(arange(M, device=dev), (1, M)), rows)
    return astype(mask, _dtypes.as_dtype(dtype))


def indices(dimensions, dtype=int, sparse=False):
    """A grid of indices: out[i] varies along axis i (shape (len(dimensions), *dimensions));
    sparse=True gives a tuple of broadcastable tensors instead (each a view of a range)."""
    dims = tuple(operator.index(n) for n in dimensions)
    dt, dev = _dtypes.as_dtype(dtype), get_default_device()
    n = len(dims)
    ranges = [reshape(arange(m, dtype=dt, device=dev), (1,) * i + (m,) + (1,) * (n - i - 1))
              for i, m in enumerate(dims)]
    if sparse:
        return tuple(ranges)
    out = empty((n,) + dims, dtype=dt, device=dev)
    for i, r in enumerate(ranges):
        out[i] = broadcast_to(r, dims)
    return out


def fromfunction(function, shape, *, dtype=float, like=None, device=None, **kwargs):
    """function(*indices(shape, dtype), **kwargs): function is called once, with tensors of
    coordinates (made on the device)."""
    dev = _dev(_like_device(like, device))
    dt = _dtypes.as_dtype(dtype)
    dims = tuple(operator.index(n) for n in shape)
    n = len(dims)
    grids = [broadcast_to(reshape(arange(m, dtype=dt, device=dev),
                                  (1,) * i + (m,) + (1,) * (n - i - 1)), dims)
             for i, m in enumerate(dims)]
    return function(*grids, **kwargs)


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0) -> Tensor:
    """base ** linspace(start, stop, num, endpoint, axis=axis), cast to dtype if given;
    base may be an array (broadcast against the bounds, as NumPy's)."""
    y = linspace(start, stop, num=num, endpoint=endpoint, axis=axis)
    if isinstance(base, (list, tuple, np.ndarray, Tensor)):
        from ._views import expand_dims
        b = base if isinstance(base, Tensor) else asarray(base, device=y.device)
        y = _pow(expand_dims(b, axis if b.ndim else 0) if b.ndim else b, y)
    else:
        y = _pow(base, y)
    return y if dtype is None else _linspace_cast(y, _dtypes.as_dtype(dtype))


def _pow(a, b):
    from ._elementwise import pow as power
    return power(a, b)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0) -> Tensor:
    """num values spaced evenly on a log scale from start to stop (NumPy's algorithm:
    negative and complex bounds rotated to the positive real axis, the ends exact).
    Differs from NumPy: a zero inside tensor bounds gives NaN/inf values instead of a
    ValueError (testing for it would read the device)."""
    from ._elementwise import log10, sign
    num = operator.index(num)
    for v in (start, stop):
        if not isinstance(v, (Tensor, list, tuple, np.ndarray)) and v == 0:
            raise ValueError("hipfer.geomspace: geometric sequence cannot include zero")
    ts = [v for v in (start, stop) if isinstance(v, Tensor)]
    dev = _ops.device_of(ts) if ts else get_default_device()
    a, b = (v if isinstance(v, Tensor) else asarray(v, device=dev) for v in (start, stop))
    # NumPy's rule: at least float64 (its dtype=None counts as a float64 operand)
    dt = np.result_type(a.dtype, b.dtype, np.float64)
    a, b = (astype(v, dt) for v in (a, b))
    out_sign = sign(a)
    a, b = divide(a, out_sign), divide(b, out_sign)
    y = linspace(log10(a), log10(b), num=num, endpoint=endpoint)
    y = _pow(10.0, y) if y.dtype == dt else astype(_pow(10.0, y), dt)
    y = Tensor(_ops.run(d.MakeContiguous(), [y]))
    if num > 0:  # the ends exactly as given
        y[0] = a
        if num > 1 and endpoint:
            y[-1] = b
    y = multiply(y, out_sign)
    if axis != 0:
        from ._views import moveaxis
        y = moveaxis(y, 0, axis)
    return y if dtype is None else _linspace_cast(y, _dtypes.as_dtype(dtype))


def frombuffer(buffer, dtype=float, count=-1, offset=0, *, like=None, device=None) -> Tensor:
    """A 1-d tensor of the bytes of a host buffer (bytes, bytearray, memoryview, ...).
    The buffer is host memory by nature: read on the host, then moved to `device` (a
    copy there; on the CPU the tensor shares the buffer, as NumPy's does)."""
    host = np.frombuffer(buffer, dtype=dtype, count=count, offset=offset)
    return _host_to(host, _like_device(like, device), "frombuffer")


def fromiter(iter, dtype, count=-1, *, like=None, device=None) -> Tensor:
    """A 1-d tensor of the values of a Python iterable. The values are Python data by
    nature: gathered on the host, then moved to `device`."""
    host = np.fromiter(iter, dtype=dtype, count=count)
    return _host_to(host, _like_device(like, device), "fromiter")


def _host_to(host: np.ndarray, device, what: str) -> Tensor:
    if host.dtype.kind not in "biufc":
        raise TypeError(f"hipfer.{what}: dtype {host.dtype} is not a tensor dtype")
    dev = _dev(device)
    if dev.kind == "cpu":
        return Tensor(host)
    return Tensor(get_backend(dev).asarray(np.ascontiguousarray(host)))
