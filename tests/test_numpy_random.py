"""hipfer.random's NumPy Generator API: exact checks (shapes, dtypes, bounds, seeds and
reproducibility, errors) and statistical ones against scipy.stats.

The statistical tests use fixed seeds, so they are deterministic; each compares a sample
of a few thousand draws with the exact distribution: Kolmogorov-Smirnov p-values above
1e-3 for continuous laws (a wrong law or parameter gives p ~ 1e-10 or less at these
sizes), and pmf / moment differences within 5 standard errors for discrete ones."""
import math

import numpy as np
import pytest
from scipy import stats

import hipfer as hf
from hipfer.random import Generator, default_rng

N = 4000


def host(t):
    assert isinstance(t, hf.Tensor)
    return np.asarray(t.to_device("cpu"), copy=True)


def ks_ok(x, cdf, args=()):
    if isinstance(cdf, str):  # the frozen law's cdf: some SciPy versions' fast path for a
        cdf, args = getattr(stats, cdf)(*args).cdf, ()  # named law drops loc/scale
    p = stats.kstest(np.asarray(x, np.float64).ravel(), cdf, args=args).pvalue
    assert p > 1e-3, p


# ------------------------------------------------------------------ seeds and streams
def test_seeds_and_streams(be):
    a = host(default_rng(42).random(50))
    assert np.array_equal(a, host(default_rng(42).random(50)))  # bitwise, twice
    assert not np.array_equal(a, host(default_rng(43).random(50)))
    assert not np.array_equal(host(default_rng().random(8)), host(default_rng().random(8)))
    g = default_rng(5)
    assert default_rng(g) is g
    x, y = g.random(10), g.random(10)  # consecutive calls: fresh numbers
    assert not np.array_equal(host(x), host(y))
    assert g.offset == 20
    g2 = Generator(5, offset=10)  # replay from the state
    assert np.array_equal(host(g2.random(10)), host(y))
    s1 = default_rng([1, 2, 3]).random(5)
    assert np.array_equal(host(s1), host(default_rng(np.array([1, 2, 3])).random(5)))
    parent = default_rng(3)
    kids = parent.spawn(2) + parent.spawn(1)
    draws = [host(k.random(5)).tobytes() for k in kids]
    assert len(set(draws)) == 3
    assert host(default_rng(3).spawn(1)[0].random(5)).tobytes() == draws[0]
    assert default_rng(3).state == {"seed": 3, "offset": 0}


def test_seed_errors():
    with pytest.raises(ValueError):
        default_rng(-1)
    with pytest.raises(TypeError):
        default_rng(1.5)


def test_device_keyword(be):
    g = default_rng(1, device="cpu")
    assert g.random(3).device == hf.Device("cpu")
    assert np.array_equal(host(g.random(3)), host(default_rng(1).random(6))[3:])


def test_runs_on_device_without_host_copies(be, refuse_host):
    g = default_rng(7)
    lam = hf.asarray([1.0, 30.0])
    for r in (g.random(3), g.normal(hf.asarray([0.0, 1.0]), 2.0), g.integers(0, 5, 4),
              g.gamma(hf.asarray([0.5, 4.0])), g.poisson(lam),
              g.binomial(20, hf.asarray([0.1, 0.9])),
              g.permutation(5), g.choice(5, 3, replace=False), g.beta(2.0, 3.0, size=2),
              g.uniform(hf.asarray([0.0]), 1.0, size=(2, 1)), g.permuted(hf.arange(6))):
        assert isinstance(r, hf.Tensor) and r.device == be.device


