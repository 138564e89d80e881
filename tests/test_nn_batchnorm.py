"""hipfer.nn batch norm and group norm against the textbook formulas (float64 NumPy), finite
differences and PyTorch (when importable), on each backend; determinism; bad input."""
from math import prod

import numpy as np
import pytest

import hipfer as hf
import hipfer.nn as nn
from hipfer.nn._batchnorm import kernels as K

from test_tensor import host

FLOATS = [np.float32, np.float64]
# odd sizes; 2-d (no spatial axes); rows long enough for one channel per block (2 s >= 256),
# packed (s % 4 == 0) or not; many short rows (tiles of several channels, the last one of a
# row partial, thread positions across channels); several chunks
# per channel (finished by the last block: one thread per channel, a block, or several
# lanes per channel); single values; one channel of short rows; one sample of rows of
# 129-255 values
SHAPES = [(4, 3), (3, 5, 7), (2, 3, 4, 5), (1, 4, 300), (3, 2, 515), (16, 2, 1024), (4096, 3),
          (300, 257), (2000, 5, 3), (5, 3, 33), (300, 2, 40), (2, 3, 40), (140, 1, 1000),
          (5, 3, 1, 1), (1, 1, 1), (2, 1), (5000, 64), (600, 100), (700, 40, 2), (2000, 1, 5),
          (20000, 1, 3), (300, 1, 3), (1, 3, 200), (1, 2, 40000), (2100, 33), (1500, 9, 5)]
EMPTY = [(0, 3, 4), (2, 0, 3), (2, 3, 0)]


def tol(dt):
    return dict(rtol=2e-4, atol=2e-4) if np.dtype(dt) == np.float32 else dict(rtol=1e-9, atol=1e-9)


def data(rng, shape, dtype, offset=3.0):
    """Random x (per-channel offsets, never zeros) with gamma, beta of its channels."""
    c = shape[1]
    bc = (1, c) + (1,) * (len(shape) - 2)
    x = rng.standard_normal(shape) * rng.uniform(0.5, 2, c).reshape(bc) + offset * rng.uniform(-1, 1, c).reshape(bc)
    gamma, beta = rng.uniform(0.5, 1.5, c), rng.standard_normal(c)
    return x.astype(dtype), gamma.astype(dtype), beta.astype(dtype)


def T(a):
    return hf.asarray(np.ascontiguousarray(a))


# ----------------------------------------------------------- textbook formulas, float64
def axes_of(x):
    return (0,) + tuple(range(2, x.ndim))


def bcast(v, x):
    return np.asarray(v, np.float64).reshape((1, x.shape[1]) + (1,) * (x.ndim - 2))


def ref_batch_norm(x, gamma, beta, eps):
    x = x.astype(np.float64)
    mean, var = x.mean(axis=axes_of(x)), x.var(axis=axes_of(x))
    y = (x - bcast(mean, x)) / np.sqrt(bcast(var, x) + eps) * bcast(gamma, x) + bcast(beta, x)
    return y, mean, var


def ref_batch_norm_backward(g, x, gamma, eps):
    g, x = g.astype(np.float64), x.astype(np.float64)
    ax, m = axes_of(x), x.size // x.shape[1]
    mean, var = x.mean(axis=ax), x.var(axis=ax)
    xhat = (x - bcast(mean, x)) / np.sqrt(bcast(var, x) + eps)
    dbeta, dgamma = g.sum(axis=ax), (g * xhat).sum(axis=ax)
    dx = bcast(gamma, x) / np.sqrt(bcast(var, x) + eps) / m * (
        m * g - bcast(dbeta, x) - xhat * bcast(dgamma, x))
    return dx, dgamma, dbeta


def ref_group_norm(x, gamma, beta, groups, eps):
    n, c = x.shape[:2]
    xg = x.astype(np.float64).reshape(n, groups, -1)
    mean, var = xg.mean(axis=2), xg.var(axis=2)
    y = ((xg - mean[..., None]) / np.sqrt(var[..., None] + eps)).reshape(x.shape)
    return y * bcast(gamma, x) + bcast(beta, x), mean, var


def numeric_grads(f, arrays, g, h=1e-6):
    """Central differences of sum(g * f(*arrays)) for every element of every array."""
    out = []
    for k, a in enumerate(arrays):
        d = np.zeros_like(a)
        for i in np.ndindex(a.shape):
            args = [b.copy() for b in arrays]
            args[k][i] += h
            hi = np.sum(g * f(*args))
            args[k][i] -= 2 * h
            d[i] = (hi - np.sum(g * f(*args))) / (2 * h)
        out.append(d)
    return out


# ---------------------------------------------------------------------- batch norm
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", SHAPES)
def test_batch_norm_forward(be, rng, dtype, shape):
    x, gamma, beta = data(rng, shape, dtype)
    y, mean, invstd, var = nn.batch_norm(T(x), T(gamma), T(beta), eps=1e-3)
    ry, rmean, rvar = ref_batch_norm(x, gamma, beta, 1e-3)
    np.testing.assert_allclose(host(mean), rmean, **tol(dtype))
    np.testing.assert_allclose(host(var), rvar, **tol(dtype))
    np.testing.assert_allclose(host(invstd), 1 / np.sqrt(rvar + 1e-3), **tol(dtype))
    np.testing.assert_allclose(host(y), ry, **tol(dtype))
    assert host(y).dtype == dtype and host(mean).shape == (shape[1],)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", SHAPES)
