"""NumPy's legacy polynomial functions (hipfer/_polynomial.py) and window functions
(hipfer/_window.py), differential against NumPy on fresh random data. Every test runs in
the refuse-host mode, so a silent conversion of device data to NumPy fails here as it
would on a GPU."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import hipfer as hf
from hipfer._tensor import Tensor
from tests._util import ACC_RTOL, RTOL, ids, random_array

pytestmark = pytest.mark.usefixtures("refuse_host")

REAL = [np.dtype(t) for t in (np.bool_, np.int8, np.int32, np.int64, np.uint8, np.uint64,
                              np.float16, np.float32, np.float64)]
NUMERIC = REAL + [np.dtype(np.complex64), np.dtype(np.complex128)]
FLOATS = [np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.complex128)]


def host(t):
    assert isinstance(t, Tensor), type(t)
    return np.asarray(t, copy=True)


def tensor(be, a):
    return hf.asarray(be.asarray(np.asarray(a)))


def rev(a):
    """a with its axes reversed (NumPy's .T, which a 0-d or n-d Tensor spells so)."""
    return hf.permute_dims(a, tuple(range(a.ndim))[::-1]) if isinstance(a, Tensor) else a.T


def small(rng, shape, dt):
    """Random data of dt small enough that polynomial arithmetic does not overflow."""
    if dt.kind in "iu":
        return random_array(rng, shape, dt, low=0 if dt.kind == "u" else -3, high=3)
    return random_array(rng, shape, dt, scale=1.5)


def tol(dt):
    return RTOL.get(np.dtype(dt), 0) if np.dtype(dt).kind in "fc" else 0


def check(got, want, dt=None, magnitude=None):
    """got (a Tensor) equals want: exactly for bool/int, within the dtype's tolerance
    relative to magnitude (default |want|) for float/complex; dtype and shape too."""
    want = np.asarray(want)
    g = host(got)
    assert g.shape == want.shape, (g.shape, want.shape)
    assert g.dtype == want.dtype, (g.dtype, want.dtype)
    if want.dtype.kind not in "fc":
        np.testing.assert_array_equal(g, want)
        return
    r = max(ACC_RTOL[want.dtype], RTOL[want.dtype])
    mag = np.abs(want) if magnitude is None else np.asarray(magnitude)
    fin = np.isfinite(want)
    np.testing.assert_array_equal(np.isnan(g), np.isnan(want))
    np.testing.assert_array_equal(g[~fin & ~np.isnan(want)], want[~fin & ~np.isnan(want)])
    assert np.all(np.abs(g[fin] - want[fin]) <= r * mag[fin] * 4 + r), (g, want)


# ------------------------------------------------------------------ polyval
@pytest.mark.parametrize("pdt", NUMERIC, ids=ids(NUMERIC))
@pytest.mark.parametrize("xdt", NUMERIC, ids=ids(NUMERIC))
def test_polyval_dtypes(be, rng, pdt, xdt):
    p = small(rng, (4,), pdt)
    x = small(rng, (3, 5), xdt)
    with np.errstate(all="ignore"):
        want = np.polyval(p, x)
        mag = np.polyval(np.abs(p).astype(np.float64), np.abs(x).astype(np.float64))
    check(hf.polyval(tensor(be, p), tensor(be, x)), want, magnitude=mag)


@pytest.mark.parametrize("shape", [(), (0,), (7,), (2, 3, 4)])
def test_polyval_shapes_and_layouts(be, rng, shape):
    p = rng.standard_normal(5)
    big = rng.standard_normal(tuple(2 * n for n in shape))
    step = tuple(slice(None, None, 2) for _ in shape)
    mag = lambda x: np.polyval(np.abs(p), np.abs(x))  # noqa: E731
    check(hf.polyval(tensor(be, p), tensor(be, big)[step]), np.polyval(p, big[step]),
          magnitude=mag(big[step]))
    x = rng.standard_normal(shape[::-1])
    check(hf.polyval(list(p), rev(tensor(be, x))), np.polyval(p, x.T), magnitude=mag(x.T))


def test_polyval_special_values_and_scalars(be, rng):
    x = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.5])
    p = np.array([2.0, -1.0, 0.5])
    with np.errstate(all="ignore"):
        check(hf.polyval(tensor(be, p), tensor(be, x)), np.polyval(p, x))
    check(hf.polyval(tensor(be, p), 2.0), np.asarray(np.polyval(p, 2.0)))
    check(hf.polyval([], tensor(be, x[3:])), np.polyval([], x[3:]))
    check(hf.polyval([1, 2, 3], tensor(be, np.arange(4))), np.polyval([1, 2, 3], np.arange(4)))
    with pytest.raises(TypeError, match="hipfer.polyval"):
        hf.polyval(tensor(be, np.float64(2.0)), tensor(be, x))


