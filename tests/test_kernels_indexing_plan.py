"""CPU-only checks of the GPU indexing and sort plans (nothing is compiled).

The launch geometry of hipfer.kernels.indexing (merged axes, element strides, keys) is
fed to NumPy emulations of the kernels of indexing.cuh / sort.cuh, run on flat buffers
exactly as the kernels address memory (element 0 of each operand plus signed element
strides), and compared with NumPy's own indexing. Operands are strided views with
permuted, stepped, negative and (for inputs) zero strides.
"""
import re

import numpy as np
import pytest

from hipfer.kernels import KERNEL_DIR, all_instances, module_source
from hipfer.kernels import indexing as K
from hipfer.kernels import sort as S


# ------------------------------------------------------------ strided operands
class Operand:
    """A strided view into a flat buffer: what a kernel sees as (pointer, strides)."""

    def __init__(self, rng, shape, dtype, *, bcast=False, values=None):
        dtype = np.dtype(dtype)
        nd = len(shape)
        st, acc = [0] * nd, 1
        for d in reversed(rng.permutation(nd)):
            step = int(rng.integers(1, 3))
            st[d] = (-1 if rng.random() < 0.3 else 1) * step * acc
            acc *= step * max(shape[d], 1)
        if bcast:
            st = [0 if rng.random() < 0.3 else s for s in st]
        self.st = tuple(st)
        span = 1 + sum(abs(s) * (n - 1) for s, n in zip(st, shape)) if 0 not in shape else 1
        self.start = sum(-s * (n - 1) for s, n in zip(st, shape) if s < 0)
        self.buf = _random(rng, span, dtype) if values is None else values(span)
        self.view = np.lib.stride_tricks.as_strided(
            self.buf[self.start:], shape, [s * dtype.itemsize for s in st])

    def at(self, off):
        return self.buf[self.start + off]

    def put(self, off, v):
        self.buf[self.start + off] = v


def _random(rng, n, dtype):
    if dtype == np.bool_:
        return rng.random(n) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -100), min(info.max, 100), n, endpoint=True).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dtype)
    return rng.standard_normal(n).astype(dtype)


def _indices(rng, size, dtype):
    """Index values in [-size, size) (unsigned: [0, size))."""
    dtype = np.dtype(dtype)
    lo = 0 if dtype.kind == "u" else -size
    return lambda n: rng.integers(lo, size, n).astype(dtype)


def _plant(rng, op: Operand, value):
    """Write value at one random element of the operand's view."""
    op.view[tuple(int(rng.integers(0, n)) for n in op.view.shape)] = value


# ----------------------------------------------------------- kernel emulations
def _offsets(pos, shape, st):
    """offset_of for an array of flat positions."""
    pos = np.asarray(pos, dtype=np.int64)
    if len(shape) == 0:
        return np.zeros_like(pos)
    coords = np.unravel_index(pos, shape)
    return sum(c.astype(np.int64) * s for c, s in zip(coords, st))


def _wrap(v, n):
    """idx_wrap: (positions, ok)."""
    if v.dtype.kind == "u":
        ok = v.astype(np.uint64) < np.uint64(n)
        return np.where(ok, v, 0).astype(np.int64), ok
    x = v.astype(np.int64)
    x = np.where(x < 0, x + n, x)
    return x, (x >= 0) & (x < n)


def emu_gather(out, a, idx, g: K.GatherGeom, axis_size, cj=False):
    """idx_gather; returns the reported error position or None."""
    ar = np.arange(g.n)
    oo, ao, io, po = (_offsets(ar, g.shape, st) for st in (g.out_st, g.a_st, g.idx_st, g.pos_st))
    v, ok = _wrap(idx.at(io), axis_size)
    vals = a.at(ao[ok] + v[ok] * g.a_axis_stride)
    out.put(oo[ok], np.conj(vals) if cj else vals)
    return int(po[~ok][0]) if (~ok).any() else None


def emu_keys(keys, idx, g: K.KeysGeom, axis_size, accumulate=False, pos_base=0):
    ar = np.arange(g.n)
    io, base = _offsets(ar, g.shape, g.idx_st), _offsets(ar, g.shape, g.key_st)
    v, ok = _wrap(idx.at(io), axis_size)
    key = base + np.where(ok, v, 0) * g.mult
    keys[:] = keys + key if accumulate else key
    return int(pos_base + ar[~ok][0]) if (~ok).any() else None


