"""hipfer.nn batch norm and group norm against the textbook formulas (float64 NumPy), finite
differences and PyTorch (when importable), on each backend; determinism; bad input."""
from math import prod

import numpy as np
import pytest

import hipfer as hf
import hipfer.nn as nn
from hipfer.kernels import fused_batchnorm as K

from test_tensor import host

FLOATS = [np.float32, np.float64]
# odd sizes; 2-d (no spatial axes); rows long enough for one channel per block (2 s >= 256),
# packed (s % 4 == 0) or not; many short rows (several channels per block); several chunks
# per channel; single values
SHAPES = [(4, 3), (3, 5, 7), (2, 3, 4, 5), (1, 4, 300), (3, 2, 515), (16, 2, 1024), (4096, 3),
          (300, 257), (2000, 5, 3), (5, 3, 33), (300, 2, 40), (2, 3, 40), (140, 1, 1000),
          (5, 3, 1, 1), (1, 1, 1), (2, 1)]
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
GN_SHAPES = [((2, 6, 5), 3), ((3, 4), 2), ((2, 8, 3, 3), 8), ((1, 6, 300), 2), ((3, 4, 129), 1),
             ((5, 12, 515), 4), ((1, 64, 1024), 32), ((37, 3, 7), 3), ((2, 512, 2), 2),
             ((4, 64, 3), 2), ((1, 1, 1), 1)]


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
@pytest.mark.parametrize("shape", [(8, 6, 4099), (6000, 6), (64, 6, 40), (16, 3, 4099), (200, 3, 1000)])
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
@pytest.mark.parametrize("shape", [(1, 1, 1), (3, 5, 7), (1, 4, 300), (3, 2, 515), (16, 2, 1024),
                                   (4096, 3, 1), (300, 257, 1), (2000, 5, 3), (7, 3, 127),
                                   (1, 3, 100000), (2, 600, 129), (5, 3, 33), (9, 300, 31), (3, 2, 32),
                                   (1, 100, 40), (2, 3, 255), (40, 1, 1000)])
@pytest.mark.parametrize("itemsize", [4, 8])
@pytest.mark.parametrize("per_row", [False, True])
def test_tiling_covers_every_value_once(shape, itemsize, per_row):
    """bn_visit (fused_batchnorm.cuh) replayed on the split: each value is taken exactly once,
    by a thread of its own channel, and chunks are packed whenever rows are."""
    n, c, s = shape
    f, tasks = K.tiling(n, c, s, itemsize, per_row)
    v = 16 // itemsize
    seen = np.zeros(n * c * s, np.int64)
    assert tasks == -(-c // f["g"]) * f["n_chunks"] and f["n_chunks"] >= 1
    for task in range(tasks):
        grp, r = divmod(task, f["n_chunks"])
        if f["g"] == 1:
            assert s % v or f["chunk"] % v == 0  # packed rows, packed chunks
            k0, k1 = r * f["chunk"], min(n * s, (r + 1) * f["chunk"])
            assert k0 < k1  # no empty chunk
            for k in range(k0, k1):
                nn_, j = divmod(k, s)
                seen[(nn_ * c + grp) * s + j] += 1
                if per_row:
                    assert nn_ == r
        else:
            w = f["g"] * s
            assert w <= K.BLOCK
            for t in range(K.BLOCK // w * w):
                col, lane = t % w, t // w
                ch = grp * f["g"] + col // s
                if ch >= c:
                    continue
                for row in range(r * f["chunk"] + lane, min(n, (r + 1) * f["chunk"]), K.BLOCK // w):
                    i = row * c * s + grp * f["g"] * s + col
                    assert (i // s) % c == ch
                    seen[i] += 1
                    if per_row:
                        assert row == r
    np.testing.assert_array_equal(seen, 1)
