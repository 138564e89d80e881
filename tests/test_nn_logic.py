"""hipfer.nn logic ops (soft logic, power-mean aggregator, tanh-Gaussian policy, RL rows)
against straightforward Python loops, float64 finite differences for every backward,
GPU against CPU, determinism and bad input, on each backend."""
import itertools
import math

import numpy as np
import pytest

import hipfer as hf
import hipfer.nn as nn

from test_tensor import host

FLOATS = [np.float32, np.float64]
NORMS = ["product", "lukasiewicz", "minmax"]
KINDS = ["and", "or"]
PS = [1.0, 2.5, -1.5, 0.0, 3.0, math.inf, -math.inf]
# trailing shapes of the k-operand ops: scalar, single, odd, not a multiple of a block
TRAILING = [(), (1,), (7,), (33, 65)]


def tol(dt):
    return dict(rtol=2e-5, atol=2e-6) if np.dtype(dt) == np.float32 else dict(rtol=1e-11, atol=1e-12)


def bits(t):
    return host(t).tobytes()


def cpu(a):
    return hf.asarray(a, device="cpu")


def truth(rng, shape, dt):
    return rng.uniform(0.05, 0.95, shape).astype(dt)


def positive(rng, shape, dt):
    return rng.uniform(0.2, 3.0, shape).astype(dt)


def normal(rng, shape, dt):
    return rng.standard_normal(shape).astype(dt)


def columns(x):
    """The k-operand columns of x (k, ...): (k, n) rows of float64 Python values."""
    return x.reshape(x.shape[0], -1).astype(np.float64).T


def fd(f, arrays, i, h=1e-6):
    """Central finite differences of the scalar f(*arrays) w.r.t. arrays[i] (float64)."""
    g = np.zeros_like(arrays[i])
    for idx in np.ndindex(arrays[i].shape):
        plus = [a.copy() for a in arrays]
        minus = [a.copy() for a in arrays]
        plus[i][idx] += h
        minus[i][idx] -= h
        g[idx] = (f(*plus) - f(*minus)) / (2 * h)
    return g


# --------------------------------------------------------------------- Python loops
def loop_logic(col, kind, norm):
    k = len(col)
    if norm == "product":
        p = 1.0
        for v in col:
            p *= (1 - v) if kind == "or" else v
        return 1 - p if kind == "or" else p
    if norm == "lukasiewicz":
        s = sum(col)
        return min(1.0, s) if kind == "or" else max(0.0, s - (k - 1))
    return max(col) if kind == "or" else min(col)


def loop_logic_lrp(col, r, kind, norm, eps, lo):
    if norm == "minmax":
        at = col.index(max(col) if kind == "or" else min(col))
        return [r if i == at else 0.0 for i in range(len(col))]
    if norm == "product":
        z = [max(math.log1p(-v) if kind == "or" else math.log(v), lo) for v in col]
    else:
        z = list(col)
    s = sum(z)
    d = s + (eps if s >= 0 else -eps)
    return [zi * r / d for zi in z]


def loop_power_mean(col, p):
    k = len(col)
    if p == math.inf:
        return max(col)
    if p == -math.inf:
        return min(col)
    if p == 0:
        return math.exp(sum(math.log(v) for v in col) / k)
    return (sum(v ** p for v in col) / k) ** (1 / p)


def loop_tanh_gaussian(mean, log_std, eps):
    act, lp = np.zeros_like(mean, dtype=np.float64), np.zeros(mean.shape[0])
    for n, d in np.ndindex(mean.shape):
        u = mean[n, d] + math.exp(log_std[n, d]) * eps[n, d]
        act[n, d] = math.tanh(u)
        lp[n] += (-0.5 * eps[n, d] ** 2 - log_std[n, d] - 0.5 * math.log(2 * math.pi)
                  + 2 * math.log(math.cosh(u)))  # -log(1 - tanh^2), without cancellation
    return act, lp