# ------------------------------------------------------------------ shapes and dtypes
FLOAT_METHODS = [
    ("random", ()), ("uniform", (1.0, 3.0)), ("normal", (1.0, 2.0)), ("standard_normal", ()),
    ("exponential", (2.0,)), ("standard_exponential", ()), ("gamma", (2.0, 3.0)),
    ("standard_gamma", (0.5,)), ("beta", (2.0, 5.0)), ("lognormal", ()), ("laplace", ()),
    ("logistic", ()), ("gumbel", ()), ("weibull", (1.5,)), ("pareto", (3.0,)),
    ("rayleigh", ()), ("chisquare", (3.0,)), ("standard_t", (4.0,)), ("standard_cauchy", ()),
]
INT_METHODS = [("integers", (0, 7)), ("poisson", (3.0,)), ("binomial", (10, 0.3)),
               ("geometric", (0.4,))]


@pytest.mark.parametrize("method,args", FLOAT_METHODS + INT_METHODS,
                         ids=[m for m, _ in FLOAT_METHODS + INT_METHODS])
@pytest.mark.parametrize("size", [None, 0, 5, (2, 3), (0, 4)], ids=str)
def test_shapes_dtypes_reproducible(be, method, args, size):
    want_dt = np.int64 if (method, args) in INT_METHODS else np.float64
    r = getattr(default_rng(11), method)(*args, size=size)
    shape = () if size is None else ((size,) if isinstance(size, int) else size)
    assert r.shape == shape and r.dtype == want_dt
    again = getattr(default_rng(11), method)(*args, size=size)
    assert np.array_equal(host(r), host(again), equal_nan=True)


@pytest.mark.parametrize("method", ["random", "standard_normal", "standard_exponential",
                                    "standard_gamma"])
@pytest.mark.parametrize("dt", [np.float32, np.float64], ids=str)
def test_float_dtype_and_out(be, method, dt):
    args = (2.0,) if method == "standard_gamma" else ()
    g = default_rng(3)
    r = getattr(g, method)(*args, size=(3, 4), dtype=dt)
    assert r.dtype == dt and r.shape == (3, 4)
    out = hf.zeros((3, 4), dtype=dt)
    back = getattr(default_rng(3), method)(*args, dtype=dt, out=out)
    assert back is out
    np.testing.assert_allclose(host(out), host(r), rtol=1e-6 if dt == np.float32 else 1e-15)
    with pytest.raises(TypeError):
        getattr(g, method)(*args, size=2, dtype=np.int32)
    with pytest.raises(ValueError):
        getattr(g, method)(*args, size=5, out=hf.zeros((3,), dtype=dt))


def test_parameters_broadcast_with_size(be):
    g = default_rng(2)
    loc = hf.asarray([0.0, 100.0, -100.0])
    r = host(g.normal(loc, 0.5, size=(400, 3)))
    assert r.shape == (400, 3)
    np.testing.assert_allclose(r.mean(axis=0), [0, 100, -100], atol=0.15)
    assert g.normal([[1.0], [2.0]], [1.0, 2.0, 3.0]).shape == (2, 3)  # lists broadcast
    with pytest.raises(ValueError):
        g.normal(loc, 1.0, size=(2,))
    scale = hf.asarray([[1.0], [4.0]])
    r = host(g.exponential(scale, size=(2, 2000)))
    np.testing.assert_allclose(r.mean(axis=1), [1, 4], rtol=0.1)
    # non-contiguous tensor parameters
    lam = hf.asarray(np.array([[2.0, 99.0, 50.0, 99.0]]).T)[::2]
    r = host(g.poisson(lam, size=(2, 3000)))
    np.testing.assert_allclose(r.mean(axis=1), [2, 50], rtol=0.05)


# ------------------------------------------------------------------ integers
INT_DTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


@pytest.mark.parametrize("dt", INT_DTS, ids=lambda t: np.dtype(t).name)
def test_integers_bounds_all_dtypes(be, dt):
    info = np.iinfo(dt)
    g = default_rng(8)
    for low, high, endpoint in [(0, 10, False), (3, 5, True), (info.min, info.max, True),
                                (info.max - 2, info.max, True), (info.min, info.min + 1, False)]:
        r = host(g.integers(low, high, size=3000, dtype=dt, endpoint=endpoint))
        assert r.dtype == dt
        top = high if endpoint else high - 1
        assert r.min() >= low and r.max() <= top
        if top - low < 20:
            assert set(np.unique(r).tolist()) == set(range(low, top + 1))
    assert host(g.integers(5, size=1000, dtype=dt)).max() == 4  # high=None: [0, low)


