"""Name expressions for ``fused_logic.cuh`` (pure Python, no CuPy)."""
from __future__ import annotations

import numpy as np

from ...kernels import ctype

FILE = "fused_logic.cuh"
FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
NORMS = ("product", "lukasiewicz", "minmax")  # LOGIC_PRODUCT, ... in fused_logic.cuh
PASSES = {"logic_pointwise": "fused_logic_pointwise",
          "logic_pointwise_backward": "fused_logic_pointwise_backward",
          "logic_pointwise_lrp": "fused_logic_pointwise_lrp"}
MAX_GROUP_LOG2 = 5  # a row group has at most 32 lanes


def logic_expr(op: str, dt, norm: str, is_or: bool) -> str:
    return f"hf::{PASSES[op]}<{ctype(dt)}, {NORMS.index(norm)}, {str(is_or).lower()}>"


def aggregator_expr(op: str, dt) -> str:
    return f"hf::fused_{op}<{ctype(dt)}>"


def rl_expr(op: str, dt) -> str:
    """tanh_gaussian[_backward], policy_gradient[_backward]."""
    return f"hf::fused_{op}<{ctype(dt)}>"


def td_target_expr(dt, done_dt) -> str:
    return f"hf::fused_td_target<{ctype(dt)}, {ctype(done_dt)}>"


def logic_exprs(dt) -> list:
    """The soft-logic and aggregator kernels of one dtype (compiled together)."""
    return ([logic_expr(op, dt, norm, is_or) for op in PASSES for norm in NORMS
             for is_or in (False, True)]
            + [aggregator_expr(op, dt) for op in ("aggregator", "aggregator_backward",
                                                  "aggregator_lrp")])


def rl_exprs(dt) -> list:
    """The RL row kernels of one dtype (compiled together)."""
    return ([rl_expr(op, dt) for op in ("tanh_gaussian", "tanh_gaussian_backward",
                                        "policy_gradient", "policy_gradient_backward")]
            + [td_target_expr(dt, m) for m in (dt, np.dtype(np.bool_))])


def group_log2(cols: int) -> int:
    """log2 of the lanes of a row group: the power of two >= cols, at most 32."""
    return min(MAX_GROUP_LOG2, max(0, cols - 1).bit_length())


def instances():
    return [("fused_logic", FILE, [e for t in FLOATS for e in logic_exprs(t)]),
            ("fused_logic_rl", FILE, [e for t in FLOATS for e in rl_exprs(t)])]
