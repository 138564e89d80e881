"""Fused ops, norm: shape and dtype rules (see hipfer.prims.fused_ops).

Every operand is a batch of rows: shape (..., cols), rows = the product of the leading
dims (a 1-d operand is one row). Per-row results have the leading shape (...); per-column
ones (gamma, beta, their gradients) have shape (cols,).
"""
from __future__ import annotations

import math

from ...prims.fused_ops import FusedOpDef, floats, same


def _rows(desc, shape, what: str = "x") -> tuple:
    if len(shape) < 1:
        raise ValueError(f"{desc!r}: {what} must be at least 1-d (rows of the last axis), "
                         f"got shape {tuple(shape)}")
    return tuple(shape[:-1])


def _nonempty_rows(desc, shape) -> tuple:
    lead = _rows(desc, shape)
    if shape[-1] == 0:
        raise ValueError(f"{desc!r}: rows must have at least one column to normalise, "
                         f"got shape {tuple(shape)}")
    return lead


def _per_column(desc, shape, cols: int, what: str) -> None:
    if tuple(shape) != (cols,):
        raise ValueError(f"{desc!r}: {what} must have shape ({cols},) (one per column), "
                         f"got {tuple(shape)}")


def _per_row(desc, shape, lead: tuple, what: str) -> None:
    if tuple(shape) != lead:
        raise ValueError(f"{desc!r}: {what} must have the leading shape {lead} (one per row), "
                         f"got {tuple(shape)}")


def eps_value(desc, eps) -> float:
    """The runtime eps of the norms, validated (both backends' run call this)."""
    eps = float(eps)
    if not (math.isfinite(eps) and eps >= 0):
        raise ValueError(f"{desc!r}: eps must be finite and >= 0, got {eps}")
    return eps


# ----------------------------------------------------------------------------- rules
def _softmax_rows(desc, dtypes, shapes):
    dt = floats(desc, dtypes)
    _rows(desc, shapes[0])
    return ((shapes[0], dt),)


def _softmax_rows_backward(desc, dtypes, shapes):
    dt = floats(desc, dtypes)
    _rows(desc, shapes[0], "grad")
    same(desc, shapes[0], shapes[1], "grad and y")
    return ((shapes[0], dt),)


def _logsumexp_rows(desc, dtypes, shapes):
    dt = floats(desc, dtypes)
    return ((_rows(desc, shapes[0]), dt),)


def _layer_norm(desc, dtypes, shapes):
    dt = floats(desc, dtypes)
    x, gamma, beta = shapes
    lead = _nonempty_rows(desc, x)
    _per_column(desc, gamma, x[-1], "gamma")
    _per_column(desc, beta, x[-1], "beta")
    return ((x, dt), (x, dt), (lead, dt))


def _layer_norm_backward(desc, dtypes, shapes):
    dt = floats(desc, dtypes)
    grad, xhat, std, gamma = shapes
    lead = _nonempty_rows(desc, grad)
    same(desc, grad, xhat, "grad and xhat")
    _per_row(desc, std, lead, "std")
    _per_column(desc, gamma, grad[-1], "gamma")
    return ((grad, dt), (gamma, dt), (gamma, dt))


def _rms_norm(desc, dtypes, shapes):
    dt = floats(desc, dtypes)
    x, gamma = shapes
    lead = _nonempty_rows(desc, x)
    _per_column(desc, gamma, x[-1], "gamma")
    return ((x, dt), (lead, dt))


def _rms_norm_backward(desc, dtypes, shapes):
    dt = floats(desc, dtypes)
    grad, x, rms, gamma = shapes
    lead = _nonempty_rows(desc, grad)
    same(desc, grad, x, "grad and x")
    _per_row(desc, rms, lead, "rms")
    _per_column(desc, gamma, grad[-1], "gamma")
    return ((grad, dt), (gamma, dt))


_ROW = ((2, 3),)
SOFTMAX_ROWS = FusedOpDef(
    "softmax_rows", 1, _softmax_rows, lambda desc: _ROW, {},
    "y = exp(x - max) / sum(exp(x - max)) over the last axis; may run in place "
    "(out is x)")
SOFTMAX_ROWS_BACKWARD = FusedOpDef(
    "softmax_rows_backward", 2, _softmax_rows_backward,
    lambda desc: _ROW * 2, {},
    "dx = y * (grad - sum(grad * y)) per row, from the forward output y")
LOGSUMEXP_ROWS = FusedOpDef(
    "logsumexp_rows", 1, _logsumexp_rows, lambda desc: _ROW, {},
    "max + log(sum(exp(x - max))) over the last axis; a row whose max is not "
    "finite gives that max (all -inf -> -inf, +inf -> +inf, NaN -> NaN); no "
    "columns -> -inf")
LAYER_NORM = FusedOpDef(
    "layer_norm", 3, _layer_norm, lambda desc: ((2, 3), (3,), (3,)), {"eps": 1e-5},
    "xhat = (x - mean) / std, std = sqrt(var + eps) (biased var); "
    "y = xhat * gamma + beta; returns (y, xhat, std)")
LAYER_NORM_BACKWARD = FusedOpDef(
    "layer_norm_backward", 4, _layer_norm_backward,
    lambda desc: ((2, 3), (2, 3), (2,), (3,)), {},
    "(dx, dgamma, dbeta) of layer_norm from grad, the saved xhat and std, and "
    "gamma; dgamma and dbeta are summed over rows in a fixed order")
RMS_NORM = FusedOpDef(
    "rms_norm", 2, _rms_norm, lambda desc: ((2, 3), (3,)), {"eps": 1e-6},
    "rms = sqrt(mean(x^2) + eps); y = x / rms * gamma; returns (y, rms)")
RMS_NORM_BACKWARD = FusedOpDef(
    "rms_norm_backward", 4, _rms_norm_backward,
    lambda desc: ((2, 3), (2, 3), (2,), (3,)), {},
    "(dx, dgamma) of rms_norm from grad, x, the saved rms and gamma")

#: every row of this topic (the op table loads it; MAKERS cover exactly these)
OPS = (SOFTMAX_ROWS, SOFTMAX_ROWS_BACKWARD, LOGSUMEXP_ROWS, LAYER_NORM, LAYER_NORM_BACKWARD,
       RMS_NORM, RMS_NORM_BACKWARD)
