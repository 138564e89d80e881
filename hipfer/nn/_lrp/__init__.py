"""hipfer.nn, lrp ops (FusedPrims; rules in ops.py; docs/nn_lrp.md).

Epsilon-rule layer-wise relevance propagation (Bach et al. 2015): relevance r at a
layer's output is redistributed to its inputs in proportion to their contributions,
divided by the stabilised denominator stab(z) = z + eps*sign(z), sign(0) = +1. With
eps = 0 and no zero denominators every pass conserves relevance (the sums in and out
agree); eps > 0 absorbs a little. eps is a runtime scalar (a new value reuses the plan).
"""
from __future__ import annotations

from ... import matmul, reshape
from .._common import fused, tensor
from .._conv import _window, col2im_add
from . import ops

__all__ = ["lrp_stabilized_divide", "lrp_residual_split", "lrp_bilinear_elementwise",
           "lrp_linear", "lrp_bilinear_matmul", "lrp_softmax_rows", "lrp_rope", "lrp_conv",
           "lrp_avg_pool"]


def lrp_stabilized_divide(r, denom, *, eps=1e-6, gate="none"):
    """r / stab(denom) where the gate passes, else 0: gate "none" always passes,
    "positive" where denom > 0, "negative" where denom < 0 (the z+ / z- rules)."""
    ts = [tensor(r, "lrp_stabilized_divide", "r"), tensor(denom, "lrp_stabilized_divide", "denom")]
    return fused(ops.LRP_STABILIZED_DIVIDE, ts, {"gate": gate}, eps=float(eps))


def lrp_residual_split(a, b, r, *, eps=1e-6):
    """(r_a, r_b) through y = a + b: r_a = a * (r / stab(y)), r_b = b * (r / stab(y))."""
    ts = [tensor(a, "lrp_residual_split", "a"), tensor(b, "lrp_residual_split", "b"),
          tensor(r, "lrp_residual_split", "r")]
    return fused(ops.LRP_RESIDUAL_SPLIT, ts, eps=float(eps))


def lrp_bilinear_elementwise(a, b, r, *, eps=1e-6):
    """The relevance of a, and equally of b, through c = a * b (a gate times a value):
    c * r / (2c + eps*sign(c)); the two halves together carry r."""
    ts = [tensor(a, "lrp_bilinear_elementwise", "a"), tensor(b, "lrp_bilinear_elementwise", "b"),
          tensor(r, "lrp_bilinear_elementwise", "r")]
    return fused(ops.LRP_BILINEAR_ELEMENTWISE, ts, eps=float(eps))


def lrp_linear(x, w, r, *, z=None, eps=1e-6):
    """The relevance of x (..., I) through z = x @ w (+ bias), w (I, J), for r (..., J):
    r_in = x * ((r / stab(z)) @ w.T), i.e. r_in[i] = sum_j x[i] w[i, j] / stab(z[j]) r[j].
    z is the forward pre-activation; when None it is recomputed as x @ w (no bias: a
    layer with a bias should pass its z, then the bias absorbs its share)."""
    x, w, r = (tensor(t, "lrp_linear", what) for t, what in ((x, "x"), (w, "w"), (r, "r")))
    if x.ndim < 1 or r.ndim < 1:
        raise ValueError(f"lrp_linear(): x and r need a feature axis, got shapes {x.shape} "
                         f"and {r.shape}")
    lead = x.shape[:-1]
    if r.shape[:-1] != lead:
        raise ValueError(f"lrp_linear(): x {x.shape} and r {r.shape} have different leading axes")
    rows = 1
    for n in lead:
        rows *= n
    x2, r2 = reshape(x, (rows, x.shape[-1])), reshape(r, (rows, r.shape[-1]))
    if z is None:
        if w.ndim != 2 or w.shape[0] != x.shape[-1] or x.dtype != w.dtype:
            # let the op's rules name the problem (before a matmul fails on it)
            z2 = r2
        else:
            z2 = matmul(x2, w)
    else:
        z = tensor(z, "lrp_linear", "z")
        if z.shape != r.shape:
            raise ValueError(f"lrp_linear(): z and r shapes differ ({z.shape} and {r.shape})")
        z2 = reshape(z, r2.shape)
    out = fused(ops.LRP_LINEAR, [x2, w, tensor(z2, "lrp_linear", "z"), r2], eps=float(eps))
    return reshape(out, x.shape)


