"""histogram, histogram_bin_edges, histogram2d, histogramdd, bincount and digitize against
NumPy: int / array / string-estimator bins, range, density, weights, dtypes, NaN and inf,
empty and non-contiguous inputs, errors, determinism, and np.<name>(tensor) dispatch."""
import warnings

import numpy as np
import pytest

import hipfer as hf

from _util import dtypes_of, ids, random_array

ESTIMATORS = ["auto", "fd", "doane", "scott", "stone", "rice", "sturges", "sqrt"]
REAL = dtypes_of("iuf")


def check(be, got, want, rtol=1e-12):
    want = np.asarray(want)
    assert isinstance(got, hf.Tensor)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    g = be.asnumpy(got)
    assert g.shape == want.shape
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(g, want)
    else:
        np.testing.assert_allclose(g, want, rtol=rtol, atol=rtol)


def data(rng, shape, dt):
    dt = np.dtype(dt)
    if dt.kind in "iu":
        return random_array(rng, shape, dt, low=0 if dt.kind == "u" else -30, high=30)
    return random_array(rng, shape, dt, scale=5.0)


def quiet(fn, *a, **k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*a, **k)


# ------------------------------------------------------------------ histogram
@pytest.mark.parametrize("dt", REAL, ids=ids(REAL))
def test_histogram_int_and_array_bins(be, rng, dt):
    x = data(rng, (7, 9), dt)
    t = hf.asarray(x)
    for bins in (1, 10, 4, [-6, -1, 0, 2.5, 9]):
        for rng_ in (None, (-4, 7)):
            h, e = hf.histogram(t, bins, rng_)
            wh, we = np.histogram(x, bins, rng_)
            check(be, h, wh)
            check(be, e, we)
    h, e = hf.histogram(t[::2, ::-3])
    check(be, h, np.histogram(x[::2, ::-3])[0])
    h, e = hf.histogram(hf.permute_dims(t, (1, 0)), 5, density=True)
    check(be, h, np.histogram(x.T, 5, density=True)[0])


@pytest.mark.parametrize("wdt", [np.float32, np.float64, np.int32, np.complex128], ids=str)
def test_histogram_weights(be, rng, wdt):
    x = data(rng, (40,), np.float64)
    w = random_array(rng, (40,), wdt, low=-5, high=5)
    t, u = hf.asarray(x), hf.asarray(w)
    for bins in (6, [-8, -2, 0, 1, 3, 12]):
        h, _ = hf.histogram(t, bins, weights=u)
        check(be, h, np.histogram(x, bins, weights=w)[0], rtol=1e-5)
    if np.dtype(wdt).kind != "c":
        h, _ = hf.histogram(t, 6, weights=u, density=True)
        check(be, h, np.histogram(x, 6, weights=w, density=True)[0], rtol=1e-5)


@pytest.mark.parametrize("est", ESTIMATORS)
@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int16, np.uint8], ids=str)
def test_histogram_estimators(be, rng, dt, est):
    x = data(rng, (60,), dt)
    t = hf.asarray(x)
    for rng_ in (None, (-3, 10)):
        h, e = quiet(hf.histogram, t, est, rng_)
        wh, we = quiet(np.histogram, x, est, rng_)
        check(be, e, we, rtol=1e-5)
        check(be, h, wh)
        check(be, quiet(hf.histogram_bin_edges, t, est, rng_), we, rtol=1e-5)


def test_histogram_special_values(be):
    x = np.array([1.0, np.nan, 2.0, np.inf, -0.0, 0.0, 3.0])
    t = hf.asarray(x)
    h, e = hf.histogram(t, 3, range=(0, 3))  # NaN and inf are outside any range
    check(be, h, np.histogram(x, 3, range=(0, 3))[0])
    with pytest.raises(ValueError, match="hipfer.histogram: autodetected range"):
        hf.histogram(t)
    h, e = hf.histogram(hf.asarray(np.zeros(0)))
    wh, we = np.histogram(np.zeros(0))
    check(be, h, wh)
    check(be, e, we)
    h, e = hf.histogram(hf.asarray([5.0, 5.0]))  # a zero-width range widens by 0.5
    wh, we = np.histogram([5.0, 5.0])
    check(be, h, wh)
    check(be, e, we)
    h, e = hf.histogram(hf.asarray(np.float64(2.0)), 2)
    check(be, h, np.histogram(np.float64(2.0), 2)[0])


