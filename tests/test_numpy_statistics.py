"""NumPy's statistics (average, ptp, median, percentile, quantile, cov, corrcoef,
correlate) and nan-reductions against NumPy: dtypes, axes, keepdims, out=, NaN and inf,
0-d / empty / non-contiguous inputs, the 13 quantile methods, errors, and the dispatch of
np.<name>(tensor) under refuse_host."""
import warnings

import numpy as np
import pytest

import hipfer as hf

from _util import ACC_RTOL, RTOL, dtypes_of, ids, random_array

REAL = dtypes_of("biuf")
FLOATS = dtypes_of("f")
METHODS = ["linear", "lower", "higher", "nearest", "midpoint", "inverted_cdf",
           "averaged_inverted_cdf", "closest_observation", "interpolated_inverted_cdf",
           "hazen", "weibull", "median_unbiased", "normal_unbiased"]


def check(be, got, want, exact=False, rtol=None):
    """got (a Tensor) equals NumPy's want in value, shape and dtype (NaN == NaN)."""
    want = np.asarray(want)
    assert isinstance(got, hf.Tensor)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    g = be.asnumpy(got)
    assert g.shape == want.shape
    if exact or want.dtype.kind in "biu":
        np.testing.assert_array_equal(g, want)
    else:
        tol = rtol if rtol is not None else ACC_RTOL.get(want.dtype, 1e-12)
        np.testing.assert_allclose(g, want, rtol=tol, atol=tol, equal_nan=True)


#: NumPy < 2.4 (before gh-29105's weak q): a q with isinstance(q, (int, float)) took a's
#: float dtype (np.float64 too, a float subclass: float32 data gave float32), so float16
#: data had its virtual index computed in float16; and an int q (1) with integer data gave
#: int64 for averaged_inverted_cdf / interpolated_inverted_cdf / weibull (an integer
#: gamma). NumPy >= 2.4: a Python int / float q is weak, its gamma a float (float64 for
#: integer data), np.float64 strong (a float64 result for float32 data).
OLD_QUANTILE_Q = np.lib.NumpyVersion(np.__version__) < "2.4.0"


def np_quantile(x, q, **kw):
    """np.quantile(x, q, **kw) as NumPy >= 2.4 gives it (see OLD_QUANTILE_Q)."""
    want = np.asarray(np.quantile(x, q, **kw))
    if not OLD_QUANTILE_Q:
        return want
    if x.dtype == np.float16 and type(q) is float:  # float64 index, the result float16
        return np.asarray(np.quantile(x, np.array(q), **kw)).astype(np.float16)
    if type(q) is np.float64:  # a strong float64
        return np.asarray(np.quantile(x, np.array(q), **kw))
    if want.dtype.kind in "iu" and type(q) is int and kw.get("method") in (
            "averaged_inverted_cdf", "interpolated_inverted_cdf", "weibull"):
        return want.astype(np.float64)  # an integer virtual index: NumPy < 2.4's int64
    return want


def data(rng, shape, dt, nan=False):
    x = random_array(rng, shape, dt, scale=4.0) if np.dtype(dt).kind not in "iu" else \
        random_array(rng, shape, dt, low=0 if np.dtype(dt).kind == "u" else -40, high=40)
    if nan and x.dtype.kind in "fc" and x.size:
        flat = x.reshape(-1)
        flat[rng.random(flat.size) < 0.2] = np.nan
        if x.dtype.kind == "f":
            flat[0] = np.inf
    return x


def quiet(fn, *a, **k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*a, **k)


AXES = [None, 0, -1, (0, 2)]


# ------------------------------------------------------------------ quantiles
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("dt", dtypes_of("iuf"), ids=ids(dtypes_of("iuf")))
def test_quantile_methods(be, rng, dt, method):
    x = data(rng, (3, 4, 5), dt)
    t = hf.asarray(x)
    for q in (0.37, 1, [0.0, 0.25, 0.5, 1.0], np.array([[0.1], [0.9]])):
        for axis in (None, 1, (0, 2)):
            want = np_quantile(x, q, axis=axis, method=method)
            check(be, hf.quantile(t, q, axis=axis, method=method), want,
                  rtol=RTOL.get(np.dtype(want.dtype), 1e-12))