def emu_apply(out, vals, keys, perm, g: K.ApplyGeom, accumulate, cj=False):
    ks = keys[perm]
    r = np.arange(g.nr)
    o_r, v_r = _offsets(r, g.rshape, g.out_r_st), _offsets(r, g.rshape, g.vals_r_st)
    dest = _offsets(ks, g.dshape, g.out_d_st)
    src = _offsets(perm, g.bshape, g.vals_b_st)

    def load(s):
        v = vals.at(src[s] + v_r)
        return np.conj(v) if cj else v
    for s in range(g.nb):
        if accumulate:
            if s > 0 and ks[s - 1] == ks[s]:
                continue
            acc = out.at(dest[s] + o_r)
            t = s
            with np.errstate(over="ignore"):
                while t < g.nb and ks[t] == ks[s]:
                    acc = acc | load(t) if acc.dtype == np.bool_ else acc + load(t)
                    t += 1
            out.put(dest[s] + o_r, acc)
        elif s + 1 == g.nb or ks[s + 1] != ks[s]:
            out.put(dest[s] + o_r, load(s))


def emu_copy(out, a, shape, cj=False):
    n, mshape, o, s = K.copy_geometry(shape, out.st, a.st)
    ar = np.arange(n)
    v = a.at(_offsets(ar, mshape, s))
    out.put(_offsets(ar, mshape, o), np.conj(v) if cj else v)


# --------------------------------------------------------------- NumPy truths
def _norm(idx, n):
    x = idx.astype(np.int64)
    return np.where(x < 0, x + n, x)


def ref_scatter(a, idx, src, axis, add):
    out = a.copy()
    n = a.shape[axis]
    for e in np.ndindex(*idx.shape):
        dest = list(e)
        dest[axis] = _norm(idx[e], n)
        dest = tuple(dest)
        if not add:
            out[dest] = src[e]
        elif out.dtype == np.bool_:
            out[dest] |= src[e]
        else:
            with np.errstate(over="ignore"):
                out[dest] += src[e]
    return out


# ---------------------------------------------------------------------- tests
DTYPES = [np.float64, np.int8, np.complex64, np.bool_, np.uint32]
INDEX_DTYPES = [np.int64, np.int32, np.uint8, np.int16, np.uint64]


@pytest.mark.parametrize("shape,axis,n_idx", [((5, 7), 1, 9), ((4, 3, 6), 0, 5),
                                              ((2, 1, 5, 3), 2, 4), ((6,), 0, 8), ((3, 4), 0, 1)])
@pytest.mark.parametrize("dt,it", list(zip(DTYPES, INDEX_DTYPES)))
def test_index_select_geometry(rng, shape, axis, n_idx, dt, it):
    a = Operand(rng, shape, dt, bcast=True)
    idx = Operand(rng, (n_idx,), it, values=_indices(rng, shape[axis], it))
    out_shape = shape[:axis] + (n_idx,) + shape[axis + 1:]
    out = Operand(rng, out_shape, dt)
    idx_st, pos_st = K.select_strides(len(shape), axis, idx.st[0])
    g = K.gather_geometry(out_shape, axis, out.st, a.st, idx_st, pos_st)
    cj = dt == np.complex64
    assert emu_gather(out, a, idx, g, shape[axis], cj) is None
    want = np.take(a.view, _norm(idx.view, shape[axis]), axis=axis)
    np.testing.assert_array_equal(out.view, np.conj(want) if cj else want)


@pytest.mark.parametrize("shape,ix_shape,axis", [((5, 7), (3, 9), 1), ((4, 3, 6), (6, 2, 5), 0),
                                                 ((3, 4, 5), (3, 4, 5), 2), ((8,), (11,), 0)])
@pytest.mark.parametrize("dt,it", list(zip(DTYPES, INDEX_DTYPES)))
def test_gather_geometry(rng, shape, ix_shape, axis, dt, it):
    a = Operand(rng, shape, dt, bcast=True)
    idx = Operand(rng, ix_shape, it, bcast=True, values=_indices(rng, shape[axis], it))
    out = Operand(rng, ix_shape, dt)
    g = K.gather_geometry(ix_shape, axis, out.st, a.st, idx.st, K.c_strides(ix_shape))
    assert emu_gather(out, a, idx, g, shape[axis]) is None
    sub = a.view[tuple(slice(None) if d == axis else slice(0, n) for d, n in enumerate(ix_shape))]
    np.testing.assert_array_equal(
        out.view, np.take_along_axis(sub, _norm(idx.view, shape[axis]), axis))


