"""hipfer.nn, logic ops (FusedPrims; rules in ops.py; layouts and
formulas in docs/nn_logic.md): soft logic (t-norms) and the power-mean aggregator with
their backward and LRP passes, the tanh-Gaussian policy, and RL rows (policy-gradient
loss, TD / Q-learning targets, Polyak averaging). One kernel per call on the GPU; every
sum has a fixed order, so the same inputs give the same bits on every call.
"""
from __future__ import annotations

from ...random import Generator
from .._blas import ops as blas_ops
from .._common import fused, tensor, writable
from . import ops
from .ops import check_tau

__all__ = ["logic_pointwise", "logic_pointwise_backward", "logic_pointwise_lrp",
           "aggregator", "aggregator_backward", "aggregator_lrp", "tanh_gaussian",
           "tanh_gaussian_sample", "tanh_gaussian_backward", "policy_gradient_loss", "policy_gradient_backward",
           "td_target", "polyak_update"]


def logic_pointwise(x, *, kind="and", norm="product"):
    """Soft AND (kind="and") or OR of the k truth values stacked on axis 0 of x (k, ...),
    -> (...). norm: "product" (AND = prod x_i, OR = 1 - prod(1 - x_i)), "lukasiewicz"
    (AND = max(0, sum x_i - (k - 1)), OR = min(1, sum x_i)) or "minmax" (min / max)."""
    return fused(ops.LOGIC_POINTWISE, [tensor(x, "logic_pointwise")], {"kind": kind, "norm": norm})


def logic_pointwise_backward(x, grad, *, kind="and", norm="product"):
    """The gradient of logic_pointwise to each operand, (k, ...), given grad (...) of its
    output. minmax sends grad to the first min/max operand; lukasiewicz is 0 where the
    clamp holds (its kink counts as clamped)."""
    name = "logic_pointwise_backward"
    return fused(ops.LOGIC_POINTWISE_BACKWARD, [tensor(x, name), tensor(grad, name, "grad")],
                 {"kind": kind, "norm": norm})


def logic_pointwise_lrp(x, relevance, *, kind="and", norm="product", eps=1e-6):
    """The relevance (...) of logic_pointwise's output shared among the k operands, (k, ...)
    (docs/nn_logic.md): the epsilon rule on log x_i (product AND; log(1 - x_i) for OR,
    clamped at log of the smallest normal), on x_i (lukasiewicz), winner-take-all to the
    first min/max (minmax). Conservative up to eps (exactly for minmax)."""
    name = "logic_pointwise_lrp"
    return fused(ops.LOGIC_POINTWISE_LRP,
                 [tensor(x, name), tensor(relevance, name, "relevance")],
                 {"kind": kind, "norm": norm}, eps=float(eps))


def aggregator(x, *, p=1.0):
    """The power mean over axis 0 of x (k, ...) > 0: (mean_i x_i^p)^(1/p), -> (...);
    p = 0 the geometric mean, p = inf the max, p = -inf the min."""
    return fused(ops.AGGREGATOR, [tensor(x, "aggregator")], p=float(p))


def aggregator_backward(x, grad, *, p=1.0):
    """The gradient of aggregator to each operand: grad * (x_i / M)^(p - 1) / k (max/min:
    grad to the first max/min), (k, ...)."""
    name = "aggregator_backward"
    return fused(ops.AGGREGATOR_BACKWARD, [tensor(x, name), tensor(grad, name, "grad")],
                 p=float(p))


def aggregator_lrp(x, relevance, *, p=1.0):
    """aggregator's relevance shared in proportion to x_i^p / sum_j x_j^p (p = 0: equal
    shares; max/min: all to the first max/min), (k, ...); conservative."""
    name = "aggregator_lrp"
    return fused(ops.AGGREGATOR_LRP, [tensor(x, name), tensor(relevance, name, "relevance")],
                 p=float(p))


def tanh_gaussian(mean, log_std, eps):
    """Sample a tanh-squashed Gaussian policy by reparameterisation, for (N, D) mean,
    log_std and eps (a standard normal sample, e.g. hipfer.random): returns (action, log_prob)
    with action = tanh(mean + exp(log_std) * eps) (N, D) and log_prob (N,) the sum over D
    of -eps^2/2 - log_std - log(2 pi)/2 - log(1 - action^2), in the stable form
    log(1 - tanh(u)^2) = 2 (log 2 - u - softplus(-2u)), summed in float64."""
    name = "tanh_gaussian"
    return fused(ops.TANH_GAUSSIAN, [tensor(mean, name, "mean"),
                                     tensor(log_std, name, "log_std"),
                                     tensor(eps, name, "eps")])


