"""Name expressions of fused_lrp.cuh (the LRP passes of hipfer.nn)."""
from __future__ import annotations

import numpy as np

from ...kernels import ctype

FILE = "fused_lrp.cuh"
FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
GATES = ("none", "positive", "negative")  # HF_LRP_GATE_*: the template argument is the index
LANES = 32  # HF_BLAS_LANES: the threads of a short row's group (lrp_softmax_rows)


def divide_expr(dt, gate: str) -> str:
    return f"hf::fused_lrp_divide<{ctype(dt)}, {GATES.index(gate)}>"


def mul_expr(dt) -> str:
    return f"hf::fused_lrp_mul<{ctype(dt)}>"


def residual_split_expr(dt) -> str:
    return f"hf::fused_lrp_residual_split<{ctype(dt)}>"


def bilinear_elementwise_expr(dt) -> str:
    return f"hf::fused_lrp_bilinear_elementwise<{ctype(dt)}>"


def softmax_rows_expr(dt, whole_block: bool) -> str:
    return f"hf::fused_lrp_softmax_rows<{ctype(dt)}, {str(whole_block).lower()}>"


def rope_expr(dt) -> str:
    return f"hf::fused_lrp_rope<{ctype(dt)}>"


def pool_share_expr(dt) -> str:
    return f"hf::fused_lrp_pool_share<{ctype(dt)}>"


def pool_gather_expr(dt) -> str:
    return f"hf::fused_lrp_pool_gather<{ctype(dt)}>"


def exprs(dt) -> list:
    """Every kernel of one dtype (compiled together: one compile per dtype)."""
    return ([divide_expr(dt, g) for g in GATES]
            + [mul_expr(dt), residual_split_expr(dt), bilinear_elementwise_expr(dt),
               softmax_rows_expr(dt, False), softmax_rows_expr(dt, True), rope_expr(dt),
               pool_share_expr(dt), pool_gather_expr(dt)])


def instances():
    return [("fused_lrp", FILE, [e for t in FLOATS for e in exprs(t)])]
