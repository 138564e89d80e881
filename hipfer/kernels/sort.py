"""Name expressions for ``sort.cuh`` (pure Python, no CuPy): the integer keys behind
Sort, Argsort and Topk on the GPU."""
from __future__ import annotations

import numpy as np

from . import ctype, dtypes_of_kinds

FILE = "sort.cuh"
SORT_DTYPES = dtypes_of_kinds("biuf")


def key_dtype(dt) -> np.dtype:
    """The integer key type of dt (sort_key<T> in sort.cuh)."""
    dt = np.dtype(dt)
    if dt == np.bool_:
        return np.dtype(np.uint8)
    if dt.kind == "f":
        return np.dtype(f"int{dt.itemsize * 8}")
    return dt


def keys_expr(dt) -> str:
    return f"hf::sort_keys<{ctype(dt)}>"


def instances():
    return [("sort_keys", FILE, [keys_expr(t) for t in SORT_DTYPES])]