def test_integers_bool_and_uniformity(be):
    g = default_rng(9)
    b = host(g.integers(0, 2, size=2000, dtype=bool))
    assert b.dtype == np.bool_ and 0.45 < b.mean() < 0.55
    assert host(g.integers(1, size=10, dtype=bool)).sum() == 0
    k = host(g.integers(-3, 4, size=14000))
    counts = np.bincount(k + 3, minlength=7)
    assert counts.size == 7 and stats.chisquare(counts).pvalue > 1e-3


def test_integers_tensor_bounds(be):
    g = default_rng(10)
    low = hf.asarray([0, 100, -5])
    high = hf.asarray([[300], [200]])
    r = host(g.integers(low, high, size=(2, 3)))
    assert r.shape == (2, 3) and r.dtype == np.int64
    rr = host(g.integers(low, hf.asarray([3, 200, 0]), size=(3000, 3), endpoint=True))
    for j, (lo, hi) in enumerate([(0, 3), (100, 200), (-5, 0)]):
        assert rr[:, j].min() == lo and rr[:, j].max() == hi
    u = host(g.integers(hf.asarray([0]), hf.asarray([2**63 - 1]), size=2000, dtype=np.int64))
    assert 0 <= u.min() and 0.45 < np.mean(u > 2**62) < 0.55
    with pytest.raises(ValueError):
        g.integers(hf.asarray([5, 1]), hf.asarray([5, 2]))
    # tensor bounds follow the scalar bounds' (the kernel's) algorithm exactly, also
    # where Lemire's rejection redraws often (span 3 * 2^62: a quarter of the draws)
    for low, high, dt in [(-7, 100, np.int8), (0, 3 << 62, np.uint64), (5, 2**63 + 9, np.uint64),
                          (-2**63, 2**63 - 1, np.int64)]:
        want = host(default_rng(77).integers(low, high, size=(500,), dtype=dt))
        hdt = np.uint64 if high >= 2**63 else np.int64
        got = host(default_rng(77).integers(hf.asarray(np.array([low], dtype=dt)),
                                            hf.asarray(np.array(high, dtype=hdt)),
                                            size=(500,), dtype=dt))
        assert np.array_equal(got, want)


def test_integers_errors(be):
    g = default_rng(1)
    for args, kw in [((5, 5), {}), ((5, 4), {"endpoint": True}), ((0,), {}),
                     ((-1, 10), {"dtype": np.uint8}), ((0, 257), {"dtype": np.uint8}),
                     ((0, 3), {"dtype": bool})]:
        with pytest.raises(ValueError, match="integers"):
            g.integers(*args, **kw)
    with pytest.raises(TypeError):
        g.integers(0, 5, dtype=np.float64)
    with pytest.raises(TypeError):
        g.integers("a", 5)
    # float bounds truncate, as NumPy
    r = host(default_rng(2).integers(0.0, 3.9, size=500))
    assert r.dtype == np.int64 and set(r.tolist()) == {0, 1, 2}
    r = host(default_rng(2).integers(hf.asarray([0.0]), hf.asarray([3.9]), size=500))
    assert set(r.tolist()) == {0, 1, 2}


