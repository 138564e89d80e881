"""Fused ops, conv: shape and dtype rules (see hipfer.prims.fused_ops).

Layout NCHW, two spatial axes. The window geometry is structural (descriptor params):
``kernel``, ``stride``, ``padding`` and ``dilation`` are (height, width) pairs of ints;
ops whose output is the input of a forward op (col2im_add, max_unpool,
avg_pool_backward) also take ``x_hw``, that input's (H, W), which the other operand
does not determine when the stride is above 1.

Columns (im2col's output, col2im_add's input) are (N, C*kh*kw, oh*ow) (``layout``
"nkl", the default): row (c*kh + i)*kw + j holds tap (i, j) of channel c at every output
position, so a convolution is one batched GEMM, (Cout, C*kh*kw) @ (N, C*kh*kw, oh*ow) ->
(N, Cout, oh*ow), NCHW output without a transpose. ``layout`` "knl" puts the batch
inside: (C*kh*kw, N, oh*ow), so that the convolution is one GEMM over all N*oh*ow
columns, which runs faster than the batch of small ones (hipfer.nn.conv2d).

Pools: padding reads as nothing (max: never wins; avg: counts in the divisor only with
count_include_pad) and must be at most half the kernel, as in PyTorch, so that every
window holds an input element. Pools have no dilation.
"""
from __future__ import annotations

from ...prims.fused_ops import INDEX, FusedOpDef, floats, index, ndim, same


def _pair(desc, name, low, default=None):
    v = desc.get(name, default)
    if (not isinstance(v, tuple) or len(v) != 2
            or not all(isinstance(e, int) and not isinstance(e, bool) for e in v)):
        raise ValueError(f"{desc!r}: {name} must be a pair of ints, got {v!r}")
    if min(v) < low:
        raise ValueError(f"{desc!r}: {name} must be >= {low}, got {v}")
    return v


