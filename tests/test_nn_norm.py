"""hipfer.nn norm ops (softmax/logsumexp over rows, layer norm, RMS norm) against float64
NumPy on each backend: odd row lengths, special values, in place softmax, finite
differences for every backward op, bitwise determinism and bad input."""
import numpy as np
import pytest

import hipfer as hf
import hipfer.nn as nn
from hipfer.nn._norm import kernels as K

from test_tensor import host, rand

FLOATS = [np.float32, np.float64]
#: on the GPU: sub-warp teams (1, 7, 33), a warp or block per row with the row in
#: registers (1000, 4097), and rows longer than a block holds: 8200 for the backward ops
#: with column sums (fused_norm_column_products), 40000 for every op (several tiles)
COLS = [1, 7, 33, 1000, 4097, 8200, 20000, 40000]


def check(got, ref, dtype, scale=1.0):
    """got (a Tensor) against a float64 reference; scale: the size of the terms summed."""
    tol = 2e-5 if np.dtype(dtype) == np.float32 else 1e-12
    g = host(got)
    assert g.dtype == np.dtype(dtype) and g.shape == ref.shape
    np.testing.assert_allclose(g, ref, rtol=tol, atol=tol * scale, equal_nan=True)


def shapes_for(cols):
    """Many rows (odd counts), a 3-d batch, a single row, and no rows (fewer rows when
    they are long)."""
    return [(37 if cols < 5000 else 5, cols), (2, 3, cols), (cols,), (0, cols)]