# ------------------------------------------------------------------ vander
@pytest.mark.parametrize("dt", NUMERIC, ids=ids(NUMERIC))
@pytest.mark.parametrize("N", [None, 0, 1, 4])
@pytest.mark.parametrize("increasing", [False, True])
def test_vander(be, rng, dt, N, increasing):
    big = small(rng, (10,), dt)
    x = big[::2]  # a stepped view
    want = np.vander(x, N, increasing)
    mag = np.abs(np.vander(np.abs(x).astype(np.float64), N, increasing))
    check(hf.vander(tensor(be, big)[::2], N, increasing), want, magnitude=mag)


def test_vander_edges_and_errors(be, rng):
    check(hf.vander(tensor(be, np.zeros(0))), np.vander(np.zeros(0)))
    check(hf.vander([1, 2, 3], 3), np.vander([1, 2, 3], 3))
    with pytest.raises(ValueError, match="hipfer.vander"):
        hf.vander(tensor(be, np.ones((2, 2))))
    with pytest.raises(ValueError, match="hipfer.vander"):
        hf.vander(tensor(be, np.ones(2)), -1)


# ------------------------------------------------------------------ arithmetic
PAIRS = [(3, 3), (2, 5), (6, 1), (1, 1)]


@pytest.mark.parametrize("dt", NUMERIC, ids=ids(NUMERIC))
@pytest.mark.parametrize("n1,n2", PAIRS)
@pytest.mark.parametrize("op", ["polyadd", "polysub", "polymul"])
def test_add_sub_mul(be, rng, dt, n1, n2, op):
    a1, a2 = small(rng, (n1,), dt), small(rng, (n2,), dt)
    if op == "polysub" and dt.kind == "b":
        with pytest.raises(TypeError):
            np.polysub(a1, a2)
        with pytest.raises(TypeError, match="hipfer.polysub"):
            hf.polysub(tensor(be, a1), tensor(be, a2))
        return
    with np.errstate(all="ignore"):
        want = getattr(np, op)(a1, a2)
    mag = np.abs(np.polymul(np.abs(a1).astype(float), np.abs(a2).astype(float))) \
        if op == "polymul" else None
    check(getattr(hf, op)(tensor(be, a1), tensor(be, a2)), want, magnitude=mag)


@pytest.mark.parametrize("op", ["polyadd", "polysub", "polymul"])
def test_arithmetic_mixed_and_lists(be, rng, op):
    a1 = rng.integers(-5, 5, 7)
    a2 = rng.standard_normal(3).astype(np.float32)
    both = np.concatenate([a1, -a1])
    big = tensor(be, both)[::2]  # stepped
    check(getattr(hf, op)(big, tensor(be, a2)), getattr(np, op)(both[::2], a2))
    check(getattr(hf, op)([1, 2], tensor(be, a2)), getattr(np, op)([1, 2], a2))
    check(getattr(hf, op)(tensor(be, np.float64(2.5)), tensor(be, a2)),
          getattr(np, op)(np.float64(2.5), a2))


def test_polymul_errors(be):
    with pytest.raises(ValueError, match="hipfer.polymul"):
        hf.polymul(tensor(be, np.zeros((2, 2))), tensor(be, np.ones(2)))


