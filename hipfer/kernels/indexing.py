"""Name expressions and launch geometry for ``indexing.cuh`` (pure Python, no CuPy).

The geometry helpers turn shapes and *element* strides into the arguments the kernels
take (plain tuples; the CuPy backend packs them into ``hf::Shape`` / ``hf::Strides``),
merging axes that are contiguous for every operand so that the kernels' index
arithmetic stays short. They are pure so that a CPU test can check them.
"""
from __future__ import annotations

from typing import List, NamedTuple, Sequence, Tuple

import numpy as np

from . import DTYPES, ctype, dtypes_of_kinds

FILE = "indexing.cuh"
#: Bincount's counting kernel (its weighted sums are idx_keys + idx_apply of FILE)
BINCOUNT_FILE = "bincount.cuh"
INDEX_DTYPES = dtypes_of_kinds("iu")

Shape = Tuple[int, ...]


# ------------------------------------------------------------- name expressions
def storage_ctype(dt) -> str:
    """The type that moves the bytes of dt: an unsigned int of its size, except complex
    (kept, so that the conjugation flag can be applied)."""
    dt = np.dtype(dt)
    if dt.kind == "c":
        return ctype(dt)
    ctype(dt)  # a clear TypeError for dtypes without a kernel type
    return ctype(np.dtype(f"u{dt.itemsize}"))


def gather_expr(dt, index_dt) -> str:
    return f"hf::idx_gather<{storage_ctype(dt)}, {ctype(index_dt)}>"


def keys_expr(index_dt) -> str:
    return f"hf::idx_keys<{ctype(index_dt)}>"


def apply_expr(dt, accumulate: bool) -> str:
    if accumulate:
        return f"hf::idx_apply<{ctype(dt)}, true>"
    return f"hf::idx_apply<{storage_ctype(dt)}, false>"


def copy_expr(dt) -> str:
    return f"hf::idx_copy<{storage_ctype(dt)}>"


def bincount_expr(index_dt) -> str:
    return f"hf::bincount<{ctype(index_dt)}>"


#: Histogram's data dtypes (real, no bool) and the edge dtypes instantiated for each
#: besides its own (int bins give float edges; np.arange edges are int64)
HISTOGRAM_DTYPES = tuple(t for t in DTYPES if t.kind in "iuf")
HISTOGRAM_EDGES = tuple(np.dtype(t) for t in ("int64", "float16", "float32", "float64"))


def histogram_compare(x_dt, e_dt) -> np.dtype:
    """The dtype Histogram compares data and edges in: NumPy's result type."""
    return np.result_type(np.dtype(x_dt), np.dtype(e_dt))


def histogram_expr(x_dt, e_dt) -> str:
    c = histogram_compare(x_dt, e_dt)
    return f"hf::histogram<{ctype(x_dt)}, {ctype(e_dt)}, {ctype(c)} >"


def histogram_pairs() -> List[tuple]:
    """(data, edges) dtype pairs with a kernel: each data dtype with its own and the
    HISTOGRAM_EDGES dtypes where the result type has a kernel type; other pairs are cast
    to their result type first (the handler), which every data dtype covers."""
    out = []
    for t in HISTOGRAM_DTYPES:
        for e in dict.fromkeys((t,) + HISTOGRAM_EDGES):
            if histogram_compare(t, e) in HISTOGRAM_DTYPES:
                out.append((t, e))
    return out


def _storage_dtypes() -> List[np.dtype]:
    """One dtype per distinct storage type, in DTYPES order."""
    seen, out = set(), []
    for t in DTYPES:
        s = storage_ctype(t)
        if s not in seen:
            seen.add(s)
            out.append(t)
    return out


def instances():
    store = _storage_dtypes()
    return [
        ("idx_gather", FILE, [gather_expr(t, i) for t in store for i in INDEX_DTYPES]),
        ("idx_keys", FILE, [keys_expr(i) for i in INDEX_DTYPES]),
        ("idx_apply", FILE, [apply_expr(t, False) for t in store]
                            + [apply_expr(t, True) for t in DTYPES]),
        ("idx_copy", FILE, [copy_expr(t) for t in store]),
        ("bincount", BINCOUNT_FILE, [bincount_expr(i) for i in INDEX_DTYPES]),
        ("histogram", BINCOUNT_FILE, [histogram_expr(t, e) for t, e in histogram_pairs()]),
    ]


# -------------------------------------------------------------------- geometry
def c_strides(shape: Sequence[int]) -> Shape:
    """Element strides of a C-contiguous array of this shape."""
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= n
    return tuple(reversed(out))


def merge_axes(shape: Sequence[int], strides: Sequence[Sequence[int]]):
    """Drop size-1 axes and merge neighbours that are contiguous for every stride set.
    C order is kept, so a flat position over the result equals one over ``shape``.
    Returns (shape, [strides, ...]); a scalar-like shape gives ()."""
    dims = []
    for d, n in enumerate(shape):
        if n == 1:
            continue
        ss = tuple(s[d] for s in strides)
        if dims and all(p == s * n for p, s in zip(dims[-1][1], ss)):
            dims[-1] = (dims[-1][0] * n, ss)
        else:
            dims.append((n, ss))
    return (tuple(n for n, _ in dims),
            [tuple(ss[k] for _, ss in dims) for k in range(len(strides))])


def merge_around(shape: Sequence[int], axis: int, strides: Sequence[Sequence[int]]):
    """merge_axes on the axes before and after ``axis``, which stays (even of size 1).
    Returns (shape, [strides, ...])."""
    pre, pre_st = merge_axes(shape[:axis], [s[:axis] for s in strides])
    post, post_st = merge_axes(shape[axis + 1:], [s[axis + 1:] for s in strides])
    return (pre + (shape[axis],) + post,
            [p + (s[axis],) + q for p, s, q in zip(pre_st, strides, post_st)])


