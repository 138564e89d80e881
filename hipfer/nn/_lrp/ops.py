"""Fused ops, lrp: shape and dtype rules (see hipfer.prims.fused_ops; docs/nn_lrp.md).

Epsilon-rule layer-wise relevance propagation, one backward pass per layer kind. Every
op divides by the stabilised denominator stab(z) = z + eps*sign(z) with sign(0) = +1
(so stab(z) is never 0 for eps > 0), and forms its quotient first: s = r / stab(z),
then relevance = contribution * s. eps is a runtime scalar (>= 0, finite).

Layouts (all operands C-contiguous, one float dtype):
    lrp_stabilized_divide     r, denom (any shape, equal)            -> out
    lrp_residual_split        a, b, r (any shape, equal)             -> r_a, r_b
    lrp_bilinear_elementwise  a, b, r (any shape, equal)             -> r_out
    lrp_linear                x (N, I), w (I, J), z (N, J), r (N, J) -> r_in (N, I)
    lrp_bilinear_matmul       A (..., M, K), B (..., K, N) or (..., N, K) with trans_b,
                              O (..., M, N), R (..., M, N)           -> R_A, R_B (A's, B's shape)
    lrp_softmax_rows          x, y, r (..., n)                       -> r_in (..., n)
    lrp_rope                  x (..., L, D), cos, sin (L, D/2), r (..., L, D) -> r_in
    lrp_conv                  P (N, CK, L), w (Cout, CK), z, r (N, Cout, L) -> R_P (N, CK, L)
    lrp_avg_pool              x (N, C, H, W), r (N, C, oh, ow)       -> r_in (N, C, H, W)
"""
from __future__ import annotations

import math

from ...prims.fused_ops import FusedOpDef, floats, ndim, same
from .._conv.ops import geometry
from .._movement.ops import rope_tables

GATES = ("none", "positive", "negative")


def eps_scalar(eps) -> float:
    """eps validated: a finite float >= 0 (ValueError)."""
    eps = float(eps)
    if not (0.0 <= eps < math.inf):
        raise ValueError(f"lrp: eps={eps!r} must be finite and >= 0")
    return eps


def gate_of(desc) -> str:
    g = desc.get("gate", "none")
    if g not in GATES:
        raise ValueError(f"{desc!r}: gate must be one of {GATES}, got {g!r}")
    return g


def _trans_b(desc) -> bool:
    v = desc.get("trans_b", False)
    if not isinstance(v, bool):
        raise ValueError(f"{desc!r}: trans_b must be a bool, got {v!r}")
    return v


def _all_same(desc, shapes, names):
    for s, what in zip(shapes[1:], names[1:]):
        same(desc, shapes[0], s, f"{names[0]} and {what}")


def _stabilized_divide(desc, dtypes, shapes):
    gate_of(desc)
    dt = floats(desc, dtypes)
    _all_same(desc, shapes, ("r", "denom"))
    return ((shapes[0], dt),)


def _residual_split(desc, dtypes, shapes):
    dt = floats(desc, dtypes)
    _all_same(desc, shapes, ("a", "b", "r"))
    return ((shapes[0], dt),) * 2


def _bilinear_elementwise(desc, dtypes, shapes):
    dt = floats(desc, dtypes)
    _all_same(desc, shapes, ("a", "b", "r"))
    return ((shapes[0], dt),)


def _linear(desc, dtypes, shapes):
    dt = floats(desc, dtypes)
    x, w, z, r = shapes
    ndim(desc, x, 2, "x (N, I)")
    ndim(desc, w, 2, "w (I, J)")
    if x[1] != w[0]:
        raise ValueError(f"{desc!r}: x has {x[1]} features, w (I, J) has I = {w[0]}")
    same(desc, (x[0], w[1]), z, "(N, J) of x @ w and z")
    same(desc, z, r, "z and r")
    return ((tuple(x), dt),)


def _bilinear_matmul(desc, dtypes, shapes):
    tb = _trans_b(desc)
    dt = floats(desc, dtypes)
    a, b, o, r = shapes
    if len(a) < 2 or len(b) != len(a):
        raise ValueError(f"{desc!r}: A and B must both be (..., rows, cols) with the same "
                         f"batch axes, got shapes {tuple(a)} and {tuple(b)}")
    same(desc, a[:-2], b[:-2], "A's and B's batch")
    kb, n = (b[-1], b[-2]) if tb else (b[-2], b[-1])
    if a[-1] != kb:
        raise ValueError(f"{desc!r}: A (..., M, K) has K = {a[-1]}, B{' stored transposed' if tb else ''}"
                         f" has K = {kb}: the inner sizes differ")
    same(desc, tuple(a[:-1]) + (n,), o, "A @ B and O")
    same(desc, o, r, "O and R")
    return ((tuple(a), dt), (tuple(b), dt))


def _softmax_rows(desc, dtypes, shapes):
    dt = floats(desc, dtypes)
    if len(shapes[0]) < 1:
        raise ValueError(f"{desc!r}: x must have a row axis (..., n), got shape {shapes[0]}")
    _all_same(desc, shapes, ("x", "y", "r"))
    return ((shapes[0], dt),)


