"""hipfer.nn, conv ops (FusedPrims; rules in ops.py).

NCHW, two spatial axes. kernel_size, stride, padding and dilation are an int or an
(height, width) pair. conv2d is composed here from the fused pieces: im2col, one
batched GEMM, and col2im_add for the input gradient.
"""
from __future__ import annotations

import operator

from ... import _ops, empty, reshape, sum as _sum
from ..._tensor import Tensor
from ...prims import descriptors as d
from ...prims.fused_ops import FLOATS
from .._common import batched_gemm, fused, tensor
from . import ops
from .ops import geometry

__all__ = ["im2col", "col2im_add", "max_pool", "max_unpool", "avg_pool", "avg_pool_backward",
           "conv2d", "conv2d_backward"]


def _pair(v, name: str, what: str) -> tuple:
    try:
        t = (v, v) if not hasattr(v, "__len__") else tuple(v)
        t = tuple(operator.index(e) for e in t)
    except TypeError:
        t = ()
    if len(t) != 2:
        raise TypeError(f"{name}(): {what} must be an int or a pair of ints, got {v!r}")
    return t


def _window(name, kernel_size, stride, padding, dilation=None) -> dict:
    k = _pair(kernel_size, name, "kernel_size")
    p = {"kernel": k, "stride": k if stride is None else _pair(stride, name, "stride"),
         "padding": _pair(padding, name, "padding")}
    if dilation is not None:
        p["dilation"] = _pair(dilation, name, "dilation")
    return p


def _x_shape(x_shape, name: str) -> tuple:
    try:
        s = tuple(operator.index(e) for e in x_shape)
    except TypeError:
        s = ()
    if len(s) != 4:
        raise ValueError(f"{name}(): x_shape must be (N, C, H, W), got {x_shape!r}")
    return s


def _to_x(op, operands, params, x_shape):
    """Run op (a row of ops.py, named as its function) whose output has x_shape (N, C, H,
    W): the op takes (H, W), and checks the operands against it; (N, C) come from the
    operands and must agree."""
    s = _x_shape(x_shape, op.name)
    dx = fused(op, operands, dict(params, x_hw=s[2:]))
    if dx.shape != s:
        raise ValueError(f"{op.name}(): x_shape {s} has (N, C) {s[:2]}, the operands give "
                         f"{dx.shape[:2]}")
    return dx


def im2col(x, kernel_size, *, stride=1, padding=0, dilation=1, layout="nkl"):
    """Columns of x (N, C, H, W): shape (N, C*kh*kw, oh*ow), row (c*kh + i)*kw + j holding
    tap (i, j) of channel c at every output position (torch.nn.functional.unfold's
    layout); padding taps read 0. A convolution is then one batched GEMM, w (Cout,
    C*kh*kw) @ columns, whose result is already NCHW. layout="knl" gives the same columns
    as (C*kh*kw, N, oh*ow): the convolution is then one GEMM over N*oh*ow columns."""
    x = tensor(x, "im2col")
    params = _window("im2col", kernel_size, stride, padding, dilation)
    params["layout"] = layout
    return fused(ops.IM2COL, [x], params)


def col2im_add(cols, x_shape, kernel_size, *, stride=1, padding=0, dilation=1, layout="nkl"):
    """The adjoint of im2col (torch's fold): x of x_shape (N, C, H, W) where each element
    sums the column entries im2col would copy it to; cols in im2col's layout ("nkl": (N,
    C*kh*kw, oh*ow), "knl": (C*kh*kw, N, oh*ow)). A gather in a fixed tap order: no
    atomics, the same bits every run."""
    cols = tensor(cols, "col2im_add", "cols")
    params = _window("col2im_add", kernel_size, stride, padding, dilation)
    params["layout"] = layout
    return _to_x(ops.COL2IM_ADD, [cols], params, x_shape)


def max_pool(x, kernel_size, *, stride=None, padding=0):
    """(y, argmax): the maximum of each window of x (N, C, H, W) and its flat index
    iy*W + ix in the input plane (int64). stride defaults to kernel_size; padding (at
    most half the kernel) never wins; ties go to the first element of the window in
    row-major order; a NaN wins (the first NaN), as in PyTorch."""
    x = tensor(x, "max_pool")
    return fused(ops.MAX_POOL, [x], _window("max_pool", kernel_size, stride, padding))


def max_unpool(y, argmax, x_shape, kernel_size, *, stride=None, padding=0):
    """max_pool's backward: x_shape (N, C, H, W) zeros, plus each y at its window's argmax.
    Overlapping windows accumulate as a gather in a fixed order (deterministic). The
    window geometry is max_pool's; an argmax that is not a position inside its own window
    is an IndexError (checked on the device)."""
    y, argmax = tensor(y, "max_unpool", "y"), tensor(argmax, "max_unpool", "argmax")
    return _to_x(ops.MAX_UNPOOL, [y, argmax],
                 _window("max_unpool", kernel_size, stride, padding), x_shape)


