"""Fused ops, activation: shape and dtype rules (see hipfer.prims.fused_ops).

Activations (``name`` param): relu, tanh, sigmoid, silu, exp, neg. Their backward
reads the gradient and one saved tensor, ``BACKWARD_ARG[name]``: the input x (relu,
silu) or the forward output y (tanh, sigmoid, exp); neg needs neither (its gradient
is neg of grad, so it has no backward row).
"""
from __future__ import annotations

import numpy as np

from ...prims.fused_ops import FusedOpDef, floats, same

ACTIVATIONS = ("relu", "tanh", "sigmoid", "silu", "exp", "neg")
BACKWARD_ARG = {"relu": "x", "silu": "x", "tanh": "y", "sigmoid": "y", "exp": "y"}
REDUCTIONS = ("none", "mean")
BOOL = np.dtype(np.bool_)


def _name(desc, allowed) -> str:
    name = desc.get("name")
    if name not in allowed:
        raise ValueError(f"{desc!r}: unknown activation {name!r} (one of {', '.join(allowed)})")
    return name


def _reduction(desc) -> str:
    r = desc.get("reduction", "none")
    if r not in REDUCTIONS:
        raise ValueError(f"{desc!r}: reduction must be 'none' or 'mean', got {r!r}")
    return r


def dropout_scale(p) -> float:
    """Validate dropout's p (a runtime scalar) and return the keep scale 1 / (1 - p)."""
    p = float(p)
    if not 0.0 <= p < 1.0:  # NaN fails too
        raise ValueError(f"dropout: p must be in [0, 1), got {p}")
    return 1.0 / (1.0 - p)


def dropout_counters(seed, offset) -> tuple:
    """seed and offset as the unsigned 64-bit values counter_rng uses (mod 2^64)."""
    return int(seed) & 0xFFFFFFFFFFFFFFFF, int(offset) & 0xFFFFFFFFFFFFFFFF


def _activation(desc, dtypes, shapes):
    _name(desc, ACTIVATIONS)
    return ((shapes[0], floats(desc, dtypes)),)


def _activation_backward(desc, dtypes, shapes):
    name = _name(desc, tuple(BACKWARD_ARG))
    dt = floats(desc, dtypes)
    same(desc, shapes[0], shapes[1], f"grad and {BACKWARD_ARG[name]}")
    return ((shapes[0], dt),)


def _dropout(desc, dtypes, shapes):
    return ((shapes[0], floats(desc, dtypes)), (shapes[0], BOOL))


def _dropout_backward(desc, dtypes, shapes):
    dt = floats(desc, dtypes, 0)
    if dtypes[1] != BOOL:
        raise TypeError(f"{desc!r}: the mask operand must be bool, got {dtypes[1]}")
    same(desc, shapes[0], shapes[1], "grad and mask")
    return ((shapes[0], dt),)


def _bce(desc, dtypes, shapes):
    r = _reduction(desc)
    dt = floats(desc, dtypes)
    same(desc, shapes[0], shapes[1], "x and y")
    return (((() if r == "mean" else shapes[0]), dt),)


def _bce_backward(desc, dtypes, shapes):
    r = _reduction(desc)
    dt = floats(desc, dtypes)
    same(desc, shapes[1], shapes[2], "x and y")
    if r == "mean" and shapes[0] != ():
        raise ValueError(f"{desc!r}: grad of a mean loss must be 0-d, got shape {shapes[0]}")
    if r == "none":
        same(desc, shapes[0], shapes[1], "grad and x")
    return ((shapes[1], dt),)


ACTIVATION = FusedOpDef(
    "activation", 1, _activation, lambda desc: ((1,),), {},
    "out = f(x), f one of ACTIVATIONS (param name); in place when out is x. "
    "relu(x) = x if x > 0 else +0 (NaN stays NaN); sigmoid overflow-free "
    "(exp(x) / (1 + exp(x)) for x < 0); silu(x) = x * sigmoid(x)")
ACTIVATION_BACKWARD = FusedOpDef(
    "activation_backward", 2, _activation_backward, lambda desc: ((1,), (1,)), {},
    "out = grad * f'(.) from (grad, v), v = x or y as BACKWARD_ARG[name] says: "
    "relu grad where x > 0 else 0; silu s * (1 + x * (1 - s)), s = sigmoid(x); "
    "tanh 1 - y^2; sigmoid y * (1 - y); exp y")
DROPOUT = FusedOpDef(
    "dropout", 1, _dropout, lambda desc: ((1,),), {"p": None, "seed": None, "offset": 0},
    "(out, mask): element i is dropped (mask False, out exactly 0) iff "
    "counter_rng.uniform(seed, offset + i, float32) < p (compared exactly), kept "
    "ones are x * scale, scale = 1 / (1 - p) rounded to the dtype; p in [0, 1); "
    "out may be x. A runtime default of None means required")
DROPOUT_BACKWARD = FusedOpDef(
    "dropout_backward", 2, _dropout_backward, lambda desc: ((1,), (1,)), {"p": None},
    "out = grad * (1 / (1 - p)) where mask, else 0 (grad, bool mask)")
BCE_WITH_LOGITS = FusedOpDef(
    "bce_with_logits", 2, _bce, lambda desc: ((1,), (1,)), {},
    "loss(x, y) = max(x, 0) - x * y + log1p(exp(-|x|)), elementwise "
    "(reduction='none') or its mean (reduction='mean': 0-d; NaN when empty)")
BCE_WITH_LOGITS_BACKWARD = FusedOpDef(
    "bce_with_logits_backward", 3, _bce_backward, lambda desc: ((), (1,), (1,))
    if desc.get("reduction") == "mean" else ((1,), (1,), (1,)), {},
    "d loss / d x = grad * (sigmoid(x) - y) (grad 0-d and divided by x.size "
    "for reduction='mean')")

#: every row of this topic (the op table loads it; MAKERS cover exactly these)
OPS = (ACTIVATION, ACTIVATION_BACKWARD, DROPOUT, DROPOUT_BACKWARD, BCE_WITH_LOGITS,
       BCE_WITH_LOGITS_BACKWARD)