def test_histogram_errors(be):
    t = hf.asarray([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="hipfer.histogram: `bins` must be positive"):
        hf.histogram(t, 0)
    with pytest.raises(ValueError, match="hipfer.histogram: `bins` must increase"):
        hf.histogram(t, [0, 2, 1])
    with pytest.raises(ValueError, match="hipfer.histogram: max must be larger"):
        hf.histogram(t, 3, range=(2, 1))
    with pytest.raises(ValueError, match="hipfer.histogram: 'nope' is not a valid estimator"):
        hf.histogram(t, "nope")
    with pytest.raises(TypeError, match="hipfer.histogram: Automated estimation"):
        hf.histogram(t, "auto", weights=t)
    with pytest.raises(ValueError, match="hipfer.histogram: weights should have"):
        hf.histogram(t, 3, weights=hf.asarray([1.0]))
    with pytest.raises(TypeError, match="hipfer.histogram: `bins` must be an integer"):
        hf.histogram(t, 2.5)


def test_histogram_deterministic(be, rng):
    x = data(rng, (3000,), np.float32)
    w = data(rng, (3000,), np.float32)
    t, u = hf.asarray(x), hf.asarray(w)
    first = be.asnumpy(hf.histogram(t, 50, weights=u)[0])
    for _ in range(3):
        np.testing.assert_array_equal(be.asnumpy(hf.histogram(t, 50, weights=u)[0]), first)


# ------------------------------------------------------------------ histogramdd / 2d
@pytest.mark.parametrize("density", [False, True])
def test_histogramdd(be, rng, density):
    s = data(rng, (50, 3), np.float64)
    t = hf.asarray(s)
    w = rng.random(50)
    for bins in (4, [2, 3, 5], [np.array([-5.0, 0, 2, 9]), 3, np.array([-9.0, 9])]):
        hb = [hf.asarray(b) if isinstance(b, np.ndarray) else b for b in bins] \
            if isinstance(bins, list) else bins
        for weights in (None, w):
            got, ge = hf.histogramdd(t, hb, density=density,
                                     weights=None if weights is None else hf.asarray(weights))
            want, we = np.histogramdd(s, bins, density=density, weights=weights)
            check(be, got, want)
            for a, b in zip(ge, we):
                check(be, a, b)
    got, _ = hf.histogramdd([t[:, 0], t[:, 1]], 3, range=[(-2, 2), None])
    check(be, got, np.histogramdd([s[:, 0], s[:, 1]], 3, range=[(-2, 2), None])[0])
    got, _ = hf.histogramdd(t[:, 0], 5)  # a 1-d sample is one dimension
    check(be, got, np.histogramdd(s[:, 0], 5)[0])
    got, _ = hf.histogramdd(t[::3], 3)
    check(be, got, np.histogramdd(s[::3], 3)[0])


def test_histogram2d(be, rng):
    x, y = data(rng, (30,), np.float32), data(rng, (30,), np.float32)
    tx, ty = hf.asarray(x), hf.asarray(y)
    for bins in (4, [3, 6], [-5, 0, 5]):
        h, ex, ey = hf.histogram2d(tx, ty, bins, range=None if bins == [-5, 0, 5] else
                                   [(-4, 4), (-6, 6)])
        wh, wx, wy = np.histogram2d(x, y, bins, range=None if bins == [-5, 0, 5] else
                                    [(-4, 4), (-6, 6)])
        check(be, h, wh)
        check(be, ex, wx, rtol=1e-6)
        check(be, ey, wy, rtol=1e-6)
    h, _, _ = hf.histogram2d(tx, ty, 3, density=True, weights=hf.asarray(np.abs(x)))
    check(be, h, np.histogram2d(x, y, 3, density=True, weights=np.abs(x))[0], rtol=1e-6)


def test_histogramdd_errors(be):
    t = hf.asarray(np.ones((4, 2)))
    with pytest.raises(ValueError, match="hipfer.histogramdd: The dimension of bins"):
        hf.histogramdd(t, [2, 2, 2])
    with pytest.raises(ValueError, match=r"hipfer.histogramdd: `bins\[0\]` must be positive"):
        hf.histogramdd(t, [0, 2])
    with pytest.raises(ValueError, match="hipfer.histogramdd: `bins.1.` must be monotonically"):
        hf.histogramdd(t, [2, hf.asarray([2.0, 1.0])])


# ------------------------------------------------------------------ bincount, digitize
@pytest.mark.parametrize("dt", [np.bool_, np.int8, np.int32, np.int64, np.uint8, np.uint32],
                         ids=str)
def test_bincount(be, rng, dt):
    x = (rng.random(40) < 0.5) if dt == np.bool_ else rng.integers(0, 17, 40).astype(dt)
    t = hf.asarray(x)
    check(be, hf.bincount(t), np.bincount(x))
    check(be, hf.bincount(t, minlength=30), np.bincount(x, minlength=30))
    w = rng.standard_normal(40)
    check(be, hf.bincount(t, weights=hf.asarray(w)), np.bincount(x, weights=w))
    w32 = w.astype(np.float32)
    check(be, hf.bincount(t, weights=hf.asarray(w32), minlength=3),
          np.bincount(x, weights=w32, minlength=3))
    check(be, hf.bincount(t[::3]), np.bincount(x[::3]))
    check(be, hf.bincount(hf.asarray(np.zeros(0, dt)), minlength=4),
          np.bincount(np.zeros(0, dt), minlength=4))


def test_bincount_errors(be):
    with pytest.raises(ValueError, match="hipfer.bincount: 'list' argument must have no "
                                         "negative"):
        hf.bincount(hf.asarray([1, -1]))
    with pytest.raises(TypeError, match="hipfer.bincount"):
        hf.bincount(hf.asarray([1.0, 2.0]))
    with pytest.raises(ValueError, match="hipfer.bincount"):
        hf.bincount(hf.asarray([[1, 2]]))
    with pytest.raises(ValueError, match="hipfer.bincount: 'minlength' must not be negative"):
        hf.bincount(hf.asarray([1]), minlength=-1)
    with pytest.raises(ValueError, match="hipfer.bincount: The weights"):
        hf.bincount(hf.asarray([1, 2]), weights=hf.asarray([1.0]))


@pytest.mark.parametrize("right", [False, True])
@pytest.mark.parametrize("dt", REAL, ids=ids(REAL))
def test_digitize(be, rng, dt, right):
    x = data(rng, (4, 6), dt)
    t = hf.asarray(x)
    for bins in ([-10, -2, 0, 3, 25], [25, 3, 0, -2, -10], [1], [0, 0, 5]):
        b = np.array(bins, dtype=np.float64 if dt.kind == "f" else np.int64)
        check(be, hf.digitize(t, hf.asarray(b), right), np.digitize(x, b, right))
    check(be, hf.digitize(t[:, ::2], [0, 1], right), np.digitize(x[:, ::2], [0, 1], right))
    if dt.kind == "f":
        s = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0], dt)
        check(be, hf.digitize(hf.asarray(s), hf.asarray([-1.0, 0.0, 1.0]), right),
              np.digitize(s, [-1.0, 0.0, 1.0], right))


