"""Name expressions for ``fused_recurrent.cuh`` (pure Python, no CuPy)."""
from __future__ import annotations

import numpy as np

from . import ctype

FILE = "fused_recurrent.cuh"
FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
KERNELS = ("lstm_cell", "lstm_cell_backward", "gru_cell", "gru_cell_backward", "gru_lrp_prev",
           "selective_scan", "selective_scan_backward", "wkv", "wkv_backward", "retention",
           "retention_backward_rows", "retention_backward_cols")


def expr(name: str, dt) -> str:
    return f"hf::fused_{name}<{ctype(dt)}>"


def exprs(dt) -> list:
    """Every kernel of one dtype (compiled together: one compile per dtype)."""
    return [expr(n, dt) for n in KERNELS]


def instances():
    return [("fused_recurrent", FILE, [e for t in FLOATS for e in exprs(t)])]
