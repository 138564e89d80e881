"""Fused ops, recurrent: shape and dtype rules (see hipfer.prims.fused_ops; layouts and
formulas in docs/nn_recurrent.md).

Cells fuse the pointwise part of one LSTM / GRU step (the GEMMs x @ W and h @ U run
outside, on hipfer.matmul / hipfer.nn.gemm_ex). Scans run a whole sequence: one lane per
independent (batch, channel) pair loops over time in order, so results repeat bit for bit.
"""
from __future__ import annotations

import math

from ...prims.fused_ops import FusedOpDef, floats, ndim, same


def _rows(desc, shape, what: str, width: int = 0):
    """(N, H) of a 2-d operand whose columns are width * H (width 0: any)."""
    ndim(desc, shape, 2, what)
    if width and shape[1] % width:
        raise ValueError(f"{desc!r}: {what} must be (N, {width}H), got shape {shape}")
    return shape[0], shape[1] // (width or 1)


def _lstm_cell(desc, dtypes, shapes):
    dt = floats(desc, dtypes)
    n, h = _rows(desc, shapes[0], "gates", 4)
    same(desc, (n, h), shapes[1], "gates (N, 4H) and c_prev (N, H)")
    return (((n, h), dt), ((n, h), dt), ((n, 4 * h), dt))


def _lstm_cell_backward(desc, dtypes, shapes):
    dt = floats(desc, dtypes)
    n, h = _rows(desc, shapes[0], "acts", 4)
    for i, what in ((1, "c_prev"), (2, "dh"), (3, "dc")):
        same(desc, (n, h), shapes[i], f"acts (N, 4H) and {what} (N, H)")
    return (((n, 4 * h), dt), ((n, h), dt))


def _gru_cell(desc, dtypes, shapes):
    dt = floats(desc, dtypes)
    n, h = _rows(desc, shapes[0], "x_pre", 3)
    same(desc, shapes[0], shapes[1], "x_pre and h_pre")
    same(desc, (n, h), shapes[2], "x_pre (N, 3H) and h_prev (N, H)")
    return (((n, h), dt), ((n, 4 * h), dt))


def _gru_cell_backward(desc, dtypes, shapes):
    dt = floats(desc, dtypes)
    n, h = _rows(desc, shapes[0], "acts", 4)
    same(desc, (n, h), shapes[1], "acts (N, 4H) and h_prev (N, H)")
    same(desc, (n, h), shapes[2], "acts (N, 4H) and dh (N, H)")
    return (((n, 3 * h), dt), ((n, 3 * h), dt), ((n, h), dt))


def _gru_lrp_prev(desc, dtypes, shapes):
    dt = floats(desc, dtypes)
    n, h = _rows(desc, shapes[0], "acts", 4)
    same(desc, (n, h), shapes[1], "acts (N, 4H) and h_prev (N, H)")
    same(desc, (n, h), shapes[2], "acts (N, 4H) and relevance (N, H)")
    return (((n, h), dt),)


def _scan_x(desc, shape, what: str):
    ndim(desc, shape, 3, what)
    return shape


def _selective_scan(desc, dtypes, shapes):
    dt = floats(desc, dtypes)
    b, l, d = _scan_x(desc, shapes[0], "x")
    same(desc, shapes[0], shapes[1], "x and delta")
    ndim(desc, shapes[2], 2, "A")
    if shapes[2][0] != d:
        raise ValueError(f"{desc!r}: A must be (D, N) = ({d}, N), got shape {shapes[2]}")
    n = shapes[2][1]
    same(desc, (b, l, n), shapes[3], "(B, L, N) and Bm")
    same(desc, (b, l, n), shapes[4], "(B, L, N) and C")
    same(desc, (d,), shapes[5], "(D,) and D_skip")
    return dt, (b, l, d, n)


def _selective_scan_fwd(desc, dtypes, shapes):
    dt, _ = _selective_scan(desc, dtypes, shapes)
    return ((shapes[0], dt),)


def _selective_scan_backward(desc, dtypes, shapes):
    dt, _ = _selective_scan(desc, dtypes, shapes[:6])
    floats(desc, dtypes)
    same(desc, shapes[0], shapes[6], "x and dy")
    return tuple((s, dt) for s in shapes[:6])


def _wkv(desc, dtypes, shapes):
    dt = floats(desc, dtypes)
    b, l, c = _scan_x(desc, shapes[2], "k")
    same(desc, (c,), shapes[0], "(C,) and w")
    same(desc, (c,), shapes[1], "(C,) and u")
    same(desc, shapes[2], shapes[3], "k and v")
    return dt


def _wkv_fwd(desc, dtypes, shapes):
    return ((shapes[2], _wkv(desc, dtypes, shapes)),)


def _wkv_backward(desc, dtypes, shapes):
    dt = _wkv(desc, dtypes, shapes[:4])
    floats(desc, dtypes)
    same(desc, shapes[2], shapes[4], "k and dy")
    return tuple((s, dt) for s in shapes[:4])