def test_batch_norm_backward(be, rng, dtype, shape):
    x, gamma, beta = data(rng, shape, dtype)
    g = rng.standard_normal(shape).astype(dtype)
    _, mean, invstd, _ = nn.batch_norm(T(x), T(gamma), T(beta), eps=1e-3)
    dx, dgamma, dbeta = nn.batch_norm_backward(T(g), T(x), mean, invstd, T(gamma))
    for got, want in zip((dx, dgamma, dbeta), ref_batch_norm_backward(g, x, gamma, 1e-3)):
        scale = max(1.0, np.abs(want).max())
        np.testing.assert_allclose(host(got), want, rtol=tol(dtype)["rtol"],
                                   atol=tol(dtype)["atol"] * scale)


@pytest.mark.parametrize("shape", [(3, 2, 4), (5, 3), (2, 2, 1, 3)])
def test_batch_norm_finite_differences(be, rng, shape):
    x, gamma, beta = data(rng, shape, np.float64)
    g = rng.standard_normal(shape)
    eps = 1e-2

    def f(x, gamma, beta):
        return host(nn.batch_norm(T(x), T(gamma), T(beta), eps=eps)[0])

    _, mean, invstd, _ = nn.batch_norm(T(x), T(gamma), T(beta), eps=eps)
    got = nn.batch_norm_backward(T(g), T(x), mean, invstd, T(gamma))
    for a, b in zip(got, numeric_grads(f, [x, gamma, beta], g)):
        np.testing.assert_allclose(host(a), b, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(4, 3), (3, 5, 7), (16, 2, 1024), (2000, 5, 3)])
def test_batch_norm_eval(be, rng, dtype, shape):
    x, gamma, beta = data(rng, shape, dtype)
    rm, rv = rng.standard_normal(shape[1]).astype(dtype), rng.uniform(0.5, 2, shape[1]).astype(dtype)
    y = nn.batch_norm_eval(T(x), T(gamma), T(beta), T(rm), T(rv), eps=1e-3)
    want = (x - bcast(rm, x)) / np.sqrt(bcast(rv, x) + 1e-3) * bcast(gamma, x) + bcast(beta, x)
    np.testing.assert_allclose(host(y), want, **tol(dtype))
    g = rng.standard_normal(shape).astype(dtype)
    dx, dgamma, dbeta = nn.batch_norm_eval_backward(T(g), T(x), T(gamma), T(rm), T(rv), eps=1e-3)
    xhat = (x - bcast(rm, x)) / np.sqrt(bcast(rv, x) + 1e-3)
    scale = max(1.0, np.abs(g).sum(axis=axes_of(x)).max())
    np.testing.assert_allclose(host(dx), g * bcast(gamma, x) / np.sqrt(bcast(rv, x) + 1e-3), **tol(dtype))
    np.testing.assert_allclose(host(dbeta), g.astype(np.float64).sum(axis=axes_of(x)),
                               rtol=tol(dtype)["rtol"], atol=tol(dtype)["atol"] * scale)
    np.testing.assert_allclose(host(dgamma), (g * xhat).sum(axis=axes_of(x)),
                               rtol=tol(dtype)["rtol"], atol=tol(dtype)["atol"] * scale)


def test_batch_norm_eval_finite_differences(be, rng):
    x, gamma, beta = data(rng, (3, 2, 5), np.float64)
    rm, rv, g = rng.standard_normal(2), rng.uniform(0.5, 2, 2), rng.standard_normal((3, 2, 5))

    def f(x, gamma, beta):
        return host(nn.batch_norm_eval(T(x), T(gamma), T(beta), T(rm), T(rv), eps=1e-2))

    got = nn.batch_norm_eval_backward(T(g), T(x), T(gamma), T(rm), T(rv), eps=1e-2)
    for a, b in zip(got, numeric_grads(f, [x, gamma, beta], g)):
        np.testing.assert_allclose(host(a), b, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(4, 3), (3, 5, 7), (2, 1, 1)])
def test_batch_norm_update_running(be, rng, dtype, shape):
    x, gamma, beta = data(rng, shape, dtype)
    c, count = shape[1], prod(shape) // shape[1]
    rm0, rv0 = rng.standard_normal(c), rng.uniform(0.5, 2, c)
    RM, RV = T(rm0.astype(dtype)), T(rv0.astype(dtype))
    _, mean, _, var = nn.batch_norm(T(x), T(gamma), T(beta))
    res = nn.batch_norm_update_running(RM, RV, mean, var, momentum=0.3, count=count)
    assert res[0] is RM and res[1] is RV
    _, bmean, bvar = ref_batch_norm(x, gamma, beta, 1e-5)
    # PyTorch's rule: unbiased batch variance
    np.testing.assert_allclose(host(RM), 0.7 * rm0 + 0.3 * bmean, **tol(dtype))
    np.testing.assert_allclose(host(RV), 0.7 * rv0 + 0.3 * bvar * count / (count - 1), **tol(dtype))


