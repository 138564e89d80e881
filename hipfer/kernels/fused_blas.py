"""Name expressions for ``fused_blas.cuh`` (pure Python, no CuPy)."""
from __future__ import annotations

import numpy as np

from . import ctype

FILE = "fused_blas.cuh"
FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def axpby_expr(dt) -> str:
    return f"hf::fused_axpby<{ctype(dt)}>"


def instances():
    return [("fused_blas", FILE, [axpby_expr(t) for t in FLOATS])]