@pytest.mark.parametrize("it", [np.int32, np.uint64, np.int8])
def test_gather_reports_the_bad_index_position(rng, it):
    shape, ix_shape, axis = (4, 6), (3, 5), 1
    a = Operand(rng, shape, np.float32)
    idx = Operand(rng, ix_shape, it, values=_indices(rng, shape[axis], it))
    _plant(rng, idx, shape[axis] + 3)
    out = Operand(rng, ix_shape, np.float32)
    g = K.gather_geometry(ix_shape, axis, out.st, a.st, idx.st, K.c_strides(ix_shape))
    pos = emu_gather(out, a, idx, g, shape[axis])
    value = idx.view[K.unravel(pos, ix_shape)]
    assert int(value) == shape[axis] + 3


@pytest.mark.parametrize("shape,ix_shape,src_shape,axis", [
    ((5, 7), (3, 9), (4, 9), 1), ((6, 3, 4), (12, 2, 4), (12, 3, 4), 0), ((5,), (17,), (20,), 0),
    ((3, 4, 5), (3, 4, 10), (3, 4, 10), 2)])
@pytest.mark.parametrize("add", [False, True])
@pytest.mark.parametrize("dt,it", list(zip(DTYPES, INDEX_DTYPES)))
def test_scatter_plan(rng, shape, ix_shape, src_shape, axis, add, dt, it):
    """keys -> stable argsort -> apply == NumPy scatter in index order (repeats)."""
    a = Operand(rng, shape, dt, bcast=True)
    idx = Operand(rng, ix_shape, it, bcast=True, values=_indices(rng, shape[axis], it))
    src = Operand(rng, src_shape, dt, bcast=True)
    out = Operand(rng, shape, dt)
    kg = K.scatter_keys_geometry(shape, ix_shape, idx.st, axis)
    keys = np.empty(kg.n, np.int64)
    assert emu_keys(keys, idx, kg, shape[axis]) is None
    emu_copy(out, a, shape)
    emu_apply(out, src, keys, np.argsort(keys, kind="stable"),
              K.scatter_apply_geometry(shape, out.st, ix_shape, src.st), add)
    want = ref_scatter(a.view, idx.view, src.view, axis, add)
    np.testing.assert_allclose(out.view, want, rtol=1e-6) if dt == np.complex64 else \
        np.testing.assert_array_equal(out.view, want)


@pytest.mark.parametrize("a_shape,idx_shapes,v_shape", [
    ((6, 5), [(7,)], (7, 5)), ((6, 5), [(7,)], (5,)), ((6, 5, 4), [(3, 1), (1, 8)], (3, 8, 4)),
    ((4, 5, 3), [(9,), (9,), (9,)], (9,)), ((4, 5, 3), [(), (6,)], ()), ((3, 4), [(2, 3), (3,)], (1,))])
@pytest.mark.parametrize("accumulate", [False, True])
@pytest.mark.parametrize("dt,it", list(zip(DTYPES, INDEX_DTYPES)))
def test_index_put_plan(rng, a_shape, idx_shapes, v_shape, accumulate, dt, it):
    a = Operand(rng, a_shape, dt, bcast=True)
    idxs = [Operand(rng, s, it, bcast=True, values=_indices(rng, a_shape[j], it))
            for j, s in enumerate(idx_shapes)]
    vals = Operand(rng, v_shape, dt, bcast=True)
    out = Operand(rng, a_shape, dt)
    k = len(idx_shapes)
    b_shape = np.broadcast_shapes(*idx_shapes)
    nb = K.size_of(b_shape)
    keys = np.empty(nb, np.int64)
    for j, ix in enumerate(idxs):
        g = K.put_keys_geometry(b_shape, ix.view.shape, ix.st, a_shape[:k], j)
        assert emu_keys(keys, ix, g, a_shape[j], accumulate=j > 0, pos_base=j * nb) is None
    emu_copy(out, a, a_shape)
    emu_apply(out, vals, keys, np.argsort(keys, kind="stable"),
              K.put_apply_geometry(a_shape, out.st, k, b_shape, v_shape, vals.st), accumulate)
    want = a.view.copy()
    where = tuple(_norm(ix.view, a_shape[j]) for j, ix in enumerate(idxs))
    if accumulate:
        with np.errstate(over="ignore"):
            np.add.at(want, where, vals.view)
    else:
        want[where] = vals.view
    np.testing.assert_allclose(out.view, want, rtol=1e-6) if dt == np.complex64 else \
        np.testing.assert_array_equal(out.view, want)


def test_index_put_reports_tensor_and_position(rng):
    a_shape, idx_shapes = (4, 6), [(3, 1), (5,)]
    idxs = [Operand(rng, idx_shapes[0], np.int64, values=_indices(rng, 4, np.int64)),
            Operand(rng, idx_shapes[1], np.int32, values=_indices(rng, 6, np.int32))]
    _plant(rng, idxs[1], 9)
    b_shape = (3, 5)
    nb = 15
    keys = np.empty(nb, np.int64)
    errs = [emu_keys(keys, ix, K.put_keys_geometry(b_shape, s, ix.st, a_shape, j), a_shape[j],
                     j > 0, j * nb) for j, (ix, s) in enumerate(zip(idxs, idx_shapes))]
    assert errs[0] is None and errs[1] is not None
    j, b = divmod(errs[1], nb)
    coords = K.broadcast_coords(K.unravel(b, b_shape), idx_shapes[j])
    assert j == 1 and int(idxs[1].view[coords]) == 9


