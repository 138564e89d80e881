"""Fused BLAS-like ops on NumPy (the reference; rules in ops.py)."""
from __future__ import annotations

import numpy as np

from ...prims.fused_ops import makers
from . import ops
from .ops import adam_scalars


def _axpby(desc, dtypes, shapes, outs):
    def run(inputs, out, alpha=1.0, beta=1.0):
        x, y = inputs
        dt = out.dtype.type
        if beta == 0:  # y is never read: a NaN or inf there does not leak
            np.multiply(x, dt(alpha), out=out)
        else:
            np.add(np.multiply(x, dt(alpha)), np.multiply(y, dt(beta)), out=out)
    return run


def _sum(desc, dtypes, shapes, outs):
    def run(inputs, out):
        out[...] = np.sum(inputs[0], dtype=out.dtype)
    return run


def _dot(desc, dtypes, shapes, outs):
    def run(inputs, out):  # NumPy's pairwise sum: a fixed order, unlike a threaded BLAS dot
        out[...] = np.sum(np.multiply(*inputs), dtype=out.dtype)
    return run


def _reduce_into(axis, beta_default):
    """make for out = sum(x, axis) + beta * out; beta == 0 never reads out."""
    def make(desc, dtypes, shapes, outs):
        def run(inputs, out, beta=beta_default):
            s = np.sum(inputs[0], axis=axis, dtype=out.dtype)
            if beta == 0:
                out[...] = s
            else:
                np.add(s, np.multiply(out, out.dtype.type(beta)), out=out)
        return run
    return make


def _add_vector(desc, dtypes, shapes, outs):
    """x + v along axis 1 (the columns of a matrix, the channels of NCHW); out may be x."""
    trailing = (1,) * (len(shapes[0]) - 2)

    def run(inputs, out):
        x, v = inputs
        np.add(x, v.reshape(v.shape + trailing), out=out)
    return run


def _adam_step(desc, dtypes, shapes, outs):
    def run(inputs, outs, **scalars):
        step, b1, omb1, b2, omb2, sqrt_bc2, eps, wd = (
            outs[0].dtype.type(s) for s in adam_scalars(**scalars))
        param, grad, m, v = inputs
        param_out, m_out, v_out = outs  # the inputs themselves when in place
        with np.errstate(all="ignore"):
            g = grad if wd == 0 else grad + wd * param
            np.add(b1 * m, omb1 * g, out=m_out)
            np.add(b2 * v, (omb2 * g) * g, out=v_out)
            denom = np.sqrt(v_out) / sqrt_bc2 + eps
            np.subtract(param, (step * m_out) / denom, out=param_out)
    return run


MAKERS = makers(ops.OPS, {
    ops.AXPBY: _axpby, ops.SUM: _sum, ops.DOT: _dot, ops.COLUMN_SUMS: _reduce_into(0, 0.0),
    ops.ACCUMULATE_ROWS: _reduce_into(1, 1.0), ops.ADD_ROW_VECTOR: _add_vector,
    ops.ADD_CHANNEL_VECTOR: _add_vector, ops.ADAM_STEP: _adam_step})
