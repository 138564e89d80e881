"""Fused recurrent ops on NumPy (the reference; rules in ops.py; see
docs/nn_recurrent.md). Scans loop over time in Python and vectorise over the lanes."""
from __future__ import annotations

import numpy as np

from ...prims.fused_ops import makers
from . import ops
from .ops import lrp_eps

# RWKV's "minus infinity" for the running max exponent (the official kernel's MIN_VALUE)
WKV_MIN = -1e38


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))  # exp overflow -> inf -> 0: the right limit


def _split(a, k):
    h = a.shape[1] // k
    return [a[:, j * h:(j + 1) * h] for j in range(k)]


def _errstate(f):
    def run(*args, **kw):
        with np.errstate(over="ignore", under="ignore"):
            return f(*args, **kw)
    return run


def _lstm_cell(desc, dtypes, shapes, outs):
    @_errstate
    def run(inputs, out):
        gates, c_prev = inputs
        h, c, acts = out
        gi, gf, gg, go = _split(gates, 4)
        i, f, g, o = _split(acts, 4)
        i[...], f[...], g[...], o[...] = _sigmoid(gi), _sigmoid(gf), np.tanh(gg), _sigmoid(go)
        c[...] = f * c_prev + i * g
        h[...] = o * np.tanh(c)
    return run


def _lstm_cell_backward(desc, dtypes, shapes, outs):
    @_errstate
    def run(inputs, out):
        acts, c_prev, dh, dc = inputs
        dgates, dc_prev = out
        i, f, g, o = _split(acts, 4)
        di, df, dg, do = _split(dgates, 4)
        tc = np.tanh(f * c_prev + i * g)
        dct = dc + dh * o * (1 - tc * tc)
        do[...] = dh * tc * o * (1 - o)
        di[...] = dct * g * i * (1 - i)
        df[...] = dct * c_prev * f * (1 - f)
        dg[...] = dct * i * (1 - g * g)
        dc_prev[...] = dct * f
    return run


def _gru_cell(desc, dtypes, shapes, outs):
    @_errstate
    def run(inputs, out):
        x_pre, h_pre, h_prev = inputs
        h, acts = out
        xr, xz, xn = _split(x_pre, 3)
        hr, hz, hn = _split(h_pre, 3)
        r, z, n, hn_saved = _split(acts, 4)
        r[...], z[...] = _sigmoid(xr + hr), _sigmoid(xz + hz)
        n[...] = np.tanh(xn + r * hn)
        hn_saved[...] = hn
        h[...] = (1 - z) * n + z * h_prev
    return run


def _gru_cell_backward(desc, dtypes, shapes, outs):
    @_errstate
    def run(inputs, out):
        acts, h_prev, dh = inputs
        dx_pre, dh_pre, dh_prev = out
        r, z, n, hn = _split(acts, 4)
        dxr, dxz, dxn = _split(dx_pre, 3)
        dhr, dhz, dhn = _split(dh_pre, 3)
        dn = dh * (1 - z) * (1 - n * n)
        dr = dn * hn * r * (1 - r)
        dz = dh * (h_prev - n) * z * (1 - z)
        dxr[...], dxz[...], dxn[...] = dr, dz, dn
        dhr[...], dhz[...], dhn[...] = dr, dz, dn * r
        dh_prev[...] = dh * z
    return run


def _gru_lrp_prev(desc, dtypes, shapes, outs):
    @_errstate
    def run(inputs, out, eps=1e-6):
        eps = out.dtype.type(lrp_eps(eps))
        acts, h_prev, rel = inputs
        _, z, n, _ = _split(acts, 4)
        h = (1 - z) * n + z * h_prev
        stab = h + np.where(h >= 0, eps, -eps)  # sign(0) = +1
        out[...] = z * h_prev / stab * rel
    return run


