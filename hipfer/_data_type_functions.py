"""Data type functions of the standard: astype, can_cast, finfo, iinfo, isdtype,
result_type (promotion rules: see hipfer._dtypes); and NumPy's dtype routines."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _dtypes
from ._core import cast_site
from ._device import as_device
from ._dtypes import result_type
from ._tensor import Tensor

__all__ = ["astype", "can_cast", "finfo", "iinfo", "isdtype", "result_type",
           # NumPy's dtype routines (below)
           "common_type", "issubdtype", "min_scalar_type", "mintypecode", "promote_types",
           "typename"]


def astype(x: Tensor, dtype, /, *, copy: bool = True, device=None) -> Tensor:
    """x cast to dtype (NumPy's casting; complex -> real or integer is refused, as the
    standard asks: take real() or imag() first; complex -> bool tests != 0).

    copy=False returns x itself when the dtype (and device) already match.
    """
    if not isinstance(x, Tensor):
        raise TypeError(f"astype() expects a hipfer Tensor, got {type(x).__name__}")
    dt = _dtypes.as_dtype(dtype)
    if x.dtype.kind == "c" and dt.kind in "iuf":  # -> bool is fine: != 0
        raise TypeError(f"astype from {x.dtype} to {dt} would drop the imaginary part; "
                        "take real() or imag() first")
    if device is not None and as_device(device) != x.device:
        x = x.to_device(device)
        copy = False  # the move made a new array already
    if x.dtype == dt and not copy:
        return x
    return Tensor(cast_site(dt).run1(x))


def _dtype_arg(v, fn: str) -> np.dtype:
    dt = v.dtype if isinstance(v, Tensor) else v
    try:
        return _dtypes.as_dtype(dt)
    except TypeError:
        raise TypeError(f"{fn}() expects a hipfer dtype or Tensor, got {v!r}") from None


def can_cast(from_, to, /) -> bool:
    """Whether from_ (a dtype or Tensor) converts to dtype `to` without loss by the
    promotion rules (NumPy's 'safe' casting: int8 -> float32 yes, int64 -> float32 no)."""
    src, dst = _dtype_arg(from_, "can_cast"), _dtype_arg(to, "can_cast")
    return bool(np.can_cast(src, dst, casting="safe"))


@dataclass(frozen=True)
class finfo_object:
    """Machine limits of a floating dtype (Python floats; dtype is the real dtype)."""
    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: np.dtype


@dataclass(frozen=True)
class iinfo_object:
    """Machine limits of an integer dtype (Python ints)."""
    bits: int
    max: int
    min: int
    dtype: np.dtype


def finfo(type, /) -> finfo_object:  # noqa: A002 - the standard's parameter name
    """Limits of a floating dtype; for a complex dtype, those of its real component."""
    dt = _dtype_arg(type, "finfo")
    if dt.kind not in "fc":
        raise ValueError(f"finfo() needs a floating dtype, got {dt}")  # NumPy's type
    f = np.finfo(dt)
    return finfo_object(int(f.bits), float(f.eps), float(f.max), float(f.min),
                        float(f.smallest_normal), np.dtype(f.dtype))


def iinfo(type, /) -> iinfo_object:  # noqa: A002 - the standard's parameter name
    """Limits of an integer dtype."""
    dt = _dtype_arg(type, "iinfo")
    if dt.kind not in "iu":
        raise ValueError(f"iinfo() needs an integer dtype, got {dt}")  # NumPy's type
    i = np.iinfo(dt)
    return iinfo_object(int(i.bits), int(i.max), int(i.min), dt)


#: the standard's dtype kinds (float16, a hipfer extension, is 'real floating')
_KINDS = {
    "bool": "b", "signed integer": "i", "unsigned integer": "u", "integral": "iu",
    "real floating": "f", "complex floating": "c", "numeric": "iufc",
}


def isdtype(dtype, kind) -> bool:
    """Whether dtype equals kind (a dtype) or belongs to it (a kind name), or to any
    entry of a tuple of those."""
    dt = _dtype_arg(dtype, "isdtype")
    if isinstance(kind, tuple):
        return any(isdtype(dt, k) for k in kind)
    if isinstance(kind, str):
        try:
            return dt.kind in _KINDS[kind]
        except KeyError:
            raise ValueError(f"isdtype(): unknown kind {kind!r} (one of "
                             f"{', '.join(map(repr, _KINDS))})") from None
    return dt == _dtype_arg(kind, "isdtype")


# ------------------------------------------------------- NumPy's dtype routines
# Beyond the standard, what NumPy code asks of dtypes (numpy's "Data type routines"). They
# read dtypes only, never data, so they sync nothing (min_scalar_type of a 0-d tensor
# excepted: it reads the one value, as NumPy's does).


def _dtype_or_char(t) -> np.dtype:
    return t.dtype if isinstance(t, Tensor) or hasattr(t, "dtype") else np.dtype(t)


def promote_types(type1, type2, /) -> np.dtype:
    """The dtype hipfer's binary operations give for operands of type1 and type2: the
    standard's promotion plus NumPy's mixed kinds (int64 with uint64 is refused with
    TypeError, where NumPy gives float64: see hipfer._dtypes)."""
    try:
        return _dtypes.promote_types(_dtypes.as_dtype(type1), _dtypes.as_dtype(type2))
    except TypeError as e:
        raise TypeError(f"hipfer.promote_types: {e}") from None


def issubdtype(arg1, arg2, /) -> bool:
    """NumPy's issubdtype: whether arg1's dtype is arg2 or below it in NumPy's scalar type
    hierarchy (np.floating, np.integer, ...)."""
    return bool(np.issubdtype(arg1, arg2))


def common_type(*arrays):
    """NumPy's common_type: the inexact scalar type (np.float16 ... np.complex128) that
    holds every array's values; integers count as float64. TypeError for bool and other
    non-numeric dtypes."""
    is_complex, size = False, 0
    for a in arrays:
        dt = _dtype_or_char(a)
        if dt.kind in "iu":
            dt = np.dtype(np.float64)
        elif dt.kind not in "fc":
            raise TypeError(f"hipfer.common_type: can't get a common type for the non-numeric "
                            f"dtype {dt}")
        is_complex |= dt.kind == "c"
        size = max(size, dt.itemsize // 2 if dt.kind == "c" else dt.itemsize)
    real = {2: np.float16, 4: np.float32, 8: np.float64}.get(size, np.float16)
    if not is_complex:
        return real
    return np.complex64 if size <= 4 else np.complex128


def min_scalar_type(a, /) -> np.dtype:
    """NumPy's min_scalar_type: the smallest dtype of the smallest kind that holds a's
    value; an n-d tensor gives its own dtype (as NumPy's arrays do), a 0-d one reads its
    value (one sync)."""
    if isinstance(a, Tensor):
        if a.ndim:
            return a.dtype
        a = a.to_device("cpu")._data[()]  # the one value, explicitly
    return np.min_scalar_type(a)


def mintypecode(typechars, typeset: str = "GDFgdf", default: str = "d") -> str:
    """NumPy's mintypecode: the character of the smallest dtype in typeset that the dtypes
    of typechars (type characters, dtypes or tensors) safely cast to."""
    chars = [t if isinstance(t, str) else _dtype_or_char(t).char for t in typechars]
    return np.mintypecode(chars, typeset=typeset, default=default)


def typename(char: str) -> str:
    """NumPy's typename: the description of a type character ('d' -> 'double precision')."""
    return np.typename(char)
