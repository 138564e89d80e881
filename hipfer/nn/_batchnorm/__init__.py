"""hipfer.nn, batchnorm ops (FusedPrims; rules in ops.py).

x is (N, C, *spatial), spatial possibly empty; gamma, beta and the per-channel
statistics are (C,). Batch norm normalises each channel over N * prod(spatial) values,
group norm each (sample, group of C / groups channels) over C / groups * prod(spatial).
"""
from __future__ import annotations

import operator

from .._common import fused, tensor, writable
from . import ops

__all__ = ["batch_norm", "batch_norm_backward", "batch_norm_update_running",
           "batch_norm_eval", "batch_norm_eval_backward", "group_norm", "group_norm_backward"]


def _tensors(name, **named):
    return [tensor(t, name, what) for what, t in named.items()]


def batch_norm(x, gamma, beta, *, eps=1e-5, running_mean=None, running_var=None,
               momentum=0.1):
    """Training forward with the batch's statistics:
    y = (x - mean) * invstd * gamma + beta, invstd = 1 / sqrt(var + eps).
    Returns (y, mean, invstd, var), var biased; batch_norm_backward takes mean and invstd,
    batch_norm_update_running mean and var.

    With running_mean and running_var (both or neither: C-contiguous (C,) tensors of x's
    dtype) they are also updated in place, in the same pass, by batch_norm_update_running's
    rule with this momentum and count = N * prod(spatial) (at least 2)."""
    name = "batch_norm"
    inputs = _tensors(name, x=x, gamma=gamma, beta=beta)
    if running_mean is None and running_var is None:
        return fused(ops.BATCH_NORM, inputs, eps=float(eps))
    if running_mean is None or running_var is None:
        raise ValueError(f"{name}(): pass both running_mean and running_var, or neither")
    inputs += [writable(running_mean, name, "running_mean"),
               writable(running_var, name, "running_var")]
    return fused(ops.BATCH_NORM_RUNNING, inputs, eps=float(eps), momentum=float(momentum))


def batch_norm_backward(grad, x, mean, invstd, gamma):
    """Gradients of batch_norm for the cotangent grad of y: (dx, dgamma, dbeta); mean and
    invstd are what batch_norm returned."""
    return fused(ops.BATCH_NORM_BACKWARD,
                 _tensors("batch_norm_backward", grad=grad, x=x, mean=mean, invstd=invstd,
                          gamma=gamma))


def batch_norm_update_running(running_mean, running_var, mean, var, *, momentum=0.1, count):
    """PyTorch's running statistics, in place: running = (1 - momentum) * running
    + momentum * batch, where the batch variance is made unbiased, var * count / (count - 1);
    count is the number of values per channel behind mean and var (N * prod(spatial) of
    x, at least 2). Returns (running_mean, running_var)."""
    name = "batch_norm_update_running"
    rm = writable(running_mean, name, "running_mean")
    rv = writable(running_var, name, "running_var")
    m, v = _tensors(name, mean=mean, var=var)
    return fused(ops.BATCH_NORM_UPDATE_RUNNING, [rm, rv, m, v], out=(rm, rv),
                 momentum=float(momentum), count=count)


def batch_norm_eval(x, gamma, beta, running_mean, running_var, *, eps=1e-5):
    """Inference forward with running statistics:
    y = (x - running_mean) / sqrt(running_var + eps) * gamma + beta."""
    return fused(ops.BATCH_NORM_EVAL,
                 _tensors("batch_norm_eval", x=x, gamma=gamma, beta=beta,
                          running_mean=running_mean, running_var=running_var), eps=float(eps))


def batch_norm_eval_backward(grad, x, gamma, running_mean, running_var, *, eps=1e-5):
    """Gradients of batch_norm_eval for the cotangent grad of y: (dx, dgamma, dbeta).
    x is needed for dgamma only; the statistics are constants here."""
    return fused(ops.BATCH_NORM_EVAL_BACKWARD,
                 _tensors("batch_norm_eval_backward", grad=grad, x=x, gamma=gamma,
                          running_mean=running_mean, running_var=running_var), eps=float(eps))


def group_norm(x, gamma, beta, *, groups, eps=1e-5):
    """Group norm: channels split into groups of C / groups (C % groups == 0); statistics
    per (sample, group). Returns (y, mean, rstd), mean and rstd of shape (N, groups)."""
    try:
        groups = operator.index(groups)
    except TypeError:
        raise TypeError(f"group_norm(): groups must be an int, "
                        f"got {type(groups).__name__}") from None
    return fused(ops.GROUP_NORM, _tensors("group_norm", x=x, gamma=gamma, beta=beta),
                 params={"groups": groups}, eps=float(eps))


def group_norm_backward(grad, x, mean, rstd, gamma):
    """Gradients of group_norm for the cotangent grad of y: (dx, dgamma, dbeta); mean and
    rstd are what group_norm returned (the groups are their second axis)."""
    return fused(ops.GROUP_NORM_BACKWARD,
                 _tensors("group_norm_backward", grad=grad, x=x, mean=mean, rstd=rstd,
                          gamma=gamma))
