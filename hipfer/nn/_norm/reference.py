"""Fused norm ops on NumPy (the reference; rules in ops.py).

Operands are viewed as (rows, cols) (they are C-contiguous); math runs in the operand
dtype, as on the GPU.
"""
from __future__ import annotations

import numpy as np

from ...prims.fused_ops import makers
from . import ops
from .ops import eps_value


def _2d(a, cols: int):  # the norms have cols >= 1
    return a.reshape(-1, cols)


def _softmax_rows(desc, dtypes, shapes, outs):
    def run(inputs, out):
        x = inputs[0]
        if x.size == 0:
            return
        m = x.max(axis=-1, keepdims=True)
        with np.errstate(invalid="ignore"):  # inf - inf: the row is NaN, as on the GPU
            np.subtract(x, m, out=out)      # out may be x
            np.exp(out, out=out)
            out /= out.sum(axis=-1, keepdims=True)
    return run


def _softmax_rows_backward(desc, dtypes, shapes, outs):
    def run(inputs, out):
        grad, y = inputs
        dot = np.sum(grad * y, axis=-1, keepdims=True)
        np.multiply(y, grad - dot, out=out)
    return run


def _logsumexp_rows(desc, dtypes, shapes, outs):
    cols = shapes[0][-1]

    def run(inputs, out):
        x = inputs[0]
        if cols == 0:
            out[...] = -np.inf
            return
        m = x.max(axis=-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            s = np.exp(x - m[..., None]).sum(axis=-1)
            out[...] = np.where(np.isfinite(m), m + np.log(s), m)
    return run


def _layer_norm(desc, dtypes, shapes, outs):
    def run(inputs, out, eps=1e-5):
        x, gamma, beta = inputs
        y, xhat, std = out
        dt = x.dtype.type
        eps = dt(eps_value(desc, eps))
        # the outputs hold the intermediates (no full-size temporaries: allocating them
        # cost more than the arithmetic); the values are those of the plain formula
        mean = x.mean(axis=-1, keepdims=True)
        d = np.subtract(x, mean, out=xhat)
        sq = np.multiply(d, d, out=y)
        np.sqrt(np.mean(sq, axis=-1) + eps, out=std)
        np.divide(d, std[..., None], out=xhat)
        np.multiply(xhat, gamma, out=y)
        np.add(y, beta, out=y)
    return run


def _layer_norm_backward(desc, dtypes, shapes, outs):
    cols = shapes[0][-1]

    def run(inputs, out):
        grad, xhat, std, gamma = inputs
        dx, dgamma, dbeta = out
        g = grad * gamma
        a = g.mean(axis=-1, keepdims=True)
        b = np.mean(g * xhat, axis=-1, keepdims=True)
        np.divide(g - a - xhat * b, std[..., None], out=dx)
        np.sum(_2d(grad * xhat, cols), axis=0, out=dgamma)
        np.sum(_2d(grad, cols), axis=0, out=dbeta)
    return run


def _rms_norm(desc, dtypes, shapes, outs):
    def run(inputs, out, eps=1e-6):
        x, gamma = inputs
        y, rms = out
        eps = x.dtype.type(eps_value(desc, eps))
        np.sqrt(np.mean(x * x, axis=-1) + eps, out=rms)
        np.multiply(x / rms[..., None], gamma, out=y)
    return run


def _rms_norm_backward(desc, dtypes, shapes, outs):
    cols = shapes[0][-1]

    def run(inputs, out):
        grad, x, rms, gamma = inputs
        dx, dgamma = out
        r = rms[..., None]
        g = grad * gamma
        dot = np.sum(g * x, axis=-1, keepdims=True)  # the per-row gamma term
        np.subtract(g / r, x * (dot / (cols * r * r * r)), out=dx)
        np.sum(_2d(grad * (x / r), cols), axis=0, out=dgamma)
    return run


MAKERS = makers(ops.OPS, {
    ops.SOFTMAX_ROWS: _softmax_rows, ops.SOFTMAX_ROWS_BACKWARD: _softmax_rows_backward,
    ops.LOGSUMEXP_ROWS: _logsumexp_rows, ops.LAYER_NORM: _layer_norm,
    ops.LAYER_NORM_BACKWARD: _layer_norm_backward, ops.RMS_NORM: _rms_norm,
    ops.RMS_NORM_BACKWARD: _rms_norm_backward})