RUNNING_SHAPES = [(4, 3), (3, 5, 7), (2, 1, 1), (16, 2, 1024), (4096, 3), (5000, 64), (600, 100),
                  (2, 3, 40), (1, 2, 40000), (16, 8, 7, 7)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", RUNNING_SHAPES)
def test_batch_norm_running_statistics(be, rng, dtype, shape):
    """batch_norm(..., running_mean=, running_var=): the same outputs as without, and the
    running statistics updated in place by PyTorch's rule, as batch_norm_update_running."""
    x, gamma, beta = data(rng, shape, dtype)
    c, count = shape[1], prod(shape) // shape[1]
    rm0, rv0 = rng.standard_normal(c).astype(dtype), rng.uniform(0.5, 2, c).astype(dtype)
    RM, RV = T(rm0.copy()), T(rv0.copy())  # (T may share memory on the CPU)
    got = nn.batch_norm(T(x), T(gamma), T(beta), eps=1e-3, running_mean=RM, running_var=RV,
                        momentum=0.3)
    want = nn.batch_norm(T(x), T(gamma), T(beta), eps=1e-3)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(host(a), host(b))
    _, bmean, bvar = ref_batch_norm(x, gamma, beta, 1e-3)
    np.testing.assert_allclose(host(RM), 0.7 * rm0 + 0.3 * bmean, **tol(dtype))
    np.testing.assert_allclose(host(RV), 0.7 * rv0 + 0.3 * bvar * count / (count - 1), **tol(dtype))
    RM2, RV2 = T(rm0.copy()), T(rv0.copy())
    nn.batch_norm_update_running(RM2, RV2, want[1], want[3], momentum=0.3, count=count)
    close = dict(rtol=1e-6, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(host(RM), host(RM2), **close)
    np.testing.assert_allclose(host(RV), host(RV2), **close)


@pytest.mark.parametrize("dtype", FLOATS)
def test_batch_norm_running_momentum_and_repeats(be, rng, dtype):
    shape = (6, 5, 9)
    x, gamma, beta = data(rng, shape, dtype)
    c, count = shape[1], prod(shape) // shape[1]
    _, bmean, bvar = ref_batch_norm(x, gamma, beta, 1e-5)
    rm0, rv0 = rng.standard_normal(c).astype(dtype), rng.uniform(0.5, 2, c).astype(dtype)
    RM, RV = T(rm0.copy()), T(rv0.copy())
    nn.batch_norm(T(x), T(gamma), T(beta), running_mean=RM, running_var=RV, momentum=0.0)
    np.testing.assert_array_equal(host(RM), rm0)
    np.testing.assert_array_equal(host(RV), rv0)
    nn.batch_norm(T(x), T(gamma), T(beta), running_mean=RM, running_var=RV, momentum=1.0)
    np.testing.assert_allclose(host(RM), bmean, **tol(dtype))
    np.testing.assert_allclose(host(RV), bvar * count / (count - 1), **tol(dtype))
    # three steps from the same start give the same bits each time
    runs = []
    for _ in range(3):
        RM, RV = T(rm0.copy()), T(rv0.copy())
        for _ in range(3):
            out = nn.batch_norm(T(x), T(gamma), T(beta), running_mean=RM, running_var=RV)
        runs.append([host(a) for a in (*out, RM, RV)])
    for r in runs[1:]:
        for a, b in zip(r, runs[0]):
            np.testing.assert_array_equal(a, b)


def test_batch_norm_running_bad_input(be):
    x, c3 = T(np.ones((2, 3, 4))), T(np.ones(3))
    rm, rv = T(np.zeros(3)), T(np.ones(3))
    with pytest.raises(ValueError, match="both running_mean and running_var"):
        nn.batch_norm(x, c3, c3, running_mean=rm)
    with pytest.raises(ValueError, match="both running_mean and running_var"):
        nn.batch_norm(x, c3, c3, running_var=rv)
    for shape in ((1, 3), (1, 3, 1, 1)):  # one value per channel: no unbiased variance
        with pytest.raises(ValueError, match="count must be >= 2"):
            nn.batch_norm(T(np.ones(shape)), c3, c3, running_mean=rm, running_var=rv)
    with pytest.raises(ValueError, match="running_var must have shape"):
        nn.batch_norm(x, c3, c3, running_mean=rm, running_var=T(np.ones(4)))
    with pytest.raises(ValueError, match="running_mean must have shape"):
        nn.batch_norm(x, c3, c3, running_mean=T(np.ones((3, 1))), running_var=rv)
    with pytest.raises(TypeError, match="dtypes differ"):
        nn.batch_norm(x, c3, c3, running_mean=T(np.zeros(3, np.float32)), running_var=rv)
    with pytest.raises(ValueError, match="in place"):
        nn.batch_norm(x, c3, c3, running_mean=T(np.zeros((3, 2)))[:, 0], running_var=rv)
    with pytest.raises(TypeError, match="hipfer Tensor"):
        nn.batch_norm(x, c3, c3, running_mean=np.zeros(3), running_var=rv)
    with pytest.raises(ValueError, match="momentum"):
        nn.batch_norm(x, c3, c3, running_mean=rm, running_var=rv, momentum=1.5)
    with pytest.raises(ValueError, match="eps"):
        nn.batch_norm(x, c3, c3, running_mean=rm, running_var=rv, eps=-1)
    # failed calls leave the running statistics as they were
    np.testing.assert_array_equal(host(rm), np.zeros(3))
    np.testing.assert_array_equal(host(rv), np.ones(3))


@pytest.mark.parametrize("shape", EMPTY)
def test_batch_norm_empty(be, rng, shape):
    c = shape[1]
    x = np.ones(shape)
    gamma, beta = np.full(c, 1.5), np.full(c, 0.5)
    y, mean, invstd, var = nn.batch_norm(T(x), T(gamma), T(beta))
    assert host(y).shape == shape
    # no values per channel: NaN statistics as NumPy's 0 / 0; sums of nothing are 0
    assert np.isnan(host(mean)).all() and host(mean).shape == (c,)
    dx, dgamma, dbeta = nn.batch_norm_backward(T(x), T(x), mean, invstd, T(gamma))
    assert host(dx).shape == shape
    np.testing.assert_array_equal(host(dgamma), np.zeros(c))
    np.testing.assert_array_equal(host(dbeta), np.zeros(c))
    assert host(nn.batch_norm_eval(T(x), T(gamma), T(beta), T(beta), T(gamma))).shape == shape
    dx, dgamma, _ = nn.batch_norm_eval_backward(T(x), T(x), T(gamma), T(beta), T(gamma))
    assert host(dx).shape == shape
    np.testing.assert_array_equal(host(dgamma), np.zeros(c))


# ---------------------------------------------------------------------- group norm
# statistics of k = C / groups * prod(spatial) values: k < 256 go to teams of lanes (one
# value per lane, several, k not a power of two, one value per statistic), longer ones to
# blocks (one chunk, several chunks, then finished by the last block); 2-d inputs. The
# backward of rows of s >= 64 (gn_grad_rows): whole rows a task (one chunk; several, a
# row cap; short rows, unpacked rows), pieces of rows (unpacked too), per-group finishes
# of many samples (one channel, several)
GN_SHAPES = [((3, 8, 64), 2), ((2, 16, 2000), 1), ((2, 600, 64), 1), ((4, 6, 130), 3),
             ((3, 64, 196), 32), ((2, 3, 4099), 1), ((1, 2, 40001), 2), ((40, 4, 300), 2),
             ((40, 2, 300), 2), ((5, 4, 65), 1), ((2, 2, 9000), 1),
             ((2, 6, 5), 3), ((3, 4), 2), ((2, 8, 3, 3), 8), ((1, 6, 300), 2), ((3, 4, 129), 1),
             ((5, 12, 515), 4), ((1, 64, 1024), 32), ((37, 3, 7), 3), ((2, 512, 2), 2),
             ((4, 64, 3), 2), ((1, 1, 1), 1), ((8, 64), 8), ((64, 1024), 32), ((300, 96), 3),
             ((5, 12), 4), ((33, 40), 5), ((7, 200), 1), ((3, 600), 2), ((16, 64), 64),
             ((9, 48), 1), ((4, 130), 1), ((2, 96, 3), 8), ((3, 8, 7), 2), ((4, 16, 7, 7), 4),
             ((1, 2, 70000), 1), ((2, 4, 20000), 2)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape,groups", GN_SHAPES)
def test_group_norm(be, rng, dtype, shape, groups):
    x, gamma, beta = data(rng, shape, dtype)
    y, mean, rstd = nn.group_norm(T(x), T(gamma), T(beta), groups=groups, eps=1e-3)
    ry, rmean, rvar = ref_group_norm(x, gamma, beta, groups, 1e-3)
    np.testing.assert_allclose(host(y), ry, **tol(dtype))
    np.testing.assert_allclose(host(mean), rmean, **tol(dtype))
    np.testing.assert_allclose(host(rstd), 1 / np.sqrt(rvar + 1e-3), **tol(dtype))
    assert host(mean).shape == (shape[0], groups)
    g = rng.standard_normal(shape).astype(dtype)
    dx, dgamma, dbeta = nn.group_norm_backward(T(g), T(x), mean, rstd, T(gamma))
    # the textbook backward: dL/dxhat = gamma g; dx = rstd (h - mean(h) - xhat mean(h xhat))
    n = shape[0]
    xg = x.astype(np.float64).reshape(n, groups, -1)
    xhat = ((xg - rmean[..., None]) / np.sqrt(rvar[..., None] + 1e-3)).reshape(shape)
    h = (g * bcast(gamma, x)).reshape(n, groups, -1)
    xh = xhat.reshape(n, groups, -1)
    want_dx = ((h - h.mean(axis=2, keepdims=True) - xh * (h * xh).mean(axis=2, keepdims=True))
               / np.sqrt(rvar[..., None] + 1e-3)).reshape(shape)
    for got, want in ((dx, want_dx), (dgamma, (g * xhat).sum(axis=axes_of(x))),
                      (dbeta, g.astype(np.float64).sum(axis=axes_of(x)))):
        scale = max(1.0, np.abs(want).max())
        np.testing.assert_allclose(host(got), want, rtol=tol(dtype)["rtol"],
                                   atol=tol(dtype)["atol"] * scale)


@pytest.mark.parametrize("shape,groups", [((3, 4, 3), 2), ((2, 6), 3), ((2, 2, 2, 2), 1)])
def test_group_norm_finite_differences(be, rng, shape, groups):
    x, gamma, beta = data(rng, shape, np.float64)
    g = rng.standard_normal(shape)

    def f(x, gamma, beta):
        return host(nn.group_norm(T(x), T(gamma), T(beta), groups=groups, eps=1e-2)[0])

    _, mean, rstd = nn.group_norm(T(x), T(gamma), T(beta), groups=groups, eps=1e-2)
    got = nn.group_norm_backward(T(g), T(x), mean, rstd, T(gamma))
    for a, b in zip(got, numeric_grads(f, [x, gamma, beta], g)):
        np.testing.assert_allclose(host(a), b, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("shape,groups", [((0, 4, 3), 2), ((2, 4, 0), 2), ((2, 0, 3), 1)])
def test_group_norm_empty(be, shape, groups):
    c = shape[1]
    x = np.ones(shape)
    y, mean, rstd = nn.group_norm(T(x), T(np.ones(c)), T(np.zeros(c)), groups=groups)
    assert host(y).shape == shape and host(mean).shape == (shape[0], groups)
    assert np.isnan(host(mean)).all()
    dx, dgamma, dbeta = nn.group_norm_backward(T(x), T(x), mean, rstd, T(np.ones(c)))
    assert host(dx).shape == shape
    np.testing.assert_array_equal(host(dgamma), np.zeros(c))


# ------------------------------------------------------------------------- PyTorch
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(4, 3), (5, 3, 7, 3), (2, 4, 300)])
def test_against_torch_batch_norm(be, rng, dtype, shape):
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    x, gamma, beta = data(rng, shape, dtype)
    g = rng.standard_normal(shape).astype(dtype)
    c, count = shape[1], prod(shape) // shape[1]
    rm, rv = rng.standard_normal(c).astype(dtype), rng.uniform(0.5, 2, c).astype(dtype)
    tx, tg, tb = (torch.tensor(a, requires_grad=True) for a in (x, gamma, beta))
    trm, trv = torch.tensor(rm), torch.tensor(rv)
    ty = F.batch_norm(tx, trm, trv, tg, tb, training=True, momentum=0.2, eps=1e-4)
    ty.backward(torch.tensor(g))
    y, mean, invstd, var = nn.batch_norm(T(x), T(gamma), T(beta), eps=1e-4)
    RM, RV = T(rm), T(rv)
    nn.batch_norm_update_running(RM, RV, mean, var, momentum=0.2, count=count)
    dx, dgamma, dbeta = nn.batch_norm_backward(T(g), T(x), mean, invstd, T(gamma))
    for got, want in ((y, ty), (RM, trm), (RV, trv), (dx, tx.grad), (dgamma, tg.grad), (dbeta, tb.grad)):
        want = want.detach().numpy()
        np.testing.assert_allclose(host(got), want, rtol=tol(dtype)["rtol"],
                                   atol=tol(dtype)["atol"] * max(1.0, np.abs(want).max()))
    te = [torch.tensor(a, requires_grad=True) for a in (x, gamma, beta)]
    ye = F.batch_norm(te[0], torch.tensor(rm), torch.tensor(rv), te[1], te[2], training=False, eps=1e-4)
    ye.backward(torch.tensor(g))
    got = (nn.batch_norm_eval(T(x), T(gamma), T(beta), T(rm), T(rv), eps=1e-4),) + \
        nn.batch_norm_eval_backward(T(g), T(x), T(gamma), T(rm), T(rv), eps=1e-4)
    for a, b in zip(got, (ye,) + tuple(t.grad for t in te)):
        b = b.detach().numpy()
        np.testing.assert_allclose(host(a), b, rtol=tol(dtype)["rtol"],
                                   atol=tol(dtype)["atol"] * max(1.0, np.abs(b).max()))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape,groups", [((2, 6, 5), 3), ((3, 8, 4, 4), 4), ((2, 4, 300), 1)])
def test_against_torch_group_norm(be, rng, dtype, shape, groups):
    torch = pytest.importorskip("torch")
    x, gamma, beta = data(rng, shape, dtype)
    g = rng.standard_normal(shape).astype(dtype)
    tx, tg, tb = (torch.tensor(a, requires_grad=True) for a in (x, gamma, beta))
    ty = torch.nn.functional.group_norm(tx, groups, tg, tb, eps=1e-4)
    ty.backward(torch.tensor(g))
    y, mean, rstd = nn.group_norm(T(x), T(gamma), T(beta), groups=groups, eps=1e-4)
    got = (y,) + nn.group_norm_backward(T(g), T(x), mean, rstd, T(gamma))
    for a, b in zip(got, (ty, tx.grad, tg.grad, tb.grad)):
        b = b.detach().numpy()
        np.testing.assert_allclose(host(a), b, rtol=tol(dtype)["rtol"],
                                   atol=tol(dtype)["atol"] * max(1.0, np.abs(b).max()))


# ------------------------------------------------------------------- determinism
def _every_op(x, g, gamma, beta, groups):
    y, mean, invstd, var = nn.batch_norm(x, gamma, beta)
    out = [y, mean, invstd, var, *nn.batch_norm_backward(g, x, mean, invstd, gamma),
           nn.batch_norm_eval(x, gamma, beta, mean, var),
           *nn.batch_norm_eval_backward(g, x, gamma, mean, var)]
    y, mean, rstd = nn.group_norm(x, gamma, beta, groups=groups)
    return out + [y, mean, rstd, *nn.group_norm_backward(g, x, mean, rstd, gamma)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(8, 6, 4099), (6000, 6), (64, 6, 40), (16, 3, 4099), (200, 3, 1000),
                                   (5000, 66), (600, 96), (2, 3, 30000)])
def test_bitwise_deterministic(be, rng, dtype, shape):
    x, gamma, beta = data(rng, shape, dtype)
    args = (T(x), T(rng.standard_normal(shape).astype(dtype)), T(gamma), T(beta), 3)
    for a, b in zip(_every_op(*args), _every_op(*args)):
        np.testing.assert_array_equal(host(a), host(b))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(9, 3, 257), (7, 5, 64), (4097, 4), (2, 2, 1024)])