# ------------------------------------------------------------------ continuous laws
CONTINUOUS = [
    ("random", (), {}, "uniform", ()),
    ("uniform", (-2.0, 3.0), {}, "uniform", (-2.0, 5.0)),
    ("normal", (1.5, 0.5), {}, "norm", (1.5, 0.5)),
    ("standard_normal", (), {}, "norm", ()),
    ("exponential", (2.5,), {}, "expon", (0, 2.5)),
    ("standard_exponential", (), {}, "expon", ()),
    ("gamma", (3.0, 2.0), {}, "gamma", (3.0, 0, 2.0)),
    ("gamma", (0.3,), {}, "gamma", (0.3,)),
    ("standard_gamma", (1.0,), {}, "gamma", (1.0,)),
    ("standard_gamma", (40.0,), {}, "gamma", (40.0,)),
    ("beta", (0.5, 0.5), {}, "beta", (0.5, 0.5)),
    ("beta", (2.0, 7.0), {}, "beta", (2.0, 7.0)),
    ("chisquare", (3.0,), {}, "chi2", (3.0,)),
    ("standard_t", (3.0,), {}, "t", (3.0,)),
    ("standard_cauchy", (), {}, "cauchy", ()),
    ("lognormal", (0.5, 0.8), {}, "lognorm", (0.8, 0, math.exp(0.5))),
    ("laplace", (1.0, 2.0), {}, "laplace", (1.0, 2.0)),
    ("logistic", (-1.0, 0.5), {}, "logistic", (-1.0, 0.5)),
    ("gumbel", (2.0, 3.0), {}, "gumbel_r", (2.0, 3.0)),
    ("weibull", (1.7,), {}, "weibull_min", (1.7,)),
    ("pareto", (3.0,), {}, "lomax", (3.0,)),
    ("rayleigh", (2.0,), {}, "rayleigh", (0, 2.0)),
]


@pytest.mark.parametrize("method,args,kw,law,largs", CONTINUOUS,
                         ids=[f"{c[0]}{c[1]}" for c in CONTINUOUS])
def test_continuous_ks(be, method, args, kw, law, largs):
    x = host(getattr(default_rng(1234), method)(*args, size=N, **kw))
    assert np.all(np.isfinite(x))
    ks_ok(x, law, largs)


def test_ks_detects_a_wrong_law(be):
    """The KS check used above can fail: a gamma sample is not an exponential one."""
    x = host(default_rng(1).gamma(1.3, size=N))
    with pytest.raises(AssertionError):
        ks_ok(x, "expon")


def test_float32_streams_are_the_float64_law(be):
    x = host(default_rng(4).standard_normal(N, dtype=np.float32))
    ks_ok(x, "norm")
    u = host(default_rng(4).random(N, dtype=np.float32))
    assert u.min() >= 0 and u.max() < 1
    ks_ok(u, "uniform")


def test_gamma_edge_shapes(be):
    g = default_rng(6)
    assert np.all(host(g.standard_gamma(0.0, size=10)) == 0)
    tiny = host(g.standard_gamma(1e-3, size=1000))
    assert np.all((tiny >= 0) & np.isfinite(tiny))
    shapes = hf.asarray([0.2, 1.0, 7.0, 1e4])
    r = host(g.standard_gamma(shapes, size=(3000, 4)))
    a = np.array([0.2, 1.0, 7.0, 1e4])
    assert np.all(np.abs(r.mean(axis=0) - a) < 5 * np.sqrt(a / 3000))  # 5 standard errors
    b = host(g.beta(1e-3, 1e-3, size=200))  # tiny shapes: 0s and 1s, never NaN
    assert np.all((b >= 0) & (b <= 1))


