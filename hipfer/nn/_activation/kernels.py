"""Name expressions for ``fused_activation.cuh`` (pure Python, no CuPy).

Every kernel has an aligned variant (one 16-byte access per chunk) and an unaligned one
(element by element); ``aligned`` picks it. ``width(dt)`` is the chunk length V."""
from __future__ import annotations

import numpy as np

from ...kernels import ctype

FILE = "fused_activation.cuh"
FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
ACTIVATIONS = ("relu", "tanh", "sigmoid", "silu", "exp", "neg")  # ops.ACTIVATIONS
BACKWARDS = ("relu", "silu", "tanh", "sigmoid", "exp")


def width(dt) -> int:
    """Elements per chunk: V = 16 / sizeof(T) in the kernels."""
    return 16 // np.dtype(dt).itemsize


def _b(flag: bool) -> str:
    return "true" if flag else "false"


def activation_expr(name: str, dt, aligned: bool) -> str:
    return f"hf::fused_act<hf::act_{name}, {ctype(dt)}, {_b(aligned)}>"


def activation_backward_expr(name: str, dt, aligned: bool) -> str:
    return f"hf::fused_act_backward<hf::act_{name}_backward, {ctype(dt)}, {_b(aligned)}>"


def dropout_expr(dt, aligned: bool) -> str:
    return f"hf::fused_dropout<{ctype(dt)}, {_b(aligned)}>"


def dropout_backward_expr(dt, aligned: bool) -> str:
    return f"hf::fused_dropout_backward<{ctype(dt)}, {_b(aligned)}>"


def bce_expr(dt, aligned: bool) -> str:
    return f"hf::fused_bce<{ctype(dt)}, {_b(aligned)}>"


def bce_mean_partial_expr(dt, aligned: bool) -> str:
    return f"hf::fused_bce_mean_partial<{ctype(dt)}, {_b(aligned)}>"


def bce_mean_final_expr(dt) -> str:
    return f"hf::fused_bce_mean_final<{ctype(dt)}>"


def bce_backward_expr(dt, aligned: bool, mean: bool) -> str:
    return f"hf::fused_bce_backward<{ctype(dt)}, {_b(aligned)}, {_b(mean)}>"


def instances():
    both = (True, False)
    act = [activation_expr(n, t, a) for t in FLOATS for n in ACTIVATIONS for a in both]
    act += [activation_backward_expr(n, t, a) for t in FLOATS for n in BACKWARDS for a in both]
    drop = [e for t in FLOATS for a in both for e in (dropout_expr(t, a), dropout_backward_expr(t, a))]
    bce = [e for t in FLOATS for a in both
           for e in (bce_expr(t, a), bce_mean_partial_expr(t, a), bce_backward_expr(t, a, False),
                     bce_backward_expr(t, a, True))]
    bce += [bce_mean_final_expr(t) for t in FLOATS]
    return [("fused_activation", FILE, act), ("fused_activation_dropout", FILE, drop),
            ("fused_activation_bce", FILE, bce)]
