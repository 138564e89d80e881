"""hipfer.nn, activation ops (FusedPrims; rules in ops.py)."""
from __future__ import annotations

import operator

from ... import _dtypes
from ..._creation import empty
from .._common import fused, tensor, writable
from . import ops
from .ops import ACTIVATIONS, BACKWARD_ARG

__all__ = ["activation", "relu", "tanh", "sigmoid", "silu", "exp", "neg", "elementwise_backward",
           "dropout", "dropout_backward", "bce_with_logits", "bce_with_logits_backward"]


def _out(out, like, name: str):
    """out (None: a fresh result) as a writable Tensor with like's shape, dtype and device.
    It may be like itself (in place) but must not partially overlap it."""
    if out is None:
        return None
    out = writable(out, name, "out")
    if (out.shape, out.dtype, out.device) != (like.shape, like.dtype, like.device):
        raise ValueError(f"{name}(): out has shape {out.shape} and dtype {out.dtype} on {out.device}; "
                         f"expected {like.shape} and {like.dtype} on {like.device}")
    return out


def activation(name: str, x, *, out=None):
    """f(x) elementwise for the activation called name, one of
    relu (x if x > 0 else +0; NaN stays NaN), tanh, sigmoid (overflow-free: exp(x) / (1 +
    exp(x)) for x < 0), silu (x * sigmoid(x); NaN at -inf), exp, neg.
    out=x works in place; NaN propagates through every one."""
    if name not in ACTIVATIONS:
        raise ValueError(f"activation(): unknown activation {name!r} (one of {', '.join(ACTIVATIONS)})")
    x = tensor(x, name)
    return fused(ops.ACTIVATION, [x], {"name": name}, out=_out(out, x, name))


def relu(x, *, out=None):
    """x where x > 0, else +0 (NaN stays NaN). out=x works in place."""
    return activation("relu", x, out=out)


def tanh(x, *, out=None):
    """tanh(x). out=x works in place."""
    return activation("tanh", x, out=out)


def sigmoid(x, *, out=None):
    """1 / (1 + exp(-x)), as exp(x) / (1 + exp(x)) for x < 0: never overflows. out=x works
    in place."""
    return activation("sigmoid", x, out=out)


def silu(x, *, out=None):
    """x * sigmoid(x) (NaN at x = -inf: -inf * 0). out=x works in place."""
    return activation("silu", x, out=out)


def exp(x, *, out=None):
    """exp(x). out=x works in place."""
    return activation("exp", x, out=out)


def neg(x, *, out=None):
    """-x. out=x works in place."""
    return activation("neg", x, out=out)


def elementwise_backward(name: str, grad, x=None, y=None, *, out=None):
    """grad * f'(.) for the activation called name: the gradient with respect to x of the
    forward y = f(x). Each needs one saved tensor (the other is not read):
      relu  x: grad where x > 0, else 0 (also at x == 0 and for NaN x)
      silu  x: grad * s * (1 + x * (1 - s)), s = sigmoid(x)
      tanh  y: grad * (1 - y^2)
      sigmoid y: grad * y * (1 - y)
      exp   y: grad * y
      neg   neither: -grad
    out=grad works in place."""
    if name == "neg":
        return activation("neg", grad, out=out)
    which = BACKWARD_ARG.get(name) if isinstance(name, str) else None
    if which is None:
        raise ValueError(f"elementwise_backward(): unknown activation {name!r} "
                         f"(one of {', '.join(ACTIVATIONS)})")
    saved = x if which == "x" else y
    if saved is None:
        what = "the input x" if which == "x" else "the forward output y"
        raise ValueError(f"elementwise_backward({name!r}) needs {which} ({what}), got None")
    fn = "elementwise_backward"
    g, saved = tensor(grad, fn, "grad"), tensor(saved, fn, which)
    return fused(ops.ACTIVATION_BACKWARD, [g, saved], {"name": name}, out=_out(out, g, fn))


def _counter(v, what: str) -> int:
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError(f"dropout(): {what} must be an integer, got {type(v).__name__}") from None


def dropout(x, p, *, seed, offset=0, out=None):
    """Inverted dropout; returns (out, mask). Element i (C order) is dropped -- out 0, even
    for an inf or NaN input, mask False -- iff counter_rng.uniform(seed, offset + i) < p
    (float32 uniforms, compared exactly); kept elements are x * (1 / (1 - p)) (the scale
    rounded to x's dtype), mask True. The same (seed, offset) gives the same bool mask, bit
    for bit, on every backend; advance offset by x.size for the next call's fresh stream.
    p must be in [0, 1) (ValueError). out=x works in place (the mask is always new)."""
    x = tensor(x, "dropout")
    rt = dict(p=float(p), seed=_counter(seed, "seed"), offset=_counter(offset, "offset"))
    out = _out(out, x, "dropout")
    if out is None:
        return fused(ops.DROPOUT, [x], **rt)
    mask = empty(x.shape, dtype=_dtypes.bool, device=x.device)
    return fused(ops.DROPOUT, [x], out=(out, mask), **rt)


def dropout_backward(grad, mask, p, *, out=None):
    """grad * (1 / (1 - p)) where mask (the bool mask dropout returned), else 0: the
    gradient of dropout(x, p) with respect to x. out=grad works in place."""
    g = tensor(grad, "dropout_backward", "grad")
    m = tensor(mask, "dropout_backward", "mask")
    return fused(ops.DROPOUT_BACKWARD, [g, m], out=_out(out, g, "dropout_backward"), p=float(p))


def bce_with_logits(x, y, *, reduction: str = "none"):
    """Binary cross-entropy of logits x against targets y:
    max(x, 0) - x * y + log1p(exp(-|x|)) elementwise (reduction='none'), or its mean
    (reduction='mean': a 0-d tensor, NaN for empty x; summed in a fixed order)."""
    x, y = tensor(x, "bce_with_logits"), tensor(y, "bce_with_logits", "y")
    return fused(ops.BCE_WITH_LOGITS, [x, y], {"reduction": reduction})


def bce_with_logits_backward(grad, x, y, *, reduction: str = "none"):
    """The gradient of bce_with_logits(x, y, reduction=...) with respect to x:
    grad * (sigmoid(x) - y), with grad of x's shape ('none') or 0-d and divided by x.size
    ('mean')."""
    fn = "bce_with_logits_backward"
    g, x, y = tensor(grad, fn, "grad"), tensor(x, fn), tensor(y, fn, "y")
    return fused(ops.BCE_WITH_LOGITS_BACKWARD, [g, x, y], {"reduction": reduction})