def test_alignment_does_not_change_results(be, rng, dtype, shape):
    """Operands one element off 16 bytes (no 16-byte loads on the GPU) give the same bits."""
    x, gamma, beta = data(rng, shape, dtype)
    g = rng.standard_normal(shape).astype(dtype)

    def shifted(a):  # contiguous, at an offset of one element
        return hf.reshape(T(np.concatenate([a[:1].ravel()[:1], a.ravel()]))[1:], shape)

    aligned = _every_op(T(x), T(g), T(gamma), T(beta), 1)
    shifted = _every_op(shifted(x), shifted(g), T(gamma), T(beta), 1)
    for a, b in zip(aligned, shifted):
        np.testing.assert_array_equal(host(a), host(b))


# ------------------------------------------------------------------------ bad input
def test_bad_input(be):
    x, c3 = T(np.ones((2, 3, 4))), T(np.ones(3))
    with pytest.raises(ValueError, match="gamma must have shape"):
        nn.batch_norm(x, T(np.ones(4)), c3)
    with pytest.raises(ValueError, match=r"\(N, C, \*spatial\)"):
        nn.batch_norm(T(np.ones(3)), c3, c3)
    with pytest.raises(TypeError, match="float32 or float64"):
        nn.batch_norm(T(np.ones((2, 3), np.int32)), T(np.ones(3, np.int32)), T(np.ones(3, np.int32)))
    with pytest.raises(TypeError, match="dtypes differ"):
        nn.batch_norm(x, T(np.ones(3, np.float32)), c3)
    with pytest.raises(ValueError, match="eps"):
        nn.batch_norm(x, c3, c3, eps=-1)
    with pytest.raises(TypeError, match="hipfer Tensor"):
        nn.batch_norm(np.ones((2, 3)), c3, c3)
    with pytest.raises(ValueError, match="grad and x shapes differ"):
        nn.batch_norm_backward(T(np.ones((2, 3, 5))), x, c3, c3, c3)
    with pytest.raises(ValueError, match="invstd must have shape"):
        nn.batch_norm_backward(x, x, c3, T(np.ones(2)), c3)
    with pytest.raises(ValueError, match="running_var must have shape"):
        nn.batch_norm_eval(x, c3, c3, c3, T(np.ones(2)))
    with pytest.raises(ValueError, match="running_mean must have shape"):
        nn.batch_norm_eval_backward(x, x, c3, T(np.ones(4)), c3)
    rm, rv = T(np.zeros(3)), T(np.ones(3))
    with pytest.raises(ValueError, match="momentum"):
        nn.batch_norm_update_running(rm, rv, c3, c3, momentum=1.5, count=8)
    with pytest.raises(ValueError, match="count must be >= 2"):
        nn.batch_norm_update_running(rm, rv, c3, c3, count=1)
    with pytest.raises(ValueError, match="must be an int"):
        nn.batch_norm_update_running(rm, rv, c3, c3, count=2.5)
    with pytest.raises(ValueError, match="var must have shape"):
        nn.batch_norm_update_running(rm, rv, c3, T(np.ones(4)), count=8)
    with pytest.raises(ValueError, match="in place"):
        nn.batch_norm_update_running(T(np.zeros((3, 2)))[:, 0], rv, c3, c3, count=8)
    with pytest.raises(ValueError, match="C % groups"):
        nn.group_norm(x, c3, c3, groups=2)
    with pytest.raises(ValueError, match="positive"):
        nn.group_norm(x, c3, c3, groups=0)
    with pytest.raises(TypeError, match="groups must be an int"):
        nn.group_norm(x, c3, c3, groups=1.5)
    with pytest.raises(ValueError, match="mean must be"):
        nn.group_norm_backward(x, x, T(np.ones((3, 1))), T(np.ones((3, 1))), c3)
    with pytest.raises(ValueError, match="mean and rstd shapes differ"):
        nn.group_norm_backward(x, x, T(np.ones((2, 3))), T(np.ones((2, 1))), c3)
    with pytest.raises(ValueError, match="C % groups"):
        nn.group_norm_backward(x, x, T(np.ones((2, 2))), T(np.ones((2, 2))), c3)
    with pytest.raises(ValueError, match="eps"):
        nn.group_norm(x, c3, c3, groups=3, eps=float("nan"))