@pytest.mark.parametrize("method", ["linear", "nearest", "hazen", "inverted_cdf"])
def test_percentile_keepdims_noncontig_nan(be, rng, method):
    x = data(rng, (6, 5), np.float64)
    x[2, 3] = np.nan
    t = hf.asarray(x)
    for xs, ts in ((x[::2], t[::2]), (x.T, hf.permute_dims(t, (1, 0))), (x[:, ::-1], t[:, ::-1])):
        for axis in (None, 0, 1):
            want = np.percentile(xs, [10, 50, 95], axis=axis, method=method, keepdims=True)
            check(be, hf.percentile(ts, [10, 50, 95], axis=axis, method=method, keepdims=True),
                  want)
    # a float32 array q is not weak: it promotes; a Python float keeps float32
    # (without NaN: NumPy's 0-d result of a NaN slice takes a's dtype, a data-dependent dtype)
    x32 = data(rng, (6, 5), np.float32)
    check(be, hf.quantile(hf.asarray(x32), 0.3, axis=0), np.quantile(x32, 0.3, axis=0),
          rtol=RTOL[np.dtype(np.float32)])
    check(be, hf.quantile(hf.asarray(x32), np.float64(0.3)), np_quantile(x32, np.float64(0.3)))


def test_quantile_zero_d_out_and_tensor_q(be, rng):
    x = data(rng, (7,), np.float64)
    t = hf.asarray(x)
    check(be, hf.quantile(hf.asarray(np.float64(2.5)), 0.5), np.quantile(np.float64(2.5), 0.5))
    q = hf.asarray([0.2, 0.8])
    check(be, hf.quantile(t, q), np.quantile(x, [0.2, 0.8]))
    out = hf.zeros((2,), dtype=hf.float64)
    r = hf.percentile(t, [20, 80], out=out)
    assert r is out
    check(be, out, np.percentile(x, [20, 80]))


