"""Fused ops, batchnorm: shape and dtype rules (see hipfer.prims.fused_ops).

x is (N, C, *spatial) (spatial may be empty); per-channel operands are (C,). Batch norm
takes its statistics per channel over N * prod(spatial) values, group norm per (sample,
group) over C / groups * prod(spatial) values; both are biased (divide by the count).
"""
from __future__ import annotations

from math import prod

from ...prims.fused_ops import FusedOpDef, floats, ndim, same


def _x(desc, shape, what="x"):
    if len(shape) < 2:
        raise ValueError(f"{desc!r}: {what} must be (N, C, *spatial), got shape {shape}")
    return shape[1]


def _channel(desc, shape, c, what):
    if tuple(shape) != (c,):
        raise ValueError(f"{desc!r}: {what} must have shape ({c},) (one value per channel "
                         f"of x), got {tuple(shape)}")


def _groups(desc, c, groups):
    if not isinstance(groups, int) or isinstance(groups, bool) or groups < 1:
        raise ValueError(f"{desc!r}: groups must be a positive int, got {groups!r}")
    if c % groups:
        raise ValueError(f"{desc!r}: the {c} channels do not split into {groups} groups "
                         "(C % groups != 0)")


def _batch_norm(desc, dtypes, shapes):
    dt = floats(desc, dtypes)
    c = _x(desc, shapes[0])
    _channel(desc, shapes[1], c, "gamma")
    _channel(desc, shapes[2], c, "beta")
    return ((shapes[0], dt), ((c,), dt), ((c,), dt), ((c,), dt))


def _batch_norm_running(desc, dtypes, shapes):
    floats(desc, dtypes)  # the running statistics too have x's dtype
    outs = _batch_norm(desc, dtypes[:3], shapes[:3])
    c = shapes[0][1]
    _channel(desc, shapes[3], c, "running_mean")
    _channel(desc, shapes[4], c, "running_var")
    check_count(shapes[0][0] * prod(shapes[0][2:]))  # the unbiased batch variance
    return outs


def _batch_norm_backward(desc, dtypes, shapes):
    dt = floats(desc, dtypes)
    same(desc, shapes[0], shapes[1], "grad and x")
    c = _x(desc, shapes[1])
    for s, what in zip(shapes[2:], ("mean", "invstd", "gamma")):
        _channel(desc, s, c, what)
    return ((shapes[1], dt), ((c,), dt), ((c,), dt))


def _update_running(desc, dtypes, shapes):
    dt = floats(desc, dtypes)
    ndim(desc, shapes[0], 1, "running_mean")
    c = shapes[0][0]
    for s, what in zip(shapes[1:], ("running_var", "mean", "var")):
        _channel(desc, s, c, what)
    return (((c,), dt), ((c,), dt))


def _batch_norm_eval(desc, dtypes, shapes):
    dt = floats(desc, dtypes)
    c = _x(desc, shapes[0])
    for s, what in zip(shapes[1:], ("gamma", "beta", "running_mean", "running_var")):
        _channel(desc, s, c, what)
    return ((shapes[0], dt),)


def _batch_norm_eval_backward(desc, dtypes, shapes):
    dt = floats(desc, dtypes)
    same(desc, shapes[0], shapes[1], "grad and x")
    c = _x(desc, shapes[1])
    for s, what in zip(shapes[2:], ("gamma", "running_mean", "running_var")):
        _channel(desc, s, c, what)
    return ((shapes[1], dt), ((c,), dt), ((c,), dt))


def _group_norm(desc, dtypes, shapes):
    dt = floats(desc, dtypes)
    c = _x(desc, shapes[0])
    n = shapes[0][0]
    groups = desc.get("groups")
    _groups(desc, c, groups)
    _channel(desc, shapes[1], c, "gamma")
    _channel(desc, shapes[2], c, "beta")
    return ((shapes[0], dt), ((n, groups), dt), ((n, groups), dt))


def _group_norm_backward(desc, dtypes, shapes):
    dt = floats(desc, dtypes)
    same(desc, shapes[0], shapes[1], "grad and x")
    c = _x(desc, shapes[1])
    n = shapes[1][0]
    ndim(desc, shapes[2], 2, "mean")
    if shapes[2][0] != n:
        raise ValueError(f"{desc!r}: mean must be (N, groups) with N = {n}, got {shapes[2]}")
    _groups(desc, c, shapes[2][1])
    same(desc, shapes[2], shapes[3], "mean and rstd")
    _channel(desc, shapes[4], c, "gamma")
    return ((shapes[1], dt), ((c,), dt), ((c,), dt))


