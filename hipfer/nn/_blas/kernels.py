"""Name expressions for ``fused_blas.cuh`` (pure Python, no CuPy)."""
from __future__ import annotations

import numpy as np

from ...kernels import ctype

FILE = "fused_blas.cuh"
FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
LANES = 32  # HF_BLAS_LANES: threads of one butterfly, and columns of a column_sums block
PACK_BYTES = 16  # bytes of one pack (one vector load)


def axpby_expr(dt) -> str:
    return f"hf::fused_axpby<{ctype(dt)}>"


def sum_expr(dt, dot: bool) -> str:
    return f"hf::fused_sum<{ctype(dt)}, {str(dot).lower()}>"


def column_sums_expr(dt) -> str:
    return f"hf::fused_column_sums<{ctype(dt)}>"


def column_sums_finish_expr(dt) -> str:
    return f"hf::fused_column_sums_finish<{ctype(dt)}>"


def add_vector_expr(dt) -> str:
    return f"hf::fused_add_vector<{ctype(dt)}>"


def adam_step_expr(dt) -> str:
    return f"hf::fused_adam_step<{ctype(dt)}>"


def exprs(dt) -> list:
    """Every kernel of one dtype (compiled together: one compile per dtype)."""
    return [axpby_expr(dt), sum_expr(dt, False), sum_expr(dt, True),
            column_sums_expr(dt), column_sums_finish_expr(dt), add_vector_expr(dt),
            adam_step_expr(dt)]


def instances():
    return [("fused_blas", FILE, [e for t in FLOATS for e in exprs(t)])]