def _rope(desc, dtypes, shapes):
    dt = floats(desc, dtypes)
    x, cos, sin, r = shapes
    rope_tables(desc, x, cos, sin)
    same(desc, x, r, "x and r")
    return ((tuple(x), dt),)


def _conv(desc, dtypes, shapes):
    dt = floats(desc, dtypes)
    p, w, z, r = shapes
    ndim(desc, p, 3, "patches (N, C*kh*kw, L)")
    ndim(desc, w, 2, "w (Cout, C*kh*kw)")
    if w[1] != p[1]:
        raise ValueError(f"{desc!r}: w (Cout, C*kh*kw) has {w[1]} columns, the patches "
                         f"have {p[1]} rows")
    same(desc, (p[0], w[0], p[2]), z, "(N, Cout, L) and z")
    same(desc, z, r, "z and r")
    return ((tuple(p), dt),)


def _avg_pool(desc, dtypes, shapes):
    dt = floats(desc, dtypes)
    x, r = shapes
    ndim(desc, x, 4, "x (N, C, H, W)")
    o = geometry(desc, x[2:], pool=True)[4]
    same(desc, tuple(x[:2]) + o, r, "the pooled output and r")
    return ((tuple(x), dt),)


def _probe_pool(desc):
    """(x, r) shapes that fit the descriptor's window: one window per plane."""
    x = (1, 1) + tuple(desc.get("kernel", (1, 1)))
    try:
        o = geometry(desc, x[2:], pool=True)[4]
    except (TypeError, ValueError, IndexError):
        o = (1, 1)
    return x, (1, 1) + o


_EPS = {"eps": 1e-6}

LRP_STABILIZED_DIVIDE = FusedOpDef(
    "lrp_stabilized_divide", 2, _stabilized_divide, lambda desc: ((1,), (1,)), _EPS,
    "r, denom -> out = r / stab(denom) where the gate passes (none: always; "
    "positive: denom > 0; negative: denom < 0), else 0")
LRP_RESIDUAL_SPLIT = FusedOpDef(
    "lrp_residual_split", 3, _residual_split, lambda desc: ((1,),) * 3, _EPS,
    "y = a + b: r_a = a * (r / stab(y)), r_b = b * (r / stab(y))")
LRP_BILINEAR_ELEMENTWISE = FusedOpDef(
    "lrp_bilinear_elementwise", 3, _bilinear_elementwise,
    lambda desc: ((1,),) * 3, _EPS,
    "c = a * b: r_out = c * (r / (2c + eps*sign(c))), the relevance of a and of b")
LRP_LINEAR = FusedOpDef(
    "lrp_linear", 4, _linear, lambda desc: ((1, 1), (1, 1), (1, 1), (1, 1)), _EPS,
    "x (N, I), w (I, J), z = x @ w (+ bias) (N, J), r (N, J): "
    "r_in = x * ((r / stab(z)) @ w.T)")
LRP_BILINEAR_MATMUL = FusedOpDef(
    "lrp_bilinear_matmul", 4, _bilinear_matmul,
    lambda desc: ((1, 1), (1, 1), (1, 1), (1, 1)), _EPS,
    "O = A @ B (B stored (..., N, K) with trans_b): S = R / (2 stab(O)), "
    "R_A = A * (S @ B^T), R_B = B * (A^T @ S)")
LRP_SOFTMAX_ROWS = FusedOpDef(
    "lrp_softmax_rows", 3, _softmax_rows, lambda desc: ((1,),) * 3, {},
    "x, y = softmax(x), r (..., n): r_in = x * (r - y * sum(r)) per row")
LRP_ROPE = FusedOpDef(
    "lrp_rope", 4, _rope, lambda desc: ((1, 2), (1, 1), (1, 1), (1, 2)), _EPS,
    "epsilon rule on each pair's 2x2 rotation (rope's layout): "
    "r_in[2i] = x[2i] (c q0 + s q1), r_in[2i+1] = x[2i+1] (c q1 - s q0)")
LRP_CONV = FusedOpDef(
    "lrp_conv", 4, _conv, lambda desc: ((1, 1, 1), (1, 1), (1, 1, 1), (1, 1, 1)), _EPS,
    "patches P (N, CK, L), w (Cout, CK), z, r (N, Cout, L): "
    "R_P = P * (w^T @ (r / stab(z)))")
LRP_AVG_POOL = FusedOpDef(
    "lrp_avg_pool", 2, _avg_pool, _probe_pool, _EPS,
    "x (N, C, H, W), r (N, C, oh, ow): r_in = x * sum over the windows holding "
    "it of r / stab(window sum of x)")

#: every row of this topic (the op table loads it; MAKERS cover exactly these)
OPS = (LRP_STABILIZED_DIVIDE, LRP_RESIDUAL_SPLIT, LRP_BILINEAR_ELEMENTWISE, LRP_LINEAR,
       LRP_BILINEAR_MATMUL, LRP_SOFTMAX_ROWS, LRP_ROPE, LRP_CONV, LRP_AVG_POOL)