@pytest.mark.parametrize("dt", REAL + [np.dtype(np.complex128)], ids=ids(REAL) + ["complex128"])
@pytest.mark.parametrize("nu,nv", [(6, 3), (4, 4), (2, 5), (5, 1)])
def test_polydiv(be, rng, dt, nu, nv):
    u = small(rng, (nu,), dt)
    v = small(rng, (nv,), dt)
    v[0] = 2 if dt.kind != "b" else True
    if dt.kind == "c":
        v[0] = 1.5 - 0.5j
    q, r = np.polydiv(u, v)
    hq, hr = hf.polydiv(tensor(be, u), tensor(be, v))
    mag = np.max(np.abs(u)) * 8 + 1
    check(hq, q, magnitude=np.full(q.shape, mag))
    check(hr, r, magnitude=np.full(r.shape, mag))


def test_polydiv_exact_and_trimmed(be):
    # (x^2 - 1) / (x - 1): exact quotient, remainder trimmed to one zero
    q, r = hf.polydiv(tensor(be, np.array([1.0, 0.0, -1.0])), [1, -1])
    check(q, np.array([1.0, 1.0]))
    check(r, np.array([0.0]))
    q, r = hf.polydiv([1, 2, 3, 4, 5], tensor(be, np.array([1.0, 0.0, 0.0])))
    wq, wr = np.polydiv([1, 2, 3, 4, 5], [1.0, 0.0, 0.0])
    check(q, wq)
    check(r, wr)


# ------------------------------------------------------------------ calculus
@pytest.mark.parametrize("dt", NUMERIC, ids=ids(NUMERIC))
@pytest.mark.parametrize("m", [0, 1, 2, 6])
def test_polyder(be, rng, dt, m):
    p = small(rng, (5,), dt)
    with np.errstate(all="ignore"):
        want = np.polyder(p, m)
    check(hf.polyder(tensor(be, p), m), want,
          magnitude=np.abs(want.astype(np.complex128)) + 200)


@pytest.mark.parametrize("dt", NUMERIC, ids=ids(NUMERIC))
@pytest.mark.parametrize("m,k", [(0, None), (1, None), (2, None), (1, 3.0), (3, [1, 2, 3]),
                                 (2, [0.5]), (2, 1j)])
def test_polyint(be, rng, dt, m, k):
    p = small(rng, (4,), dt)
    want = np.polyint(p, m, k)
    check(hf.polyint(tensor(be, p), m, k), want, magnitude=np.abs(want) + 1)


def test_polymul_leading_zeros(be):
    a = np.array([0, 0, 2, 3])
    check(hf.polymul(tensor(be, a), [0, 1, 1]), np.polymul(a, [0, 1, 1]))
    check(hf.polymul(tensor(be, np.zeros(3)), [1.0, 2.0]), np.polymul(np.zeros(3), [1.0, 2.0]))
    check(hf.polymul(tensor(be, np.zeros(0)), [1.0, 2.0]), np.polymul(np.zeros(0), [1.0, 2.0]))


def test_calculus_errors_and_inverse(be, rng):
    p = rng.standard_normal(5)
    check(hf.polyder(hf.polyint(tensor(be, p), 2), 2), p)
    check(hf.polyder([7]), np.polyder([7]))
    with pytest.raises(ValueError, match="hipfer.polyder"):
        hf.polyder(tensor(be, p), -1)
    with pytest.raises(ValueError, match="hipfer.polyint"):
        hf.polyint(tensor(be, p), -1)
    with pytest.raises(ValueError, match="hipfer.polyint"):
        hf.polyint(tensor(be, p), 3, k=[1, 2])


# ------------------------------------------------------------------ poly and roots
@pytest.mark.parametrize("dt", NUMERIC, ids=ids(NUMERIC))
def test_poly_of_zeros(be, rng, dt):
    z = small(rng, (4,), dt)
    want = np.poly(z)
    mag = np.abs(np.poly(-np.abs(z).astype(np.complex128))) + 1
    check(hf.poly(tensor(be, z)), want, magnitude=mag)


