"""hipfer.nn, BLAS-like ops (FusedPrims; rules in ops.py).

Sums (sum, dot, column_sums, accumulate_rows) add in a fixed order on every backend:
the same inputs give the same bits on every call.
"""
from __future__ import annotations

from ... import _creation
from ..._tensor import Tensor
from ...prims.fused_ops import FLOATS
from .._common import batched_gemm, fused, tensor, writable
from . import ops

__all__ = ["gemm_ex", "axpby", "dot", "sum", "column_sums", "accumulate_rows",
           "add_row_vector", "add_channel_vector", "adam_step"]


def _out(out, name: str, shape, like: Tensor) -> Tensor:
    """out checked as a C-contiguous Tensor of shape and like's dtype, on like's device."""
    out = writable(out, name, "out")
    if out.shape != tuple(shape) or out.dtype != like.dtype:
        raise ValueError(f"{name}(): out must have shape {tuple(shape)} and dtype {like.dtype}, "
                         f"got {out.shape} {out.dtype}")
    if out.device != like.device:
        raise ValueError(f"{name}(): out is on {out.device}, the operands on {like.device}")
    return out


def gemm_ex(a, b, out=None, *, trans_a=False, trans_b=False, alpha=1.0, beta=0.0):
    """out = alpha * op(a) @ op(b) + beta * out for 2-d float32/float64 a and b, where
    op(x) is x.T when trans_x, else x; returns out (a new tensor when out is None, which
    needs beta == 0). beta == 0 never reads out: a NaN already there does not leak.
    One hipBLAS/cuBLAS GEMM on the GPU (SemiringCore's BatchedGemm), any operand strides."""
    for x, what in ((a, "a"), (b, "b")):
        if not isinstance(x, Tensor):
            raise TypeError(f"gemm_ex(): {what} must be a hipfer Tensor, got {type(x).__name__}")
        if x.ndim != 2:
            raise ValueError(f"gemm_ex(): {what} must be 2-d, got shape {x.shape}")
        if x.dtype not in FLOATS:
            raise TypeError(f"gemm_ex(): {what} must be float32 or float64, got {x.dtype}")
    if a.dtype != b.dtype:
        raise TypeError(f"gemm_ex(): a and b dtypes differ ({a.dtype} and {b.dtype})")
    (m, k), (kb, n) = a.shape[::-1] if trans_a else a.shape, b.shape[::-1] if trans_b else b.shape
    if k != kb:
        raise ValueError(f"gemm_ex(): op(a) is {m} x {k} and op(b) is {kb} x {n}: the inner "
                         "sizes differ")
    if out is None and beta != 0:
        raise ValueError("gemm_ex(): beta != 0 reads out, so out must be given")
    if out is not None:
        out = _out(out, "gemm_ex", (m, n), a)
    res = batched_gemm(a._data[None], b._data[None], trans_a=trans_a, trans_b=trans_b,
                       out=None if out is None else out._data[None],  # (1, rows, cols) views
                       alpha=float(alpha), beta=float(beta))
    return Tensor(res[0]) if out is None else out


def axpby(x, y, *, alpha=1.0, beta=1.0):
    """y <- alpha * x + beta * y, in place; returns y. beta == 0 never reads y, so a NaN
    or inf already in y does not leak into the result."""
    x, y = tensor(x, "axpby"), writable(y, "axpby", "y")
    return fused(ops.AXPBY, [x, y], out=y, alpha=float(alpha), beta=float(beta))


def sum(x):
    """The 0-d sum of every element of x (any shape; 0 when empty), in a fixed order."""
    return fused(ops.SUM, [tensor(x, "sum")])


def dot(x, y):
    """The 0-d sum of x * y over every element (x and y of one shape), in a fixed order."""
    return fused(ops.DOT, [tensor(x, "dot"), tensor(y, "dot", "y")])


def column_sums(x, out=None, *, beta=0.0):
    """out[j] = sum_i x[i, j] + beta * out[j] for x (m, n) (e.g. a bias gradient); returns
    out, a new (n,) tensor when out is None (then beta must be 0). beta == 0 never reads out."""
    x = tensor(x, "column_sums")
    if out is None and beta != 0:
        raise ValueError("column_sums(): beta != 0 reads out, so out must be given")
    if out is None:  # fresh: beta is 0, so its contents are never read
        out = _creation.empty(x.shape[1:2], dtype=x.dtype, device=x.device)
    else:  # out is an operand: the op's rules check its shape, dtype and device
        out = writable(out, "column_sums", "out")
    return fused(ops.COLUMN_SUMS, [x, out], out=out, beta=float(beta))


def accumulate_rows(x, out, *, beta=1.0):
    """Row sums accumulated into out, in place: out[i] = beta * out[i] + sum_j x[i, j] for
    x (m, n) and out (m,); returns out. beta == 0 never reads out (plain row sums)."""
    x = tensor(x, "accumulate_rows")
    out = writable(out, "accumulate_rows", "out")
    return fused(ops.ACCUMULATE_ROWS, [x, out], out=out, beta=float(beta))


def add_row_vector(x, v, out=None):
    """x[i, :] + v for x (m, n) and v (n,) (a bias); out=x adds in place. Returns out."""
    x, v = tensor(x, "add_row_vector"), tensor(v, "add_row_vector", "v")
    return fused(ops.ADD_ROW_VECTOR, [x, v],
                 out=None if out is None else _out(out, "add_row_vector", x.shape, x))


def add_channel_vector(x, v, out=None):
    """x + v[c] on channel c, for x (N, C, *spatial) and v (C,) (an NCHW bias); out=x adds
    in place. Returns out."""
    x, v = tensor(x, "add_channel_vector"), tensor(v, "add_channel_vector", "v")
    return fused(ops.ADD_CHANNEL_VECTOR, [x, v],
                 out=None if out is None else _out(out, "add_channel_vector", x.shape, x))


def adam_step(param, grad, m, v, *, lr, beta1, beta2, eps, bias_correction1,
              bias_correction2, weight_decay=0.0):
    """One Adam step, fused and in place on param, m and v (one pass over memory), in
    PyTorch's expression order, with g = grad (+ weight_decay * param when nonzero):
        m = beta1 * m + (1 - beta1) * g;  v = beta2 * v + (1 - beta2) * g * g
        param -= (lr / bias_correction1) * m / (sqrt(v) / sqrt(bias_correction2) + eps)
    bias_correction1/2 are 1 - beta1**t and 1 - beta2**t at step t (1 turns correction
    off). Returns (param, m, v). Bad ranges (lr < 0, beta outside [0, 1), ...) are a
    ValueError."""
    grad = tensor(grad, "adam_step", "grad")
    param, m, v = (writable(t, "adam_step", what) for t, what in
                   ((param, "param"), (m, "m"), (v, "v")))
    return fused(ops.ADAM_STEP, [param, grad, m, v], out=(param, m, v),
                 lr=float(lr), beta1=float(beta1), beta2=float(beta2), eps=float(eps),
                 bias_correction1=float(bias_correction1),
                 bias_correction2=float(bias_correction2), weight_decay=float(weight_decay))
