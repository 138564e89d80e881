"""Fused ops, logic: shape and dtype rules (see hipfer.prims.fused_ops; docs/nn_logic.md).

logic_pointwise[_backward|_lrp]  soft AND / OR of k truth values stacked on axis 0:
            x (k, ...) -> (...); params norm ("product", "lukasiewicz", "minmax") and
            kind ("and", "or"). The backward takes (x, grad (...)) -> (k, ...), the LRP
            pass (x, relevance (...)) -> (k, ...) with the runtime stabiliser eps.
aggregator[_backward|_lrp]  power mean over axis 0: x (k, ...) > 0 -> (...), runtime p
            (0: geometric mean, +-inf: max / min).
tanh_gaussian[_backward]  (mean, log_std, eps) (N, D) -> action (N, D), log_prob (N,);
            the backward adds (grad_action (N, D), grad_log_prob (N,)) -> (g_mean, g_log_std).
policy_gradient[_backward]  (logits (N, A), int64 action (N,), advantage (N,)) -> loss
            (N,); the backward adds grad (N,) -> g_logits (N, A). Runtime entropy_coef.
td_target   (reward (N,), done (N,) float or bool, next (N,) values or (N, A) action
            values) -> (N,); runtime gamma.
Polyak averaging has no row: hipfer.nn.polyak_update runs axpby.

Out-of-range actions are IndexErrors raised by the backends at run time.
"""
from __future__ import annotations

import math

import numpy as np

from ...prims.fused_ops import FusedOpDef, floats, index, ndim, same

NORMS = ("product", "lukasiewicz", "minmax")
KINDS = ("and", "or")


def logic_params(desc):
    """(norm, is_or) of a logic_pointwise descriptor, validated."""
    norm, kind = desc.get("norm", "product"), desc.get("kind", "and")
    if norm not in NORMS:
        raise ValueError(f"{desc!r}: norm must be one of {NORMS}, got {norm!r}")
    if kind not in KINDS:
        raise ValueError(f"{desc!r}: kind must be 'and' or 'or', got {kind!r}")
    return norm, kind == "or"


def _stacked(desc, shape, what="x"):
    if len(shape) < 1 or shape[0] < 1:
        raise ValueError(f"{desc!r}: {what} must stack k >= 1 operands on axis 0, got shape "
                         f"{tuple(shape)}")
    return tuple(shape[1:])


def _reduce_k(desc, dtypes, shapes):
    dt = floats(desc, dtypes)
    out = _stacked(desc, shapes[0])
    if len(shapes) == 1:
        return ((out, dt),)
    same(desc, out, shapes[1], "x[i] and the output's gradient/relevance")
    return ((tuple(shapes[0]), dt),)


def _logic_k(desc, dtypes, shapes):
    logic_params(desc)
    return _reduce_k(desc, dtypes, shapes)


def _tanh_gaussian(desc, dtypes, shapes):
    dt = floats(desc, dtypes)
    ndim(desc, shapes[0], 2, "mean")
    same(desc, shapes[0], shapes[1], "mean and log_std")
    same(desc, shapes[0], shapes[2], "mean and eps")
    if len(shapes) == 3:
        return ((tuple(shapes[0]), dt), (tuple(shapes[0][:1]), dt))
    same(desc, shapes[0], shapes[3], "mean and grad_action")
    same(desc, shapes[0][:1], shapes[4], "mean's rows and grad_log_prob")
    return ((tuple(shapes[0]), dt),) * 2


def _policy_gradient(desc, dtypes, shapes):
    dt = floats(desc, dtypes, *(i for i in range(len(dtypes)) if i != 1))
    index(desc, dtypes, 1, "action")
    ndim(desc, shapes[0], 2, "logits")
    if shapes[0][1] < 1:
        raise ValueError(f"{desc!r}: logits need at least one action, got shape {shapes[0]}")
    rows = tuple(shapes[0][:1])
    same(desc, rows, shapes[1], "logits' rows and action")
    same(desc, rows, shapes[2], "logits' rows and advantage")
    if len(shapes) == 3:
        return ((rows, dt),)
    same(desc, rows, shapes[3], "logits' rows and grad")
    return ((tuple(shapes[0]), dt),)


def _td_target(desc, dtypes, shapes):
    dt = floats(desc, dtypes, 0, 2)
    if dtypes[1] != dt and dtypes[1] != np.dtype(np.bool_):
        raise TypeError(f"{desc!r}: done must be bool or {dt} like reward, got {dtypes[1]}")
    ndim(desc, shapes[0], 1, "reward")
    same(desc, shapes[0], shapes[1], "reward and done")
    nxt = shapes[2]
    if len(nxt) not in (1, 2) or tuple(nxt[:1]) != tuple(shapes[0]):
        raise ValueError(f"{desc!r}: next must be (N,) values or (N, A) action values for "
                         f"N = {shapes[0][0]} rewards, got shape {tuple(nxt)}")
    if len(nxt) == 2 and nxt[1] < 1:
        raise ValueError(f"{desc!r}: next action values need at least one action, got {tuple(nxt)}")
    return ((tuple(shapes[0]), dt),)