# ----------------------------------------------------------------- float64 references
def softmax_ref(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def logsumexp_ref(x):
    m = x.max(axis=-1)
    return m + np.log(np.exp(x - m[..., None]).sum(axis=-1))


def layer_norm_ref(x, gamma, beta, eps):
    d = x - x.mean(axis=-1, keepdims=True)
    std = np.sqrt(np.mean(d * d, axis=-1) + eps)
    xhat = d / std[..., None]
    return xhat * gamma + beta, xhat, std


def rms_norm_ref(x, gamma, eps):
    rms = np.sqrt(np.mean(x * x, axis=-1) + eps)
    return x / rms[..., None] * gamma, rms


def rows_of(a):
    return a.reshape(-1, a.shape[-1])


# ---------------------------------------------------------------------- softmax, logsumexp
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("cols", COLS)
def test_softmax_rows(be, rng, dtype, cols):
    for shape in shapes_for(cols):
        x = (3 * rand(rng, shape, np.float64)).astype(dtype)
        check(nn.softmax_rows(hf.asarray(x)), softmax_ref(x.astype(np.float64)), dtype)
        lse = nn.logsumexp_rows(hf.asarray(x))
        check(lse, logsumexp_ref(x.astype(np.float64)), dtype, scale=10)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("cols", [7, 1000])
def test_softmax_rows_in_place(be, rng, dtype, cols):
    x = (3 * rand(rng, (5, 3, cols), np.float64)).astype(dtype)
    X = hf.asarray(x.copy())  # asarray may share memory on the CPU
    assert nn.softmax_rows(X, out=X) is X
    check(X, softmax_ref(x.astype(np.float64)), dtype)
    out = hf.asarray(np.full(x.shape, np.nan, dtype))  # out only written, never read
    assert nn.softmax_rows(hf.asarray(x), out=out) is out
    check(out, softmax_ref(x.astype(np.float64)), dtype)


def test_softmax_rows_strided_input(be, rng):
    x = rand(rng, (40, 9), np.float64)
    check(nn.softmax_rows(hf.asarray(x).T), softmax_ref(x.T), np.float64)
    check(nn.logsumexp_rows(hf.asarray(x)[::2, 1:]), logsumexp_ref(x[::2, 1:]), np.float64)


def test_logsumexp_rows_no_columns(be):
    r = nn.logsumexp_rows(hf.asarray(np.ones((3, 0))))
    assert host(r).shape == (3,) and np.all(host(r) == -np.inf)
    assert host(nn.softmax_rows(hf.asarray(np.ones((3, 0))))).shape == (3, 0)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("cols", [7, 1000])
def test_softmax_logsumexp_special_values(be, rng, dtype, cols):
    inf, nan = np.inf, np.nan
    x = rand(rng, (6, cols), np.float64)
    x[0] = -inf                    # every column -inf
    x[1, cols // 2] = inf          # one +inf
    x[2, cols - 1] = nan           # a NaN
    x[3, ::2] = -inf               # some -inf, the rest finite
    x[4, cols // 3] = inf
    x[4, 0] = nan                  # NaN and +inf: NaN
    x = x.astype(dtype)
    lse = host(nn.logsumexp_rows(hf.asarray(x)))
    assert lse[0] == -inf and lse[1] == inf and np.isnan(lse[2]) and np.isnan(lse[4])
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(lse[[3, 5]], logsumexp_ref(x64[[3, 5]]), rtol=2e-5)
    with np.errstate(invalid="ignore"):
        ref = softmax_ref(x64)     # -inf rows and +inf rows are NaN (inf - inf), as in NumPy
    y = host(nn.softmax_rows(hf.asarray(x)))
    assert np.isnan(y[[0, 1, 2, 4]]).all()
    np.testing.assert_allclose(y[[3, 5]], ref[[3, 5]], rtol=2e-5, atol=1e-7)
    assert np.all(y[3, ::2] == 0)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("cols", [4097, 40000])
def test_logsumexp_rows_special_values_tiles(be, rng, dtype, cols):
    """Rows of several tiles on the GPU: special values in some tiles and not others."""
    inf, nan = np.inf, np.nan
    x = rand(rng, (8, cols), np.float64)
    x[0, :cols // 2] = -inf        # an all -inf start, then finite
    x[1, cols // 2:] = -inf        # finite, then all -inf
    x[2, :-1] = -inf               # one finite value, the last
    x[3, -1] = inf                 # +inf in the last tile
    x[4, 0] = nan                  # a NaN in the first tile, +inf in the last
    x[4, -1] = inf
    x[5, :-1] = -inf               # -inf and a NaN: NaN
    x[5, -1] = nan
    x[6] = -inf
    x = x.astype(dtype)
    lse = host(nn.logsumexp_rows(hf.asarray(x)))
    assert lse[3] == inf and np.isnan(lse[4]) and np.isnan(lse[5]) and lse[6] == -inf
    assert lse[2] == x[2, -1]
    keep = [0, 1, 2, 7]
    check(hf.asarray(lse[keep]), logsumexp_ref(x[keep].astype(np.float64)), dtype, scale=10)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("cols", COLS)
def test_softmax_rows_backward(be, rng, dtype, cols):
    for shape in shapes_for(cols):
        y = softmax_ref(3 * rand(rng, shape, np.float64)).astype(dtype)
        g = rand(rng, shape, dtype)
        g64, y64 = g.astype(np.float64), y.astype(np.float64)
        ref = y64 * (g64 - np.sum(g64 * y64, axis=-1, keepdims=True))
        check(nn.softmax_rows_backward(hf.asarray(g), hf.asarray(y)), ref, dtype)


# ----------------------------------------------------------------------------- layer norm
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("cols", COLS)
def test_layer_norm(be, rng, dtype, cols):
    for shape in shapes_for(cols):
        x = (rand(rng, shape, np.float64) * 2 + 5).astype(dtype)  # a mean far from 0
        gamma, beta = rand(rng, (cols,), dtype), rand(rng, (cols,), dtype)
        y, xhat, std = nn.layer_norm(hf.asarray(x), hf.asarray(gamma), hf.asarray(beta), eps=1e-3)
        ry, rxhat, rstd = layer_norm_ref(x.astype(np.float64), gamma.astype(np.float64),
                                         beta.astype(np.float64), 1e-3)
        scale = 30 if dtype == np.float32 else 1  # x - mean cancels ~2 digits of float32
        check(y, ry, dtype, scale)
        check(xhat, rxhat, dtype, scale)
        check(std, rstd, dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("cols", COLS)
def test_layer_norm_backward(be, rng, dtype, cols):
    for shape in shapes_for(cols):
        g, xhat = rand(rng, shape, dtype), rand(rng, shape, dtype)
        std = (1 + rng.random(shape[:-1])).astype(dtype)
        gamma = rand(rng, (cols,), dtype)
        dx, dgamma, dbeta = nn.layer_norm_backward(hf.asarray(g), hf.asarray(xhat),
                                                   hf.asarray(std), hf.asarray(gamma))
        g64, h64, s64, gm64 = (a.astype(np.float64) for a in (g, xhat, std, gamma))
        gg = g64 * gm64
        ref = (gg - gg.mean(-1, keepdims=True) - h64 * np.mean(gg * h64, -1, keepdims=True)) / s64[..., None]
        rows = max(1, rows_of(g).shape[0])
        check(dx, ref, dtype, scale=10)
        check(dgamma, rows_of(g64 * h64).sum(0), dtype, scale=10 * rows)
        check(dbeta, rows_of(g64).sum(0), dtype, scale=10 * rows)


# ------------------------------------------------------------------------------- RMS norm
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("cols", COLS)
def test_rms_norm(be, rng, dtype, cols):
    for shape in shapes_for(cols):
        x, gamma = rand(rng, shape, dtype), rand(rng, (cols,), dtype)
        y, rms = nn.rms_norm(hf.asarray(x), hf.asarray(gamma), eps=1e-4)
        ry, rrms = rms_norm_ref(x.astype(np.float64), gamma.astype(np.float64), 1e-4)
        check(y, ry, dtype, scale=10)
        check(rms, rrms, dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("cols", COLS)
def test_rms_norm_backward(be, rng, dtype, cols):
    for shape in shapes_for(cols):
        g, x = rand(rng, shape, dtype), rand(rng, shape, dtype)
        rms = (0.5 + rng.random(shape[:-1])).astype(dtype)
        gamma = rand(rng, (cols,), dtype)
        dx, dgamma = nn.rms_norm_backward(hf.asarray(g), hf.asarray(x), hf.asarray(rms),
                                          hf.asarray(gamma))
        g64, x64, r64, gm64 = (a.astype(np.float64) for a in (g, x, rms, gamma))
        r = r64[..., None]
        ref = g64 * gm64 / r - x64 * np.sum(g64 * gm64 * x64, -1, keepdims=True) / (cols * r**3)
        rows = max(1, rows_of(g).shape[0])
        check(dx, ref, dtype, scale=10 * cols ** 0.5)
        check(dgamma, rows_of(g64 * x64 / r).sum(0), dtype, scale=10 * rows)


def test_column_sums_many_rows(be, rng):
    """Enough rows that every block of the GPU grid sums several (the partial rows)."""
    for cols in (3, 33, 1000):
        g, x = rand(rng, (20011, cols), np.float64), rand(rng, (20011, cols), np.float64)
        rms = 0.5 + rng.random(20011)
        gamma = rand(rng, (cols,), np.float64)
        _, dgamma = nn.rms_norm_backward(hf.asarray(g), hf.asarray(x), hf.asarray(rms), hf.asarray(gamma))
        check(dgamma, (g * x / rms[:, None]).sum(0), np.float64, scale=100)
        _, dg, db = nn.layer_norm_backward(hf.asarray(g), hf.asarray(x), hf.asarray(rms), hf.asarray(gamma))
        check(dg, (g * x).sum(0), np.float64, scale=100)
        check(db, g.sum(0), np.float64, scale=100)


# ------------------------------------------------------------- finite differences (float64)
def numeric_grad(f, a, h=1e-6):
    """Central differences of the scalar f at every element of a (float64)."""
    grad = np.empty_like(a)
    for i in np.ndindex(a.shape):
        old = a[i]
        a[i] = old + h
        fp = f(a)
        a[i] = old - h
        fm = f(a)
        a[i] = old
        grad[i] = (fp - fm) / (2 * h)
    return grad


def close_fd(got, ref):
    np.testing.assert_allclose(host(got) if not isinstance(got, np.ndarray) else got, ref,
                               rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("cols", [1, 7])
def test_softmax_rows_backward_finite_differences(be, rng, cols):
    x, G = rand(rng, (3, cols), np.float64), rand(rng, (3, cols), np.float64)
    y = nn.softmax_rows(hf.asarray(x))
    dx = nn.softmax_rows_backward(hf.asarray(G), y)
    close_fd(dx, numeric_grad(lambda a: np.sum(G * host(nn.softmax_rows(hf.asarray(a)))), x))
    # logsumexp's gradient is the softmax
    close_fd(y, numeric_grad(lambda a: np.sum(host(nn.logsumexp_rows(hf.asarray(a)))), x))


@pytest.mark.parametrize("cols", [1, 7])
def test_layer_norm_backward_finite_differences(be, rng, cols):
    x, G = rand(rng, (3, cols), np.float64), rand(rng, (3, cols), np.float64)
    gamma, beta = rand(rng, (cols,), np.float64), rand(rng, (cols,), np.float64)

    def loss(x, gamma, beta):
        y = nn.layer_norm(hf.asarray(x), hf.asarray(gamma), hf.asarray(beta), eps=0.1)[0]
        return np.sum(G * host(y))
    _, xhat, std = nn.layer_norm(hf.asarray(x), hf.asarray(gamma), hf.asarray(beta), eps=0.1)
    dx, dgamma, dbeta = nn.layer_norm_backward(hf.asarray(G), xhat, std, hf.asarray(gamma))
    close_fd(dx, numeric_grad(lambda a: loss(a, gamma, beta), x))
    close_fd(dgamma, numeric_grad(lambda a: loss(x, a, beta), gamma))
    close_fd(dbeta, numeric_grad(lambda a: loss(x, gamma, a), beta))


@pytest.mark.parametrize("cols", [1, 7])
def test_rms_norm_backward_finite_differences(be, rng, cols):
    x, G = rand(rng, (3, cols), np.float64), rand(rng, (3, cols), np.float64)
    gamma = rand(rng, (cols,), np.float64)

    def loss(x, gamma):
        return np.sum(G * host(nn.rms_norm(hf.asarray(x), hf.asarray(gamma), eps=0.1)[0]))
    _, rms = nn.rms_norm(hf.asarray(x), hf.asarray(gamma), eps=0.1)
    dx, dgamma = nn.rms_norm_backward(hf.asarray(G), hf.asarray(x), rms, hf.asarray(gamma))
    close_fd(dx, numeric_grad(lambda a: loss(a, gamma), x))
    close_fd(dgamma, numeric_grad(lambda a: loss(x, a), gamma))


# ---------------------------------------------------------------------------- determinism
def _every_row_op(x, g, gamma, beta, pos):
    """The bytes of every output of the row ops (forward and backward) on x and g."""
    outs = [nn.softmax_rows(x), nn.logsumexp_rows(x), nn.softmax_rows_backward(g, x)]
    outs += nn.layer_norm(x, gamma, beta, eps=1e-5)
    outs += nn.layer_norm_backward(g, x, pos, gamma)
    outs += nn.rms_norm(x, gamma, eps=1e-6)
    outs += nn.rms_norm_backward(g, x, pos, gamma)
    return [host(t).tobytes() for t in outs]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(3001, 7), (517, 33), (129, 4097), (4, 70001)])
def test_bitwise_determinism(be, rng, dtype, shape):
    cols = shape[-1]
    x, g = hf.asarray(rand(rng, shape, dtype)), hf.asarray(rand(rng, shape, dtype))
    gamma, beta = hf.asarray(rand(rng, (cols,), dtype)), hf.asarray(rand(rng, (cols,), dtype))
    pos = hf.asarray((0.5 + rng.random(shape[:-1])).astype(dtype))
    assert _every_row_op(x, g, gamma, beta, pos) == _every_row_op(x, g, gamma, beta, pos)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(9, 1000), (3, 4096), (50, 64), (2, 40000)])
def test_alignment_does_not_change_results(be, rng, dtype, shape):
    """Operands one element off 16 bytes (no 16-byte loads on the GPU) give the same bits:
    each thread holds the same values in the same order either way."""
    cols = shape[-1]
    x, g = rand(rng, shape, dtype), rand(rng, shape, dtype)
    gamma, beta = hf.asarray(rand(rng, (cols,), dtype)), hf.asarray(rand(rng, (cols,), dtype))
    pos = hf.asarray((0.5 + rng.random(shape[:-1])).astype(dtype))

    def shifted(a):  # contiguous, at an offset of one element
        return hf.reshape(hf.asarray(np.concatenate([a.ravel()[:1], a.ravel()]))[1:], shape)

    assert (_every_row_op(hf.asarray(x), hf.asarray(g), gamma, beta, pos)
            == _every_row_op(shifted(x), shifted(g), gamma, beta, pos))


# ------------------------------------------------------------------------------ bad input
def test_bad_input(be):
    x, g = hf.asarray(np.ones((4, 3))), hf.asarray(np.ones(3))
    x32 = hf.asarray(np.ones((4, 3), np.float32))
    with pytest.raises(ValueError, match="at least 1-d"):
        nn.softmax_rows(hf.asarray(np.float64(1.0)))
    with pytest.raises(ValueError, match="at least 1-d"):
        nn.logsumexp_rows(hf.asarray(np.float64(1.0)))
    with pytest.raises(TypeError, match="float32 or float64"):
        nn.softmax_rows(hf.asarray(np.ones((2, 3), np.int64)))
    with pytest.raises(ValueError, match="shapes differ"):
        nn.softmax_rows_backward(x, hf.asarray(np.ones((4, 4))))
    with pytest.raises(TypeError, match="dtypes differ"):
        nn.softmax_rows_backward(x, x32)
    with pytest.raises(ValueError, match="gamma must have shape \\(3,\\)"):
        nn.layer_norm(x, hf.asarray(np.ones(4)), g)
    with pytest.raises(ValueError, match="beta must have shape"):
        nn.layer_norm(x, g, hf.asarray(np.ones((1, 3))))
    with pytest.raises(TypeError, match="dtypes differ"):
        nn.layer_norm(x32, g, g)
    with pytest.raises(ValueError, match="at least one column"):
        nn.layer_norm(hf.asarray(np.ones((4, 0))), hf.asarray(np.ones(0)), hf.asarray(np.ones(0)))
    with pytest.raises(ValueError, match="at least one column"):
        nn.rms_norm(hf.asarray(np.ones((4, 0))), hf.asarray(np.ones(0)))
    for eps in (-1e-5, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="eps must be finite and >= 0"):
            nn.layer_norm(x, g, g, eps=eps)
        with pytest.raises(ValueError, match="eps must be finite and >= 0"):
            nn.rms_norm(x, g, eps=eps)
    with pytest.raises(ValueError, match="std must have the leading shape \\(4,\\)"):
        nn.layer_norm_backward(x, x, hf.asarray(np.ones(3)), g)
    with pytest.raises(ValueError, match="grad and xhat shapes differ"):
        nn.layer_norm_backward(x, hf.asarray(np.ones((3, 3))), hf.asarray(np.ones(4)), g)
    with pytest.raises(ValueError, match="rms must have the leading shape"):
        nn.rms_norm_backward(x, x, hf.asarray(np.ones((4, 1))), g)
    with pytest.raises(ValueError, match="gamma must have shape"):
        nn.rms_norm_backward(x, x, hf.asarray(np.ones(4)), hf.asarray(np.ones(2)))
    with pytest.raises(TypeError, match="float32 or float64"):
        nn.rms_norm(hf.asarray(np.ones((4, 3), np.int32)), hf.asarray(np.ones(3, np.int32)))
    with pytest.raises(TypeError, match="hipfer Tensor"):
        nn.layer_norm(np.ones((4, 3)), g, g)
    # softmax_rows' out
    with pytest.raises(ValueError, match="out has shape"):
        nn.softmax_rows(x, out=hf.asarray(np.ones((3, 4))))
    with pytest.raises(TypeError, match="out has dtype"):
        nn.softmax_rows(x, out=hf.asarray(np.ones((4, 3), np.float32)))
    with pytest.raises(ValueError, match="in place"):
        nn.softmax_rows(x, out=hf.asarray(np.ones((3, 4))).T)


# ------------------------------------------------------------------- launch geometry rules
@pytest.mark.parametrize("itemsize", [4, 8])
@pytest.mark.parametrize("kernel", list(K.VALUES))
def test_geometry(itemsize, kernel):
    v = K.values(kernel, itemsize)
    assert v % K.vector_width(itemsize) == 0          # whole 16-byte vectors
    for cols in [0, 1, 7, 8, 9, 33, 256, 257, 1000, 4097, 6000, 8200, 32768, 70001]:
        for rows in (1, 37, 100000):
            for resident in (None, lambda block, smem, long: 3):
                g = K.geometry(kernel, rows, cols, itemsize, 132, resident)
                # twice the values a thread for rows past one tile of the largest team
                # and within one at twice the values (K.LONG_ROWS), else values()
                long = kernel in K.LONG_ROWS and K.MAX_TEAMS[kernel] * v < cols
                long = long and cols <= K.MAX_TEAMS[kernel] * 2 * v
                assert g.long == long and g.v == (2 * v if long else v)
                assert (g.tpr & (g.tpr - 1)) == 0 and g.block % 64 == 0
                assert g.tpr <= 32 or g.block == g.tpr   # a team is a sub-warp or the block
                teams = g.block // g.tpr
                assert g.block % g.tpr == 0 and 1 <= g.grid <= -(-rows // teams)  # no idle block
                if K.FWD_GRID_WAVES.get(kernel) == 0:  # a block per row group
                    assert g.grid == -(-rows // teams)
                assert g.tiles == max(1, -(-cols // (g.tpr * g.v)))
                # the fewest threads that hold the row; more tiles only past the largest team
                # (logsumexp: past 32 threads, then the fewest that hold it in LSE_TILES)
                assert g.tpr <= K.MAX_TEAMS[kernel]
                if kernel == "logsumexp_rows" and 32 * v < cols:
                    assert (g.tpr // 2) * v * K.LSE_TILES < cols
                    assert g.tiles <= K.LSE_TILES or g.tpr == K.MAX_TEAMS[kernel]
                else:
                    assert g.tpr == 1 or (g.tpr // 2) * g.v < cols
                    assert g.tiles == 1 or g.tpr == K.MAX_TEAMS[kernel]
                n_acc = K.N_ACC.get(kernel, 0)
                assert g.smem == (teams * n_acc * cols * itemsize if teams > 1 else 0)
                assert g.smem <= 46 * 1024               # within every device's default
    with pytest.raises(ValueError, match="too long"):       # 32-bit columns in a row
        K.geometry(kernel, 1, 2 ** 31, itemsize, 132)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_instantiation_per_block(dt):
    """Each launch has its instantiation compiled: softmax takes the 256-bounded one (3
    blocks an SM on CUDA) for blocks up to 256, layer_norm and rms_norm the 512 one;
    logsumexp's blocks are at most 256 threads, its one instantiation."""
    compiled = set(K.exprs(dt))
    for kernel in K.VALUES:
        for cols in (1, 7, 33, 1000, 4097, 8200, 20000, 32768, 70001):
            g = K.geometry(kernel, 100000, cols, np.dtype(dt).itemsize, 132)
            e = K.expr(kernel, dt, g.block, g.long)
            assert e in compiled and f", {g.v}" in e
            block = g.block
            if kernel in K.FORWARD:
                assert e.endswith(", 256>" if kernel == "logsumexp_rows" or
                                  (kernel == "softmax_rows" and block <= 256) else ", 512>")
    with pytest.raises(ValueError, match="no instantiation"):
        K.expr("logsumexp_rows", dt, 512)
    with pytest.raises(ValueError, match="no long-row instantiation"):
        K.expr("logsumexp_rows", dt, 256, long=True)


@pytest.mark.parametrize("itemsize", [4, 8])
def test_products_geometry(itemsize):
    for rows in (1, 7, 37, 5000, 10 ** 7):
        for cols in (1, 127, 128, 8200, 70001):
            p = K.products_geometry(rows, cols, itemsize, 132)
            assert p.col_blocks * K.COL_LANES * K.vector_width(itemsize) >= cols
            assert p.chunks * p.chunk >= rows > (p.chunks - 1) * p.chunk  # every row, no empty chunk
            assert 1 <= p.chunks <= K.MAX_GRID_Y