def avg_pool(x, kernel_size, *, stride=None, padding=0, count_include_pad=True):
    """The mean of each window of x (N, C, H, W); padding (at most half the kernel) adds 0
    and counts in the divisor when count_include_pad. stride defaults to kernel_size."""
    x = tensor(x, "avg_pool")
    params = _window("avg_pool", kernel_size, stride, padding)
    params["count_include_pad"] = bool(count_include_pad)
    return fused(ops.AVG_POOL, [x], params)


def avg_pool_backward(grad, x_shape, kernel_size, *, stride=None, padding=0,
                      count_include_pad=True):
    """avg_pool's backward: dx of x_shape (N, C, H, W), each element summing grad / divisor
    over the windows that hold it (a gather, deterministic)."""
    grad = tensor(grad, "avg_pool_backward", "grad")
    params = _window("avg_pool_backward", kernel_size, stride, padding)
    params["count_include_pad"] = bool(count_include_pad)
    return _to_x(ops.AVG_POOL_BACKWARD, [grad], params, x_shape)


def _conv_operands(name, x, w):
    x, w = tensor(x, name), tensor(w, name, "w")
    if w.ndim != 4:
        raise ValueError(f"{name}(): w must be 4-d (Cout, C, kh, kw), got shape {w.shape}")
    if x.ndim != 4:
        raise ValueError(f"{name}(): x must be 4-d (N, C, H, W), got shape {x.shape}")
    if x.shape[1] != w.shape[1]:
        raise ValueError(f"{name}(): x has {x.shape[1]} channels, w expects {w.shape[1]}")
    if x.dtype != w.dtype:
        raise TypeError(f"{name}(): x and w dtypes differ ({x.dtype} and {w.dtype})")
    if x.dtype not in FLOATS:
        raise TypeError(f"{name}(): x and w must be float32 or float64, got {x.dtype}")
    return x, w


def _pointwise(params) -> bool:
    """A 1x1 kernel at stride 1 without padding: im2col(x) is x itself, (N, C, H*W)."""
    return params["kernel"] == params["stride"] == (1, 1) and params["padding"] == (0, 0)


def _plan(name, x, w, stride, padding, dilation):
    """(window params, (oh, ow), whether the columns are x itself, whether the GEMMs take
    all N*oh*ow columns at once ("knl" columns)). On the H200 one GEMM over N*L columns
    ran 1.1-1.5x faster than N batched GEMMs over L (cuBLAS, float32 ResNet layers), and
    the weight gradient as one GEMM with k = N*L 1.1-2.6x faster than N per-sample ones
    summed (whose (N, Cout, C*kh*kw) partials outweigh the columns when Cout > L). The
    knl columns' tap offsets are 32-bit in the GPU kernels: the batched form serves
    larger ones."""
    key = (x.shape, w.shape, _key(stride), _key(padding), _key(dilation))
    hit = _PLANS.get(key) if None not in key else None
    if hit is None:
        # (parsing the window was a third of a 1x1 conv2d's Python calls)
        params = _window(name, w.shape[2:], stride, padding, dilation)
        o = geometry(d.Fused.of(ops.IM2COL.name, **params), x.shape[2:])[4]
        hit = params, o, _pointwise(params)
        if None not in key and len(_PLANS) < 4096:
            _PLANS[key] = hit
    params, o, pointwise = hit
    one = (w.shape[2] * w.shape[3] + 16) * x.shape[0] * o[0] * o[1] + (1 << 24) < KNL_LIMIT
    return params, o, pointwise, one


_PLANS: dict = {}  # _plan's window parsing, by (x shape, w shape, stride, padding, dilation)


def _key(v):
    """v as a key of _PLANS: an int or a pair of ints, by type (1.0 == 1 must not hit the
    plan of 1), else None (not cached: parsed, and rejected, every call)."""
    if type(v) is int:
        return v
    if type(v) is tuple and len(v) == 2 and type(v[0]) is int and type(v[1]) is int:
        return v
    return None


#: the knl columns' 32-bit bound (the tests lower it to take the batched form)
KNL_LIMIT = 1 << 31


def _transposed(a):
    """(A, B, L) raw -> a new C-contiguous (B, A, L) Tensor (the batch moved in or out)."""
    return Tensor(_ops.run(d.MakeContiguous(), [Tensor(a.transpose(1, 0, 2))]))


_ADD = d.ScalarBinary(d.BinaryOp.ADD)


def _bias(b, co, dt):
    b = tensor(b, "conv2d", "b")
    if b.shape != (co,):
        raise ValueError(f"conv2d(): b must have shape ({co},), got {b.shape}")
    if b.dtype != dt:
        raise TypeError(f"conv2d(): x and b dtypes differ ({dt} and {b.dtype})")
    return reshape(b, (co, 1))


