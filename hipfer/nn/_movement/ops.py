"""Fused ops, movement: shape and dtype rules (see hipfer.prims.fused_ops).

rope        x (..., L, D), cos, sin (L, D/2) -> (..., L, D). Interleaved pairs: for pair
            i = (x[2i], x[2i+1]) and angle (cos[l, i], sin[l, i]) of position l,
            out[2i] = x[2i] cos - x[2i+1] sin,  out[2i+1] = x[2i] sin + x[2i+1] cos;
            ``inverse`` rotates by the opposite angle (the exact inverse up to rounding,
            and the gradient of rope, since a rotation's transpose is its inverse).
permute_0213  (A, B, C, D) -> (A, C, B, D) (attention head split / merge; its own inverse).
copy_2d     dst[dst_offset + r*dst_stride + c] = src[src_offset + r*src_stride + c] for
            r < rows, c < cols, on the flat C-order elements of src and dst (in place on
            dst). Geometry in the descriptor: rows, cols, src_offset, src_stride (>= 0; 0
            repeats one row), dst_offset, dst_stride (>= cols when rows > 1, so that no
            element is written twice); both blocks must lie inside their tensors.
gather_rows   x (n, ...) and int64 index (m,) -> x[index] (m, ...).
scatter_add_rows  src (m, ...), int64 index (m,), out (n, ...): out[index[i]] += src[i]
            in place on out, repeated rows accumulated in increasing i (as np.add.at).
top_k_rows  x (..., cols) -> values (..., k), int64 indices (..., k): the k largest
            (``largest``) or smallest of each row in rank order. NaN ranks above every
            number (first when largest, last when smallest), -0.0 == 0.0, and equal
            values keep the lower index first (the order of the SortPrims Topk).

Out-of-range indices are IndexErrors raised by the backends at run time.
"""
from __future__ import annotations

from ...prims.fused_ops import INDEX, FusedOpDef, floats, index, ndim, same


def _int(desc, name, low, default=None) -> int:
    v = desc.get(name, default)
    if not isinstance(v, int) or isinstance(v, bool):
        raise ValueError(f"{desc!r}: {name} must be an int, got {v!r}")
    if v < low:
        raise ValueError(f"{desc!r}: {name} must be >= {low}, got {v}")
    return v


def _flag(desc, name, default: bool) -> bool:
    v = desc.get(name, default)
    if not isinstance(v, bool):
        raise ValueError(f"{desc!r}: {name} must be a bool, got {v!r}")
    return v


def _size(shape) -> int:
    n = 1
    for e in shape:
        n *= e
    return n


def bad_row(op: str, value: int, n: int) -> IndexError:
    """The error of an index outside [0, n) (both backends)."""
    return IndexError(f"{op}(): index {value} is out of bounds for {n} rows")


def overlap_error(op: str) -> ValueError:
    return ValueError(f"{op}(): the source and destination blocks share memory (their "
                      "spans overlap); copy through a temporary")


def spans_overlap(src_ptr, dst_ptr, itemsize, geometry) -> bool:
    """Whether copy_2d's source and destination spans (first to last byte of each
    block, given each buffer's address) overlap: a conservative test, the same on
    every backend."""
    rows, cols, so, ss, do, ds = geometry
    if not rows or not cols:
        return False
    s0, d0 = src_ptr + so * itemsize, dst_ptr + do * itemsize
    s1 = s0 + ((rows - 1) * ss + cols) * itemsize
    d1 = d0 + ((rows - 1) * ds + cols) * itemsize
    return s0 < d1 and d0 < s1