def loop_policy_loss(z, action, adv, beta):
    out = []
    for n in range(z.shape[0]):
        m = max(z[n])
        lse = m + math.log(sum(math.exp(v - m) for v in z[n]))
        logp = [v - lse for v in z[n]]
        h = -sum(math.exp(lp) * lp for lp in logp)
        out.append(-adv[n] * logp[action[n]] - beta * h)
    return np.array(out)


# ------------------------------------------------------------------- logic_pointwise
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("k,trailing", [(1, (7,)), (2, ()), (3, (1,)), (4, (33, 65)), (5, (0,))])
def test_logic_pointwise(be, rng, dtype, norm, kind, k, trailing):
    x = truth(rng, (k,) + trailing, dtype)
    y = nn.logic_pointwise(hf.asarray(x), kind=kind, norm=norm)
    assert y.shape == trailing and y.dtype == dtype
    want = np.array([loop_logic(list(c), kind, norm) for c in columns(x)]).reshape(trailing)
    np.testing.assert_allclose(host(y), want, **tol(dtype))


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("k", [1, 2, 4, 10])  # 10: past the register path (8 operands)
def test_logic_pointwise_backward_fd(be, rng, norm, kind, k):
    x = truth(rng, (k, 3, 5), np.float64)
    if norm == "lukasiewicz" and k > 1:  # both sides of the clamp, away from the kink
        x[:, 0] = 0.95 if kind == "and" else 0.05
        x[:, 1] = 0.3 if kind == "and" else 0.6
    g = normal(rng, (3, 5), np.float64)
    gx = host(nn.logic_pointwise_backward(hf.asarray(x), hf.asarray(g), kind=kind, norm=norm))

    def f(x):
        return float(np.sum(host(nn.logic_pointwise(hf.asarray(x), kind=kind, norm=norm)) * g))
    np.testing.assert_allclose(gx, fd(f, [x], 0), rtol=1e-6, atol=1e-8)


def test_logic_pointwise_backward_zeros_and_ties(be):
    x = np.array([[0.0, 0.5], [0.5, 0.5], [0.25, 0.5]])  # a zero factor; a three-way tie
    g = np.array([2.0, 3.0])
    gx = host(nn.logic_pointwise_backward(hf.asarray(x), hf.asarray(g), norm="product"))
    np.testing.assert_array_equal(gx[:, 0], [2 * 0.5 * 0.25, 0.0, 0.0])
    gx = host(nn.logic_pointwise_backward(hf.asarray(x), hf.asarray(g), norm="minmax"))
    np.testing.assert_array_equal(gx[:, 1], [3.0, 0.0, 0.0])  # ties: the first operand


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("kind", KINDS)
def test_logic_pointwise_lrp(be, rng, dtype, norm, kind):
    k, trailing, eps = 3, (5, 7), 1e-3
    x = truth(rng, (k,) + trailing, dtype)
    r = normal(rng, trailing, dtype)
    rx = host(nn.logic_pointwise_lrp(hf.asarray(x), hf.asarray(r), kind=kind, norm=norm, eps=eps))
    assert rx.shape == x.shape and rx.dtype == dtype
    lo = float(np.log(np.finfo(dtype).tiny))
    want = np.array([loop_logic_lrp(list(c), rv, kind, norm, eps, lo)
                     for c, rv in zip(columns(x), r.astype(np.float64).ravel())]).T
    np.testing.assert_allclose(rx, want.reshape(x.shape), **tol(dtype))
    rx0 = host(nn.logic_pointwise_lrp(hf.asarray(x), hf.asarray(r), kind=kind, norm=norm, eps=0.0))
    np.testing.assert_allclose(rx0.sum(axis=0), r, **tol(dtype))  # conservative with eps = 0