BATCH_NORM = FusedOpDef(
    "batch_norm", 3, _batch_norm, lambda desc: ((1, 1), (1,), (1,)), {"eps": 1e-5},
    "training forward: x, gamma, beta -> y = (x - mean) * invstd * gamma + beta, "
    "mean, invstd = 1 / sqrt(var + eps), var (biased), per channel")
BATCH_NORM_RUNNING = FusedOpDef(
    "batch_norm_running", 5, _batch_norm_running,
    lambda desc: ((2, 1), (1,), (1,), (1,), (1,)), {"eps": 1e-5, "momentum": 0.1},
    "batch_norm, and in the same pass x, gamma, beta, running_mean, running_var: the "
    "running statistics updated in place as batch_norm_update_running does (count "
    "= N * prod(spatial), at least 2)")
BATCH_NORM_BACKWARD = FusedOpDef(
    "batch_norm_backward", 5, _batch_norm_backward,
    lambda desc: ((1, 1), (1, 1), (1,), (1,), (1,)), {},
    "grad, x, mean, invstd, gamma -> dx, dgamma, dbeta (batch statistics)")
BATCH_NORM_UPDATE_RUNNING = FusedOpDef(
    "batch_norm_update_running", 4, _update_running,
    lambda desc: ((1,), (1,), (1,), (1,)), {"momentum": 0.1, "count": None},
    "running_mean, running_var, mean, var -> running = (1 - momentum) * running "
    "+ momentum * batch, the variance unbiased (var * count / (count - 1)); in "
    "place when out is (running_mean, running_var)")
BATCH_NORM_EVAL = FusedOpDef(
    "batch_norm_eval", 5, _batch_norm_eval,
    lambda desc: ((1, 1), (1,), (1,), (1,), (1,)), {"eps": 1e-5},
    "x, gamma, beta, running_mean, running_var -> y (running statistics)")
BATCH_NORM_EVAL_BACKWARD = FusedOpDef(
    "batch_norm_eval_backward", 5, _batch_norm_eval_backward,
    lambda desc: ((1, 1), (1, 1), (1,), (1,), (1,)), {"eps": 1e-5},
    "grad, x, gamma, running_mean, running_var -> dx, dgamma, dbeta")
GROUP_NORM = FusedOpDef(
    "group_norm", 3, _group_norm,
    lambda desc: ((1, desc.get("groups", 1)), (desc.get("groups", 1),),
                  (desc.get("groups", 1),)), {"eps": 1e-5},
    "x, gamma, beta -> y, mean, rstd ((N, groups): statistics per sample and "
    "group of C / groups channels)")
GROUP_NORM_BACKWARD = FusedOpDef(
    "group_norm_backward", 5, _group_norm_backward,
    lambda desc: ((1, 1), (1, 1), (1, 1), (1, 1), (1,)), {},
    "grad, x, mean, rstd, gamma -> dx, dgamma, dbeta (groups from mean's shape)")

#: every row of this topic (the op table loads it; MAKERS cover exactly these)
OPS = (BATCH_NORM, BATCH_NORM_RUNNING, BATCH_NORM_BACKWARD, BATCH_NORM_UPDATE_RUNNING,
       BATCH_NORM_EVAL, BATCH_NORM_EVAL_BACKWARD, GROUP_NORM, GROUP_NORM_BACKWARD)


# ------------------------------------------- runtime scalars (checked by both backends)
def check_eps(eps) -> float:
    eps = float(eps)
    if not (0.0 <= eps < float("inf")):
        raise ValueError(f"eps must be finite and >= 0, got {eps}")
    return eps


def check_momentum(momentum) -> float:
    momentum = float(momentum)
    if not (0.0 <= momentum <= 1.0):
        raise ValueError(f"momentum must be in [0, 1], got {momentum}")
    return momentum


def check_count(count) -> int:
    """count: the values per channel behind the batch statistics (N * prod(spatial))."""
    if count is None or isinstance(count, bool) or int(count) != count:
        raise ValueError(f"count (values per channel, N * prod(spatial)) must be an int, "
                         f"got {count!r}")
    if count < 2:
        raise ValueError(f"count must be >= 2: the unbiased variance needs two values per "
                         f"channel, got {count}")
    return int(count)
