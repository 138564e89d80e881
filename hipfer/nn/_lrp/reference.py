"""Fused lrp ops on NumPy (the reference; rules in ops.py).

Each op computes in the order the GPU kernels do: the quotient s = r / stab(z) first,
then contribution * s; sums run in a fixed order (NumPy's pairwise sum for softmax
rows, tap order for pools, the BLAS GEMM for the matrix products).
"""
from __future__ import annotations

import numpy as np

from ...prims.fused_ops import makers
from .._conv.ops import geometry
from .._conv.reference import _padded, _taps
from . import ops
from .ops import eps_scalar, gate_of


def stab(z, eps):
    """z + eps * sign(z) with sign(0) = +1 (a NaN stays NaN)."""
    return np.where(z >= 0, z + eps, z - eps)


def _eps(out, eps):
    return out.dtype.type(eps_scalar(eps))


def _quotient(r, z, e, scale=1):
    """r / (scale * stab(z)); the divisions by 0 (eps = 0) give inf/NaN, as on the GPU."""
    with np.errstate(all="ignore"):
        return r / (scale * stab(z, e)) if scale != 1 else r / stab(z, e)


def _stabilized_divide(desc, dtypes, shapes, outs):
    gate = gate_of(desc)

    def run(inputs, out, eps=1e-6):
        r, den = inputs
        q = _quotient(r, den, _eps(out, eps))
        if gate != "none":
            q = np.where(den > 0 if gate == "positive" else den < 0, q, out.dtype.type(0))
        out[...] = q
    return run


def _residual_split(desc, dtypes, shapes, outs):
    def run(inputs, outs, eps=1e-6):
        a, b, r = inputs
        s = _quotient(r, a + b, _eps(outs[0], eps))
        np.multiply(a, s, out=outs[0])
        np.multiply(b, s, out=outs[1])
    return run


def _bilinear_elementwise(desc, dtypes, shapes, outs):
    def run(inputs, out, eps=1e-6):
        a, b, r = inputs
        e = _eps(out, eps)
        c = a * b
        with np.errstate(all="ignore"):
            np.multiply(c, r / np.where(c >= 0, 2 * c + e, 2 * c - e), out=out)
    return run


def _linear(desc, dtypes, shapes, outs):
    def run(inputs, out, eps=1e-6):
        x, w, z, r = inputs
        s = _quotient(r, z, _eps(out, eps))
        np.multiply(x, s @ w.T, out=out)
    return run


def _bilinear_matmul(desc, dtypes, shapes, outs):
    tb = bool(desc.get("trans_b", False))

    def run(inputs, outs, eps=1e-6):
        a, b, o, r = inputs
        s = _quotient(r, o, _eps(outs[0], eps), scale=2)
        st = np.swapaxes(s, -1, -2)
        np.multiply(a, s @ (b if tb else np.swapaxes(b, -1, -2)), out=outs[0])
        np.multiply(b, st @ a if tb else np.swapaxes(a, -1, -2) @ s, out=outs[1])
    return run


def _softmax_rows(desc, dtypes, shapes, outs):
    def run(inputs, out):
        x, y, r = inputs
        t = np.sum(r, axis=-1, keepdims=True, dtype=out.dtype)
        np.multiply(x, r - y * t, out=out)
    return run


def _rope(desc, dtypes, shapes, outs):
    def run(inputs, out, eps=1e-6):
        x, cos, sin, r = inputs
        e = _eps(out, eps)
        x0, x1, r0, r1 = x[..., 0::2], x[..., 1::2], r[..., 0::2], r[..., 1::2]
        q0 = _quotient(r0, x0 * cos - x1 * sin, e)
        q1 = _quotient(r1, x0 * sin + x1 * cos, e)
        out[..., 0::2] = x0 * (cos * q0 + sin * q1)
        out[..., 1::2] = x1 * (cos * q1 - sin * q0)
    return run


def _conv(desc, dtypes, shapes, outs):
    def run(inputs, out, eps=1e-6):
        p, w, z, r = inputs
        s = _quotient(r, z, _eps(out, eps))
        np.multiply(p, w.T @ s, out=out)
    return run


def _avg_pool(desc, dtypes, shapes, outs):
    (n, c, h, w), dt = outs[0]
    k, st, p, d, o = geometry(desc, (h, w), pool=True)

    def run(inputs, out, eps=1e-6):
        x, r = inputs
        xp = _padded(x, p)
        total = np.zeros(r.shape, dt)  # window sums, in tap order
        for _, _, ri, rj in _taps(k, st, d, o):
            total += xp[:, :, ri, rj]
        share = _quotient(r, total, _eps(out, eps))
        acc = np.zeros(xp.shape, dt)  # each input sums its windows' shares in tap order
        for _, _, ri, rj in _taps(k, st, d, o):
            acc[:, :, ri, rj] += share
        np.multiply(x, acc[:, :, p[0]:p[0] + h, p[1]:p[1] + w], out=out)
    return run


MAKERS = makers(ops.OPS, {
    ops.LRP_STABILIZED_DIVIDE: _stabilized_divide, ops.LRP_RESIDUAL_SPLIT: _residual_split,
    ops.LRP_BILINEAR_ELEMENTWISE: _bilinear_elementwise, ops.LRP_LINEAR: _linear,
    ops.LRP_BILINEAR_MATMUL: _bilinear_matmul, ops.LRP_SOFTMAX_ROWS: _softmax_rows,
    ops.LRP_ROPE: _rope, ops.LRP_CONV: _conv, ops.LRP_AVG_POOL: _avg_pool})