def rope_tables(desc, x, cos, sin) -> None:
    """x is (..., seq_len, head_dim) with an even head_dim, cos and sin (seq_len, head_dim/2)
    (also the rule of lrp_rope)."""
    if len(x) < 2:
        raise ValueError(f"{desc!r}: x must be (..., seq_len, head_dim), got shape {x}")
    length, dim = x[-2:]
    if dim % 2:
        raise ValueError(f"{desc!r}: head_dim must be even, got {dim}")
    for name, t in (("cos", cos), ("sin", sin)):
        if tuple(t) != (length, dim // 2):
            raise ValueError(f"{desc!r}: {name} must have shape (seq_len, head_dim/2) = "
                             f"{(length, dim // 2)}, got {tuple(t)}")


def _rope(desc, dtypes, shapes):
    _flag(desc, "inverse", False)
    dt = floats(desc, dtypes)
    x, cos, sin = shapes
    rope_tables(desc, x, cos, sin)
    return ((x, dt),)


def _permute_0213(desc, dtypes, shapes):
    dt = floats(desc, dtypes)
    ndim(desc, shapes[0], 4, "x (A, B, C, D)")
    a, b, c, d = shapes[0]
    return (((a, c, b, d), dt),)


def copy_2d_geometry(desc):
    """(rows, cols, src_offset, src_stride, dst_offset, dst_stride), validated alone."""
    rows, cols = _int(desc, "rows", 0), _int(desc, "cols", 0)
    so, ss = _int(desc, "src_offset", 0, 0), _int(desc, "src_stride", 0, cols)
    do, ds = _int(desc, "dst_offset", 0, 0), _int(desc, "dst_stride", 0, cols)
    if rows > 1 and cols and ds < cols:
        raise ValueError(f"{desc!r}: dst_stride {ds} < cols {cols} writes rows over each other")
    return rows, cols, so, ss, do, ds


def _extent(rows, cols, offset, stride) -> int:
    """Elements a block needs its buffer to have (0 for an empty block)."""
    return offset + (rows - 1) * stride + cols if rows and cols else 0


def _copy_2d(desc, dtypes, shapes):
    rows, cols, so, ss, do, ds = copy_2d_geometry(desc)
    dt = floats(desc, dtypes)
    for what, shape, off, st in (("src", shapes[0], so, ss), ("dst", shapes[1], do, ds)):
        need, have = _extent(rows, cols, off, st), _size(shape)
        if need > have:
            raise ValueError(f"{desc!r}: the {what} block ends at element {need}, past the "
                             f"{have} elements of {what} (shape {tuple(shape)})")
    return ((shapes[1], dt),)


def _copy_2d_probe(desc):
    rows, cols, so, ss, do, ds = copy_2d_geometry(desc)
    return ((max(_extent(rows, cols, so, ss), 1),), (max(_extent(rows, cols, do, ds), 1),))


def _gather_rows(desc, dtypes, shapes):
    dt = floats(desc, dtypes, 0)
    index(desc, dtypes, 1)
    x, idx = shapes
    if len(x) < 1:
        raise ValueError(f"{desc!r}: x must have a row axis, got shape {x}")
    ndim(desc, idx, 1, "index")
    return ((tuple(idx) + tuple(x[1:]), dt),)


def _scatter_add_rows(desc, dtypes, shapes):
    dt = floats(desc, dtypes, 0, 2)
    index(desc, dtypes, 1)
    src, idx, out = shapes
    ndim(desc, idx, 1, "index")
    if len(src) < 1 or len(out) < 1:
        raise ValueError(f"{desc!r}: src and out must have a row axis, got {src} and {out}")
    if src[0] != idx[0]:
        raise ValueError(f"{desc!r}: src has {src[0]} rows but index has {idx[0]} entries")
    same(desc, src[1:], out[1:], "row (src[i] and out[j])")
    return ((out, dt),)


def top_k_params(desc, cols=None):
    """(k, largest), validated (k against cols when given)."""
    k, largest = _int(desc, "k", 0), _flag(desc, "largest", True)
    if cols is not None and k > cols:
        raise ValueError(f"{desc!r}: k = {k} is out of range for rows of {cols}")
    return k, largest


def _top_k_rows(desc, dtypes, shapes):
    dt = floats(desc, dtypes)
    x = shapes[0]
    if len(x) < 1:
        raise ValueError(f"{desc!r}: x must have a row axis, got shape {x}")
    k, _ = top_k_params(desc, x[-1])
    out = tuple(x[:-1]) + (k,)
    return ((out, dt), (out, INDEX))

ROPE = FusedOpDef(
    "rope", 3, _rope, lambda desc: ((1, 2), (1, 1), (1, 1)), {},
    "rotary embedding of interleaved pairs (x[2i], x[2i+1]); inverse=True "
    "rotates back")
PERMUTE_0213 = FusedOpDef(
    "permute_0213", 1, _permute_0213, lambda desc: ((1, 1, 1, 1),), {},
    "(A, B, C, D) -> (A, C, B, D), C-contiguous")
COPY_2D = FusedOpDef(
    "copy_2d", 2, _copy_2d, _copy_2d_probe, {},
    "copy a rows x cols block between strided rows of flat src and dst (in "
    "place on dst)")
GATHER_ROWS = FusedOpDef(
    "gather_rows", 2, _gather_rows, lambda desc: ((1, 1), (1,)), {},
    "x[index] along the first axis; out-of-range index -> IndexError")
SCATTER_ADD_ROWS = FusedOpDef(
    "scatter_add_rows", 3, _scatter_add_rows,
    lambda desc: ((1, 1), (1,), (1, 1)), {},
    "out[index[i]] += src[i] in place on out, in increasing i (deterministic)")
TOP_K_ROWS = FusedOpDef(
    "top_k_rows", 1, _top_k_rows,
    lambda desc: ((max(top_k_params(desc)[0], 1),),), {},
    "k largest/smallest per row, rank order; NaN above every number, ties to "
    "the lower index")

#: every row of this topic (the op table loads it; MAKERS cover exactly these)
OPS = (ROPE, PERMUTE_0213, COPY_2D, GATHER_ROWS, SCATTER_ADD_ROWS, TOP_K_ROWS)