def _selective_scan(desc, dtypes, shapes, outs):
    @_errstate
    def run(inputs, out):
        x, delta, A, Bm, C, D_skip = inputs
        b, l, d = x.shape
        h = np.zeros((b, d, A.shape[1]), out.dtype)
        for t in range(l):
            dt_, xt = delta[:, t, :, None], x[:, t, :, None]
            h = np.exp(dt_ * A) * h + (dt_ * xt) * Bm[:, t, None, :]
            out[:, t] = np.sum(h * C[:, t, None, :], axis=-1) + D_skip * x[:, t]
    return run


def _selective_scan_backward(desc, dtypes, shapes, outs):
    @_errstate
    def run(inputs, out):
        x, delta, A, Bm, C, D_skip, dy = inputs
        dx, ddelta, dA, dBm, dC, dD = out
        b, l, d = x.shape
        hs = np.zeros((l + 1, b, d, A.shape[1]), x.dtype)  # hs[t + 1] = h_t, hs[0] = 0
        for t in range(l):
            dt_, xt = delta[:, t, :, None], x[:, t, :, None]
            hs[t + 1] = np.exp(dt_ * A) * hs[t] + (dt_ * xt) * Bm[:, t, None, :]
        carry = np.zeros_like(hs[0])
        dA_lanes = np.zeros_like(hs[0])
        for t in range(l - 1, -1, -1):
            dt_, xt, dyt = delta[:, t, :, None], x[:, t, :, None], dy[:, t, :, None]
            e = np.exp(dt_ * A)
            dh = dyt * C[:, t, None, :] + carry
            ddelta[:, t] = np.sum(dh * (hs[t] * A * e + xt * Bm[:, t, None, :]), axis=-1)
            dx[:, t] = np.sum(dh * dt_ * Bm[:, t, None, :], axis=-1) + D_skip * dy[:, t]
            dA_lanes += dh * hs[t] * dt_ * e
            dBm[:, t] = np.sum(dh * (dt_ * xt), axis=1)
            dC[:, t] = np.sum(dyt * hs[t + 1], axis=1)
            carry = dh * e
        dA[...] = np.sum(dA_lanes, axis=0)
        dD[...] = np.sum(np.sum(dy * x, axis=1), axis=0)
    return run


def _wkv(desc, dtypes, shapes, outs):
    @_errstate
    def run(inputs, out):
        w, u, k, v = inputs
        w = -np.exp(w)
        aa = np.zeros(k.shape[::2], out.dtype)
        bb = np.zeros_like(aa)
        pp = np.full_like(aa, WKV_MIN)
        for t in range(k.shape[1]):
            kk, vv = k[:, t], v[:, t]
            ww = u + kk
            p = np.maximum(pp, ww)
            e1, e2 = np.exp(pp - p), np.exp(ww - p)
            out[:, t] = (e1 * aa + e2 * vv) / (e1 * bb + e2)
            ww = w + pp
            p = np.maximum(ww, kk)
            e1, e2 = np.exp(ww - p), np.exp(kk - p)
            aa, bb, pp = e1 * aa + e2 * vv, e1 * bb + e2, p
    return run