def test_poly_conjugate_pairs_and_matrix(be, rng):
    z = np.array([1 + 2j, 1 - 2j, -0.5, 3j, -3j])
    check(hf.poly(tensor(be, z)), np.poly(z), magnitude=np.abs(np.poly(-np.abs(z))) + 1)
    z2 = np.array([1 + 2j, 1 + 2j])  # no conjugate pair: stays complex
    check(hf.poly(tensor(be, z2)), np.poly(z2), magnitude=np.full(3, 10.0))
    a = rng.standard_normal((3, 3))
    want = np.poly(a)
    got = host(hf.poly(tensor(be, a)))
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)
    assert hf.poly([]) == np.poly([]) == 1.0
    # NumPy's own dispatcher refuses a 0-d input; hipfer takes it as one zero
    check(hf.poly(tensor(be, np.float64(2.0))), np.poly([2.0]))
    with pytest.raises(ValueError, match="hipfer.poly"):
        hf.poly(tensor(be, np.ones((2, 3))))


def _same_roots(got, want):
    g = host(got)
    assert g.dtype == want.dtype and g.shape == want.shape, (g, want)
    np.testing.assert_allclose(np.sort_complex(g), np.sort_complex(want), rtol=1e-7,
                               atol=1e-7)


@pytest.mark.parametrize("dt", REAL[:6] + [np.dtype(np.float32), np.dtype(np.float64),
                                           np.dtype(np.complex128)],
                         ids=ids(REAL[:6]) + ["float32", "float64", "complex128"])
def test_roots(be, rng, dt):
    p = small(rng, (5,), dt)
    p[0] = 1
    want = np.roots(p)
    got = hf.roots(tensor(be, p))
    g = host(got)
    assert g.dtype == want.dtype and g.shape == want.shape, (g.dtype, want.dtype)
    r = 1e-3 if dt in (np.float32,) else 1e-6
    np.testing.assert_allclose(np.sort_complex(g), np.sort_complex(want), rtol=r, atol=r)


def test_roots_zeros_and_real(be):
    p = np.array([0.0, 0.0, 1.0, -6.0, 11.0, -6.0, 0.0, 0.0])  # (x-1)(x-2)(x-3) x^2
    _same_roots(hf.roots(tensor(be, p)), np.roots(p))
    _same_roots(hf.roots(tensor(be, np.array([1.0, 0.0, 1.0]))), np.roots([1.0, 0.0, 1.0]))
    _same_roots(hf.roots([5]), np.roots([5]))
    _same_roots(hf.roots(tensor(be, np.zeros(3))), np.roots(np.zeros(3)))
    _same_roots(hf.roots(tensor(be, np.zeros(0))), np.roots(np.zeros(0)))
    _same_roots(hf.roots([0, 3]), np.roots([0, 3]))
    with pytest.raises(ValueError, match="hipfer.roots"):
        hf.roots(tensor(be, np.ones((2, 2))))
    with pytest.raises(TypeError):  # NumPy's linalg has no float16 either
        np.roots(np.ones(3, np.float16))
    with pytest.raises(TypeError, match="hipfer.roots"):
        hf.roots(tensor(be, np.ones(3, np.float16)))