def test_logic_pointwise_lrp_log_zero(be):
    """A false operand of a product AND (log 0, clamped) takes the relevance, no NaN; a
    true result (log y = 0) has nothing to share."""
    x = np.array([[0.0, 1.0], [0.5, 1.0]])
    rx = host(nn.logic_pointwise_lrp(hf.asarray(x), hf.asarray(np.array([1.0, 1.0])), eps=1e-6))
    assert np.all(np.isfinite(rx))
    np.testing.assert_allclose(rx[:, 0].sum(), 1.0, rtol=1e-6)
    assert rx[0, 0] > 0.99
    np.testing.assert_array_equal(rx[:, 1], [0.0, 0.0])


# ------------------------------------------------------------------------ aggregator
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("p", PS)
@pytest.mark.parametrize("k,trailing", [(1, (7,)), (3, ()), (4, (33, 65)), (2, (0, 3))])
def test_aggregator(be, rng, dtype, p, k, trailing):
    x = positive(rng, (k,) + trailing, dtype)
    y = nn.aggregator(hf.asarray(x), p=p)
    assert y.shape == trailing and y.dtype == dtype
    want = np.array([loop_power_mean(list(c), p) for c in columns(x)]).reshape(trailing)
    np.testing.assert_allclose(host(y), want, **tol(dtype))


def test_aggregator_no_overflow(be):
    x = np.array([[1e300, 1e-300], [2e300, 3e-300]])
    np.testing.assert_allclose(host(nn.aggregator(hf.asarray(x), p=8.0)),
                               [2e300 * (0.5 * (1 + 0.5 ** 8)) ** 0.125, 3e-300 * (0.5 * (1 + (1 / 3) ** 8)) ** 0.125],
                               rtol=1e-12)
    np.testing.assert_allclose(host(nn.aggregator(hf.asarray(x), p=-8.0)),
                               [1e300 * (0.5 * (1 + 0.5 ** 8)) ** -0.125, 1e-300 * (0.5 * (1 + (1 / 3) ** 8)) ** -0.125],
                               rtol=1e-12)