def _wkv_backward(desc, dtypes, shapes, outs):
    """The official RWKV-4 CUDA backward (wkv_cuda.cu), vectorised over (B, C)."""
    @_errstate
    def run(inputs, out):
        w_raw, u, k, v, gy = inputs
        dw, du, dk, dv = out
        w = -np.exp(w_raw)
        lane = k.shape[::2]
        y, z, zexp = (np.empty((k.shape[1],) + lane, k.dtype) for _ in range(3))
        gw, gu, p, q, dpdw, dqdw = (np.zeros(lane, k.dtype) for _ in range(6))
        o = np.full(lane, WKV_MIN, k.dtype)
        for t in range(k.shape[1]):
            kk, vv, g = k[:, t], v[:, t], gy[:, t]
            no = np.maximum(o, kk + u)
            A, B = np.exp(o - no), np.exp(kk + u - no)
            iden = 1 / (A * q + B)
            y[t], z[t], zexp[t] = (A * p + B * vv) * iden, iden, kk + u - no
            gw += g * (dpdw - dqdw * y[t]) * iden * A
            gu += g * (vv - y[t]) * B * iden
            no = np.maximum(w + o, kk)
            A, B = np.exp(w + o - no), np.exp(kk - no)
            dpdw, dqdw = A * (p + dpdw), A * (q + dqdw)
            p, q, o = A * p + B * vv, A * q + B, no
        gp, gq = np.zeros(lane, k.dtype), np.zeros(lane, k.dtype)
        o = np.full(lane, WKV_MIN, k.dtype)
        for t in range(k.shape[1] - 1, -1, -1):
            kk, vv, g = k[:, t], v[:, t], gy[:, t]
            A = g * z[t] * np.exp(zexp[t])
            B = np.exp(kk + o)
            dk[:, t] = A * (vv - y[t]) + B * (gp * vv + gq)
            dv[:, t] = A + B * gp
            no = np.maximum(w + o, zexp[t] - kk - u)
            A = np.exp(w + o - no)
            B = g * z[t] * np.exp(zexp[t] - kk - u - no)
            gp, gq, o = A * gp + B, A * gq - B * y[t], no
        dw[...] = np.sum(gw * w, axis=0)  # d(-exp(w))/dw = -exp(w)
        du[...] = np.sum(gu, axis=0)
    return run


def _retention(desc, dtypes, shapes, outs):
    @_errstate
    def run(inputs, out):
        q, k, v, gamma = inputs
        g = gamma[:, None, None]
        s = np.zeros((q.shape[0], q.shape[2], v.shape[2]), out.dtype)
        for t in range(q.shape[1]):
            s = g * s + k[:, t, :, None] * v[:, t, None, :]
            out[:, t] = np.sum(q[:, t, :, None] * s, axis=1)
    return run


def _retention_backward(desc, dtypes, shapes, outs):
    @_errstate
    def run(inputs, out):
        q, k, v, gamma, do = inputs
        dq, dk, dv, dgamma = out
        g = gamma[:, None, None]
        s = np.zeros((q.shape[0], q.shape[2], v.shape[2]), q.dtype)
        sg = np.zeros_like(s)  # dS_t / dgamma, forward mode
        dg_lanes = np.zeros(q.shape[::2], q.dtype)
        for t in range(q.shape[1]):
            sg = s + g * sg
            s = g * s + k[:, t, :, None] * v[:, t, None, :]
            dq[:, t] = np.sum(s * do[:, t, None, :], axis=2)
            dg_lanes += q[:, t] * np.sum(sg * do[:, t, None, :], axis=2)
        ds = np.zeros_like(s)
        for t in range(q.shape[1] - 1, -1, -1):
            ds = g * ds + q[:, t, :, None] * do[:, t, None, :]
            dk[:, t] = np.sum(ds * v[:, t, None, :], axis=2)
            dv[:, t] = np.sum(ds * k[:, t, :, None], axis=1)
        dgamma[...] = np.sum(dg_lanes, axis=1)
    return run


MAKERS = makers(ops.OPS, {
    ops.LSTM_CELL: _lstm_cell, ops.LSTM_CELL_BACKWARD: _lstm_cell_backward,
    ops.GRU_CELL: _gru_cell, ops.GRU_CELL_BACKWARD: _gru_cell_backward,
    ops.GRU_LRP_PREV: _gru_lrp_prev, ops.SELECTIVE_SCAN: _selective_scan,
    ops.SELECTIVE_SCAN_BACKWARD: _selective_scan_backward, ops.WKV: _wkv,
    ops.WKV_BACKWARD: _wkv_backward, ops.RETENTION: _retention,
    ops.RETENTION_BACKWARD: _retention_backward})