def test_dirichlet(be):
    g = default_rng(12)
    alpha = [0.5, 2.0, 5.0]
    r = host(g.dirichlet(alpha, size=(N,)))
    assert r.shape == (N, 3) and r.dtype == np.float64
    np.testing.assert_allclose(r.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(r.mean(axis=0), np.array(alpha) / 7.5, atol=0.01)
    ks_ok(r[:, 0], "beta", (0.5, 7.0))  # a Dirichlet margin is Beta(a_i, sum - a_i)
    assert g.dirichlet(alpha).shape == (3,)
    assert g.dirichlet(alpha, size=(2, 0)).shape == (2, 0, 3)
    t = host(g.dirichlet([1e-3, 1e-3], size=20))
    assert np.all(np.isfinite(t))


def test_multivariate_normal(be):
    mean = np.array([1.0, -2.0, 0.5])
    a = np.array([[2.0, 0.3, 0.0], [0.3, 1.0, -0.4], [0.0, -0.4, 0.5]])
    cov = a @ a.T
    for method in ("svd", "eigh", "cholesky"):
        x = host(default_rng(13).multivariate_normal(mean, cov, size=(N,), method=method))
        assert x.shape == (N, 3) and x.dtype == np.float64
        np.testing.assert_allclose(x.mean(axis=0), mean, atol=5 * np.sqrt(np.diag(cov) / N).max())
        np.testing.assert_allclose(np.cov(x.T), cov, atol=0.15 * np.abs(cov).max())
    assert default_rng(1).multivariate_normal(mean, cov).shape == (3,)
    assert default_rng(1).multivariate_normal(mean, cov, size=(2, 5)).shape == (2, 5, 3)
    bad = np.array([[1.0, 2.0], [2.0, 1.0]])
    with pytest.warns(RuntimeWarning):
        default_rng(1).multivariate_normal([0, 0], bad)
    with pytest.raises(ValueError):
        default_rng(1).multivariate_normal([0, 0], bad, check_valid="raise")
    with pytest.raises(ValueError):
        default_rng(1).multivariate_normal([0, 0, 0], cov[:2, :2])


# ------------------------------------------------------------------ discrete laws
def pmf_ok(x, pmf, kmax):
    """Each empirical frequency of 0..kmax within 5 standard errors of the pmf."""
    n = x.size
    for k in range(kmax + 1):
        p = pmf(k)
        assert abs(np.mean(x == k) - p) <= 5 * math.sqrt(p * (1 - p) / n) + 1e-3, k


@pytest.mark.parametrize("lam", [0.0, 0.7, 4.0, 9.9, 10.0, 37.5, 1e5])
def test_poisson(be, lam):
    x = host(default_rng(21).poisson(lam, size=N))
    assert x.dtype == np.int64 and x.min() >= 0
    if lam == 0:
        assert np.all(x == 0)
        return
    sd = math.sqrt(lam)
    assert abs(x.mean() - lam) < 5 * sd / math.sqrt(N)
    assert abs(x.var() / lam - 1) < 0.12
    if lam < 100:
        pmf_ok(x, lambda k: stats.poisson.pmf(k, lam), int(lam + 3 * sd))


@pytest.mark.parametrize("n,p", [(0, 0.5), (1, 0.3), (10, 0.5), (30, 0.9), (40, 0.2),
                                 (200, 0.3), (1000, 0.999), (10**9, 1e-8), (5, 0.0), (5, 1.0)])
def test_binomial(be, n, p):
    x = host(default_rng(22).binomial(n, p, size=N))
    assert x.dtype == np.int64 and x.min() >= 0 and x.max() <= n
    mean, var = n * p, n * p * (1 - p)
    if var == 0:
        assert np.all(x == mean)
        return
    assert abs(x.mean() - mean) < 5 * math.sqrt(var / N)
    assert abs(x.var() / var - 1) < 0.12
    lo, hi = stats.binom.ppf([0.001, 0.999], n, p).astype(int)
    for k in range(lo, min(hi, lo + 60) + 1):
        q = stats.binom.pmf(k, n, p)
        assert abs(np.mean(x == k) - q) <= 5 * math.sqrt(q * (1 - q) / N) + 1e-3


def test_binomial_tensor_parameters(be):
    n = hf.asarray([5, 50, 500])
    p = hf.asarray([[0.5], [0.95]])
    x = host(default_rng(23).binomial(n, p, size=(3000, 2, 3)))
    want = np.array([[5, 50, 500]]) * np.array([[0.5], [0.95]])
    np.testing.assert_allclose(x.mean(axis=0), want, rtol=0.03, atol=0.05)
    assert np.all(x <= np.array([5, 50, 500]))
    with pytest.raises(TypeError):
        default_rng(1).binomial(hf.asarray([1.5]), 0.5)


@pytest.mark.parametrize("p", [0.05, 0.4, 1.0])
def test_geometric(be, p):
    x = host(default_rng(24).geometric(p, size=N))
    assert x.dtype == np.int64 and x.min() >= 1
    pmf_ok(x, lambda k: stats.geom.pmf(k, p), 10)


# ------------------------------------------------------------------ permutations
@pytest.mark.parametrize("n", [0, 1, 7, 300])
def test_permutation_of_range(be, n):
    r = host(default_rng(30).permutation(n))
    assert r.dtype == np.int64 and np.array_equal(np.sort(r), np.arange(n))


def test_permutation_is_uniform(be):
    g = default_rng(31)
    firsts = np.array([int(host(g.permutation(4))[0]) for _ in range(400)])
    assert stats.chisquare(np.bincount(firsts, minlength=4)).pvalue > 1e-3


def test_permutation_axis_and_copies(be):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 5, 3))
    t = hf.asarray(a)
    for axis in (0, 1, -1):
        r = host(default_rng(32).permutation(t, axis=axis))
        ax = axis % 3
        moved, orig = np.moveaxis(r, ax, 0), np.moveaxis(a, ax, 0)
        # whole slices move: each slice of r is one of a's
        keys = {s.tobytes() for s in orig}
        assert {s.tobytes() for s in moved} == keys
    assert np.array_equal(host(t), a)  # a copy, t untouched
    nc = hf.asarray(a)[::2, :, ::-1]  # non-contiguous
    r = host(default_rng(32).permutation(nc))
    assert sorted(r[:, 0, 0].tolist()) == sorted(a[::2, 0, ::-1][:, 0].tolist())
    assert host(default_rng(1).permutation([3, 1, 2])).tolist() in (
        [1, 2, 3], [1, 3, 2], [2, 1, 3], [2, 3, 1], [3, 1, 2], [3, 2, 1])
    with pytest.raises(np.exceptions.AxisError):
        default_rng(1).permutation(t, axis=3)
    with pytest.raises(np.exceptions.AxisError):
        default_rng(1).permutation(hf.asarray(3.0))


