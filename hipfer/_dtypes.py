"""Data types and type promotion.

hipfer's dtypes are NumPy dtype objects (CuPy uses the same ones).

Promotion follows the array API standard's tables within a kind category -- bool with
bool, integers with integers (signed/unsigned mixes go to the smallest signed type that
holds both: uint8 + int8 -> int16; uint64 + a signed type has no such type and raises
TypeError, where NumPy would give float64), floating with floating (real and complex).
Across categories, which the standard leaves unspecified, hipfer promotes as NumPy does
(int64 + float32 -> float64, bool + int8 -> int8), because SciPy and friends rely on it.

Python scalars are "weak": they take the tensor's dtype where their kind fits
(``int8_tensor + 1`` stays int8; an int out of the dtype's range raises OverflowError).
Where the kind does not fit, hipfer does what NumPy 2 does (the standard leaves it
unspecified or says so): a float scalar with a bool/integer tensor gives the default
float dtype (float64), an int scalar with a bool tensor the default int (int64), and a
complex scalar with a real tensor the complex dtype of the tensor's precision
(float32 -> complex64, integers -> complex128).

float16 is a hipfer dtype on every backend, though not one of the standard's dtypes.
Its GPU kernels compute in float32 and round once to float16, as NumPy's float16 loops
do; sums and products accumulate in float32 (NumPy's float16 cumulative sums round every
step, so long ones differ). Linear algebra refuses it, as NumPy's LAPACK does.
"""
from __future__ import annotations

import builtins

import numpy as np

bool = np.dtype(np.bool_)  # noqa: A001 - the standard's name
int8 = np.dtype(np.int8)
int16 = np.dtype(np.int16)
int32 = np.dtype(np.int32)
int64 = np.dtype(np.int64)
uint8 = np.dtype(np.uint8)
uint16 = np.dtype(np.uint16)
uint32 = np.dtype(np.uint32)
uint64 = np.dtype(np.uint64)
float16 = np.dtype(np.float16)
float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)
complex64 = np.dtype(np.complex64)
complex128 = np.dtype(np.complex128)

#: every dtype a hipfer Tensor may have
ALL_DTYPES = (bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
              float16, float32, float64, complex64, complex128)
_SUPPORTED = frozenset(ALL_DTYPES)

default_int = int64
default_float = float64
default_complex = complex128

# the standard's categories: promotion tables exist only within one of these
_CATEGORY = {"b": "bool", "i": "int", "u": "int", "f": "float", "c": "float"}
_COMPLEX_OF = {float16: complex64, float32: complex64, float64: complex128}


def as_dtype(dt) -> np.dtype:
    """np.dtype of a hipfer dtype (or anything NumPy accepts), restricted to ALL_DTYPES."""
    if isinstance(dt, np.dtype):
        d = dt
    else:
        try:
            d = np.dtype(dt)
        except TypeError:
            raise TypeError(f"not a data type: {dt!r}") from None
    if d not in _SUPPORTED:
        raise TypeError(f"dtype {d} is not supported by hipfer (supported: "
                        f"{', '.join(str(t) for t in ALL_DTYPES)})")
    return d


def promote_types(a, b) -> np.dtype:
    """The common dtype of two dtypes (the standard's tables; NumPy across categories)."""
    a, b = as_dtype(a), as_dtype(b)
    if a == b:
        return a
    if _CATEGORY[a.kind] == _CATEGORY[b.kind] == "int" and {a.kind, b.kind} == {"i", "u"}:
        u = a if a.kind == "u" else b
        if u == uint64:
            raise TypeError(f"no integer dtype holds both {a} and {b} (uint64 with a signed "
                            "integer type); cast one operand explicitly")
    return as_dtype(np.promote_types(a, b))


_INT_BOUNDS = {t: (int(np.iinfo(t).min), int(np.iinfo(t).max)) for t in ALL_DTYPES if t.kind in "iu"}


def _int_bounds(dt: np.dtype) -> tuple:
    """(min, max) of an integer dtype (np.iinfo costs a microsecond; this a lookup)."""
    b = _INT_BOUNDS.get(dt)
    if b is None:
        info = np.iinfo(dt)
        b = (int(info.min), int(info.max))
    return b


