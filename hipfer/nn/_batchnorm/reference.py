"""Fused batchnorm ops on NumPy (the reference; rules in ops.py).

The formulas are written in the order the GPU kernels evaluate them, so that the two
backends differ by rounding only: y = (x - mean) * (invstd * gamma) + beta and
dx = invstd * (gamma * g - u - xhat * v) with u, v the means of gamma * g and
gamma * g * xhat over the values behind each statistic.
"""
from __future__ import annotations

from math import prod

import numpy as np

from ...prims.fused_ops import makers
from . import ops
from .ops import check_count, check_eps, check_momentum


def _geometry(shape):
    """x (N, C, *spatial): the reduced axes of a per-channel statistic, the (1, C, 1..)
    shape that broadcasts a channel vector, and the values per channel."""
    axes = (0,) + tuple(range(2, len(shape)))
    return axes, (1, shape[1]) + (1,) * (len(shape) - 2), prod(shape) // max(shape[1], 1)


def _moments(x, axes, count):
    """Mean and biased variance over axes (two passes); NaN for no values (as 0 / 0)."""
    if count == 0:
        nan = np.full(tuple(n for i, n in enumerate(x.shape) if i not in axes), np.nan, x.dtype)
        return nan, nan
    mean = x.mean(axis=axes, keepdims=True)
    d = x - mean
    return np.squeeze(mean, axes), np.mean(d * d, axis=axes)


def _invstd(var, eps):
    dt = var.dtype.type
    return dt(1) / np.sqrt(var + dt(eps))


def _batch_norm(desc, dtypes, shapes, outs):
    axes, bc, count = _geometry(shapes[0])

    def run(inputs, out, eps=1e-5):
        eps = check_eps(eps)
        x, gamma, beta = inputs[:3]
        y, mean, invstd, var = out
        mean[...], var[...] = _moments(x, axes, count)
        invstd[...] = _invstd(var, eps)
        y[...] = (x - mean.reshape(bc)) * (invstd * gamma).reshape(bc) + beta.reshape(bc)
    return run


def _batch_norm_running(desc, dtypes, shapes, outs):
    """batch_norm, then batch_norm_update_running's rule on inputs 3 and 4 (in place)."""
    forward = _batch_norm(desc, dtypes, shapes, outs)
    count = _geometry(shapes[0])[2]

    def run(inputs, out, eps=1e-5, momentum=0.1):
        check_momentum(momentum)
        forward(inputs, out, eps=eps)
        rm, rv = inputs[3:]
        _running(rm, rv, out[1], out[3], (rm, rv), momentum, count)
    return run


def _backward_dx(g, xhat, gamma_b, invstd_b, u, v):
    return invstd_b * (gamma_b * g - u - xhat * v)


def _batch_norm_backward(desc, dtypes, shapes, outs):
    axes, bc, count = _geometry(shapes[0])

    def run(inputs, out):
        g, x, mean, invstd, gamma = inputs
        dx, dgamma, dbeta = out
        xhat = (x - mean.reshape(bc)) * invstd.reshape(bc)
        dbeta[...] = g.sum(axis=axes)
        dgamma[...] = (g * xhat).sum(axis=axes)
        if count:
            inv = dx.dtype.type(1 / count)
            u, v = gamma * dbeta * inv, gamma * dgamma * inv
            dx[...] = _backward_dx(g, xhat, gamma.reshape(bc), invstd.reshape(bc),
                                   u.reshape(bc), v.reshape(bc))
    return run


def _running(running_mean, running_var, mean, var, out, momentum, count):
    m, count = check_momentum(momentum), check_count(count)
    dt = out[0].dtype.type
    keep, take, corr = dt(1 - m), dt(m), dt(count / (count - 1))
    out[0][...] = keep * running_mean + take * mean
    out[1][...] = keep * running_var + take * (var * corr)


def _update_running(desc, dtypes, shapes, outs):
    def run(inputs, out, momentum=0.1, count=None):
        _running(*inputs, out, momentum, count)
    return run


def _batch_norm_eval(desc, dtypes, shapes, outs):
    _, bc, _ = _geometry(shapes[0])

    def run(inputs, out, eps=1e-5):
        eps = check_eps(eps)
        x, gamma, beta, running_mean, running_var = inputs
        scale = _invstd(running_var, eps) * gamma
        out[...] = (x - running_mean.reshape(bc)) * scale.reshape(bc) + beta.reshape(bc)
    return run


def _batch_norm_eval_backward(desc, dtypes, shapes, outs):
    axes, bc, _ = _geometry(shapes[0])

    def run(inputs, out, eps=1e-5):
        eps = check_eps(eps)
        g, x, gamma, running_mean, running_var = inputs
        dx, dgamma, dbeta = out
        invstd = _invstd(running_var, eps)
        dx[...] = g * (gamma * invstd).reshape(bc)
        dbeta[...] = g.sum(axis=axes)
        dgamma[...] = (g * ((x - running_mean.reshape(bc)) * invstd.reshape(bc))).sum(axis=axes)
    return run


def _group_view(shape, groups):
    """x (N, C, *spatial) as (N, groups, C / groups, S), and the values per group."""
    n, c = shape[0], shape[1]
    s = prod(shape[2:])
    return (n, groups, c // groups, s), c // groups * s


def _group_norm(desc, dtypes, shapes, outs):
    groups = desc.get("groups")
    v4, count = _group_view(shapes[0], groups)

    def run(inputs, out, eps=1e-5):
        eps = check_eps(eps)
        x, gamma, beta = inputs
        y, mean, rstd = out
        x4 = x.reshape(v4)
        mean[...], var = _moments(x4, (2, 3), count)
        rstd[...] = _invstd(var, eps)
        g4, b4 = gamma.reshape(1, groups, -1, 1), beta.reshape(1, groups, -1, 1)
        y.reshape(v4)[...] = (x4 - mean[:, :, None, None]) * (rstd[:, :, None, None] * g4) + b4
    return run


def _group_norm_backward(desc, dtypes, shapes, outs):
    groups = shapes[2][1]
    v4, count = _group_view(shapes[0], groups)

    def run(inputs, out):
        g, x, mean, rstd, gamma = inputs
        dx, dgamma, dbeta = out
        g4, gm4 = g.reshape(v4), gamma.reshape(1, groups, -1, 1)
        rs4 = rstd[:, :, None, None]
        xhat = (x.reshape(v4) - mean[:, :, None, None]) * rs4
        dbeta.reshape(groups, -1)[...] = g4.sum(axis=(0, 3))
        dgamma.reshape(groups, -1)[...] = (g4 * xhat).sum(axis=(0, 3))
        if count:
            inv = dx.dtype.type(1 / count)
            h = gm4 * g4
            u = h.sum(axis=(2, 3), keepdims=True) * inv
            v = (h * xhat).sum(axis=(2, 3), keepdims=True) * inv
            dx.reshape(v4)[...] = _backward_dx(g4, xhat, gm4, rs4, u, v)
    return run


MAKERS = makers(ops.OPS, {
    ops.BATCH_NORM: _batch_norm, ops.BATCH_NORM_RUNNING: _batch_norm_running,
    ops.BATCH_NORM_BACKWARD: _batch_norm_backward, ops.BATCH_NORM_UPDATE_RUNNING: _update_running,
    ops.BATCH_NORM_EVAL: _batch_norm_eval, ops.BATCH_NORM_EVAL_BACKWARD: _batch_norm_eval_backward,
    ops.GROUP_NORM: _group_norm, ops.GROUP_NORM_BACKWARD: _group_norm_backward})