def test_shuffle_in_place(be):
    a = np.arange(24.0).reshape(6, 4)
    t = hf.asarray(a.copy())
    assert default_rng(33).shuffle(t) is None
    r = host(t)
    assert sorted(map(tuple, r)) == sorted(map(tuple, a)) and not np.array_equal(r, a)
    t = hf.asarray(a.copy())
    default_rng(33).shuffle(t, axis=1)
    assert np.array_equal(np.sort(host(t), axis=1), a)  # columns moved as a whole
    assert np.all(np.diff(host(t)[:, 0]) == 4)
    with pytest.raises(TypeError):
        default_rng(1).shuffle([1, 2, 3])
    with pytest.raises(np.exceptions.AxisError):
        default_rng(1).shuffle(t, axis=2)


@pytest.mark.parametrize("dt", [np.bool_, np.int8, np.uint32, np.float16, np.complex128],
                         ids=lambda t: np.dtype(t).name)
def test_permuted(be, dt):
    a = (np.random.default_rng(1).standard_normal((5, 6)) * 10).astype(dt)
    t = hf.asarray(a.copy())
    r = host(default_rng(34).permuted(t, axis=1))
    assert r.dtype == dt and np.array_equal(np.sort(r, axis=1), np.sort(a, axis=1))
    r0 = host(default_rng(34).permuted(t))  # axis=None: everything as one slice
    assert np.array_equal(np.sort(r0, axis=None), np.sort(a, axis=None))
    out = hf.empty_like(t)
    assert default_rng(34).permuted(t, axis=1, out=out) is out
    assert np.array_equal(host(out), r)
    default_rng(34).permuted(t, axis=0, out=t)  # in place
    assert np.array_equal(np.sort(host(t), axis=0), np.sort(a, axis=0))
    with pytest.raises(ValueError):
        default_rng(1).permuted(t, out=hf.empty((2,), dtype=dt))