def test_eps_zero_and_strided_input(be, rng):
    x, gamma, beta = data(rng, (4, 3, 20), np.float64)
    want = nn.batch_norm(T(x[:, :, ::2]), T(gamma), T(beta), eps=0.0)
    got = nn.batch_norm(T(x)[:, :, ::2], T(gamma), T(beta), eps=0.0)  # a view: copied first
    for a, b in zip(got, want):
        np.testing.assert_array_equal(host(a), host(b))
    np.testing.assert_allclose(host(got[2]), 1 / x[:, :, ::2].std(axis=(0, 2)), rtol=1e-12)


# -------------------------------------------------------------- the GPU work split
# Replays of the kernels' index arithmetic (fused_batchnorm.cuh) on the host.
TILING_SHAPES = [(1, 1, 1), (3, 5, 7), (1, 4, 300), (3, 2, 515), (16, 2, 1024), (4096, 3, 1),
                 (300, 257, 1), (2000, 5, 3), (7, 3, 127), (1, 3, 100000), (2, 600, 129),
                 (5, 3, 33), (9, 300, 31), (3, 2, 32), (1, 100, 40), (2, 3, 255), (40, 1, 1000),
                 (300, 1, 3), (2000, 1, 5), (1, 3, 200), (1, 4, 129), (600, 100, 1),
                 (700, 40, 2), (5000, 64, 1), (1, 1, 140000), (20000, 1, 3), (2100, 33, 1),
                 (1500, 9, 5), (777, 13, 7), (8192, 1024, 1)]