def conv2d(x, w, b=None, *, stride=1, padding=0, dilation=1):
    """Cross-correlation of x (N, C, H, W) with w (Cout, C, kh, kw), plus b (Cout,):
    (N, Cout, oh, ow), as torch.nn.functional.conv2d: im2col and one GEMM."""
    # the GEMMs go straight to the BatchedGemm prim: conv2d's host time was mostly
    # einsum's planning layers
    x, w = _conv_operands("conv2d", x, w)
    n, co = x.shape[0], w.shape[0]
    params, o, pointwise, one = _plan("conv2d", x, w, stride, padding, dilation)
    b = None if b is None else _bias(b, co, x.dtype)
    w3 = w._data.reshape(1, co, -1)  # the weights as a batch of 1 (broadcast)
    if pointwise or not one:
        # N GEMMs (Cout, C*kh*kw) @ (C*kh*kw, L), NCHW output (1x1: the columns are x; one
        # GEMM there would need x and y transposed, which costs what it saves)
        cols = Tensor(x._data.reshape(x.shape[:2] + (o[0] * o[1],))) if pointwise else \
            fused(ops.IM2COL, [x], params)
        y = Tensor(batched_gemm(w3, cols._data))  # N, Cout, L
        if b is not None:
            y = y + b
    else:
        cols = fused(ops.IM2COL, [x], dict(params, layout="knl"))  # (C*kh*kw, N, L)
        kk, _, L = cols.shape
        yt = batched_gemm(w3, cols._data.reshape(1, kk, n * L)).reshape(co, n, L)
        if b is None:
            y = _transposed(yt)
        else:  # the transpose back to NCHW in the bias pass
            y = empty((n, co, L), dtype=x.dtype, device=x.device)
            _ops.run(_ADD, [Tensor(yt.transpose(1, 0, 2)), b], out=y._data)
    return Tensor(y._data.reshape((n, co) + o))  # y is new and C-contiguous


def conv2d_backward(grad, x, w, *, stride=1, padding=0, dilation=1):
    """(dx, dw, db) of conv2d(x, w, b) for the output gradient grad (N, Cout, oh, ow):
    dx = col2im_add(w^T @ grad), dw = grad @ im2col(x)^T summed over the batch, db = grad
    summed over (N, oh, ow). Deterministic (no atomics anywhere)."""
    x, w = _conv_operands("conv2d_backward", x, w)
    grad = tensor(grad, "conv2d_backward", "grad")
    n, co = x.shape[0], w.shape[0]
    params, o, pointwise, one = _plan("conv2d_backward", x, w, stride, padding, dilation)
    if grad.shape != (n, co) + o:
        raise ValueError(f"conv2d_backward(): grad has shape {grad.shape}, conv2d's output "
                         f"has {(n, co) + o}")
    if grad.dtype != x.dtype:
        raise TypeError(f"conv2d_backward(): grad and x dtypes differ ({grad.dtype} and {x.dtype})")
    L = o[0] * o[1]
    kk = w.shape[1] * w.shape[2] * w.shape[3]
    g3 = grad._data.reshape(n, co, L)
    w3 = w._data.reshape(1, co, kk)
    if not one:
        # dw: a GEMM per sample into (N, Cout, C*kh*kw), summed over the batch in a fixed
        # order
        cols = Tensor(x._data.reshape(n, kk, L)) if pointwise else fused(ops.IM2COL, [x], params)
        dw = _sum(Tensor(batched_gemm(g3, cols._data, trans_b=True)), axis=0)
        dcols = Tensor(batched_gemm(w3, g3, trans_a=True))  # (N, C*kh*kw, L)
        db = _sum(grad, axis=(0, 2, 3))
    else:
        # one GEMM each over the N*L columns: grad as (Cout, N*L), the columns as
        # (C*kh*kw, N*L) (1x1: x transposed)
        cols = _transposed(x._data.reshape(n, kk, L)) if pointwise else \
            fused(ops.IM2COL, [x], dict(params, layout="knl"))
        g2 = _transposed(g3)._data.reshape(1, co, n * L)
        dw = Tensor(batched_gemm(g2, cols._data.reshape(1, kk, n * L), trans_b=True))
        db = _sum(Tensor(g2.reshape(co, n * L)), axis=1)
        # dx: 1x1, the batched GEMMs' (N, C, L) is dx itself
        dcols = Tensor(batched_gemm(w3, g3, trans_a=True)) if pointwise else \
            Tensor(batched_gemm(w3, g2, trans_a=True).reshape(kk, n, L))
    dw = Tensor(dw._data.reshape(w.shape))  # (new, C-contiguous results here)
    if pointwise:
        return Tensor(dcols._data.reshape(x.shape)), dw, db
    dx = col2im_add(dcols, x.shape, w.shape[2:], stride=stride, padding=padding,
                    dilation=dilation, layout="knl" if one else "nkl")
    return dx, dw, db