def test_permuted_slices_independent(be):
    r = host(default_rng(35).permuted(hf.reshape(hf.arange(40), (4, 10)), axis=1))
    assert len({tuple(row - row.min()) for row in r}) == 4


# ------------------------------------------------------------------ choice
def test_choice_uniform_and_weighted(be):
    g = default_rng(40)
    r = host(g.choice(5, size=5000))
    assert r.dtype == np.int64 and stats.chisquare(np.bincount(r, minlength=5)).pvalue > 1e-3
    p = np.array([0.1, 0.0, 0.6, 0.3])
    r = host(g.choice(4, size=N, p=p))
    assert np.all(r != 1)
    np.testing.assert_allclose(np.bincount(r, minlength=4) / N, p, atol=0.025)
    r = host(g.choice(hf.asarray(p), size=(2, 3), p=hf.asarray(p)))
    assert r.shape == (2, 3) and set(r.ravel().tolist()) <= {0.1, 0.6, 0.3}
    assert g.choice(5).shape == ()


def test_choice_without_replacement(be):
    g = default_rng(41)
    for _ in range(5):
        r = host(g.choice(10, size=10, replace=False))
        assert sorted(r.tolist()) == list(range(10))
    r = host(g.choice(10, size=(2, 2), replace=False))
    assert r.shape == (2, 2) and len(set(r.ravel().tolist())) == 4
    # weighted without replacement: the first pick follows p, all picks are distinct
    p = np.array([0.5, 0.3, 0.2, 0.0])
    firsts = []
    for _ in range(600):
        r = host(g.choice(4, size=3, replace=False, p=p))
        assert len(set(r.tolist())) == 3 and 3 not in r
        firsts.append(r[0])
    np.testing.assert_allclose(np.bincount(firsts, minlength=4) / 600, p, atol=0.07)


def test_choice_axis(be):
    a = np.arange(12).reshape(3, 4)
    r = host(default_rng(42).choice(hf.asarray(a), size=5, axis=1))
    assert r.shape == (3, 5) and np.all((r - r[0]) == np.array([[0], [4], [8]]))
    r = host(default_rng(42).choice(hf.asarray(a), size=(2,), replace=False))
    assert r.shape == (2, 4)
    r = host(default_rng(42).choice([[1, 2], [3, 4]], size=(2, 2)))  # a list, axis 0
    assert r.shape == (2, 2, 2)


def test_choice_errors(be):
    g = default_rng(1)
    cases = [((3,), {"size": 4, "replace": False}), ((-1,), {}), ((0,), {"size": 2}),
             ((3,), {"p": [0.5, 0.5]}), ((3,), {"p": [0.5, 0.6, -0.1]}),
             ((3,), {"p": [0.2, 0.2, 0.2]}), ((3,), {"p": [[0.5, 0.5, 0.0]]}),
             ((3,), {"size": 2, "replace": False, "p": [1.0, 0.0, 0.0]}),
             ((hf.asarray(1.0),), {})]
    for args, kw in cases:
        with pytest.raises(ValueError, match="choice"):
            g.choice(*args, **kw)
    with pytest.raises(np.exceptions.AxisError):
        g.choice(hf.asarray([1, 2]), axis=1)
    assert g.choice(0, size=0).shape == (0,)


