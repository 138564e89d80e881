"""Fused logic ops on NumPy (the reference; rules in ops.py; see
docs/nn_logic.md). Every expression follows the kernels' order of operations
(fused_logic.cuh); sums over the k operands run in operand order."""
from __future__ import annotations

import numpy as np

from ...prims.fused_ops import makers
from . import ops

LOG2 = 0.6931471805599453094
HALF_LOG_2PI = 0.9189385332046727418


def _stab(z, eps):
    """z + eps * sign(z), sign(0) = +1 (the epsilon rule's denominator)."""
    return z + np.where(z >= 0, eps, -eps).astype(z.dtype)


def _first(x, largest: bool):
    """One-hot (k, ...) of the first max (min) along axis 0."""
    i = np.argmax(x, axis=0) if largest else np.argmin(x, axis=0)
    return np.arange(x.shape[0]).reshape((-1,) + (1,) * (x.ndim - 1)) == i


def _product_factors(x, is_or):
    one = x.dtype.type(1)
    return one - x if is_or else x


def _logic_forward(desc, dtypes, shapes, outs):
    norm, is_or = ops.logic_params(desc)

    def run(inputs, out):
        x = inputs[0]
        one, k = x.dtype.type(1), x.dtype.type(x.shape[0])
        if norm == "product":
            p = np.multiply.reduce(_product_factors(x, is_or), axis=0)
            out[...] = one - p if is_or else p
        elif norm == "lukasiewicz":
            s = np.add.reduce(x, axis=0)
            out[...] = np.minimum(s, one) if is_or else np.maximum(s - (k - one), 0)
        else:
            out[...] = np.max(x, axis=0) if is_or else np.min(x, axis=0)
    return run


def _logic_backward(desc, dtypes, shapes, outs):
    norm, is_or = ops.logic_params(desc)

    def run(inputs, out):
        x, g = inputs
        one, k = x.dtype.type(1), x.dtype.type(x.shape[0])
        if norm == "product":  # prod of the other factors: exclusive prefix * suffix
            f = _product_factors(x, is_or)
            ones = np.ones_like(f[:1])
            prefix = np.concatenate([ones, np.cumprod(f[:-1], axis=0)])
            suffix = np.concatenate([np.cumprod(f[:0:-1], axis=0)[::-1], ones])
            out[...] = g * (prefix * suffix)
        elif norm == "lukasiewicz":
            s = np.add.reduce(x, axis=0)
            active = s < one if is_or else s - (k - one) > 0
            out[...] = np.where(active, g, x.dtype.type(0))
        else:
            out[...] = np.where(_first(x, is_or), g, x.dtype.type(0))
    return run


def _logic_lrp(desc, dtypes, shapes, outs):
    norm, is_or = ops.logic_params(desc)
    lo = ops.log_tiny(outs[0][1])

    def run(inputs, out, eps=1e-6):
        ops.check_eps(desc.op, eps)
        x, r = inputs
        if norm == "minmax":
            out[...] = np.where(_first(x, is_or), r, x.dtype.type(0))
            return
        if norm == "product":  # log y (log(1 - y) for OR) = sum of the operands' logs
            with np.errstate(divide="ignore", invalid="ignore"):
                z = np.log1p(-x) if is_or else np.log(x)
            z = np.where(z < lo, lo, z)
        else:
            z = x
        q = r / _stab(np.add.reduce(z, axis=0), x.dtype.type(eps))
        out[...] = z * q
    return run


def _power_mean(x, p, mode):
    """(M, m): the power mean over axis 0 and the scale m (max for p > 0, min for p < 0)."""
    k = x.dtype.type(x.shape[0])
    if mode == 2:
        return np.max(x, axis=0), None
    if mode == 3:
        return np.min(x, axis=0), None
    if mode == 1:
        return np.exp(np.add.reduce(np.log(x), axis=0) / k), None
    pt = x.dtype.type(p)
    m = np.max(x, axis=0) if p > 0 else np.min(x, axis=0)
    s = np.add.reduce(np.power(x / m, pt), axis=0)
    return m * np.power(s / k, x.dtype.type(1) / pt), m


def _aggregator(desc, dtypes, shapes, outs):
    def run(inputs, out, p=1.0):
        ops.check_p(desc.op, p)
        out[...] = _power_mean(inputs[0], p, ops.p_mode(p))[0]
    return run


def _aggregator_backward(desc, dtypes, shapes, outs):
    def run(inputs, out, p=1.0):
        ops.check_p(desc.op, p)
        x, g = inputs
        mode = ops.p_mode(p)
        if mode >= 2:
            out[...] = np.where(_first(x, mode == 2), g, x.dtype.type(0))
            return
        M = _power_mean(x, p, mode)[0]
        k = x.dtype.type(x.shape[0])
        out[...] = g * (np.power(x / M, x.dtype.type(p) - 1) / k)
    return run


