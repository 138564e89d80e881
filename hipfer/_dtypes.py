"""Data types: hipfer's dtypes are NumPy dtype objects (CuPy uses the same ones)."""
from __future__ import annotations

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
float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)
complex64 = np.dtype(np.complex64)
complex128 = np.dtype(np.complex128)

#: every dtype a hipfer Tensor may have
ALL_DTYPES = (bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
              float32, float64, complex64, complex128)
_SUPPORTED = frozenset(ALL_DTYPES)

default_int = int64
default_float = float64
default_complex = complex128


def as_dtype(dt) -> np.dtype:
    """np.dtype of a hipfer dtype (or anything NumPy accepts), restricted to ALL_DTYPES."""
    try:
        d = np.dtype(dt)
    except TypeError:
        raise TypeError(f"not a data type: {dt!r}") from None
    if d not in _SUPPORTED:
        raise TypeError(f"dtype {d} is not supported by hipfer (supported: "
                        f"{', '.join(str(t) for t in ALL_DTYPES)})")
    return d


def result_type(*dtypes) -> np.dtype:
    """Common dtype of operands (NumPy's promotion, within hipfer's dtypes)."""
    return as_dtype(np.result_type(*dtypes))


def is_complex(dt) -> bool:
    return np.dtype(dt).kind == "c"


def float_for(dt) -> np.dtype:
    """The floating dtype an integer/bool operand is computed in (float64), else dt."""
    d = np.dtype(dt)
    return d if d.kind in "fc" else default_float