@pytest.mark.parametrize("p", PS)
def test_aggregator_backward_fd(be, rng, p):
    x = positive(rng, (4, 3, 5), np.float64)
    g = normal(rng, (3, 5), np.float64)
    gx = host(nn.aggregator_backward(hf.asarray(x), hf.asarray(g), p=p))

    def f(x):
        return float(np.sum(host(nn.aggregator(hf.asarray(x), p=p)) * g))
    np.testing.assert_allclose(gx, fd(f, [x], 0), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("p", PS)
def test_aggregator_lrp(be, rng, dtype, p):
    x = positive(rng, (5, 3, 7), dtype)
    r = normal(rng, (3, 7), dtype)
    rx = host(nn.aggregator_lrp(hf.asarray(x), hf.asarray(r), p=p))
    x64, r64 = x.astype(np.float64), r.astype(np.float64)
    if math.isinf(p):
        at = np.argmax(x64, axis=0) if p > 0 else np.argmin(x64, axis=0)
        want = np.where(np.arange(5)[:, None, None] == at, r64, 0.0)
    else:
        w = x64 ** p
        want = w / w.sum(axis=0) * r64
    np.testing.assert_allclose(rx, want, **tol(dtype))
    np.testing.assert_allclose(rx.sum(axis=0), r, **tol(dtype))  # conservative


# --------------------------------------------------------------------- tanh_gaussian
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n,d", [(1, 1), (5, 3), (7, 33), (3, 100), (0, 4)])
def test_tanh_gaussian(be, rng, dtype, n, d):
    mean, log_std, eps = normal(rng, (n, d), dtype), 0.5 * normal(rng, (n, d), dtype), normal(rng, (n, d), dtype)
    action, logp = nn.tanh_gaussian(hf.asarray(mean), hf.asarray(log_std), hf.asarray(eps))
    assert action.shape == (n, d) and logp.shape == (n,) and logp.dtype == dtype
    wa, wl = loop_tanh_gaussian(mean.astype(np.float64), log_std.astype(np.float64), eps.astype(np.float64))
    np.testing.assert_allclose(host(action), wa, **tol(dtype))
    np.testing.assert_allclose(host(logp), wl, rtol=tol(dtype)["rtol"], atol=tol(dtype)["atol"] * max(d, 1) * 10)


def test_tanh_gaussian_saturated(be):
    """Large |u|: log(1 - tanh^2) stays finite (the stable form), -> 2 (log 2 - |u|)."""
    mean = np.array([[30.0, -30.0]], np.float32)
    _, logp = nn.tanh_gaussian(hf.asarray(mean), hf.asarray(np.zeros_like(mean)), hf.asarray(np.zeros_like(mean)))
    want = 2 * (-0.5 * math.log(2 * math.pi) - 2 * (math.log(2) - 30.0))
    np.testing.assert_allclose(host(logp), [want], rtol=1e-6)


@pytest.mark.parametrize("dtype", FLOATS)
def test_tanh_gaussian_sample(be, rng, dtype):
    """eps from the counter-based stream: the same numbers on every backend."""
    mean, log_std = normal(rng, (9, 5), dtype), 0.3 * normal(rng, (9, 5), dtype)
    gen = hf.random.Generator(1234, offset=10)
    action, logp, eps = nn.tanh_gaussian_sample(hf.asarray(mean), hf.asarray(log_std), gen)
    assert gen.offset == 10 + 46  # 45 normals, rounded up to even
    want_eps = host(hf.random.Generator(1234, offset=10).standard_normal((9, 5), dtype=dtype, device="cpu"))
    np.testing.assert_allclose(host(eps), want_eps, **tol(dtype))
    wa, wl = nn.tanh_gaussian(cpu(mean), cpu(log_std), cpu(host(eps)))
    np.testing.assert_allclose(host(action), host(wa), **tol(dtype))
    np.testing.assert_allclose(host(logp), host(wl), **tol(dtype))
    with pytest.raises(TypeError, match="Generator"):
        nn.tanh_gaussian_sample(hf.asarray(mean), hf.asarray(log_std), 1234)


def test_tanh_gaussian_backward_fd(be, rng):
    n, d = 4, 3
    mean, log_std, eps = normal(rng, (n, d), np.float64), 0.5 * normal(rng, (n, d), np.float64), normal(rng, (n, d), np.float64)
    ga, gl = normal(rng, (n, d), np.float64), normal(rng, (n,), np.float64)
    gm, gs = nn.tanh_gaussian_backward(*(hf.asarray(a) for a in (mean, log_std, eps, ga, gl)))

    def f(mean, log_std):
        a, lp = nn.tanh_gaussian(hf.asarray(mean), hf.asarray(log_std), hf.asarray(eps))
        return float(np.sum(host(a) * ga) + np.sum(host(lp) * gl))
    np.testing.assert_allclose(host(gm), fd(f, [mean, log_std], 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(host(gs), fd(f, [mean, log_std], 1), rtol=1e-6, atol=1e-8)


# --------------------------------------------------------------------- policy_gradient
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("beta", [0.0, 0.01, 0.5])
@pytest.mark.parametrize("n,a", [(1, 1), (6, 4), (9, 37), (3, 1000), (0, 5)])
def test_policy_gradient_loss(be, rng, dtype, beta, n, a):
    z = 3 * normal(rng, (n, a), dtype)
    action, adv = rng.integers(0, a, n), normal(rng, (n,), dtype)
    loss = nn.policy_gradient_loss(hf.asarray(z), hf.asarray(action), hf.asarray(adv), entropy_coef=beta)
    assert loss.shape == (n,) and loss.dtype == dtype
    want = loop_policy_loss(z.astype(np.float64), action, adv.astype(np.float64), beta)
    np.testing.assert_allclose(host(loss), want, rtol=tol(dtype)["rtol"] * 10, atol=tol(dtype)["atol"] * 10)


@pytest.mark.parametrize("beta", [0.0, 0.3])
@pytest.mark.parametrize("a", [1, 5, 40])
def test_policy_gradient_backward_fd(be, rng, beta, a):
    n = 3
    z, action, adv, g = normal(rng, (n, a), np.float64), rng.integers(0, a, n), normal(rng, (n,), np.float64), normal(rng, (n,), np.float64)
    gz = host(nn.policy_gradient_backward(hf.asarray(z), hf.asarray(action), hf.asarray(adv), hf.asarray(g), entropy_coef=beta))

    def f(z):
        return float(np.sum(host(nn.policy_gradient_loss(hf.asarray(z), hf.asarray(action), hf.asarray(adv), entropy_coef=beta)) * g))
    np.testing.assert_allclose(gz, fd(f, [z], 0), rtol=1e-6, atol=1e-8)


# -------------------------------------------------------------------------- td_target
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("mask", ["float", "bool"])
@pytest.mark.parametrize("n,a", [(1, None), (9, None), (1, 1), (7, 3), (5, 45), (0, 2)])
def test_td_target(be, rng, dtype, mask, n, a):
    reward = normal(rng, (n,), dtype)
    done = rng.random(n) < 0.4
    nxt = normal(rng, (n,) if a is None else (n, a), dtype)
    nxt[done] = np.nan  # terminal rows are never read
    d = done if mask == "bool" else done.astype(dtype)
    t = nn.td_target(hf.asarray(reward), hf.asarray(d), hf.asarray(nxt), gamma=0.9)
    assert t.shape == (n,) and t.dtype == dtype
    want = [float(reward[i]) + (0.0 if done[i] else 0.9 * float(np.max(nxt[i]))) for i in range(n)]
    np.testing.assert_allclose(host(t), want, **tol(dtype))


def test_td_target_fractional_done(be):
    t = nn.td_target(hf.asarray(np.array([1.0])), hf.asarray(np.array([0.25])), hf.asarray(np.array([[2.0, 4.0]])), gamma=0.5)
    np.testing.assert_allclose(host(t), [1.0 + 0.5 * 0.75 * 4.0])


# ------------------------------------------------------------------------ polyak_update
@pytest.mark.parametrize("dtype", FLOATS)
def test_polyak_update(be, rng, dtype):
    shapes = [(7,), (33, 65), ()]
    ts, os_ = [normal(rng, s, dtype) for s in shapes], [normal(rng, s, dtype) for s in shapes]
    T = [hf.asarray(t.copy()) for t in ts]
    assert nn.polyak_update(T, [hf.asarray(o) for o in os_], tau=0.005) is T
    for got, t, o in zip(T, ts, os_):
        np.testing.assert_allclose(host(got), 0.005 * o + 0.995 * t, **tol(dtype))
    one = hf.asarray(np.full(3, np.nan, dtype))  # tau = 1 copies: target never read
    nn.polyak_update(one, hf.asarray(np.ones(3, dtype)), tau=1.0)
    np.testing.assert_array_equal(host(one), np.ones(3))


# ------------------------------------------------------------ GPU against CPU, determinism
def _cases(rng, dt):
    """(name, function of tensors, NumPy inputs) for every op at sizes past a block."""
    x, xp = truth(rng, (3, 1000, 37), dt), positive(rng, (4, 2049), dt)
    r, rp = normal(rng, (1000, 37), dt), normal(rng, (2049,), dt)
    m, s, e = normal(rng, (513, 7), dt), 0.3 * normal(rng, (513, 7), dt), normal(rng, (513, 7), dt)
    ga, gl = normal(rng, (513, 7), dt), normal(rng, (513,), dt)
    z, act, adv, g = 2 * normal(rng, (700, 19), dt), rng.integers(0, 19, 700), normal(rng, (700,), dt), normal(rng, (700,), dt)
    zl = normal(rng, (33, 3000), dt)
    actl = rng.integers(0, 3000, 33)
    rw, dn, q = normal(rng, (1025,), dt), (rng.random(1025) < 0.3).astype(dt), normal(rng, (1025, 6), dt)
    cases = []
    for norm, kind in itertools.product(NORMS, KINDS):
        kw = dict(norm=norm, kind=kind)
        cases += [(f"and{norm}{kind}", lambda x, kw=kw: nn.logic_pointwise(x, **kw), [x]),
                  (f"bwd{norm}{kind}", lambda x, r, kw=kw: nn.logic_pointwise_backward(x, r, **kw), [x, r]),
                  (f"lrp{norm}{kind}", lambda x, r, kw=kw: nn.logic_pointwise_lrp(x, r, eps=1e-4, **kw), [x, r])]
    for p in PS:
        cases += [(f"agg{p}", lambda x, p=p: nn.aggregator(x, p=p), [xp]),
                  (f"aggbwd{p}", lambda x, r, p=p: nn.aggregator_backward(x, r, p=p), [xp, rp]),
                  (f"agglrp{p}", lambda x, r, p=p: nn.aggregator_lrp(x, r, p=p), [xp, rp])]
    xk = truth(rng, (11, 301), dt)  # the product backward's many-operand path
    gk = normal(rng, (301,), dt)
    cases += [(f"bwdk11{kind}", lambda x, g, kind=kind: nn.logic_pointwise_backward(x, g, kind=kind), [xk, gk])
              for kind in KINDS]
    cases += [("tanh", nn.tanh_gaussian, [m, s, e]),
              ("tanhbwd", nn.tanh_gaussian_backward, [m, s, e, ga, gl]),
              ("pg", lambda *a: nn.policy_gradient_loss(*a, entropy_coef=0.05), [z, act, adv]),
              ("pglong", lambda *a: nn.policy_gradient_loss(*a, entropy_coef=0.05), [zl, actl, adv[:33]]),
              ("pgbwd", lambda *a: nn.policy_gradient_backward(*a, entropy_coef=0.05), [z, act, adv, g]),
              ("pgbwd0", lambda *a: nn.policy_gradient_backward(*a), [z, act, adv, g]),
              ("tdq", lambda *a: nn.td_target(*a, gamma=0.97), [rw, dn, q]),
              ("tdv", lambda *a: nn.td_target(*a, gamma=0.97), [rw, dn, q[:, 0].copy()])]
    return cases


def _tuple(r):
    return r if isinstance(r, tuple) else (r,)


@pytest.mark.parametrize("dtype", FLOATS)
def test_backend_agrees_with_cpu(be, rng, dtype):
    loose = dict(rtol=5e-4, atol=5e-5) if dtype == np.float32 else dict(rtol=1e-9, atol=1e-10)
    for name, f, args in _cases(rng, dtype):
        got = _tuple(f(*(hf.asarray(a) for a in args)))
        want = _tuple(f(*(cpu(a) for a in args)))
        for gt, wt in zip(got, want):
            np.testing.assert_allclose(host(gt), host(wt), err_msg=name, **loose)


@pytest.mark.parametrize("dtype", FLOATS)
def test_deterministic(be, rng, dtype):
    for name, f, args in _cases(rng, dtype):
        ts = [hf.asarray(a) for a in args]
        first = [bits(t) for t in _tuple(f(*ts))]
        again = [bits(t) for t in _tuple(f(*ts))]
        assert first == again, name


# ---------------------------------------------------------------------------- bad input
def test_bad_input(be):
    x = hf.asarray(np.full((3, 4), 0.5))
    with pytest.raises(ValueError, match="norm must be one of"):
        nn.logic_pointwise(x, norm="goedel")
    with pytest.raises(ValueError, match="kind must be"):
        nn.logic_pointwise(x, kind="xor")
    with pytest.raises(ValueError, match="k >= 1 operands"):
        nn.aggregator(hf.asarray(np.ones((0, 4))))
    with pytest.raises(ValueError, match="k >= 1 operands"):
        nn.logic_pointwise(hf.asarray(np.float64(0.5)))
    with pytest.raises(ValueError, match="shapes differ"):
        nn.logic_pointwise_backward(x, hf.asarray(np.ones(3)))
    with pytest.raises(ValueError, match="shapes differ"):
        nn.aggregator_lrp(x, hf.asarray(np.ones(5)))
    with pytest.raises(TypeError, match="float32 or float64"):
        nn.aggregator(hf.asarray(np.ones((3, 4), np.int32)))
    with pytest.raises(TypeError, match="dtypes differ"):
        nn.aggregator_backward(x, hf.asarray(np.ones(4, np.float32)))
    with pytest.raises(ValueError, match="p=nan"):
        nn.aggregator(x, p=math.nan)
    with pytest.raises(ValueError, match="eps=-1"):
        nn.logic_pointwise_lrp(x, hf.asarray(np.ones(4)), eps=-1.0)
    with pytest.raises(TypeError, match="hipfer Tensor"):
        nn.logic_pointwise(np.ones((2, 3)))


def test_bad_input_rl(be):
    m = hf.asarray(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="mean and log_std"):
        nn.tanh_gaussian(m, hf.asarray(np.zeros((3, 3))), m)
    with pytest.raises(ValueError, match="2-d"):
        nn.tanh_gaussian(hf.asarray(np.zeros(3)), hf.asarray(np.zeros(3)), hf.asarray(np.zeros(3)))
    with pytest.raises(ValueError, match="grad_log_prob"):
        nn.tanh_gaussian_backward(m, m, m, m, hf.asarray(np.zeros(2)))
    z, adv = hf.asarray(np.zeros((3, 4))), hf.asarray(np.ones(3))
    with pytest.raises(TypeError, match="action operand must be int64"):
        nn.policy_gradient_loss(z, hf.asarray(np.zeros(3, np.int32)), adv)
    with pytest.raises(ValueError, match="rows and action"):
        nn.policy_gradient_loss(z, hf.asarray(np.zeros(2, np.int64)), adv)
    with pytest.raises(ValueError, match="rows and advantage"):
        nn.policy_gradient_loss(z, hf.asarray(np.zeros(3, np.int64)), hf.asarray(np.ones(4)))
    with pytest.raises(ValueError, match="entropy_coef=inf"):
        nn.policy_gradient_loss(z, hf.asarray(np.zeros(3, np.int64)), adv, entropy_coef=math.inf)
    for bad in (4, -1):
        a = hf.asarray(np.array([0, bad, 1], np.int64))
        with pytest.raises(IndexError, match=f"action {bad} is out of range for 4 actions"):
            nn.policy_gradient_loss(z, a, adv)
        with pytest.raises(IndexError, match=f"action {bad} is out of range"):
            nn.policy_gradient_backward(z, a, adv, adv)
    nn.policy_gradient_loss(z, hf.asarray(np.zeros(3, np.int64)), adv)  # the flag was cleared
    r = hf.asarray(np.ones(3))
    with pytest.raises(ValueError, match="gamma=1.5"):
        nn.td_target(r, r, r, gamma=1.5)
    with pytest.raises(ValueError, match="gamma=-0.1"):
        nn.td_target(r, r, r, gamma=-0.1)
    with pytest.raises(TypeError, match="done must be bool"):
        nn.td_target(r, hf.asarray(np.ones(3, np.int64)), r)
    with pytest.raises(ValueError, match="next must be"):
        nn.td_target(r, r, hf.asarray(np.ones((4, 2))))
    with pytest.raises(ValueError, match="reward and done"):
        nn.td_target(r, hf.asarray(np.ones(2)), r)
    with pytest.raises(ValueError, match="tau=1.5"):
        nn.polyak_update(r, r, tau=1.5)
    with pytest.raises(ValueError, match="matching sequences"):
        nn.polyak_update([r, r], [r], tau=0.5)
    with pytest.raises(ValueError, match="in place"):
        nn.polyak_update(hf.asarray(np.ones((3, 2)))[:, 0], r, tau=0.5)