# ------------------------------------------------------------------ polyfit
@pytest.mark.parametrize("deg", [0, 1, 3])
@pytest.mark.parametrize("ydim", [1, 2])
@pytest.mark.parametrize("weighted", [False, True])
def test_polyfit(be, rng, deg, ydim, weighted):
    x = rng.uniform(-2, 2, 12)
    y = rng.standard_normal((12,) if ydim == 1 else (12, 3))
    w = rng.uniform(0.5, 2, 12) if weighted else None
    tw = tensor(be, w) if weighted else None
    want = np.polyfit(x, y, deg, w=w)
    got = hf.polyfit(tensor(be, x), tensor(be, y), deg, w=tw)
    np.testing.assert_allclose(host(got), want, rtol=1e-9, atol=1e-10)
    assert host(got).dtype == want.dtype and host(got).shape == want.shape
    c, res, rank, sv, rcond = np.polyfit(x, y, deg, w=w, full=True)
    hc, hres, hrank, hsv, hrcond = hf.polyfit(tensor(be, x), tensor(be, y), deg, w=tw, full=True)
    np.testing.assert_allclose(host(hc), c, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(host(hres), res, rtol=1e-9, atol=1e-12)
    assert int(host(hrank)) == rank and hrcond == rcond
    np.testing.assert_allclose(host(hsv), sv, rtol=1e-10)
    for cov in (True, "unscaled"):
        c, v = np.polyfit(x, y, deg, w=w, cov=cov)
        hc, hv = hf.polyfit(tensor(be, x), tensor(be, y), deg, w=tw, cov=cov)
        assert host(hv).shape == v.shape
        np.testing.assert_allclose(host(hv), v, rtol=1e-8, atol=1e-12)


def test_polyfit_complex_y(be, rng):
    x = rng.uniform(-2, 2, 10)
    y = rng.standard_normal(10) + 1j * rng.standard_normal(10)
    for cov in (False, True):
        want = np.polyfit(x, y, 2, cov=cov)
        got = hf.polyfit(tensor(be, x), tensor(be, y), 2, cov=cov)
        for g, w in zip(got, want) if cov else [(got, want)]:
            assert host(g).dtype == w.dtype and host(g).shape == w.shape
            np.testing.assert_allclose(host(g), w, rtol=1e-9, atol=1e-12)


def test_polyfit_float32_lists_and_layouts(be, rng):
    x = rng.uniform(-1, 1, 20).astype(np.float32)
    y = (x ** 2 - x).astype(np.float32)
    want = np.polyfit(x, y, 2)
    got = hf.polyfit(tensor(be, x), tensor(be, y), 2)
    assert host(got).dtype == want.dtype
    np.testing.assert_allclose(host(got), want, rtol=1e-4, atol=1e-4)
    big = rng.uniform(-1, 1, 32)
    x2 = big[::2]
    y2 = rng.standard_normal((3, 16))
    got = hf.polyfit(tensor(be, big)[::2], tensor(be, y2).T, 2)
    np.testing.assert_allclose(host(got), np.polyfit(x2, y2.T, 2), rtol=1e-9, atol=1e-10)
    got = hf.polyfit(list(x2), list(y2[0]), 1)
    np.testing.assert_allclose(host(got), np.polyfit(x2, y2[0], 1), rtol=1e-9)


def test_polyfit_rank_warning_and_errors(be):
    x = np.array([1.0, 1.0, 1.0, 2.0])
    y = np.array([1.0, 2.0, 3.0, 4.0])
    with pytest.warns(np.exceptions.RankWarning):
        np.polyfit(x, y, 3)
    with pytest.warns(np.exceptions.RankWarning):
        hf.polyfit(tensor(be, x), tensor(be, y), 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        hf.polyfit(tensor(be, x), tensor(be, y), 1)
    t = tensor(be, x)
    with pytest.raises(ValueError, match="hipfer.polyfit"):
        hf.polyfit(t, t, -1)
    with pytest.raises(TypeError, match="hipfer.polyfit"):
        hf.polyfit(tensor(be, np.ones((2, 2))), t, 1)
    with pytest.raises(TypeError, match="hipfer.polyfit"):
        hf.polyfit(t, t[:3], 1)
    with pytest.raises(TypeError, match="hipfer.polyfit"):
        hf.polyfit(t, t, 1, w=t[:2])
    with pytest.raises(ValueError, match="hipfer.polyfit"), \
            pytest.warns(np.exceptions.RankWarning):  # 4 points, order 4: as NumPy
        hf.polyfit(t, t, 3, cov=True)


# ------------------------------------------------------------------ through NumPy
def test_numpy_dispatch_reaches_hipfer(be, rng):
    p = tensor(be, np.array([1.0, -3.0, 2.0]))
    x = tensor(be, rng.standard_normal(5))
    for got, want in [
        (np.polyval(p, x), np.polyval([1.0, -3.0, 2.0], host(x))),
        (np.polyadd(p, x), np.polyadd([1.0, -3.0, 2.0], host(x))),
        (np.polysub(p, x), np.polysub([1.0, -3.0, 2.0], host(x))),
        (np.polymul(p, x), np.polymul([1.0, -3.0, 2.0], host(x))),
        (np.polyder(x, 2), np.polyder(host(x), 2)),
        (np.polyint(x), np.polyint(host(x))),
        (np.poly(x), np.poly(host(x))),
        (np.vander(x, 3), np.vander(host(x), 3)),
        (np.roots(p), np.roots([1.0, -3.0, 2.0])),
        (np.polyfit(x, x * 2 + 1, 1), np.polyfit(host(x), host(x) * 2 + 1, 1)),
    ]:
        assert isinstance(got, Tensor)
        np.testing.assert_allclose(np.sort_complex(host(got)) if got.ndim else host(got),
                                   np.sort_complex(want) if np.ndim(want) else want,
                                   rtol=1e-9, atol=1e-12)
    q, r = np.polydiv(x, p)
    assert isinstance(q, Tensor) and isinstance(r, Tensor)


# ------------------------------------------------------------------ windows
WINDOWS = ["bartlett", "blackman", "hamming", "hanning"]


@pytest.mark.parametrize("name", WINDOWS)
@pytest.mark.parametrize("M", [-2, 0, 1, 2, 3, 10, 33, np.int64(6)])
def test_windows(be, name, M):
    got = getattr(hf, name)(M, device=be.device)
    assert got.device == be.device
    want = getattr(np, name)(M)
    g = host(got)
    assert g.dtype == want.dtype == np.float64 and g.shape == want.shape
    np.testing.assert_allclose(g, want, rtol=RTOL[np.dtype(np.float64)], atol=1e-15)


@pytest.mark.parametrize("M", [0, 1, 2, 7, 20])
@pytest.mark.parametrize("beta", [0, 0.5, 5.0, 8.6, 14, 40, -3])
def test_kaiser(be, M, beta):
    got = hf.kaiser(M, beta, device=be.device)
    want = np.kaiser(M, beta)
    g = host(got)
    assert g.dtype == want.dtype and g.shape == want.shape
    np.testing.assert_allclose(g, want, rtol=1e-13, atol=1e-300)


def test_window_default_device_and_errors(be):
    assert hf.hamming(4).device == be.device
    for name in WINDOWS:
        with pytest.raises(TypeError, match=f"hipfer.{name}"):
            getattr(hf, name)(4.5)
    with pytest.raises(TypeError, match="hipfer.kaiser"):
        hf.kaiser(5, 1j)


# ------------------------------------------------------------------ polyval: the prim path
@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64, np.int32, np.uint8,
                                np.bool_], ids=ids([np.float16, np.float32, np.float64,
                                                    np.int32, np.uint8, np.bool_]))
