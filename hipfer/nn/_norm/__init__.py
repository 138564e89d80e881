"""hipfer.nn, norm ops (FusedPrims; rules in ops.py).

Operands are rows along the last axis: shape (..., cols). Per-row results have the
leading shape (...); gamma, beta and their gradients have shape (cols,).
"""
from __future__ import annotations

from .._common import fused, tensor, writable
from . import ops

__all__ = ["softmax_rows", "softmax_rows_backward", "logsumexp_rows", "layer_norm",
           "layer_norm_backward", "rms_norm", "rms_norm_backward"]


def softmax_rows(x, out=None):
    """exp(x - max) / sum(exp(x - max)) over the last axis. out: a C-contiguous Tensor of
    x's shape and dtype to write (out=x runs in place); returns out, or a new Tensor."""
    if out is None:
        return fused(ops.SOFTMAX_ROWS, [tensor(x, "softmax_rows")])
    out = writable(out, "softmax_rows", "out")
    x = tensor(x, "softmax_rows")
    if out.device != x.device:
        raise ValueError(f"softmax_rows(): out is on {out.device}, x on {x.device}")
    if out.dtype != x.dtype:
        raise TypeError(f"softmax_rows(): out has dtype {out.dtype}, x has {x.dtype}")
    if out.shape != x.shape:
        raise ValueError(f"softmax_rows(): out has shape {out.shape}, x has {x.shape}")
    return fused(ops.SOFTMAX_ROWS, [x], out=out)


def softmax_rows_backward(grad, y):
    """The gradient of softmax_rows from its output y: y * (grad - sum(grad * y, row))."""
    return fused(ops.SOFTMAX_ROWS_BACKWARD, [tensor(grad, "softmax_rows_backward", "grad"),
                                             tensor(y, "softmax_rows_backward", "y")])


def logsumexp_rows(x):
    """log(sum(exp(x))) over the last axis, max-subtracted; shape x.shape[:-1]. A row whose
    max is not finite gives that max: all -inf -> -inf, a +inf -> +inf, a NaN -> NaN."""
    return fused(ops.LOGSUMEXP_ROWS, [tensor(x, "logsumexp_rows")])


def layer_norm(x, gamma, beta, *, eps=1e-5):
    """Layer norm over the last axis: xhat = (x - mean) / std with std = sqrt(var + eps)
    (biased variance), y = xhat * gamma + beta. Returns (y, xhat, std), xhat and std
    being what layer_norm_backward takes."""
    name = "layer_norm"
    return fused(ops.LAYER_NORM, [tensor(x, name), tensor(gamma, name, "gamma"),
                                  tensor(beta, name, "beta")], eps=float(eps))


def layer_norm_backward(grad, xhat, std, gamma):
    """(dx, dgamma, dbeta) of layer_norm from the output gradient grad, the saved xhat and
    std, and gamma; dgamma and dbeta are summed over rows in a fixed order."""
    name = "layer_norm_backward"
    return fused(ops.LAYER_NORM_BACKWARD, [tensor(grad, name, "grad"), tensor(xhat, name, "xhat"),
                                           tensor(std, name, "std"), tensor(gamma, name, "gamma")])


def rms_norm(x, gamma, *, eps=1e-6):
    """RMS norm over the last axis: rms = sqrt(mean(x^2) + eps), y = x / rms * gamma.
    Returns (y, rms), rms being what rms_norm_backward takes."""
    name = "rms_norm"
    return fused(ops.RMS_NORM, [tensor(x, name), tensor(gamma, name, "gamma")], eps=float(eps))


def rms_norm_backward(grad, x, rms, gamma):
    """(dx, dgamma) of rms_norm from the output gradient grad, x, the saved rms and gamma."""
    name = "rms_norm_backward"
    return fused(ops.RMS_NORM_BACKWARD, [tensor(grad, name, "grad"), tensor(x, name, "x"),
                                         tensor(rms, name, "rms"), tensor(gamma, name, "gamma")])