def tanh_gaussian_sample(mean, log_std, generator):
    """tanh_gaussian with eps drawn from generator (a hipfer.random.Generator: the
    counter-based normal stream, the same on every backend; it advances by the draw).
    Returns (action, log_prob, eps); keep eps for tanh_gaussian_backward."""
    name = "tanh_gaussian_sample"
    mean = tensor(mean, name, "mean")
    if not isinstance(generator, Generator):
        raise TypeError(f"{name}(): generator must be a hipfer.random.Generator, got "
                        f"{type(generator).__name__}")
    eps = generator.standard_normal(mean.shape, dtype=mean.dtype, device=mean.device)
    return tanh_gaussian(mean, log_std, eps) + (eps,)


def tanh_gaussian_backward(mean, log_std, eps, grad_action, grad_log_prob):
    """The gradients (g_mean, g_log_std) of tanh_gaussian, given those of its outputs
    (grad_action (N, D), grad_log_prob (N,)); eps is held fixed (reparameterisation)."""
    name = "tanh_gaussian_backward"
    return fused(ops.TANH_GAUSSIAN_BACKWARD,
                 [tensor(mean, name, "mean"), tensor(log_std, name, "log_std"),
                  tensor(eps, name, "eps"), tensor(grad_action, name, "grad_action"),
                  tensor(grad_log_prob, name, "grad_log_prob")])


def policy_gradient_loss(logits, action, advantage, *, entropy_coef=0.0):
    """Per-row policy-gradient loss for logits (N, A), int64 action (N,) and advantage (N,):
    loss[n] = -advantage[n] * log_softmax(logits[n])[action[n]] - entropy_coef * H[n],
    H[n] the entropy of softmax(logits[n]). An action outside [0, A) is an IndexError."""
    name = "policy_gradient"
    return fused(ops.POLICY_GRADIENT,
                 [tensor(logits, name, "logits"), tensor(action, name, "action"),
                  tensor(advantage, name, "advantage")], entropy_coef=float(entropy_coef))


def policy_gradient_backward(logits, action, advantage, grad, *, entropy_coef=0.0):
    """The gradient of policy_gradient_loss w.r.t. logits (N, A), given grad (N,) of the
    per-row losses (ones for their sum, 1/N for their mean)."""
    name = "policy_gradient_backward"
    return fused(ops.POLICY_GRADIENT_BACKWARD,
                 [tensor(logits, name, "logits"), tensor(action, name, "action"),
                  tensor(advantage, name, "advantage"), tensor(grad, name, "grad")],
                 entropy_coef=float(entropy_coef))


def td_target(reward, done, next_values, *, gamma=0.99):
    """Bootstrapped targets (N,): reward + gamma * (1 - done) * v, v = max_a next_values[n, a]
    for (N, A) action values (Q-learning) or next_values[n] for (N,) values (TD(0)). done
    is a bool or float mask; terminal rows (gamma * (1 - done) == 0) never read next_values.
    gamma must lie in [0, 1]."""
    name = "td_target"
    return fused(ops.TD_TARGET, [tensor(reward, name, "reward"), tensor(done, name, "done"),
                                 tensor(next_values, name, "next_values")], gamma=float(gamma))


def polyak_update(target, online, *, tau):
    """Polyak averaging in place: target = tau * online + (1 - tau) * target, for one
    Tensor or matching sequences of them (one axpby each); tau in [0, 1]. Returns target."""
    tau = float(tau)
    check_tau("polyak_update", tau)
    many = isinstance(target, (list, tuple))
    if many and (not isinstance(online, (list, tuple)) or len(online) != len(target)):
        raise ValueError("polyak_update(): target and online must be matching sequences "
                         "(or two Tensors)")
    pairs = list(zip(target, online)) if many else [(target, online)]
    for t, o in pairs:
        t = writable(t, "polyak_update", "target")
        fused(blas_ops.AXPBY, [tensor(o, "polyak_update", "online"), t], out=t, alpha=tau,
              beta=1.0 - tau)
    return target
