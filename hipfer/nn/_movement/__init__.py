"""hipfer.nn, movement ops (FusedPrims; rules in ops.py)."""
from __future__ import annotations

import operator

from ..._creation import zeros
from .._common import fused, tensor, writable
from . import ops

__all__ = ["rope", "permute_0213", "copy_2d", "gather_rows", "scatter_add_rows", "top_k_rows"]


def _int(v, name: str, what: str) -> int:
    if isinstance(v, bool):
        raise TypeError(f"{name}(): {what} must be an int, got {v!r}")
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError(f"{name}(): {what} must be an int, got {type(v).__name__}") from None


def rope(x, cos, sin, *, inverse=False):
    """Rotary position embedding of x (..., seq_len, head_dim) by the angle tables cos,
    sin (seq_len, head_dim/2), on interleaved pairs: (x[2i], x[2i+1]) at position l turns
    by the angle of (cos[l, i], sin[l, i]):

        out[2i] = x[2i] cos - x[2i+1] sin,    out[2i+1] = x[2i] sin + x[2i+1] cos.

    inverse=True turns by the opposite angle: it undoes rope (up to rounding) and is its
    gradient. head_dim must be even."""
    ts = [tensor(x, "rope"), tensor(cos, "rope", "cos"), tensor(sin, "rope", "sin")]
    return fused(ops.ROPE, ts, {"inverse": bool(inverse)})


def permute_0213(x):
    """(A, B, C, D) -> (A, C, B, D), C-contiguous: the attention head split
    (batch, seq, heads, head_dim) -> (batch, heads, seq, head_dim) and, applied again,
    the merge back."""
    return fused(ops.PERMUTE_0213, [tensor(x, "permute_0213")])


def copy_2d(src, dst, *, rows, cols, src_offset=0, src_stride=None, dst_offset=0,
            dst_stride=None):
    """Copy a rows x cols block between strided rows, in place on dst; returns dst.

    Offsets and strides count elements of the tensors' flat C-order views:
    ``dst.flat[dst_offset + r*dst_stride + c] = src.flat[src_offset + r*src_stride + c]``
    for r < rows, c < cols (a column slice of a wider matrix is an offset and the
    matrix's row length as stride). Strides default to cols; src_stride 0 repeats one
    row. Both blocks must lie inside their tensors, dst rows must not overlap
    (dst_stride >= cols), and the two blocks' spans must not share memory (ValueError)."""
    name = "copy_2d"
    rows, cols = _int(rows, name, "rows"), _int(cols, name, "cols")
    params = {"rows": rows, "cols": cols,
              "src_offset": _int(src_offset, name, "src_offset"),
              "src_stride": cols if src_stride is None else _int(src_stride, name, "src_stride"),
              "dst_offset": _int(dst_offset, name, "dst_offset"),
              "dst_stride": cols if dst_stride is None else _int(dst_stride, name, "dst_stride")}
    dst = writable(dst, name, "dst")
    return fused(ops.COPY_2D, [tensor(src, name, "src"), dst], params, out=dst)


def gather_rows(x, index):
    """x[index] along the first axis: x (n, ...), index int64 (m,) -> (m, ...). An index
    outside [0, n) (negative ones too) raises IndexError."""
    return fused(ops.GATHER_ROWS, [tensor(x, "gather_rows"),
                                   tensor(index, "gather_rows", "index")])


def scatter_add_rows(src, index, n=None, *, out=None):
    """out[index[i]] += src[i] for every i: src (m, ...), index int64 (m,), into a new
    zero (n, ...) tensor, or in place into out (returned). Repeated rows accumulate in
    increasing i, as np.add.at does, on every backend (the GPU uses no atomics): results
    repeat bit for bit. An index outside [0, n) raises IndexError before anything is
    written. It is the gradient of gather_rows."""
    name = "scatter_add_rows"
    src, index = tensor(src, name, "src"), tensor(index, name, "index")
    if out is None:
        if n is None:
            raise TypeError(f"{name}(): give n (the rows of the result) or out")
        n = _int(n, name, "n")
        if n < 0:
            raise ValueError(f"{name}(): n must be >= 0, got {n}")
        out = zeros((n,) + tuple(src.shape[1:]), dtype=src.dtype, device=src.device)
    else:
        out = writable(out, name, "out")
        if n is not None and _int(n, name, "n") != out.shape[0]:
            raise ValueError(f"{name}(): n = {n} but out has {out.shape[0]} rows")
    return fused(ops.SCATTER_ADD_ROWS, [src, index, out], out=out)


def top_k_rows(x, k, *, largest=True):
    """The k largest (or smallest) elements of each row of x (..., cols) in rank order:
    (values, int64 indices), each (..., k). NaN ranks above every number, so it comes
    first when largest and last when not; -0.0 and 0.0 are equal; equal values keep
    the lower index first. Every backend gives the same bits. 0 <= k <= cols, else
    ValueError."""
    params = {"k": _int(k, "top_k_rows", "k"), "largest": bool(largest)}
    return fused(ops.TOP_K_ROWS, [tensor(x, "top_k_rows")], params)