def size_of(shape: Sequence[int]) -> int:
    return int(np.prod(shape, dtype=np.int64)) if len(shape) else 1


def unravel(pos: int, shape: Sequence[int]) -> Shape:
    """C-order coordinates of flat position pos."""
    coords = []
    for n in reversed(shape):
        pos, c = divmod(pos, n)
        coords.append(c)
    return tuple(reversed(coords))


def broadcast_coords(coords: Sequence[int], shape: Sequence[int]) -> Shape:
    """Coordinates, in an operand of ``shape``, of the element that NumPy broadcasting
    maps to ``coords`` of the (larger or equal rank) broadcast shape."""
    tail = coords[len(coords) - len(shape):] if shape else ()
    return tuple(0 if n == 1 else c for c, n in zip(tail, shape))


def broadcast_strides(shape_in: Sequence[int], strides_in: Sequence[int],
                      shape_out: Sequence[int]) -> Shape:
    """Element strides of an operand broadcast to shape_out (0 on new or size-1 axes)."""
    pad = len(shape_out) - len(shape_in)
    return (0,) * pad + tuple(0 if n == 1 else s for n, s in zip(shape_in, strides_in))


class GatherGeom(NamedTuple):
    """Arguments of idx_gather after n (see the kernel)."""
    n: int
    shape: Shape
    out_st: Shape
    a_st: Shape
    idx_st: Shape
    pos_st: Shape
    a_axis_stride: int


def gather_geometry(out_shape, axis, out_st, a_st, idx_st, pos_st) -> GatherGeom:
    """out[c] = a[c with axis -> index]: all strides are over out_shape (a's own on the
    axis, which is taken out of the sum)."""
    a_axis = a_st[axis]
    a_st = tuple(0 if d == axis else s for d, s in enumerate(a_st))
    shape, st = merge_around(tuple(out_shape), axis, [out_st, a_st, idx_st, pos_st])
    return GatherGeom(size_of(out_shape), shape, *st, a_axis)


def select_strides(ndim: int, axis: int, idx_stride: int):
    """(idx_st, pos_st) of IndexSelect: the 1-d index varies along the axis only."""
    idx_st = tuple(idx_stride if d == axis else 0 for d in range(ndim))
    pos_st = tuple(1 if d == axis else 0 for d in range(ndim))
    return idx_st, pos_st


class KeysGeom(NamedTuple):
    """Arguments of idx_keys after n."""
    n: int
    shape: Shape
    idx_st: Shape
    key_st: Shape
    mult: int


def scatter_keys_geometry(a_shape, idx_shape, idx_st, axis) -> KeysGeom:
    """Keys of Scatter: the flat C position in a of each index element's destination."""
    a_c = c_strides(a_shape)
    key_st = tuple(0 if d == axis else s for d, s in enumerate(a_c))
    shape, (ist, kst) = merge_around(tuple(idx_shape), axis, [idx_st, key_st])
    return KeysGeom(size_of(idx_shape), shape, ist, kst, a_c[axis])


def put_keys_geometry(b_shape, idx_shape, idx_st, indexed_shape, j) -> KeysGeom:
    """Keys of IndexPut for index tensor j of k (broadcast to b_shape): its term of the
    flat C position in indexed_shape = a.shape[:k]."""
    st = broadcast_strides(idx_shape, idx_st, b_shape)
    shape, (ist, kst) = merge_axes(tuple(b_shape), [st, (0,) * len(b_shape)])
    return KeysGeom(size_of(b_shape), shape, ist, kst, size_of(indexed_shape[j + 1:]))


class ApplyGeom(NamedTuple):
    """Arguments of idx_apply after keys and perm (see the kernel)."""
    nb: int
    nr: int
    dshape: Shape
    out_d_st: Shape
    bshape: Shape
    vals_b_st: Shape
    rshape: Shape
    out_r_st: Shape
    vals_r_st: Shape


def scatter_apply_geometry(a_shape, out_st, idx_shape, src_st) -> ApplyGeom:
    """Scatter: keys are flat positions in a; values are src at the index coordinates."""
    dshape, (od,) = merge_axes(tuple(a_shape), [out_st])
    bshape, (vb,) = merge_axes(tuple(idx_shape), [src_st])
    return ApplyGeom(size_of(idx_shape), 1, dshape, od, bshape, vb, (), (), ())


def put_apply_geometry(a_shape, out_st, k, b_shape, vals_shape, vals_st) -> ApplyGeom:
    """IndexPut: keys are flat positions in a.shape[:k]; values broadcast to
    b_shape + a.shape[k:]; the trailing axes a.shape[k:] are copied per key."""
    a_shape, b_shape = tuple(a_shape), tuple(b_shape)
    vst = broadcast_strides(vals_shape, vals_st, b_shape + a_shape[k:])
    nb = len(b_shape)
    dshape, (od,) = merge_axes(a_shape[:k], [out_st[:k]])
    bshape, (vb,) = merge_axes(b_shape, [vst[:nb]])
    rshape, (orr, vr) = merge_axes(a_shape[k:], [out_st[k:], vst[nb:]])
    return ApplyGeom(size_of(b_shape), size_of(a_shape[k:]), dshape, od, bshape, vb,
                     rshape, orr, vr)


def copy_geometry(shape, out_st, a_st):
    """(n, shape, out_st, a_st) of idx_copy."""
    mshape, (o, a) = merge_axes(tuple(shape), [out_st, a_st])
    return size_of(shape), mshape, o, a