@pytest.mark.parametrize("shape", TILING_SHAPES)
@pytest.mark.parametrize("itemsize", [4, 8])
@pytest.mark.parametrize("merge", [True, False])
def test_tiling_covers_every_value_once(shape, itemsize, merge):
    """bn_visit replayed on the split (of the merging passes, and of the passes that only
    map values): each value is taken exactly once, by a thread of its own channel (g == 1)
    or holding its position (tiles), and chunks are packed whenever rows are."""
    n, c, s = shape
    f, tasks = K.tiling(n, c, s, itemsize, merge)
    v = 16 // itemsize
    seen = np.zeros(n * c * s, np.int64)
    assert tasks == -(-c // f["g"]) * f["n_chunks"] and f["n_chunks"] >= 1
    for task in range(tasks):
        grp, r = divmod(task, f["n_chunks"])
        if f["g"] == 1:  # chunks of values
            assert s % v or f["chunk"] % v == 0  # packed rows, packed chunks
            k0, k1 = r * f["chunk"], min(n * s, (r + 1) * f["chunk"])
            assert k0 < k1  # no empty chunk
            seen[(np.arange(k0, k1) // s * c + grp) * s + np.arange(k0, k1) % s] += 1
        else:  # tiles of g >= 2 channels, chunks of rows (bn_tile)
            w = f["g"] * s
            tpr = -(-w // v)
            lanes = K.BLOCK // tpr
            # tiles start on 16-byte boundaries of packed rows; chunks are whole steps
            assert f["g"] == K.tile_channels(c, s, itemsize) and (f["g"] == c or w % v == 0)
            assert lanes >= 1 and (f["n_chunks"] == 1 or f["chunk"] % (lanes * K.HOLD) == 0)
            rows = np.arange(r * f["chunk"], min(n, (r + 1) * f["chunk"]))
            assert rows.size  # no empty chunk
            for t in range(lanes * tpr):
                lane, j = divmod(t, tpr)
                q = grp * w + j * v  # the thread's first position in a row
                for i in range(q, min(q + v, grp * w + w, c * s)):
                    assert grp * f["g"] <= i // s < (grp + 1) * f["g"]
                    seen[rows[lane::lanes] * c * s + i] += 1
    np.testing.assert_array_equal(seen, 1)


def _walk(k, k1, s, step):
    """bn_walk's (row, j) sequence from value k of (rows, s) values, step at a time."""
    dn, dj = divmod(step, s)
    n, j = divmod(k, s)
    while k < k1:
        yield n, j
        k += step
        j += dj
        n += dn
        if j >= s:
            j -= s
            n += 1


@pytest.mark.parametrize("n,c,s,groups", [(2, 4, 150, 2), (1, 2, 70000, 1), (3, 600, 1, 2),
                                          (2, 64, 196, 32), (2, 8, 33, 1), (2, 4, 20000, 2),
                                          (1, 3, 1000, 1)])
@pytest.mark.parametrize("itemsize", [4, 8])
def test_group_norm_statistic_view_covers_every_value_once(n, c, s, groups, itemsize):
    """gn_visit: each statistic's chunk walked as (channel, spatial) rows; every value once,
    with its own channel; V neighbours packed only within a channel."""
    _, stats, k = K.stats_view(n, c, s, groups)
    assert not K.uses_team(k)
    f, tasks = K.tiling(1, stats, k, itemsize)
    assert f["g"] == 1 and tasks == stats * f["n_chunks"]
    v = 16 // itemsize
    packed = s % v == 0 and f["chunk"] % v == 0
    V = v if packed else 1
    cg = c // groups
    seen = np.zeros(n * c * s, np.int64)
    for task in range(tasks):
        st, r = divmod(task, f["n_chunks"])
        k0, k1 = r * f["chunk"], min(k, (r + 1) * f["chunk"])
        for t in range(K.BLOCK):
            for row, j in _walk(k0 + t * V, k1, s, K.BLOCK * V):
                i = st * k + row * s + j
                assert j + V <= s and i % V == 0 if packed else True
                idx = np.arange(i, i + V)
                assert ((idx // s) % c == st % groups * cg + row).all()  # f.row's channel
                seen[idx] += 1
    np.testing.assert_array_equal(seen, 1)


@pytest.mark.parametrize("n,c,s,groups", [(3, 8, 64, 2), (2, 16, 2000, 1), (2, 600, 64, 1),
                                          (4, 6, 130, 3), (1, 2, 40001, 2), (2, 2, 9000, 1),
                                          (1, 2, 70000, 1), (2, 8, 4096, 4), (5, 12, 515, 4)])
@pytest.mark.parametrize("itemsize", [4, 8])
@pytest.mark.parametrize("ws", [32, 64])
def test_group_norm_rows_cover_every_value_once(n, c, s, groups, itemsize, ws):
    """gn_grad_rows replayed: each task's segments (whole rows or one piece of a row) cut
    into items for teams of lanes; every value once, by a lane of a team of its own row, V
    neighbours only when rows are packed; every (channel, sample, piece) partial stored by
    one task; at most one scratch slot an item."""
    _, stats, k = K.stats_view(n, c, s, groups)
    assert K.uses_rows(s, k)
    f, tasks = K.rows_tiling(n, c, s, groups, itemsize)
    cg, m, pieces, pc, n_chunks = f["cg"], f["m"], f["pieces"], f["pc"], f["n_chunks"]
    assert tasks == stats * n_chunks and 1 <= m <= K.MAX_ROWS
    v = 16 // itemsize
    vp = v if s % v == 0 else 1
    assert pieces == 1 or (pc % vp == 0 and (pieces - 1) * pc < s <= pieces * pc)
    seen = np.zeros(n * c * s, np.int64)
    stored = np.zeros(c * n * pieces, np.int64)
    for task in range(tasks):
        st, r = divmod(task, n_chunks)
        smp, q = divmod(st, groups)
        j0, nseg, a0, ln, p = r * m, min(m, cg - r * m), 0, s, 0
        if pieces > 1:
            j0, p = divmod(r, pieces)
            nseg, a0, ln = 1, p * pc, min(pc, s - p * pc)
        assert nseg >= 1 and ln >= 1
        tm = 1
        while tm < ws and tm * vp < ln:
            tm *= 2
        teams, span = K.BLOCK // tm, tm * vp
        q_want = teams // nseg if nseg < teams else 1
        sub = -(-(-(-ln // q_want)) // span) * span
        qn = -(-ln // sub)
        items = nseg * qn
        assert items <= K.BLOCK
        for e in range(items):
            sg, qq = divmod(e, qn)
            lo, hi = qq * sub, min(ln, qq * sub + sub)
            assert lo < hi
            row = st * k + (j0 + sg) * s
            for lane in range(tm):
                for i in range(lo + lane * vp, hi, span):
                    assert i + vp <= s  # V neighbours within the row
                    seen[row + a0 + i: row + a0 + i + vp] += 1
        for sg in range(nseg):
            stored[((q * cg + j0 + sg) * n + smp) * pieces + p] += 1
    np.testing.assert_array_equal(seen, 1)
    np.testing.assert_array_equal(stored, 1)


def test_group_norm_rows_tiling():
    """Statistics of one chunk are one task (dx in the same launch); groups of more rows
    than a task holds are cut; few statistics of long rows are cut into pieces."""
    f, tasks = K.rows_tiling(128, 32, 112 * 112, 8, 4)
    assert (f["m"], f["pieces"], f["n_chunks"], tasks) == (4, 1, 1, 1024)
    f, tasks = K.rows_tiling(1100, 300, 64, 1, 4)
    assert (f["m"], f["pieces"], f["n_chunks"]) == (K.MAX_ROWS, 1, 2)
    f, tasks = K.rows_tiling(8, 64, 64 * 64 * 16, 32, 4)
    assert (f["m"], f["pieces"], f["pc"], f["n_chunks"], tasks) == (1, 2, 2 ** 15, 4, 1024)
    assert not K.uses_rows(49, 16 * 49) and not K.uses_rows(64, 192) and K.uses_rows(64, 256)


def test_team_geometry():
    for k in range(1, K.BLOCK):
        assert K.uses_team(k)
        tm, m = K.team(k)
        assert tm & (tm - 1) == 0 and tm <= 32 and 32 % tm == 0  # whole teams in every warp
        assert m in K.TEAM_M and m * tm >= k and (m == 1 or (m // 2) * tm < k)
        assert tm == 32 or tm >= k
    assert not K.uses_team(K.BLOCK)


@pytest.mark.parametrize("n,c,s,groups", [(64, 1024, 1, 32), (5, 12, 1, 4), (7, 200, 1, 1),
                                          (3, 96, 3, 8), (16, 64, 1, 64), (9, 48, 1, 1),
                                          (4, 130, 1, 1), (2, 6, 5, 3), (37, 3, 7, 3),
                                          (100, 12, 2, 3)])
@pytest.mark.parametrize("grid", [1, 3, 64])
def test_group_norm_teams_cover_every_value_once(n, c, s, groups, grid):
    """gn_team_*: every value of every statistic taken by one lane of the statistic's team,
    with its channel, the group q kept without dividing as the kernels do, for any grid."""
    _, stats, k = K.stats_view(n, c, s, groups)
    assert K.uses_team(k)
    tm, m = K.team(k)
    u_n, teams = K.SLOTS // m, K.BLOCK // tm
    per, cg = teams * u_n, c // groups
    assert per == K.team_per_block(k)

    def step(a, d):
        a += d
        return a - groups if a >= groups else a

    seen = np.zeros(n * c * s, np.int64)
    for b in range(grid):
        for t in range(K.BLOCK):
            lane, team = t % tm, t // tm
            q, dq_u, dq_pass = (b * per + team) % groups, teams % groups, grid * per % groups
            for base in range(b * per, stats, grid * per):
                qu = q
                for u in range(u_n):
                    st = base + u * teams + team
                    if st < stats:
                        assert qu == st % groups
                        for j in range(m):
                            e = lane + j * tm
                            if e < k:
                                i = st * k + e
                                assert (i // s) % c == qu * cg + e // s
                                seen[i] += 1
                    qu = step(qu, dq_u)
                q = step(q, dq_pass)
    np.testing.assert_array_equal(seen, 1)