def test_digitize_errors(be):
    with pytest.raises(ValueError, match="hipfer.digitize: bins must be monotonically"):
        hf.digitize(hf.asarray([1.0]), hf.asarray([0.0, 2.0, 1.0]))
    with pytest.raises(TypeError, match="hipfer.digitize: x may not be complex"):
        hf.digitize(hf.asarray([1j]), hf.asarray([0.0, 1.0]))


# ------------------------------------------------------------------ NumPy dispatch
def test_numpy_dispatch(be, rng, refuse_host):
    x = data(rng, (30,), np.float64)
    t = hf.asarray(x)
    h, e = np.histogram(t, 5)
    assert isinstance(h, hf.Tensor) and isinstance(e, hf.Tensor)
    check(be, h, np.histogram(x, 5)[0])
    check(be, np.histogram_bin_edges(t, "auto"), np.histogram_bin_edges(x, "auto"))
    h2, ex, ey = np.histogram2d(t, t, 3)
    assert isinstance(h2, hf.Tensor)
    check(be, h2, np.histogram2d(x, x, 3)[0])
    hd, _ = np.histogramdd(hf.reshape(t, (15, 2)), 2)
    check(be, hd, np.histogramdd(x.reshape(15, 2), 2)[0])
    xi = rng.integers(0, 6, 20)
    check(be, np.bincount(hf.asarray(xi)), np.bincount(xi))
    check(be, np.digitize(t, hf.asarray([-1.0, 0.0, 1.0])), np.digitize(x, [-1.0, 0.0, 1.0]))


@pytest.mark.parametrize("bins", [5, 100, 300])  # few edges compare, many edges sort
def test_histogram_both_counting_paths(be, rng, bins):
    x = data(rng, (500,), np.float64)
    x[:3] = [np.nan, np.inf, -np.inf]
    w = rng.standard_normal(500)
    t, u = hf.asarray(x), hf.asarray(w)
    for rng_ in ((-8, 8), (-2.5, 0.5)):
        check(be, hf.histogram(t, bins, rng_)[0], np.histogram(x, bins, rng_)[0])
        check(be, hf.histogram(t, bins, rng_, weights=u)[0],
              np.histogram(x, bins, rng_, weights=w)[0], rtol=1e-10)
        check(be, hf.histogram(t[::-2], bins, rng_, density=True)[0],
              np.histogram(x[::-2], bins, rng_, density=True)[0], rtol=1e-10)
