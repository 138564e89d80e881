"""Fused activation ops on NumPy (the reference; rules in ops.py).

Each formula is evaluated in the same order as fused_activation.cuh, so
the two backends differ only by the math library (exp, tanh, log1p) and by the GPU
compiler's fused multiply-adds; the dropout mask is bit-identical, and so is its output
(a NaN's payload aside: NVIDIA's arithmetic returns the canonical NaN).
"""
from __future__ import annotations

import numpy as np

from ...backends.numpy._common import by_chunks
from ...prims import counter_rng
from ...prims.fused_ops import makers
from . import ops
from .ops import dropout_counters, dropout_scale


def sigmoid(x, out=None, work=None):
    """Overflow-free: exp only ever of -|x| (1 / (1 + e) for x >= 0, e / (1 + e) for
    x < 0); NaN stays NaN. The numerator is max(e, [x >= 0]) -- 1 where x >= 0, e where
    x < 0, since 0 <= e <= 1 -- which takes no masked ufunc (NumPy runs where= masks
    without SIMD, 40x slower), no np.where and no heaviside (as slow). work: two arrays
    like x for the temporaries (by_chunks' scratch), else they are allocated."""
    if work is None:
        e = np.asarray(np.abs(x))  # 0-d: a writable array, not a scalar
        num = np.empty_like(e)
    else:
        e, num = work
        np.abs(x, out=e)
    np.negative(e, out=e)
    np.exp(e, out=e)
    out = np.empty_like(e) if out is None else out
    np.add(e, 1, out=out)                      # 1 + e
    np.greater_equal(x, 0, out=num)            # 1.0 where x >= 0, else 0.0 (NaN too)
    np.maximum(num, e, out=num)                # a NaN e stays NaN
    return np.divide(num, out, out=out)


_MAX_IS_RELU: dict = {}  # dtype -> whether np.maximum(x, 0) is relu already


def _max_is_relu(dt: np.dtype) -> bool:
    """Whether this NumPy's maximum(x, 0) already gives +0 for -0.0 and passes NaN for
    dtype dt, on every loop (SIMD bodies, scalar tails, strided): then relu is one pass.
    NumPy 2's float32 / float64 loops do; its float16 keeps the -0.0."""
    ok = _MAX_IS_RELU.get(dt)
    if ok is None:
        zero, ok = dt.type(0), True
        for n in (1, 2, 3, 7, 8, 9, 16, 17, 33, 64, 130):
            a = np.full(2 * n, -0.0, dt)
            a[n] = np.nan
            for v in (a, a[::2]):
                m = np.maximum(v, zero)
                nan = np.isnan(v)
                ok = ok and bool(np.isnan(m[nan]).all() and not np.signbit(m[~nan]).any())
        _MAX_IS_RELU[dt] = ok
    return ok


def _relu(x, out=None):
    """x where x > 0, else +0 (NaN passes, -0.0 becomes +0): max, then + 0.0 (which
    turns a -0.0 that max kept into +0.0 and changes nothing else) unless max does that
    already (_max_is_relu)."""
    out = np.asarray(np.maximum(x, x.dtype.type(0), out=out))  # 0-d: an array, not a scalar
    if x.dtype.kind == "f" and _max_is_relu(x.dtype):
        return out
    return np.add(out, x.dtype.type(0), out=out)


def _silu(x, out=None, work=None):
    s = sigmoid(x, out, work)
    return np.multiply(x, s, out=s)


def _with_out(f):
    return lambda x, out=None: f(x, out=out)


_WORKED = (sigmoid, _silu)  # take work= (two temporaries like x)

FORWARD = {
    "relu": _relu,
    "tanh": _with_out(np.tanh),
    "sigmoid": sigmoid,
    "silu": _silu,
    "exp": _with_out(np.exp),
    "neg": _with_out(np.negative),
}

# grad * f'(.) from the saved tensor v (x or y: BACKWARD_ARG in the op table)
BACKWARD = {
    "relu": lambda g, x: np.where(x > 0, g, g.dtype.type(0)),
    "silu": lambda g, x: g * (sigmoid(x) * (1 + x * (1 - sigmoid(x)))),
    "tanh": lambda g, y: g * (1 - y * y),
    "sigmoid": lambda g, y: g * (y * (1 - y)),
    "exp": lambda g, y: g * y,
}


def _activation(desc, dtypes, shapes, outs):
    f = FORWARD[desc.get("name")]

    def run(inputs, out):
        with np.errstate(all="ignore"):  # exp overflow, inf - inf: IEEE results wanted
            x = inputs[0]
            if out.dtype == x.dtype and out.shape == x.shape and not np.shares_memory(x, out):
                by_chunks(f, (x,), out, work=2 if f in _WORKED else 0)  # the passes in cache
            else:
                out[...] = f(x)
    return run


def _activation_backward(desc, dtypes, shapes, outs):
    f = BACKWARD[desc.get("name")]

    def run(inputs, out):
        with np.errstate(all="ignore"):
            out[...] = f(*inputs)
    return run


def _dropout(desc, dtypes, shapes, outs):
    def run(inputs, out, p, seed, offset=0):
        (x,), (y, mask) = inputs, out
        scale = y.dtype.type(dropout_scale(p))
        seed, offset = dropout_counters(seed, offset)
        u = counter_rng.uniform(seed, offset, x.size, np.float32).reshape(x.shape)
        np.greater_equal(u.astype(np.float64), float(p), out=mask)  # dropped iff u < p, exactly
        with np.errstate(all="ignore"):
            y[...] = np.where(mask, x * scale, y.dtype.type(0))  # a dropped inf/NaN gives 0
    return run


def _dropout_backward(desc, dtypes, shapes, outs):
    def run(inputs, out, p):
        g, mask = inputs
        scale = out.dtype.type(dropout_scale(p))
        with np.errstate(all="ignore"):
            out[...] = np.where(mask, g * scale, out.dtype.type(0))
    return run


def bce_loss(x, y):
    return (np.maximum(x, 0) - x * y) + np.log1p(np.exp(-np.abs(x)))


def _bce(desc, dtypes, shapes, outs):
    mean = desc.get("reduction", "none") == "mean"

    def run(inputs, out):
        with np.errstate(all="ignore"):
            loss = bce_loss(*inputs)
            out[...] = (loss.sum() / loss.size if loss.size else np.nan) if mean else loss
    return run


def _bce_backward(desc, dtypes, shapes, outs):
    mean = desc.get("reduction", "none") == "mean"

    def run(inputs, out):
        g, x, y = inputs
        with np.errstate(all="ignore"):
            if mean:
                g = g / out.dtype.type(x.size)
            out[...] = g * (sigmoid(x) - y)
    return run


MAKERS = makers(ops.OPS, {
    ops.ACTIVATION: _activation, ops.ACTIVATION_BACKWARD: _activation_backward,
    ops.DROPOUT: _dropout, ops.DROPOUT_BACKWARD: _dropout_backward, ops.BCE_WITH_LOGITS: _bce,
    ops.BCE_WITH_LOGITS_BACKWARD: _bce_backward})