def lrp_bilinear_matmul(a, b, r, *, o=None, trans_b=False, eps=1e-6):
    """(R_A, R_B) through O = A @ B (batched: A (..., M, K), B (..., K, N), or B stored
    (..., N, K) with trans_b, so O = A @ B^T as in attention scores): the half-half
    bilinear rule S = R / (2 stab(O)), R_A = A * (S @ B^T), R_B = B * (A^T @ S), so
    R_A[i, k] = sum_j A[i, k] B[k, j] R[i, j] / (2 stab(O[i, j])); R_B has B's layout.
    o is the forward product; when None it is recomputed."""
    a, b, r = (tensor(t, "lrp_bilinear_matmul", what) for t, what in ((a, "a"), (b, "b"), (r, "r")))
    if o is None:
        try:
            o = matmul(a, b.mT if trans_b else b)
        except (TypeError, ValueError):
            o = r  # the op's rules name the problem
    o = tensor(o, "lrp_bilinear_matmul", "o")
    return fused(ops.LRP_BILINEAR_MATMUL, [a, b, o, r], {"trans_b": bool(trans_b)}, eps=float(eps))


def lrp_softmax_rows(x, y, r):
    """The relevance of the logits x (..., n) through y = softmax(x) over the last axis:
    r_in = x * (r - y * sum(r)) per row (the sum in a fixed order)."""
    ts = [tensor(x, "lrp_softmax_rows"), tensor(y, "lrp_softmax_rows", "y"),
          tensor(r, "lrp_softmax_rows", "r")]
    return fused(ops.LRP_SOFTMAX_ROWS, ts)


def lrp_rope(x, cos, sin, r, *, eps=1e-6):
    """The relevance of x (..., seq_len, head_dim) through hipfer.nn.rope(x, cos, sin)
    (interleaved pairs, cos/sin (seq_len, head_dim/2)), for r of x's shape: the epsilon
    rule on each pair's 2x2 rotation, out0 = x0 c - x1 s, out1 = x0 s + x1 c, with
    q0 = r0 / stab(out0), q1 = r1 / stab(out1):
        r_in0 = x0 (c q0 + s q1),    r_in1 = x1 (c q1 - s q0)
    conservative per pair (r_in0 + r_in1 = r0 + r1 when eps = 0)."""
    ts = [tensor(x, "lrp_rope"), tensor(cos, "lrp_rope", "cos"), tensor(sin, "lrp_rope", "sin"),
          tensor(r, "lrp_rope", "r")]
    return fused(ops.LRP_ROPE, ts, eps=float(eps))


def lrp_conv(patches, w, z, r, x_shape, kernel_size, *, stride=1, padding=0, dilation=1,
             eps=1e-6):
    """The relevance of x (x_shape = (N, C, H, W)) through conv2d(x, w) (+ bias), from
    the cached patches = hipfer.nn.im2col(x, ...) (N, C*kh*kw, L), w (Cout, C, kh, kw)
    or (Cout, C*kh*kw), the pre-activation z and relevance r (N, Cout, oh, ow) or
    (N, Cout, L): R_P = P * (w^T @ (r / stab(z))) per patch entry, folded back onto x
    by hipfer.nn.col2im_add (a deterministic gather)."""
    p, w, z, r = (tensor(t, "lrp_conv", what) for t, what in
                  ((patches, "patches"), (w, "w"), (z, "z"), (r, "r")))
    if w.ndim == 4:
        w = reshape(w, (w.shape[0], w.shape[1] * w.shape[2] * w.shape[3]))
    for t, what in ((z, "z"), (r, "r")):
        if t.ndim not in (3, 4):
            raise ValueError(f"lrp_conv(): {what} must be (N, Cout, oh, ow) or (N, Cout, L), "
                             f"got shape {t.shape}")
    z = reshape(z, z.shape[:2] + (-1,)) if z.ndim == 4 else z
    r = reshape(r, r.shape[:2] + (-1,)) if r.ndim == 4 else r
    rp = fused(ops.LRP_CONV, [p, w, tensor(z, "lrp_conv", "z"), tensor(r, "lrp_conv", "r")],
               eps=float(eps))
    return col2im_add(rp, x_shape, kernel_size, stride=stride, padding=padding, dilation=dilation)


def lrp_avg_pool(x, r, kernel_size, *, stride=None, padding=0, eps=1e-6):
    """The relevance of x (N, C, H, W) through avg_pool(x, kernel_size, stride, padding)
    for r (N, C, oh, ow): each input gets x / stab(window sum of x) * r of every window
    holding it (padding contributes nothing), summed in tap order (a gather, no atomics).
    The divisor of the mean cancels, so count_include_pad does not matter."""
    ts = [tensor(x, "lrp_avg_pool"), tensor(r, "lrp_avg_pool", "r")]
    return fused(ops.LRP_AVG_POOL, ts, _window("lrp_avg_pool", kernel_size, stride, padding),
                 eps=float(eps))