def test_geometry_merges_contiguous_axes():
    shape = (4, 5, 6, 7)
    cs = K.c_strides(shape)
    g = K.gather_geometry(shape, 2, cs, cs, (0, 0, 1, 0), (0, 0, 1, 0))
    assert g.shape == (20, 6, 7) and g.a_axis_stride == 7
    assert K.merge_axes((1, 3, 1), [(9, 2, 9)]) == ((3,), [(2,)])
    assert K.merge_axes((1,), [(5,)]) == ((), [()])
    assert K.merge_around((1, 4, 1), 0, [(4, 1, 1)]) == ((1, 4), [(4, 1)])


def test_broadcast_coords_and_unravel():
    assert K.unravel(17, (3, 4, 5)) == (0, 3, 2)
    assert K.broadcast_coords((2, 3, 4), (1, 5)) == (0, 4)
    assert K.broadcast_coords((2, 3), ()) == ()


# ---------------------------------------------------------------- sort keys
def emu_sort_key(x, descending):
    """sort_key_of (+ ~ when descending) of sort.cuh, in NumPy."""
    x = np.asarray(x)
    kd = S.key_dtype(x.dtype)
    if x.dtype == np.bool_:
        k = x.astype(np.uint8)
    elif x.dtype.kind == "f":
        b = x.view(kd)
        top = np.iinfo(kd).max
        m = b & kd.type(top)
        k = np.where(np.isnan(x), top, np.where(b < 0, -m, m)).astype(kd)
    else:
        k = x
    return ~k if descending else k


def _want_order(x, descending):
    """Our rank order by definition: equal values (-0 == 0, NaN == NaN) by index."""
    def rank(i):
        nan = x.dtype.kind == "f" and bool(np.isnan(x[i]))
        val = 0 if nan else int(x[i]) if x.dtype.kind != "f" else float(x[i])
        return (not nan, -val) if descending else (nan, val)
    return sorted(range(len(x)), key=lambda i: (rank(i), i))


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int8, np.uint16, np.int64, np.bool_])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_keys_order(rng, dt, descending):
    if np.dtype(dt).kind == "f":
        x = rng.choice(np.array([0.0, -0.0, 1.5, -1.5, np.inf, -np.inf, np.nan, -np.nan, 2.0,
                                 np.finfo(dt).tiny, -np.finfo(dt).max], dtype=dt), 200)
    else:
        x = _random(rng, 200, np.dtype(dt))
    perm = np.argsort(emu_sort_key(x, descending), kind="stable")
    assert perm.tolist() == _want_order(x, descending)


def test_sort_key_source_matches_emulation():
    src = (KERNEL_DIR / "sort.cuh").read_text()
    assert "if (x != x) return 0x7fffffff;" in src
    assert "return b < 0 ? -m : m;" in src
    assert "keys[ko] = descending ? (K)~k : k;" in src
    for dt, kt in [("bool", "u8"), ("f32", "i32"), ("f64", "i64")]:
        assert f"template <> struct sort_key<{dt}> {{ typedef {kt} type; }};" in src
        assert np.dtype(S.key_dtype({"bool": np.bool_, "f32": np.float32,
                                     "f64": np.float64}[dt])).itemsize == \
            {"u8": 1, "i32": 4, "i64": 8}[kt]


# ------------------------------------------------------- instances and names
def test_instances_name_existing_kernels():
    groups = {g: (f, e) for g, f, e in all_instances()}
    for name in ("idx_gather", "idx_keys", "idx_apply", "idx_copy", "sort_keys"):
        file, exprs = groups[name]
        src = module_source(file)
        for e in exprs:
            kernel = re.match(r"hf::(\w+)<", e).group(1)
            assert f"__global__ void {kernel}(" in src
    assert len(groups["idx_gather"][1]) == 6 * 8
    assert K.storage_ctype(np.float32) == "unsigned int" and K.storage_ctype(np.bool_) == "unsigned char"
    assert K.storage_ctype(np.complex64) == "hf::complex<float>"
    assert K.storage_ctype(np.float16) == "unsigned short"  # moves bits, like int16
    with pytest.raises(TypeError):
        K.storage_ctype(np.longdouble)
