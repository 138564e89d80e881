"""Name expressions for ``fused_recurrent.cuh`` (pure Python, no CuPy)."""
from __future__ import annotations

import numpy as np

from ...kernels import ctype

FILE = "fused_recurrent.cuh"
FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
CELLS = ("lstm_cell", "lstm_cell_backward", "gru_cell", "gru_cell_backward", "gru_lrp_prev",
         "wkv", "wkv_backward")
#: scans whose lane state is a vector: lane_state<T, R> holds it in registers when its
#: length is at most R (R > 0), in global scratch for R == 0
STATE_SCANS = ("selective_scan", "selective_scan_backward", "retention",
               "retention_backward_rows", "retention_backward_cols")
REGS = (16, 64)


def regs_for(n: int) -> int:
    """The R of a lane state of n values: the smallest of REGS that holds it, else 0."""
    return next((r for r in REGS if n <= r), 0)


def expr(name: str, dt, regs=None) -> str:
    args = ctype(dt) if regs is None else f"{ctype(dt)}, {regs}"
    return f"hf::fused_{name}<{args}>"


def exprs(dt) -> list:
    """Every kernel of one dtype (compiled together: one compile per dtype)."""
    return ([expr(n, dt) for n in CELLS]
            + [expr(n, dt, r) for n in STATE_SCANS for r in (0,) + REGS])


def instances():
    return [("fused_recurrent", FILE, [e for t in FLOATS for e in exprs(t)])]