def _is_scalar(v) -> builtins.bool:
    """A Python scalar (NumPy scalars, though float64 subclasses float, are typed)."""
    return isinstance(v, (builtins.bool, int, float, complex)) and not isinstance(v, np.generic)


def scalar_type(dt: np.dtype, value) -> np.dtype:
    """The dtype of ``tensor(dt) <op> value`` for a Python scalar value (weak scalars).

    An int out of range for an integer dt raises OverflowError.
    """
    k = dt.kind
    if isinstance(value, builtins.bool):
        return dt
    if isinstance(value, int):
        res = default_int if k == "b" else dt
        if res.kind in "iu":
            lo, hi = _int_bounds(res)
            if not lo <= value <= hi:
                raise OverflowError(f"Python int {value} is out of bounds for {res}")
        return res
    if isinstance(value, float):
        return dt if k in "fc" else default_float
    if isinstance(value, complex):
        if k == "c":
            return dt
        return _COMPLEX_OF[dt] if k == "f" else default_complex
    raise TypeError(f"not a Python scalar: {type(value).__name__}")


def _dtype_of(v) -> np.dtype:
    """dtype of a Tensor, a NumPy/CuPy array or NumPy scalar, or a dtype."""
    dt = getattr(v, "dtype", None)
    if dt is not None and not isinstance(v, type):
        return as_dtype(dt)
    return as_dtype(v)


#: result_type memo: tuple of hipfer dtypes (the canonical np.dtype objects) -> result
_RESULT_TYPES: dict = {}
_CANONICAL = {t: t for t in ALL_DTYPES}


def result_type(*arrays_and_dtypes) -> np.dtype:
    """The dtype of an operation on these tensors, dtypes and Python scalars.

    Tensors and dtypes combine first (the standard's tables within a category, then
    NumPy across categories: the result does not depend on argument order); Python
    scalars then take part as weak scalars. At least one tensor or dtype is needed.
    """
    # warm path: only tensors / arrays / dtypes, a combination seen before (one lookup)
    key = tuple([v if isinstance(v, np.dtype) else getattr(v, "dtype", None)
                 for v in arrays_and_dtypes])
    try:
        res = _RESULT_TYPES.get(key)
    except TypeError:  # an unhashable .dtype attribute: the general path says what it is
        return _result_type(arrays_and_dtypes)
    if res is not None:
        return res
    res = _result_type(arrays_and_dtypes)
    # remember only combinations of the canonical dtype objects, reached through the
    # objects themselves or through .dtype of tensors/arrays (not of classes, scalars)
    # (None in key: a dtype spelled as a string or a type -- its key says nothing)
    if all(t is not None and _CANONICAL.get(t) is t for t in key) and not any(
            isinstance(v, type) or _is_scalar(v) for v in arrays_and_dtypes):
        if len(_RESULT_TYPES) >= 4096:
            _RESULT_TYPES.clear()
        _RESULT_TYPES[key] = res
    return res


def _result_type(arrays_and_dtypes) -> np.dtype:
    scalars = [v for v in arrays_and_dtypes if _is_scalar(v)]
    typed = [_dtype_of(v) for v in arrays_and_dtypes if not _is_scalar(v)]
    if not typed:
        raise TypeError("result_type() needs at least one array or dtype "
                        "(Python scalars alone have no dtype)")
    by_cat: dict = {}
    for dt in typed:
        cat = _CATEGORY[dt.kind]
        by_cat[cat] = promote_types(by_cat[cat], dt) if cat in by_cat else dt
    res = None
    for cat in ("bool", "int", "float"):  # across categories: NumPy's rules
        if cat in by_cat:
            res = by_cat[cat] if res is None else as_dtype(np.promote_types(res, by_cat[cat]))
    for s in scalars:
        res = scalar_type(res, s)
    return res


def is_complex(dt) -> builtins.bool:
    return np.dtype(dt).kind == "c"


def float_for(dt) -> np.dtype:
    """The floating dtype an integer/bool operand is computed in (float64), else dt."""
    d = np.dtype(dt)
    return d if d.kind in "fc" else default_float