# ------------------------------------------------------------------ parameter errors
ERRORS = [
    ("normal", (0.0, -1.0)), ("exponential", (-1.0,)), ("gamma", (-1.0,)), ("gamma", (1.0, -1.0)),
    ("standard_gamma", (-0.5,)), ("beta", (0.0, 1.0)), ("beta", (1.0, -1.0)),
    ("poisson", (-1.0,)), ("poisson", (1e20,)), ("binomial", (-1, 0.5)),
    ("binomial", (10, 1.5)), ("binomial", (10, float("nan"))), ("geometric", (0.0,)),
    ("geometric", (1.5,)), ("chisquare", (0.0,)), ("standard_t", (-1.0,)),
    ("weibull", (-1.0,)), ("pareto", (0.0,)), ("rayleigh", (-1.0,)), ("laplace", (0.0, -1.0)),
    ("logistic", (0.0, -1.0)), ("gumbel", (0.0, -1.0)), ("lognormal", (0.0, -1.0)),
    ("dirichlet", ([1.0, -1.0],)), ("dirichlet", ([[1.0]],)),
]


@pytest.mark.parametrize("method,args", ERRORS, ids=[f"{m}{a}" for m, a in ERRORS])
def test_parameter_errors(be, method, args):
    with pytest.raises(ValueError, match=f"hipfer.random.Generator.{method}"):
        getattr(default_rng(1), method)(*args)


def test_tensor_parameter_errors(be):
    g = default_rng(1)
    with pytest.raises(ValueError, match="scale < 0"):
        g.normal(0.0, hf.asarray([1.0, -1.0]))
    with pytest.raises(ValueError, match="lam < 0"):
        g.poisson(hf.asarray([[1.0], [-2.0]]))
    with pytest.raises(TypeError):
        g.normal(hf.asarray([1j]))
    with pytest.raises(ValueError):
        g.exponential(hf.asarray([1.0, 2.0]), size=3)


def test_numpy_like_edge_values(be):
    g = default_rng(50)
    with pytest.raises(OverflowError, match="uniform"):
        g.uniform(0.0, float("inf"))
    with pytest.raises(ValueError, match="lam < 0 or lam is NaN"):
        g.poisson(float("nan"))
    assert np.isnan(host(g.normal(0.0, float("nan"))))  # NaN parameters pass, as NumPy
    x = host(g.binomial(10.7, 0.5, size=2000))  # a float n truncates
    assert x.max() == 10
    assert np.array_equal(host(g.dirichlet([0.0, 0.0])), [0.0, 0.0])
    d = host(g.dirichlet([0.0, 2.0], size=3))
    assert np.array_equal(d, [[0, 1]] * 3)
    assert np.all(host(g.weibull(0.0, size=5)) == 0)
    assert np.all(host(g.normal(3.0, 0.0, size=4)) == 3.0)
    assert np.all(host(g.exponential(0.0, size=4)) == 0.0)
    r = host(g.uniform(5.0, 2.0, size=1000))  # high < low is allowed, as NumPy
    assert r.min() > 2.0 and r.max() <= 5.0


def test_same_numbers_on_every_device(be):
    """The draws on the test's device equal those of the CPU (NumPy) backend: bitwise for
    uniform, integers and permutations; to a few ulps for laws through log/exp/cos (each
    platform's math library); counts exactly (a flip at a rejection boundary would need
    a draw within an ulp of it)."""
    def both(method, *args, **kw):
        here = getattr(default_rng(99), method)(*args, **kw)
        cpu = getattr(default_rng(99, device="cpu"), method)(*args, **kw)
        assert here.device == be.device and cpu.device == hf.Device("cpu")
        return host(here), host(cpu)
    for method, args in [("random", ()), ("integers", (-5, 10**6)), ("permutation", (50,))]:
        a, b = both(method, *args, **({} if method == "permutation" else {"size": 300}))
        assert np.array_equal(a, b)
    for method, args in [("standard_normal", ()), ("gamma", (0.4,)), ("gamma", (7.0,)),
                         ("beta", (0.5, 3.0)), ("exponential", ()), ("standard_t", (3.0,))]:
        a, b = both(method, *args, size=300)
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-300)
    for method, args in [("poisson", (4.0,)), ("poisson", (300.0,)), ("binomial", (20, 0.3)),
                         ("binomial", (5000, 0.6)), ("geometric", (0.2,))]:
        a, b = both(method, *args, size=300)
        assert np.array_equal(a, b)