def _retention(desc, dtypes, shapes):
    dt = floats(desc, dtypes)
    b, l, dk = _scan_x(desc, shapes[0], "q")
    same(desc, shapes[0], shapes[1], "q and k")
    _scan_x(desc, shapes[2], "v")
    same(desc, (b, l), shapes[2][:2], "q's (B, L) and v's")
    same(desc, (b,), shapes[3], "(B,) and gamma")
    return dt


def _retention_fwd(desc, dtypes, shapes):
    return ((shapes[2], _retention(desc, dtypes, shapes)),)


def _retention_backward(desc, dtypes, shapes):
    dt = _retention(desc, dtypes, shapes[:4])
    floats(desc, dtypes)
    same(desc, shapes[2], shapes[4], "v and do")
    return tuple((s, dt) for s in shapes[:4])


def lrp_eps(eps=1e-6) -> float:
    """gru_lrp_prev's stabiliser, validated (ValueError)."""
    if not 0.0 <= eps < math.inf:
        raise ValueError(f"gru_lrp_prev: eps={eps!r} must be finite and >= 0")
    return eps


_CELL = lambda k: lambda desc: ((1, k), (1, 1))  # noqa: E731
_SCAN = lambda desc: ((1, 2, 3), (1, 2, 3), (3, 2), (1, 2, 2), (1, 2, 2), (3,))  # noqa: E731
_WKV = lambda desc: ((3,), (3,), (1, 2, 3), (1, 2, 3))  # noqa: E731
_RET = lambda desc: ((1, 2, 3), (1, 2, 3), (1, 2, 4), (1,))  # noqa: E731

LSTM_CELL = FusedOpDef(
    "lstm_cell", 2, _lstm_cell, _CELL(4), {},
    "gates (N, 4H) [i, f, g, o pre-activations], c_prev (N, H) -> h, c (N, H), "
    "acts (N, 4H) = sigmoid(i), sigmoid(f), tanh(g), sigmoid(o)")
LSTM_CELL_BACKWARD = FusedOpDef(
    "lstm_cell_backward", 4, _lstm_cell_backward,
    lambda desc: ((1, 4), (1, 1), (1, 1), (1, 1)), {},
    "(acts, c_prev, dh, dc) -> dgates (N, 4H), dc_prev (N, H)")
GRU_CELL = FusedOpDef(
    "gru_cell", 3, _gru_cell, lambda desc: ((1, 3), (1, 3), (1, 1)), {},
    "x_pre, h_pre (N, 3H) [r, z, n], h_prev (N, H) -> h (N, H), "
    "acts (N, 4H) = r, z, n, hn (PyTorch's GRU)")
GRU_CELL_BACKWARD = FusedOpDef(
    "gru_cell_backward", 3, _gru_cell_backward,
    lambda desc: ((1, 4), (1, 1), (1, 1)), {},
    "(acts, h_prev, dh) -> dx_pre (N, 3H), dh_pre (N, 3H), dh_prev (N, H) (the "
    "direct z * h_prev path)")
GRU_LRP_PREV = FusedOpDef(
    "gru_lrp_prev", 3, _gru_lrp_prev, lambda desc: ((1, 4), (1, 1), (1, 1)),
    {"eps": 1e-6},
    "(acts, h_prev, R_h) -> R_prev = z h_prev / (h + eps sign(h)) R_h (epsilon "
    "rule through the z * h_prev path)")
SELECTIVE_SCAN = FusedOpDef(
    "selective_scan", 6, _selective_scan_fwd, _SCAN, {},
    "Mamba: x, delta (B, L, D), A (D, N), Bm, C (B, L, N), D_skip (D,) -> y "
    "(B, L, D)")
SELECTIVE_SCAN_BACKWARD = FusedOpDef(
    "selective_scan_backward", 7, _selective_scan_backward,
    lambda desc: _SCAN(desc) + ((1, 2, 3),), {},
    "(x, delta, A, Bm, C, D_skip, dy) -> dx, ddelta, dA, dBm, dC, dD_skip")
WKV = FusedOpDef(
    "wkv", 4, _wkv_fwd, _WKV, {},
    "RWKV-4: w, u (C,), k, v (B, L, C) -> wkv (B, L, C), stable form")
WKV_BACKWARD = FusedOpDef(
    "wkv_backward", 5, _wkv_backward, lambda desc: _WKV(desc) + ((1, 2, 3),), {},
    "(w, u, k, v, dy) -> dw, du (C,), dk, dv (B, L, C)")
RETENTION = FusedOpDef(
    "retention", 4, _retention_fwd, _RET, {},
    "RetNet recurrent: q, k (B, L, Dk), v (B, L, Dv), gamma (B,) -> o (B, L, Dv)")
RETENTION_BACKWARD = FusedOpDef(
    "retention_backward", 5, _retention_backward,
    lambda desc: _RET(desc) + ((1, 2, 4),), {},
    "(q, k, v, gamma, do) -> dq, dk, dv, dgamma (B,)")

#: every row of this topic (the op table loads it; MAKERS cover exactly these)
OPS = (LSTM_CELL, LSTM_CELL_BACKWARD, GRU_CELL, GRU_CELL_BACKWARD, GRU_LRP_PREV, SELECTIVE_SCAN,
       SELECTIVE_SCAN_BACKWARD, WKV, WKV_BACKWARD, RETENTION, RETENTION_BACKWARD)