def test_quantile_errors(be):
    t = hf.asarray([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="hipfer.quantile: Quantiles must be in the range"):
        hf.quantile(t, 1.5)
    with pytest.raises(ValueError, match="hipfer.percentile: Percentiles"):
        hf.percentile(t, [50, 101])
    with pytest.raises(ValueError, match="hipfer.quantile: 'foo' is not a valid method"):
        hf.quantile(t, 0.5, method="foo")
    with pytest.raises(TypeError, match="hipfer.quantile"):
        hf.quantile(hf.asarray([1j, 2]), 0.5)
    with pytest.raises(np.exceptions.AxisError):
        hf.quantile(t, 0.5, axis=1)
    with pytest.raises(ValueError, match="hipfer.quantile: Quantiles"):
        hf.quantile(t, hf.asarray([-0.1]))


@pytest.mark.parametrize("dt", REAL, ids=ids(REAL))
def test_median(be, rng, dt):
    for shape in ((), (1,), (6,), (3, 4, 5)):
        x = data(rng, shape, dt)
        t = hf.asarray(x)
        for axis in ([None, 0, -1, (0, 2)] if len(shape) == 3 else [None]):
            for keepdims in (False, True):
                want = np.median(x, axis=axis, keepdims=keepdims)
                check(be, hf.median(t, axis=axis, keepdims=keepdims), want)


def test_median_nan_empty_and_strides(be, rng):
    x = data(rng, (5, 6), np.float32)
    x[1, 2] = np.nan
    t = hf.asarray(x)
    check(be, hf.median(t, axis=1), np.median(x, axis=1))
    check(be, hf.median(t[:, ::2], axis=0), np.median(x[:, ::2], axis=0))
    check(be, hf.median(hf.permute_dims(t, (1, 0))), np.median(x.T))
    with pytest.warns(RuntimeWarning):
        r = hf.median(hf.asarray(np.zeros((3, 0))), axis=1)
    check(be, r, quiet(np.median, np.zeros((3, 0)), axis=1))


# ------------------------------------------------------------------ average, ptp
@pytest.mark.parametrize("dt", dtypes_of("biufc"), ids=ids(dtypes_of("biufc")))
def test_average(be, rng, dt):
    x = data(rng, (4, 5), dt)
    t = hf.asarray(x)
    check(be, hf.average(t), np.average(x))
    check(be, hf.average(t, axis=0, keepdims=True), np.average(x, axis=0, keepdims=True))
    w = rng.random(5) + 0.1
    a, s = hf.average(t, axis=1, weights=hf.asarray(w), returned=True)
    wa, ws = np.average(x, axis=1, weights=w, returned=True)
    check(be, a, wa, rtol=1e-5)
    check(be, s, ws)
    w2 = (rng.random((4, 5)) + 0.1).astype(np.float32)
    check(be, hf.average(t, weights=hf.asarray(w2)), np.average(x, weights=w2), rtol=2e-3)


def test_average_errors(be):
    t = hf.asarray(np.ones((2, 3)))
    with pytest.raises(ZeroDivisionError, match="hipfer.average"):
        hf.average(t, axis=1, weights=hf.asarray([1.0, -1.0, 0.0]))
    with pytest.raises(TypeError, match="hipfer.average: axis must be specified"):
        hf.average(t, weights=hf.asarray([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="hipfer.average"):
        hf.average(t, axis=0, weights=hf.asarray([1.0, 2.0, 3.0]))


@pytest.mark.parametrize("dt", dtypes_of("iuf"), ids=ids(dtypes_of("iuf")))
def test_ptp(be, rng, dt):
    x = data(rng, (3, 4), dt)
    t = hf.asarray(x)
    for axis in (None, 0, -1):
        check(be, hf.ptp(t, axis=axis, keepdims=axis == 0), np.ptp(x, axis=axis,
                                                                   keepdims=axis == 0))
    with pytest.raises(TypeError, match="hipfer.ptp"):
        hf.ptp(hf.asarray([True, False]))


# ------------------------------------------------------------------ cov, corrcoef
@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int32, np.complex128, np.bool_],
                         ids=str)
def test_cov_corrcoef(be, rng, dt):
    x = data(rng, (3, 8), dt)
    y = data(rng, (2, 8), dt)
    t, u = hf.asarray(x), hf.asarray(y)
    check(be, hf.cov(t), np.cov(x), rtol=1e-5)
    check(be, hf.cov(t, bias=True), np.cov(x, bias=True), rtol=1e-5)
    check(be, hf.cov(t, u, ddof=2), np.cov(x, y, ddof=2), rtol=1e-5)
    check(be, hf.cov(hf.permute_dims(t, (1, 0)), rowvar=False), np.cov(x.T, rowvar=False),
          rtol=1e-5)
    check(be, hf.cov(t[0]), np.cov(x[0]), rtol=1e-5)
    fw = rng.integers(0, 4, 8)
    aw = rng.random(8)
    check(be, hf.cov(t, fweights=hf.asarray(fw), aweights=hf.asarray(aw)),
          np.cov(x, fweights=fw, aweights=aw), rtol=1e-5)
    check(be, hf.cov(t, dtype=np.float32), np.cov(x, dtype=np.float32), rtol=1e-4) \
        if dt != np.complex128 else None
    if dt != np.bool_:
        check(be, quiet(hf.corrcoef, t), quiet(np.corrcoef, x), rtol=1e-5)
        check(be, quiet(hf.corrcoef, t, u), quiet(np.corrcoef, x, y), rtol=1e-5)


def test_cov_errors(be):
    t = hf.asarray(np.ones((2, 4)))
    with pytest.raises(ValueError, match="hipfer.cov: fweights cannot be negative"):
        hf.cov(t, fweights=hf.asarray([1, -1, 1, 1]))
    with pytest.raises(RuntimeError, match="hipfer.cov"):
        hf.cov(t, aweights=hf.asarray([1.0, 2.0]))
    with pytest.raises(ValueError, match="hipfer.cov"):
        hf.cov(hf.asarray(np.ones((2, 2, 2))))


# ------------------------------------------------------------------ correlate
@pytest.mark.parametrize("mode", ["valid", "same", "full"])
@pytest.mark.parametrize("dt", [np.int32, np.float32, np.float64, np.complex64, np.complex128],
                         ids=str)
def test_correlate(be, rng, dt, mode):
    for n, m in ((1, 1), (5, 3), (3, 5), (4, 4), (6, 1), (2, 7)):
        a, v = data(rng, (n,), dt), data(rng, (m,), dt)
        check(be, hf.correlate(hf.asarray(a), hf.asarray(v), mode), np.correlate(a, v, mode),
              rtol=1e-4)
    a = data(rng, (9,), dt)
    check(be, hf.correlate(hf.asarray(a)[::2], hf.asarray(a)[::-3], mode),
          np.correlate(a[::2], a[::-3], mode), rtol=1e-4)


def test_correlate_errors(be):
    with pytest.raises(ValueError, match="hipfer.correlate: v cannot be empty"):
        hf.correlate(hf.asarray([1.0]), hf.asarray(np.zeros(0)))
    with pytest.raises(ValueError, match="hipfer.correlate: mode"):
        hf.correlate(hf.asarray([1.0]), hf.asarray([1.0]), "bad")


# ------------------------------------------------------------------ nan-functions
NAN_REDUCTIONS = ["nansum", "nanprod", "nanmin", "nanmax", "nanmean", "nanvar", "nanstd",
                  "nanmedian"]


@pytest.mark.parametrize("name", NAN_REDUCTIONS)
@pytest.mark.parametrize("dt", dtypes_of("biufc"), ids=ids(dtypes_of("biufc")))
def test_nan_reductions(be, rng, name, dt):
    if dt.kind == "c" and name in ("nanmin", "nanmax", "nanmedian"):
        pytest.skip("complex order is not on the device (a TypeError, tested below)")
    if dt.kind == "b" and name in ("nanvar", "nanstd"):
        dt = np.dtype(np.bool_)
    x = data(rng, (3, 4, 5), dt, nan=True)
    if name == "nanprod" and dt.kind in "fc":
        x = np.where(np.isnan(x), x, x / 4).astype(dt)
    t = hf.asarray(x)
    for axis in AXES:
        for keepdims in (False, True):
            want = quiet(getattr(np, name), x, axis=axis, keepdims=keepdims)
            got = quiet(getattr(hf, name), t, axis=axis, keepdims=keepdims)
            check(be, got, want, rtol=2e-3 if dt in (np.float16, np.complex64,
                                                      np.float32) else None)


@pytest.mark.parametrize("name", ["nanargmin", "nanargmax", "nancumsum", "nancumprod"])
@pytest.mark.parametrize("dt", dtypes_of("iuf"), ids=ids(dtypes_of("iuf")))
def test_nan_index_and_scans(be, rng, name, dt):
    x = data(rng, (4, 5), dt, nan=True)
    if dt.kind == "f":
        x[1] = x[1] / 8
        x[:, 0] = 1.0  # no all-NaN slice along either axis
        x[0, 1:] = np.arange(1, x.shape[1]) / 2
    t = hf.asarray(x)
    for axis in (None, 0, 1, -1):
        want = getattr(np, name)(x, axis=axis)
        check(be, getattr(hf, name)(t, axis=axis), want,
              rtol=5e-2 if dt == np.float16 else 1e-5)
    check(be, getattr(hf, name)(t[::2, ::-1], axis=0), getattr(np, name)(x[::2, ::-1], axis=0),
          rtol=5e-2 if dt == np.float16 else 1e-5)


@pytest.mark.parametrize("method", METHODS)
def test_nanquantile_nanpercentile(be, rng, method):
    x = data(rng, (4, 7), np.float64, nan=True)
    t = hf.asarray(x)
    for axis in (None, 0, 1):
        check(be, hf.nanquantile(t, [0.1, 0.5, 0.9], axis=axis, method=method),
              np.nanquantile(x, [0.1, 0.5, 0.9], axis=axis, method=method))
        check(be, hf.nanpercentile(t, 35, axis=axis, method=method, keepdims=True),
              np.nanpercentile(x, 35, axis=axis, method=method, keepdims=True))
    xi = data(rng, (4, 7), np.int16)
    check(be, hf.nanquantile(hf.asarray(xi), 0.4, axis=1, method=method),
          np.nanquantile(xi, 0.4, axis=1, method=method))


def test_all_nan_slices(be):
    x = np.array([[np.nan, np.nan], [1.0, np.nan]])
    t = hf.asarray(x)
    for name in ("nanmin", "nanmax", "nanmedian", "nanmean"):
        with pytest.warns(RuntimeWarning):
            got = getattr(hf, name)(t, axis=1)
        check(be, got, quiet(getattr(np, name), x, axis=1))
    with pytest.warns(RuntimeWarning):
        got = hf.nanquantile(t, 0.5, axis=1)
    check(be, got, quiet(np.nanquantile, x, 0.5, axis=1))
    with pytest.warns(RuntimeWarning):
        got = hf.nanvar(t, axis=1, ddof=1)
    check(be, got, quiet(np.nanvar, x, axis=1, ddof=1))
    for name in ("nanargmin", "nanargmax"):
        with pytest.raises(ValueError, match=f"hipfer.{name}: All-NaN slice encountered"):
            getattr(hf, name)(t, axis=1)
    check(be, hf.nansum(t, axis=1), np.nansum(x, axis=1))
    # nanargmin replaces NaN by +inf, as NumPy: [nan, inf] -> 0
    check(be, hf.nanargmin(hf.asarray([np.nan, np.inf])), np.nanargmin([np.nan, np.inf]))


@pytest.mark.parametrize("name", ["nansum", "nanprod", "nanmin", "nanmax", "nanmean",
                                  "nanvar", "nanstd"])
@pytest.mark.parametrize("dt", ["float16", "float32", "float64", "complex64", "complex128"])
def test_nan_reductions_one_pass_layouts(be, rng, name, dt):
    """The one-pass reducers on the layouts and sizes the GPU plans differently (one long
    row: split; many short rows; strided, broadcast, 0-d, empty axes), NaN in the real or
    the imaginary part only, +-inf and -0.0, against NumPy."""
    dt = np.dtype(dt)
    if dt.kind == "c" and name in ("nanmin", "nanmax"):
        return
    rtol = {"float16": 5e-3, "float32": 2e-4, "complex64": 2e-4}.get(dt.name, 1e-9)
    big = data(rng, (3, 20000), dt, nan=True)
    big[0, ::7] = np.nan
    big[1, :] = np.where(rng.random(20000) < 0.99, np.nan, big[1, :])
    if dt.kind == "c":
        big[2, ::5] = complex(1.0, np.nan)
    if name == "nanprod":
        big = np.where(np.isnan(big), big, 1 + (big - np.round(big)) / 5000).astype(dt)
    if dt == np.float16 and name in ("nanvar", "nanstd"):
        big = (big / 64).astype(dt)  # NumPy's float16 nanvar overflows past 65504 (ours is
        # in float32, as its var); keep the sums in range
    tb = hf.asarray(be.asarray(big))
    cases = [(lambda b: b, None), (lambda b: b, 1), (lambda b: b, 0),
             (lambda b: b[:, ::-3], 1), (lambda b: b.T[::2], (0,)),
             (lambda b: b[:1, :50] + b[:, :1] * 0, 0), (lambda b: b[0, 0], None),
             (lambda b: b[:, :0], 1), (lambda b: b[0, :3] * 0 - 0.0, None)]
    for view, axis in cases:
        x = np.asarray(view(big))
        if name in ("nanmin", "nanmax") and x.size == 0:
            continue
        want = quiet(getattr(np, name), x, axis=axis)
        got = quiet(getattr(hf, name), view(tb), axis=axis)
        check(be, got, want, rtol=rtol)


def test_nan_reduction_warnings_are_numpys(be):
    """Warnings on all-NaN slices and too few values; none on clean data (a NaN from
    inf - inf is not a missing slice)."""
    clean = hf.asarray(np.array([[1.0, 2.0], [3.0, np.inf]]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in ("nanmean", "nanvar", "nanmax", "nansum"):
            getattr(hf, name)(clean, axis=1)
        hf.nanmean(hf.asarray(np.array([np.inf, -np.inf, np.nan])))
    x = hf.asarray(np.array([[np.nan, 1.0], [np.nan, np.nan]]))
    with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
        hf.nanmean(x, axis=1)
    with pytest.warns(RuntimeWarning, match="Degrees of freedom"):
        hf.nanstd(x, axis=1, ddof=1)
    with pytest.warns(RuntimeWarning, match="All-NaN"):
        hf.nanmin(x, axis=0)


def test_nan_dtype_out_and_errors(be, rng):
    x = data(rng, (3, 4), np.float32, nan=True)
    t = hf.asarray(x)
    check(be, hf.nansum(t, axis=0, dtype=np.float64), np.nansum(x, axis=0, dtype=np.float64))
    check(be, hf.nanmean(t, axis=1, dtype=np.float64), np.nanmean(x, axis=1, dtype=np.float64))
    out = hf.zeros((4,), dtype=hf.float32)
    assert hf.nanmax(t, axis=0, out=out) is out
    check(be, out, np.nanmax(x, axis=0))
    with pytest.raises(TypeError, match="hipfer.nanmin"):
        hf.nanmin(hf.asarray([1j]))
    with pytest.raises(np.exceptions.AxisError):
        hf.nansum(t, axis=2)
    with pytest.raises(ValueError):
        hf.nanmin(hf.asarray(np.zeros(0)))
    # complex data with a complex dtype=: NumPy's dtype (zero imaginary part), NaN or not;
    # NumPy's nan path subtracts the mean in the input's complex64 (out=arr): rtol 1e-6
    z = (data(rng, (3, 4), np.float32) + 1j * data(rng, (3, 4), np.float32)).astype(np.complex64)
    for zz in (z, np.where(np.arange(12).reshape(3, 4) == 5, np.nan, z).astype(np.complex64)):
        for name in ("nanvar", "nanstd"):
            want = getattr(np, name)(zz, axis=1, dtype=np.complex128)
            check(be, getattr(hf, name)(hf.asarray(zz), axis=1, dtype=np.complex128), want,
                  rtol=1e-6)


# ------------------------------------------------------------------ NumPy dispatch
def test_numpy_dispatch(be, rng, refuse_host):
    x = data(rng, (4, 6), np.float64, nan=False)
    t = hf.asarray(x)
    calls = [("median", (), {"axis": 0}), ("quantile", (0.3,), {"method": "weibull"}),
             ("percentile", ([25, 75],), {"axis": 1}), ("average", (), {"axis": 1}),
             ("ptp", (), {}), ("cov", (), {}), ("corrcoef", (), {}), ("nanmean", (), {}),
             ("nanstd", (), {"ddof": 1}), ("nanvar", (), {}), ("nansum", (), {}),
             ("nanprod", (), {}), ("nanmin", (), {}), ("nanmax", (), {}),
             ("nanargmin", (), {}), ("nanargmax", (), {}), ("nancumsum", (), {}),
             ("nancumprod", (), {"axis": 1}), ("nanmedian", (), {"axis": 1}),
             ("nanquantile", (0.5,), {}), ("nanpercentile", (50,), {})]
    for name, args, kw in calls:
        got = getattr(np, name)(t, *args, **kw)
        assert isinstance(got, hf.Tensor), name
        check(be, got, getattr(np, name)(x, *args, **kw))
    a = hf.asarray(x[0])
    got = np.correlate(a, a[:3], "full")
    assert isinstance(got, hf.Tensor)
    check(be, got, np.correlate(x[0], x[0, :3], "full"))
    out = hf.zeros((6,), dtype=hf.float64)
    assert np.median(t, axis=0, out=out) is out


# ------------------------------------------------------------------ weighted quantiles
@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int32], ids=str)
def test_weighted_quantiles(be, rng, dt):
    x = data(rng, (3, 7), dt)
    t = hf.asarray(x)
    w = rng.random((3, 7))
    w[0, :2] = 0.0  # leading zero weights
    w1 = rng.integers(0, 3, 7).astype(np.float64)
    w1[-1] = 1.0
    for q in (0.0, 0.3, [0.1, 0.5, 1.0]):
        for axis, ww in ((None, w), (1, w), (1, w1), (0, rng.random(3))):
            kw = dict(axis=axis, method="inverted_cdf")
            check(be, hf.quantile(t, q, weights=hf.asarray(ww), **kw),
                  np.quantile(x, q, weights=ww, **kw))
            check(be, hf.percentile(t, np.multiply(q, 100), weights=hf.asarray(ww),
                                    keepdims=True, **kw),
                  np.percentile(x, np.multiply(q, 100), weights=ww, keepdims=True, **kw))
    xn = data(rng, (3, 7), np.float64)
    xn[1, 2] = xn[0, 0] = np.nan
    for axis in (None, 0, 1):
        kw = dict(axis=axis, method="inverted_cdf")
        check(be, hf.nanquantile(hf.asarray(xn), [0.2, 0.7], weights=hf.asarray(w), **kw),
              np.nanquantile(xn, [0.2, 0.7], weights=w, **kw))
        check(be, hf.quantile(hf.asarray(xn), [0.2, 0.7], weights=hf.asarray(w), **kw),
              np.quantile(xn, [0.2, 0.7], weights=w, **kw))


def test_weighted_quantile_errors(be):
    t = hf.asarray([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="hipfer.quantile: Only method 'inverted_cdf'"):
        hf.quantile(t, 0.5, weights=hf.asarray([1.0, 1.0, 1.0]))
    with pytest.raises(ValueError, match="hipfer.quantile: Weights must be non-negative"):
        hf.quantile(t, 0.5, method="inverted_cdf", weights=hf.asarray([1.0, -1.0, 1.0]))
    with pytest.raises(ValueError, match="hipfer.percentile: Weights included NaN"):
        hf.percentile(t, 50, method="inverted_cdf", weights=hf.asarray([0.0, 0.0, 0.0]))
    with pytest.raises(TypeError, match="hipfer.quantile: axis must be specified"):
        hf.quantile(hf.asarray(np.ones((2, 3))), 0.5, method="inverted_cdf",
                    weights=hf.asarray([1.0, 1.0, 1.0]))
