"""hipfer.nn movement ops against NumPy on each backend: rope, permute_0213, copy_2d,
gather_rows, scatter_add_rows, top_k_rows."""
import numpy as np
import pytest

import hipfer as hf
import hipfer.nn as nn

from test_tensor import host, rand

FLOATS = [np.float32, np.float64]
UINT = {np.dtype(np.float32): np.uint32, np.dtype(np.float64): np.uint64}


def tol(dt):
    return dict(rtol=2e-6, atol=1e-6) if np.dtype(dt) == np.float32 else dict(rtol=1e-13, atol=1e-14)


def assert_bits(got, want):
    """Equal bit for bit (NaN payloads and the sign of zero included)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype
    if got.dtype.kind == "f":
        got, want = got.view(UINT[got.dtype]), want.view(UINT[want.dtype])
    np.testing.assert_array_equal(got, want)


def index(a):
    return hf.asarray(np.asarray(a, dtype=np.int64))


def central_difference(f, x, h=1e-6):
    """d sum(f(x)) / dx by central differences, every element (float64)."""
    g = np.empty_like(x)
    for i in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += h
        xm[i] -= h
        g[i] = (f(xp).sum() - f(xm).sum()) / (2 * h)
    return g


# ------------------------------------------------------------------------------ rope
def rope_ref(x, cos, sin, inverse=False):
    x0, x1 = x[..., 0::2], x[..., 1::2]
    if inverse:
        sin = -sin
    out = np.empty_like(x)
    out[..., 0::2] = x0 * cos - x1 * sin
    out[..., 1::2] = x0 * sin + x1 * cos
    return out


def tables(rng, length, dim, dtype):
    theta = rng.uniform(-4, 4, (length, dim // 2))
    return np.cos(theta).astype(dtype), np.sin(theta).astype(dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(1, 2), (3, 5, 8), (2, 3, 7, 6), (5, 33, 2), (0, 4, 6),
                                   (2, 0, 4), (300, 130)])
def test_rope(be, rng, dtype, shape):
    x = rand(rng, shape, dtype)
    cos, sin = tables(rng, shape[-2], shape[-1], dtype)
    X, C, S = hf.asarray(x), hf.asarray(cos), hf.asarray(sin)
    y = nn.rope(X, C, S)
    assert y.shape == shape and y.dtype == dtype
    np.testing.assert_allclose(host(y), rope_ref(x, cos, sin), **tol(dtype))
    np.testing.assert_allclose(host(nn.rope(X, C, S, inverse=True)),
                               rope_ref(x, cos, sin, inverse=True), **tol(dtype))
    # the inverse undoes it, up to rounding
    np.testing.assert_allclose(host(nn.rope(y, C, S, inverse=True)), x, **tol(dtype))
    assert_bits(host(nn.rope(X, C, S)), host(y))  # repeats bit for bit


def test_rope_gradient(be, rng):
    """rope is linear and orthogonal: the gradient of sum(w * rope(x)) is rope(w, inverse)."""
    x, w = rand(rng, (2, 3, 4), np.float64), rand(rng, (2, 3, 4), np.float64)
    cos, sin = tables(rng, 3, 4, np.float64)
    C, S = hf.asarray(cos), hf.asarray(sin)
    fd = central_difference(lambda v: w * host(nn.rope(hf.asarray(v), C, S)), x)
    np.testing.assert_allclose(host(nn.rope(hf.asarray(w), C, S, inverse=True)), fd,
                               rtol=1e-7, atol=1e-8)
    fd = central_difference(lambda v: w * host(nn.rope(hf.asarray(v), C, S, inverse=True)), x)
    np.testing.assert_allclose(host(nn.rope(hf.asarray(w), C, S)), fd, rtol=1e-7, atol=1e-8)


def test_rope_bad_input(be):
    x, t = hf.asarray(np.ones((2, 3, 4))), hf.asarray(np.ones((3, 2)))
    with pytest.raises(ValueError, match="head_dim must be even"):
        nn.rope(hf.asarray(np.ones((2, 3, 5))), t, t)
    with pytest.raises(ValueError, match="cos must have shape"):
        nn.rope(x, hf.asarray(np.ones((3, 4))), t)
    with pytest.raises(ValueError, match="sin must have shape"):
        nn.rope(x, t, hf.asarray(np.ones((2, 2))))
    with pytest.raises(ValueError, match="seq_len, head_dim"):
        nn.rope(hf.asarray(np.ones(4)), t, t)
    with pytest.raises(TypeError, match="dtypes differ"):
        nn.rope(x, hf.asarray(np.ones((3, 2), np.float32)), t)
    with pytest.raises(TypeError, match="float32 or float64"):
        nn.rope(hf.asarray(np.ones((2, 3, 4), np.int64)), t, t)


# ---------------------------------------------------------------------- permute_0213
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(1, 1, 1, 1), (2, 3, 5, 7), (2, 33, 40, 1), (1, 37, 3, 3),
                                   (2, 5, 9, 4), (3, 2, 65, 2), (2, 65, 3, 64), (1, 3, 2, 33),
                                   (0, 3, 4, 5), (2, 3, 4, 0)])
def test_permute_0213(be, rng, dtype, shape):
    x = rand(rng, shape, dtype)
    y = nn.permute_0213(hf.asarray(x))
    assert_bits(host(y), np.ascontiguousarray(x.transpose(0, 2, 1, 3)))
    assert_bits(host(nn.permute_0213(y)), x)  # its own inverse


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("start", [1, 2, 3, 4])
def test_permute_0213_offset_view(be, rng, dtype, start):
    """A contiguous view that starts off the 16-byte grid takes a narrower copy unit."""
    shape = (2, 7, 5, 8)
    flat = rand(rng, (start + int(np.prod(shape)),), dtype)
    x = hf.reshape(hf.asarray(flat)[start:], shape)
    assert_bits(host(nn.permute_0213(x)),
                np.ascontiguousarray(flat[start:].reshape(shape).transpose(0, 2, 1, 3)))


def test_permute_0213_bad_input(be):
    with pytest.raises(ValueError, match="4-d"):
        nn.permute_0213(hf.asarray(np.ones((2, 3, 4))))
    with pytest.raises(TypeError, match="float32 or float64"):
        nn.permute_0213(hf.asarray(np.ones((1, 2, 3, 4), np.int32)))


# --------------------------------------------------------------------------- copy_2d
def copy_2d_ref(src, dst, rows, cols, so, ss, do, ds):
    out, s = dst.copy().reshape(-1), src.reshape(-1)
    for r in range(rows):
        out[do + r * ds: do + r * ds + cols] = s[so + r * ss: so + r * ss + cols]
    return out.reshape(dst.shape)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("geo", [
    # rows, cols, src_offset, src_stride, dst_offset, dst_stride
    (5, 3, 2, 9, 4, 11),        # a column slice into another
    (7, 16, 0, 16, 0, 16),      # contiguous rows (16-byte units)
    (33, 5, 1, 7, 3, 6),        # odd everything
    (4, 8, 0, 0, 1, 9),         # src_stride 0: one row repeated
    (1, 300, 5, 1, 7, 1),       # one long row; strides do not matter
    (0, 4, 0, 4, 0, 4),         # nothing to copy
    (3, 0, 0, 0, 0, 0),
])
def test_copy_2d(be, rng, dtype, geo):
    rows, cols, so, ss, do, ds = geo
    src = rand(rng, (max(so + max(rows - 1, 0) * ss + cols, 1) + 3,), dtype)
    dst = rand(rng, (4, max(do + max(rows - 1, 0) * ds + cols, 1)), dtype)
    D = hf.asarray(dst.copy())
    r = nn.copy_2d(hf.asarray(src), D, rows=rows, cols=cols, src_offset=so, src_stride=ss,
                   dst_offset=do, dst_stride=ds)
    assert r is D
    assert_bits(host(D), copy_2d_ref(src, dst, rows, cols, so, ss, do, ds))


def test_copy_2d_matrix_slices(be, rng):
    """Columns 3:8 of a (6, 10) matrix into columns 1:6 of a (6, 7) one; default strides."""
    a, b = rand(rng, (6, 10), np.float32), rand(rng, (6, 7), np.float32)
    B = hf.asarray(b.copy())
    nn.copy_2d(hf.asarray(a), B, rows=6, cols=5, src_offset=3, src_stride=10, dst_offset=1,
               dst_stride=7)
    want = b.copy()
    want[:, 1:6] = a[:, 3:8]
    assert_bits(host(B), want)
    C = hf.asarray(np.zeros((2, 5), np.float32))  # strides default to cols
    nn.copy_2d(hf.asarray(a), C, rows=2, cols=5)
    assert_bits(host(C), a.reshape(-1)[:10].reshape(2, 5))


def test_copy_2d_bad_input(be):
    src, dst = hf.asarray(np.ones(20)), hf.asarray(np.zeros(20))
    with pytest.raises(ValueError, match="the src block ends at element 21"):
        nn.copy_2d(src, dst, rows=2, cols=5, src_offset=6, src_stride=10)
    with pytest.raises(ValueError, match="the dst block ends"):
        nn.copy_2d(src, dst, rows=4, cols=5, dst_stride=6)
    with pytest.raises(ValueError, match="writes rows over each other"):
        nn.copy_2d(src, dst, rows=2, cols=5, dst_stride=4)
    with pytest.raises(ValueError, match="src_offset must be >= 0"):
        nn.copy_2d(src, dst, rows=2, cols=5, src_offset=-1)
    with pytest.raises(ValueError, match="rows must be >= 0"):
        nn.copy_2d(src, dst, rows=-1, cols=5)
    with pytest.raises(TypeError, match="cols must be an int"):
        nn.copy_2d(src, dst, rows=1, cols=2.0)
    with pytest.raises(TypeError, match="dtypes differ"):
        nn.copy_2d(hf.asarray(np.ones(20, np.float32)), dst, rows=2, cols=5)
    with pytest.raises(ValueError, match="in place"):
        nn.copy_2d(src, hf.asarray(np.zeros((4, 10)))[:, :5], rows=2, cols=5)
    with pytest.raises(ValueError, match="share memory"):
        nn.copy_2d(dst, dst, rows=2, cols=5, src_offset=0, dst_offset=3)
    # the same tensor, blocks apart: allowed
    nn.copy_2d(src, src, rows=1, cols=5, src_offset=0, dst_offset=10)
    np.testing.assert_array_equal(host(src), np.ones(20))


# ------------------------------------------------------------------------ gather_rows
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("xshape,m", [((7, 5), 11), ((1, 1), 1), ((9,), 20), ((6, 3, 4), 9),
                                      ((40, 33), 1000), ((5, 64), 7), ((4, 0), 3), ((0, 3), 0),
                                      ((3, 2), 0)])
def test_gather_rows(be, rng, dtype, xshape, m):
    x = rand(rng, xshape, dtype)
    idx = rng.integers(0, max(xshape[0], 1), m)
    y = nn.gather_rows(hf.asarray(x), index(idx))
    assert_bits(host(y), x[idx])


def test_gather_rows_strided_input(be, rng):
    x = rand(rng, (8, 6), np.float32)
    y = nn.gather_rows(hf.asarray(x).T, index([5, 0, 5]))  # a transposed view is copied first
    assert_bits(host(y), np.ascontiguousarray(x.T)[[5, 0, 5]])


@pytest.mark.parametrize("bad", [5, -1, 1 << 40])
def test_gather_rows_out_of_range(be, rng, bad):
    x = hf.asarray(rand(rng, (5, 3), np.float64))
    with pytest.raises(IndexError, match=f"index {bad} is out of bounds for 5 rows"):
        nn.gather_rows(x, index([0, 4, bad, 1]))
    assert_bits(host(nn.gather_rows(x, index([4]))), host(x)[[4]])  # the flag was reset


def test_gather_rows_out_of_range_far_in_a_long_index(be, rng):
    """The check covers every position of a long index (its own grid), and a bad index
    fails its call only: the next call, good, returns the right rows."""
    x = hf.asarray(rand(rng, (300, 8), np.float32))
    idx = rng.integers(0, 300, 200000)
    idx[-1] = 300
    with pytest.raises(IndexError, match="index 300 is out of bounds for 300 rows"):
        nn.gather_rows(x, index(idx))
    idx[-1] = 299
    assert_bits(host(nn.gather_rows(x, index(idx))), host(x)[idx])


def test_gather_rows_threads(be, rng):
    """Two threads gather at once, one with a bad index each call: only its calls raise
    (each thread has its own error flag)."""
    import threading
    x = hf.asarray(rand(rng, (50, 16), np.float32))
    good, bad = index(rng.integers(0, 50, 5000)), index([3, 50, 7])
    want = host(x)[host(good)]
    errors = {"good": 0, "bad": 0, "wrong": 0}

    def work(which):
        for _ in range(30):
            try:
                y = nn.gather_rows(x, good if which == "good" else bad)
                if which == "good" and not np.array_equal(host(y), want):
                    errors["wrong"] += 1
            except IndexError:
                errors[which] += 1

    ts = [threading.Thread(target=work, args=(w,)) for w in ("good", "bad")]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert errors == {"good": 0, "bad": 30, "wrong": 0}


def test_gather_rows_bad_input(be):
    x = hf.asarray(np.ones((4, 3)))
    with pytest.raises(TypeError, match="int64"):
        nn.gather_rows(x, hf.asarray(np.zeros(2, np.int32)))
    with pytest.raises(ValueError, match="index must be 1-d"):
        nn.gather_rows(x, index([[0, 1]]))
    with pytest.raises(TypeError, match="float32 or float64"):
        nn.gather_rows(hf.asarray(np.ones((4, 3), np.int64)), index([0]))


# ------------------------------------------------------------------- scatter_add_rows
def scatter_ref(out, idx, src):
    """The defining loop: rows added one at a time, in increasing i."""
    out = out.copy()
    for i, r in enumerate(idx):
        out[r] += src[i]
    return out


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("m,n,row", [(1000, 7, (33,)), (257, 300, (5,)), (64, 1, (1,)),
                                     (50, 9, ()), (30, 4, (3, 2)), (1, 1, (300,)), (0, 5, (4,)),
                                     (6, 3, (0,))])
def test_scatter_add_rows(be, rng, dtype, m, n, row):
    src = rand(rng, (m,) + row, dtype)
    idx = rng.integers(0, n, m)
    got = nn.scatter_add_rows(hf.asarray(src), index(idx), n)
    want = scatter_ref(np.zeros((n,) + row, dtype), idx, src)
    assert_bits(host(got), want)  # bit for bit: the same order of additions
    np_at = np.zeros((n,) + row, dtype)
    np.add.at(np_at, idx, src)
    assert_bits(np_at, want)  # np.add.at is that order too
    # in place into a given out, twice: deterministic
    init = rand(rng, (n,) + row, dtype)
    outs = []
    for _ in range(2):
        O = hf.asarray(init.copy())
        assert nn.scatter_add_rows(hf.asarray(src), index(idx), out=O) is O
        outs.append(host(O))
    assert_bits(outs[0], scatter_ref(init, idx, src))
    assert_bits(outs[1], outs[0])


def test_scatter_add_rows_many_repeats(be, rng):
    """float32 sums of 4000 rows into 3: any other order would change the bits."""
    src = (rand(rng, (4000, 17), np.float32) * 1e3).astype(np.float32)
    idx = rng.integers(0, 3, 4000)
    runs = [host(nn.scatter_add_rows(hf.asarray(src), index(idx), 3)) for _ in range(2)]
    want = scatter_ref(np.zeros((3, 17), np.float32), idx, src)
    assert_bits(runs[0], want)
    assert_bits(runs[1], want)


def test_gather_scatter_gradient(be, rng):
    """scatter_add_rows is the gradient of gather_rows: d sum(w * x[idx]) / dx."""
    x, idx = rand(rng, (5, 3), np.float64), np.array([4, 0, 4, 2, 4, 0])
    w = rand(rng, (6, 3), np.float64)
    fd = central_difference(lambda v: w * host(nn.gather_rows(hf.asarray(v), index(idx))), x)
    np.testing.assert_allclose(host(nn.scatter_add_rows(hf.asarray(w), index(idx), 5)), fd,
                               rtol=1e-7, atol=1e-8)
    # and gather_rows is the gradient of scatter_add_rows with respect to src
    v = rand(rng, (5, 3), np.float64)
    fd = central_difference(lambda s: v * host(nn.scatter_add_rows(hf.asarray(s), index(idx), 5)), w)
    np.testing.assert_allclose(host(nn.gather_rows(hf.asarray(v), index(idx))), fd,
                               rtol=1e-7, atol=1e-8)


@pytest.mark.parametrize("bad", [3, -2])
def test_scatter_add_rows_out_of_range(be, rng, bad):
    init = rand(rng, (3, 4), np.float32)
    O = hf.asarray(init.copy())
    src = hf.asarray(rand(rng, (4, 4), np.float32))
    with pytest.raises(IndexError, match=f"index {bad} is out of bounds for 3 rows"):
        nn.scatter_add_rows(src, index([0, 1, bad, 2]), out=O)
    assert_bits(host(O), init)  # nothing was written
    with pytest.raises(IndexError, match="out of bounds for 0 rows"):
        nn.scatter_add_rows(src, index([0, 0, 0, 0]), 0)


def test_scatter_add_rows_bad_input(be):
    src = hf.asarray(np.ones((4, 3)))
    with pytest.raises(ValueError, match="src has 4 rows but index has 3"):
        nn.scatter_add_rows(src, index([0, 1, 2]), 5)
    with pytest.raises(ValueError, match="row .* shapes differ"):
        nn.scatter_add_rows(src, index([0, 1, 2, 0]), out=hf.asarray(np.zeros((5, 2))))
    with pytest.raises(ValueError, match="n = 4 but out has 5 rows"):
        nn.scatter_add_rows(src, index([0, 1, 2, 0]), 4, out=hf.asarray(np.zeros((5, 3))))
    with pytest.raises(TypeError, match="give n"):
        nn.scatter_add_rows(src, index([0, 1, 2, 0]))
    with pytest.raises(ValueError, match="n must be >= 0"):
        nn.scatter_add_rows(src, index([0, 1, 2, 0]), -1)
    with pytest.raises(TypeError, match="int64"):
        nn.scatter_add_rows(src, hf.asarray(np.zeros(4, np.int32)), 5)
    with pytest.raises(TypeError, match="dtypes differ"):
        nn.scatter_add_rows(src, index([0, 1, 2, 0]), out=hf.asarray(np.zeros((5, 3), np.float32)))
    with pytest.raises(ValueError, match="in place"):
        nn.scatter_add_rows(src, index([0, 1, 2, 0]), out=hf.asarray(np.zeros((3, 5)))[:, :3])


# ------------------------------------------------------------------------- top_k_rows
def top_k_ref(x, k, largest):
    """Rank order by the definition: NaN above every number, ties to the lower column."""
    def rank(v):
        if np.isnan(v):
            return (0, 0.0) if largest else (1, 0.0)
        return (1, -float(v)) if largest else (0, float(v))
    flat = x.reshape(-1, x.shape[-1])
    idx = np.array([sorted(range(x.shape[-1]), key=lambda j: (rank(r[j]), j))[:k] for r in flat],
                   dtype=np.int64).reshape(x.shape[:-1] + (k,))
    return np.take_along_axis(x, idx, -1), idx


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("shape,k", [((1, 1), 1), ((5, 33), 4), ((5, 33), 33), ((3, 1000), 17),
                                     ((2, 257), 0), ((4,), 3), ((2, 3, 300), 100),
                                     ((0, 5), 2), ((2, 3000), 2048), ((2, 3000), 2500),
                                     ((1, 5000), 1), ((3, 9001), 17), ((2, 20000), 300),
                                     ((1, 70000), 1)])
@pytest.mark.parametrize("data", ["ties", "normal"])
def test_top_k_rows(be, rng, dtype, largest, shape, k, data):
    if data == "ties":
        x = rng.choice(np.array([-2.5, -1, -0.0, 0.0, 1, 3.25, np.inf, -np.inf, np.nan]), shape)
        x = x.astype(dtype)
    else:
        x = rand(rng, shape, dtype)
        x.reshape(-1)[rng.random(x.size) < 0.05] = np.nan
    X = hf.asarray(x)
    runs = [nn.top_k_rows(X, k, largest=largest) for _ in range(2)]
    want_v, want_i = top_k_ref(x, k, largest)
    for v, i in runs:
        assert v.shape == shape[:-1] + (k,) and i.dtype == np.int64
        assert_bits(host(i), want_i)
        assert_bits(host(v), want_v)


def test_top_k_splits():
    """Few long rows are cut into segments of at least k columns (the GPU's first stage);
    many rows, short rows and large k are not."""
    from hipfer.nn._movement import kernels as K
    assert K.top_k_splits(16, 150000, 1) == -(-K.TOP_K_TASKS // 16)
    assert K.top_k_splits(1, 5000, 1) == 2 and K.top_k_splits(3, 9001, 32) == 4
    assert K.top_k_splits(K.TOP_K_TASKS, 10 ** 6, 1) == 1
    assert K.top_k_splits(64, 4000, 1) == 1 and K.top_k_splits(2, 3000, 2048) == 1
    for rows in (1, 7, 100):
        for cols in (1, 4095, 4096, 10 ** 5):
            for sort_n in (1, 64, K.TOP_K_SORT_MAX):
                s = K.top_k_splits(rows, cols, sort_n)
                assert s >= 1 and (s == 1 or cols // s >= max(K.TOP_K_MIN_SEGMENT, 2 * sort_n))


def test_top_k_rows_nan_payloads(be):
    """Values are the elements themselves: NaN payloads and signed zeros survive."""
    nan2 = np.array([0x7fc00123, 0xffc00456], np.uint32).view(np.float32)
    x = np.array([[1.0, nan2[0], -0.0, nan2[1], 0.0, 2.0]], np.float32)
    v, i = nn.top_k_rows(hf.asarray(x), 6)
    assert_bits(host(i), np.array([[1, 3, 5, 0, 2, 4]]))
    assert_bits(host(v), x[:, [1, 3, 5, 0, 2, 4]])
    v, i = nn.top_k_rows(hf.asarray(x), 6, largest=False)
    assert_bits(host(i), np.array([[2, 4, 0, 5, 1, 3]]))


def test_top_k_rows_bad_input(be):
    x = hf.asarray(np.ones((3, 5)))
    with pytest.raises(ValueError, match="k = 6 is out of range for rows of 5"):
        nn.top_k_rows(x, 6)
    with pytest.raises(ValueError, match="k must be >= 0"):
        nn.top_k_rows(x, -1)
    with pytest.raises(TypeError, match="k must be an int"):
        nn.top_k_rows(x, 2.0)
    with pytest.raises(TypeError, match="float32 or float64"):
        nn.top_k_rows(hf.asarray(np.ones((3, 5), np.int64)), 2)
    with pytest.raises(ValueError, match="row axis"):
        nn.top_k_rows(hf.asarray(np.float64(1.0)), 0)