# ---------------------------------------------------------------- runtime scalars
def _finite(op, name, v, ok, rule):
    if not (isinstance(v, (int, float)) and ok):
        raise ValueError(f"{op}: {name}={v!r} must be {rule}")


def check_eps(op, eps):
    _finite(op, "eps", eps, eps >= 0 and math.isfinite(eps), "finite and >= 0")


def check_p(op, p):
    _finite(op, "p", p, not math.isnan(p), "a number or +-inf (not NaN)")


def check_gamma(op, gamma):
    _finite(op, "gamma", gamma, 0.0 <= gamma <= 1.0, "in [0, 1]")


def check_tau(op, tau):
    _finite(op, "tau", tau, 0.0 <= tau <= 1.0, "in [0, 1]")


def check_entropy_coef(op, c):
    _finite(op, "entropy_coef", c, math.isfinite(c), "finite")


def p_mode(p) -> int:
    """How a power mean computes: 0 finite p != 0, 1 geometric (p == 0), 2 max, 3 min."""
    return 2 if p == math.inf else 3 if p == -math.inf else 1 if p == 0 else 0


def log_tiny(dt):
    """log of dt's smallest normal: where the product LRP pass clamps log(0) = -inf."""
    dt = np.dtype(dt)
    return dt.type(np.log(np.finfo(dt).tiny))


def bad_action(op: str, value: int, n: int) -> IndexError:
    return IndexError(f"{op}(): action {value} is out of range for {n} actions")


def _k(*shapes):
    return lambda desc: shapes


LOGIC_POINTWISE = FusedOpDef(
    "logic_pointwise", 1, _logic_k, _k((2, 1)), {},
    "soft AND/OR (t-norm `norm`, `kind`) over k operands on axis 0")
LOGIC_POINTWISE_BACKWARD = FusedOpDef(
    "logic_pointwise_backward", 2, _logic_k, _k((2, 1), (1,)), {},
    "gradient of logic_pointwise to each operand (min/max ties: first operand)")
LOGIC_POINTWISE_LRP = FusedOpDef(
    "logic_pointwise_lrp", 2, _logic_k, _k((2, 1), (1,)), {"eps": 1e-6},
    "relevance of logic_pointwise's output to each operand (epsilon rule; log "
    "space for product; winner-take-all for minmax)")
AGGREGATOR = FusedOpDef(
    "aggregator", 1, _reduce_k, _k((2, 1)), {"p": 1.0},
    "power mean (mean_k x^p)^(1/p) over axis 0; p = 0 geometric, +-inf max/min")
AGGREGATOR_BACKWARD = FusedOpDef(
    "aggregator_backward", 2, _reduce_k, _k((2, 1), (1,)), {"p": 1.0},
    "gradient of aggregator: grad * (x / M)^(p-1) / k")
AGGREGATOR_LRP = FusedOpDef(
    "aggregator_lrp", 2, _reduce_k, _k((2, 1), (1,)), {"p": 1.0},
    "relevance shares x^p / sum x^p (winner-take-all for +-inf)")
TANH_GAUSSIAN = FusedOpDef(
    "tanh_gaussian", 3, _tanh_gaussian, _k((1, 1), (1, 1), (1, 1)), {},
    "action = tanh(mean + exp(log_std) eps) and its log-prob per row (float64 sum)")
TANH_GAUSSIAN_BACKWARD = FusedOpDef(
    "tanh_gaussian_backward", 5, _tanh_gaussian,
    _k((1, 1), (1, 1), (1, 1), (1, 1), (1,)), {},
    "gradients of tanh_gaussian w.r.t. mean and log_std")
POLICY_GRADIENT = FusedOpDef(
    "policy_gradient", 3, _policy_gradient, _k((1, 1), (1,), (1,)),
    {"entropy_coef": 0.0},
    "-advantage * log_softmax(logits)[action] - entropy_coef * entropy, per row")
POLICY_GRADIENT_BACKWARD = FusedOpDef(
    "policy_gradient_backward", 4, _policy_gradient,
    _k((1, 1), (1,), (1,), (1,)), {"entropy_coef": 0.0},
    "gradient of policy_gradient w.r.t. logits, times grad per row")
TD_TARGET = FusedOpDef(
    "td_target", 3, _td_target, _k((1,), (1,), (1,)), {"gamma": 0.99},
    "reward + gamma (1 - done) max_a next (Q-learning) or next (TD(0))")

#: every row of this topic (the op table loads it; MAKERS cover exactly these)
OPS = (LOGIC_POINTWISE, LOGIC_POINTWISE_BACKWARD, LOGIC_POINTWISE_LRP, AGGREGATOR,
       AGGREGATOR_BACKWARD, AGGREGATOR_LRP, TANH_GAUSSIAN, TANH_GAUSSIAN_BACKWARD, POLICY_GRADIENT,
       POLICY_GRADIENT_BACKWARD, TD_TARGET)
