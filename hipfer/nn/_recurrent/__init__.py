"""hipfer.nn, recurrent ops (FusedPrims; rules in ops.py, slot
layouts and formulas in docs/nn_recurrent.md).

Cells: the pointwise part of one LSTM / GRU step (the GEMMs run outside, on matmul or
gemm_ex). Scans: a whole sequence in one launch, one lane per independent (batch,
channel) pair looping over time in order, so every result repeats bit for bit.
"""
from __future__ import annotations

from ... import _creation
from .._common import fused, tensor
from . import ops

__all__ = ["lstm_cell", "lstm_cell_backward", "gru_cell", "gru_cell_backward",
           "gru_lrp_prev", "selective_scan", "selective_scan_backward", "wkv",
           "wkv_backward", "retention", "retention_backward"]


def _tensors(name: str, **operands):
    return [tensor(x, name, what) for what, x in operands.items()]


def lstm_cell(gates, c_prev):
    """One LSTM step after the GEMMs: gates (N, 4H) = x @ W + h_prev @ U + b in PyTorch's
    order (i, f, g, o), c_prev (N, H). Returns (h, c, acts): c = f * c_prev + i * g,
    h = o * tanh(c), acts (N, 4H) = (sigmoid(i), sigmoid(f), tanh(g), sigmoid(o)), what
    lstm_cell_backward needs."""
    return fused(ops.LSTM_CELL, _tensors("lstm_cell", gates=gates, c_prev=c_prev))


def lstm_cell_backward(acts, c_prev, dh, dc):
    """lstm_cell's gradients from dh, dc (N, H) (dc: the gradient reaching c from the next
    step; zeros at the last): returns (dgates (N, 4H), dc_prev (N, H))."""
    return fused(ops.LSTM_CELL_BACKWARD, _tensors("lstm_cell_backward", acts=acts,
                                                  c_prev=c_prev, dh=dh, dc=dc))


def gru_cell(x_pre, h_pre, h_prev):
    """One GRU step after the GEMMs (PyTorch's formulation): x_pre = x @ W_ih + b_ih and
    h_pre = h_prev @ W_hh + b_hh, both (N, 3H) in the order (r, z, n); h_prev (N, H).
    r = sigmoid(xr + hr), z = sigmoid(xz + hz), n = tanh(xn + r * hn),
    h = (1 - z) * n + z * h_prev. Returns (h, acts) with acts (N, 4H) = (r, z, n, hn)."""
    return fused(ops.GRU_CELL, _tensors("gru_cell", x_pre=x_pre, h_pre=h_pre, h_prev=h_prev))


def gru_cell_backward(acts, h_prev, dh):
    """gru_cell's gradients from dh (N, H): returns (dx_pre (N, 3H), dh_pre (N, 3H),
    dh_prev (N, H)); dh_prev is the direct z * h_prev path only (add dh_pre @ W_hh.T)."""
    return fused(ops.GRU_CELL_BACKWARD, _tensors("gru_cell_backward", acts=acts,
                                                 h_prev=h_prev, dh=dh))


def gru_lrp_prev(acts, h_prev, relevance, *, eps=1e-6):
    """GRU's recurrent LRP term, the epsilon rule through the z * h_prev path:
    R_prev = z * h_prev / (h + eps * sign(h)) * R_h with sign(0) = +1 and h recomputed
    from acts and h_prev. relevance: R_h (N, H). Returns R_prev (N, H)."""
    return fused(ops.GRU_LRP_PREV, _tensors("gru_lrp_prev", acts=acts, h_prev=h_prev,
                                            relevance=relevance), eps=float(eps))


def _skip(name, x, D_skip):
    """D_skip, or zeros (D,) when None."""
    if D_skip is None:
        return _creation.zeros(x.shape[2:3], dtype=x.dtype, device=x.device)
    return tensor(D_skip, name, "D_skip")


def selective_scan(x, delta, A, Bm, C, D_skip=None):
    """Mamba's selective scan (selective_scan_ref, no z gating, delta used as given):
    x, delta (B, L, D), A (D, N), Bm, C (B, L, N), D_skip (D,) or None. Per (b, d, n):
    h_t = exp(delta_t A) h_{t-1} + (delta_t x_t) Bm_t, y_t = sum_n C_t h_t + D_skip x_t.
    Returns y (B, L, D). Gate outside: y * silu(z)."""
    xs = _tensors("selective_scan", x=x, delta=delta, A=A, Bm=Bm, C=C)
    return fused(ops.SELECTIVE_SCAN, xs + [_skip("selective_scan", xs[0], D_skip)])


def selective_scan_backward(x, delta, A, Bm, C, D_skip, dy):
    """selective_scan's gradients from dy (B, L, D): returns (dx, ddelta, dA, dBm, dC,
    dD_skip); dD_skip is None when D_skip is None."""
    name = "selective_scan_backward"
    xs = _tensors(name, x=x, delta=delta, A=A, Bm=Bm, C=C)
    res = fused(ops.SELECTIVE_SCAN_BACKWARD,
                xs + [_skip(name, xs[0], D_skip), tensor(dy, name, "dy")])
    return res[:5] + (None if D_skip is None else res[5],)


def wkv(w, u, k, v):
    """RWKV-4's WKV: w (decay, used as -exp(w)), u (bonus) (C,); k, v (B, L, C).
    wkv_t = (a_{t-1} + e^{u + k_t} v_t) / (b_{t-1} + e^{u + k_t}),
    a_t = e^{-e^w} a_{t-1} + e^{k_t} v_t, b_t = e^{-e^w} b_{t-1} + e^{k_t}, a_0 = b_0 = 0,
    computed with a running max exponent (the official kernel's stable form)."""
    return fused(ops.WKV, _tensors("wkv", w=w, u=u, k=k, v=v))


def wkv_backward(w, u, k, v, dy):
    """wkv's gradients from dy (B, L, C): returns (dw, du (C,), dk, dv (B, L, C))."""
    return fused(ops.WKV_BACKWARD, _tensors("wkv_backward", w=w, u=u, k=k, v=v, dy=dy))


def retention(q, k, v, gamma):
    """RetNet's recurrent retention: q, k (B, L, Dk), v (B, L, Dv), gamma (B,) (one decay
    per head: fold heads into B). S_t = gamma S_{t-1} + k_t^T v_t, o_t = q_t S_t.
    Returns o (B, L, Dv)."""
    return fused(ops.RETENTION, _tensors("retention", q=q, k=k, v=v, gamma=gamma))


def retention_backward(q, k, v, gamma, do):
    """retention's gradients from do (B, L, Dv): returns (dq, dk, dv, dgamma (B,))."""
    return fused(ops.RETENTION_BACKWARD, _tensors("retention_backward", q=q, k=k, v=v,
                                                  gamma=gamma, do=do))