def geometry(desc, hw, pool: bool = False):
    """(kernel, stride, padding, dilation, (oh, ow)) for input planes hw, validated."""
    k = _pair(desc, "kernel", 1)
    s = _pair(desc, "stride", 1)
    p = _pair(desc, "padding", 0)
    d = (1, 1) if pool else _pair(desc, "dilation", 1)
    if pool and (p[0] > k[0] // 2 or p[1] > k[1] // 2):
        raise ValueError(f"{desc!r}: padding {p} must be at most half the kernel {k}")
    if min(hw) < 1:
        raise ValueError(f"{desc!r}: input planes must not be empty, got {tuple(hw)}")
    o = tuple((n + 2 * p[a] - d[a] * (k[a] - 1) - 1) // s[a] + 1 for a, n in enumerate(hw))
    if min(o) < 1:
        raise ValueError(f"{desc!r}: the kernel {k} (dilation {d}) does not fit the padded "
                         f"input {tuple(hw)} (padding {p})")
    return k, s, p, d, o


def _x_hw(desc):
    return _pair(desc, "x_hw", 1)


LAYOUTS = ("nkl", "knl")


def knl(desc) -> bool:
    """Whether the columns are (C*kh*kw, N, oh*ow) (layout "knl"), else (N, C*kh*kw, oh*ow)."""
    v = desc.get("layout", "nkl")
    if v not in LAYOUTS:
        raise ValueError(f"{desc!r}: layout must be one of {LAYOUTS}, got {v!r}")
    return v == "knl"


def _im2col(desc, dtypes, shapes):
    dt = floats(desc, dtypes)
    ndim(desc, shapes[0], 4, "x (N, C, H, W)")
    n, c, h, w = shapes[0]
    k, _, _, _, o = geometry(desc, (h, w))
    rows, cols = c * k[0] * k[1], o[0] * o[1]
    return (((rows, n, cols) if knl(desc) else (n, rows, cols), dt),)


def _col2im_add(desc, dtypes, shapes):
    dt = floats(desc, dtypes)
    inner = knl(desc)
    ndim(desc, shapes[0], 3, "cols (C*kh*kw, N, oh*ow)" if inner else "cols (N, C*kh*kw, oh*ow)")
    h, w = _x_hw(desc)
    k, _, _, _, o = geometry(desc, (h, w))
    rows, n, cols = shapes[0] if inner else (shapes[0][1], shapes[0][0], shapes[0][2])
    if rows % (k[0] * k[1]) or cols != o[0] * o[1]:
        want = f"C*{k[0] * k[1]}, N, {o[0] * o[1]}" if inner else f"N, C*{k[0] * k[1]}, {o[0] * o[1]}"
        raise ValueError(f"{desc!r}: cols shape {tuple(shapes[0])} does not fit kernel {k} "
                         f"with {o[0] * o[1]} output positions (({want}))")
    return (((n, rows // (k[0] * k[1]), h, w), dt),)


def _pool_out(desc, dtypes, shapes):
    dt = floats(desc, dtypes)
    ndim(desc, shapes[0], 4, "x (N, C, H, W)")
    n, c, h, w = shapes[0]
    o = geometry(desc, (h, w), pool=True)[4]
    return (n, c) + o, dt


def _max_pool(desc, dtypes, shapes):
    shape, dt = _pool_out(desc, dtypes, shapes)
    return ((shape, dt), (shape, INDEX))


def _avg_pool(desc, dtypes, shapes):
    _flag(desc, "count_include_pad")
    return (_pool_out(desc, dtypes, shapes),)


def _flag(desc, name):
    if not isinstance(desc.get(name), bool):
        raise ValueError(f"{desc!r}: {name} must be a bool, got {desc.get(name)!r}")


def _pool_back(desc, dtypes, shapes, what):
    """The (N, C, H, W) a pooling gradient of shape shapes[0] goes back to."""
    ndim(desc, shapes[0], 4, f"{what} (N, C, oh, ow)")
    h, w = _x_hw(desc)
    o = geometry(desc, (h, w), pool=True)[4]
    n, c, oh, ow = shapes[0]
    if (oh, ow) != o:
        raise ValueError(f"{desc!r}: {what} planes {(oh, ow)} do not fit the pooling of "
                         f"{(h, w)} planes, which gives {o}")
    return n, c, h, w


def _max_unpool(desc, dtypes, shapes):
    dt = floats(desc, dtypes, 0)
    index(desc, dtypes, 1, "argmax")
    same(desc, shapes[0], shapes[1], "y and argmax")
    return ((_pool_back(desc, dtypes, shapes, "y"), dt),)


def _avg_pool_backward(desc, dtypes, shapes):
    dt = floats(desc, dtypes)
    _flag(desc, "count_include_pad")
    return ((_pool_back(desc, dtypes, shapes, "grad"), dt),)


def bad_argmax(desc, pos, value=None) -> str:
    """max_unpool's error for an argmax outside its window (both backends raise it)."""
    v = "" if value is None else f" (= {value})"
    return (f"{desc!r}: argmax element {pos} (flat){v} is not an input position inside its "
            "pooling window")


def _probe_x(desc):
    """An (N, C, H, W) input that fits the descriptor's window."""
    k = desc.get("kernel", (1, 1))
    d = desc.get("dilation", (1, 1))
    try:
        return ((1, 1) + tuple(d[a] * (k[a] - 1) + 1 for a in range(2)),)
    except (TypeError, IndexError):
        return ((1, 1, 1, 1),)  # infer names the bad parameter


def _probe_back(desc):
    try:
        o = geometry(desc, desc.get("x_hw"), pool=desc.op != COL2IM_ADD.name)[4]
    except (TypeError, ValueError, IndexError):
        return ((1, 1, 1, 1),) * (2 if desc.op == MAX_UNPOOL.name else 1)
    if desc.op == COL2IM_ADD.name:
        k = desc.get("kernel")
        return ((k[0] * k[1], 1, o[0] * o[1]) if knl(desc) else (1, k[0] * k[1], o[0] * o[1]),)
    return ((1, 1) + o,) * (2 if desc.op == MAX_UNPOOL.name else 1)


IM2COL = FusedOpDef(
    "im2col", 1, _im2col, _probe_x, {},
    "columns (N, C*kh*kw, oh*ow) of x (N, C, H, W), or (C*kh*kw, N, oh*ow) for "
    "layout 'knl'; padding taps read 0")
COL2IM_ADD = FusedOpDef(
    "col2im_add", 1, _col2im_add, _probe_back, {},
    "the adjoint of im2col: each x element sums the column entries of its taps, "
    "in tap order (a gather, no atomics)")
MAX_POOL = FusedOpDef(
    "max_pool", 1, _max_pool, _probe_x, {},
    "(y, argmax): window maxima and their flat index in the input plane; ties "
    "to the first, a NaN wins (the first NaN), padding never wins")
MAX_UNPOOL = FusedOpDef(
    "max_unpool", 2, _max_unpool, _probe_back, {},
    "max_pool's backward: each x element sums, in window order, the y of the "
    "windows whose argmax it is; an argmax outside its window is an IndexError")
AVG_POOL = FusedOpDef(
    "avg_pool", 1, _avg_pool, _probe_x, {},
    "window means; the divisor counts padding when count_include_pad")
AVG_POOL_BACKWARD = FusedOpDef(
    "avg_pool_backward", 1, _avg_pool_backward, _probe_back, {},
    "avg_pool's backward: each x element sums grad / divisor over its windows")

#: every row of this topic (the op table loads it; MAKERS cover exactly these)
OPS = (IM2COL, COL2IM_ADD, MAX_POOL, MAX_UNPOOL, AVG_POOL, AVG_POOL_BACKWARD)
