"""Name expressions for ``fused_conv.cuh`` (pure Python, no CuPy)."""
from __future__ import annotations

import numpy as np

from ...kernels import ctype

FILE = "fused_conv.cuh"
FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
#: the kernels of fused_conv.cuh, one per op (each templated on the float type)
KERNELS = ("im2col", "im2col_pos", "col2im_add", "max_pool", "max_unpool", "avg_pool",
           "avg_pool_backward")


def expr(op: str, dt) -> str:
    return f"hf::fused_{op}<{ctype(dt)}>"


def instances():
    return [("fused_conv", FILE, [expr(op, t) for op in KERNELS for t in FLOATS])]