def test_polyval_one_launch_matches_numpy_bitwise(be, rng, dt):
    """A 1-d p runs the Polyval prim: NumPy's arithmetic step for step (float16 rounded
    every step, integers wrapping, 0 * inf = NaN), so the values are NumPy's exactly."""
    sp = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.5, -2.0])
    if np.dtype(dt).kind == "f":
        p = np.concatenate([random_array(rng, (3,), dt), sp[rng.integers(0, 7, 2)].astype(dt)])
        x = np.concatenate([random_array(rng, (20,), dt), sp.astype(dt)])
    else:
        p, x = random_array(rng, (4,), dt), random_array(rng, (6, 3), dt)
    with np.errstate(all="ignore"):
        want = np.polyval(p, x)
    got = np.asarray(hf.polyval(tensor(be, p), tensor(be, x)), copy=True)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_polyval_nd_p_keeps_the_composition(be, rng):
    """An N-d p (rows broadcast against x) is NumPy's loop over its rows."""
    p = rng.standard_normal((3, 4))
    x = rng.standard_normal(4)
    np.testing.assert_array_equal(np.asarray(hf.polyval(tensor(be, p), tensor(be, x)),
                                             copy=True), np.polyval(p, x))
    p2 = rng.standard_normal((3, 2, 1))
    np.testing.assert_array_equal(np.asarray(hf.polyval(tensor(be, p2), tensor(be, x)),
                                             copy=True), np.polyval(p2, x))