def _aggregator_lrp(desc, dtypes, shapes, outs):
    def run(inputs, out, p=1.0):
        ops.check_p(desc.op, p)
        x, r = inputs
        mode = ops.p_mode(p)
        if mode >= 2:
            out[...] = np.where(_first(x, mode == 2), r, x.dtype.type(0))
            return
        m = np.max(x, axis=0) if p >= 0 else np.min(x, axis=0)
        w = np.power(x / m, x.dtype.type(p))
        out[...] = w * (r / np.add.reduce(w, axis=0))
    return run


def _softplus(z):
    return np.maximum(z, 0) + np.log1p(np.exp(-np.abs(z)))


def _log_sech2(u):
    """log(1 - tanh(u)^2) = 2 (log 2 - u - softplus(-2u)), stable for large |u|."""
    t = u.dtype.type
    return t(2) * (t(LOG2) - u - _softplus(t(-2) * u))


def _tanh_gaussian(desc, dtypes, shapes, outs):
    def run(inputs, outs):
        mean, log_std, eps = inputs
        t = mean.dtype.type
        u = mean + np.exp(log_std) * eps
        outs[0][...] = np.tanh(u)
        term = ((t(-0.5) * eps) * eps - log_std) - t(HALF_LOG_2PI) - _log_sech2(u)
        outs[1][...] = np.sum(term.astype(np.float64), axis=1)
    return run


def _tanh_gaussian_backward(desc, dtypes, shapes, outs):
    def run(inputs, outs):
        mean, log_std, eps, g_action, g_logp = inputs
        t = mean.dtype.type
        se = np.exp(log_std) * eps
        u = mean + se
        gl = g_logp[:, None]
        gu = g_action * np.exp(_log_sech2(u)) + gl * (t(2) * np.tanh(u))
        outs[0][...] = gu
        outs[1][...] = gu * se - gl
    return run


def _check_actions(op, action, n):
    bad = np.flatnonzero((action < 0) | (action >= n))
    if bad.size:
        raise ops.bad_action(op, int(action[bad[0]]), n)


def _log_softmax(z):
    m = np.max(z, axis=1, keepdims=True)
    return z - (m + np.log(np.sum(np.exp(z - m), axis=1, keepdims=True)))


def _policy_gradient(desc, dtypes, shapes, outs):
    def run(inputs, out, entropy_coef=0.0):
        ops.check_entropy_coef(desc.op, entropy_coef)
        z, action, adv = inputs
        _check_actions(desc.op, action, z.shape[1])
        logp = _log_softmax(z)
        loss = -adv * logp[np.arange(z.shape[0]), action]
        if entropy_coef != 0:
            h = -np.sum(np.exp(logp) * logp, axis=1)
            loss = loss - z.dtype.type(entropy_coef) * h
        out[...] = loss
    return run


def _policy_gradient_backward(desc, dtypes, shapes, outs):
    def run(inputs, out, entropy_coef=0.0):
        ops.check_entropy_coef(desc.op, entropy_coef)
        z, action, adv, g = inputs
        _check_actions(desc.op, action, z.shape[1])
        logp = _log_softmax(z)
        p = np.exp(logp)
        a = adv[:, None]
        if entropy_coef != 0:
            h = -np.sum(p * logp, axis=1, keepdims=True)
            d = p * (a + z.dtype.type(entropy_coef) * (logp + h))
        else:
            d = p * a
        d[np.arange(z.shape[0]), action] -= adv
        out[...] = g[:, None] * d
    return run


def _td_target(desc, dtypes, shapes, outs):
    def run(inputs, out, gamma=0.99):
        ops.check_gamma(desc.op, gamma)
        reward, done, nxt = inputs
        t = reward.dtype.type
        v = np.max(nxt, axis=1) if nxt.ndim == 2 else nxt
        c = t(gamma) * (t(1) - done.astype(reward.dtype))
        with np.errstate(all="ignore"):  # terminal rows never read next (c == 0)
            out[...] = np.where(c == 0, reward, reward + c * v)
    return run


MAKERS = makers(ops.OPS, {
    ops.LOGIC_POINTWISE: _logic_forward, ops.LOGIC_POINTWISE_BACKWARD: _logic_backward,
    ops.LOGIC_POINTWISE_LRP: _logic_lrp, ops.AGGREGATOR: _aggregator,
    ops.AGGREGATOR_BACKWARD: _aggregator_backward, ops.AGGREGATOR_LRP: _aggregator_lrp,
    ops.TANH_GAUSSIAN: _tanh_gaussian, ops.TANH_GAUSSIAN_BACKWARD: _tanh_gaussian_backward,
    ops.POLICY_GRADIENT: _policy_gradient, ops.POLICY_GRADIENT_BACKWARD: _policy_gradient_backward,
    ops.TD_TARGET: _td_target})
