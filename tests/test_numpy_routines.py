"""NumPy's dtype routines, introspection queries and functional routines on tensors
(hipfer/_data_type_functions.py, _introspection.py, _functional.py), against NumPy,
on each backend; the NumPy spellings run in the refuse-host mode, so none of them may
convert a tensor to NumPy."""
import numpy as np
import pytest

import hipfer as hf

from _util import ALL_DTYPES, ids, random_array

pytestmark = pytest.mark.usefixtures("refuse_host")
NUMERIC = [t for t in ALL_DTYPES if t.kind != "b"]


def host(t):
    return np.asarray(t, copy=True)


# ------------------------------------------------------------------ dtype routines
@pytest.mark.parametrize("a", NUMERIC, ids=ids(NUMERIC))
@pytest.mark.parametrize("b", NUMERIC, ids=ids(NUMERIC))
def test_common_type(be, a, b):
    x = hf.zeros((2,), dtype=a, device=be.device)
    y = hf.zeros((0, 3), dtype=b, device=be.device)
    want = np.common_type(np.zeros(2, a), np.zeros((0, 3), b))
    assert hf.common_type(x, y) is want
    assert np.common_type(x, y) is want  # through NEP 18


def test_common_type_refuses_bool(be):
    with pytest.raises(TypeError, match="common_type.*bool"):
        hf.common_type(hf.ones((2,), dtype=hf.bool, device=be.device))


def test_dtype_queries(be):
    rng = np.random.default_rng(1)
    for dt in NUMERIC:
        t = hf.asarray(random_array(rng, (3,), dt), device=be.device)
        assert hf.min_scalar_type(t) == np.min_scalar_type(np.zeros(3, dt)) == dt
        assert np.min_scalar_type(t) == dt
        assert hf.mintypecode([t, "f"]) == np.mintypecode([dt.char, "f"])
        assert hf.issubdtype(t.dtype, np.number)
    for v in (0, 255, 256, -1, 70000, 1.5, -3e38, 1e300, 2.5j):
        t = hf.asarray(v, device=be.device)
        assert hf.min_scalar_type(t) == np.min_scalar_type(np.asarray(v)), v
    assert hf.issubdtype(hf.float32, np.floating) and not hf.issubdtype(hf.int8, np.floating)
    assert hf.typename("d") == np.typename("d")
    assert hf.promote_types("f4", "i2") == hf.result_type(hf.float32, hf.int16) == np.float32
    assert hf.promote_types(hf.uint8, hf.int8) == np.int16
    with pytest.raises(TypeError, match="promote_types.*uint64"):
        hf.promote_types(hf.int64, hf.uint64)


# ------------------------------------------------------------------ introspection
@pytest.mark.parametrize("shape", [(), (0,), (5,), (2, 3, 4)])
def test_ndim_shape_size(be, shape):
    a = random_array(np.random.default_rng(2), shape, np.float32)
    t = hf.asarray(a, device=be.device)
    for f in (np.ndim, np.shape, np.size, hf.ndim, hf.shape, hf.size):
        assert f(t) == getattr(np, f.__name__)(a)
    for ax in range(-len(shape), len(shape)):
        assert hf.size(t, ax) == np.size(t, ax) == np.size(a, ax)
    with pytest.raises(np.exceptions.AxisError, match="size"):
        hf.size(t, len(shape))
    assert hf.ndim([[1, 2]]) == 2 and hf.shape([[1, 2]]) == (1, 2) and hf.size([[1, 2]]) == 2


def test_isscalar_iterable(be):
    t = hf.asarray(1.0, device=be.device)
    assert not hf.isscalar(t) and not np.isscalar(t)
    assert hf.isscalar(1.0) and hf.isscalar(np.float32(2)) and not hf.isscalar([1])
    assert not hf.iterable(t) and hf.iterable(hf.ones((2,), device=be.device))
    assert hf.iterable([1]) and not hf.iterable(3)


def test_isfortran(be):
    a = np.arange(24.0).reshape(2, 3, 4)
    t = hf.asarray(a, device=be.device)
    for perm in [(0, 1, 2), (2, 1, 0), (1, 0, 2), (2, 0, 1)]:
        assert hf.isfortran(hf.permute_dims(t, perm)) == np.isfortran(a.transpose(perm)), perm
    assert not hf.isfortran(t[0, 0]) and not hf.isfortran(t[:, :0])
    assert hf.isfortran(hf.permute_dims(t, (2, 1, 0))[:, ::1, :1]) == np.isfortran(
        a.T[:, ::1, :1])


def test_shares_memory(be):
    t = hf.asarray(np.arange(12.0).reshape(3, 4), device=be.device)
    other = hf.asarray(np.arange(12.0), device=be.device)
    for f in (hf.shares_memory, hf.may_share_memory, np.shares_memory, np.may_share_memory):
        assert f(t, t[1:, ::2])
        assert not f(t, other)
        assert not f(t[0], t[1])
    assert not hf.shares_memory(t, np.arange(3))


def test_show_config(capsys):
    hf.show_config()
    out = capsys.readouterr().out
    assert "hipfer" in out and "numpy" in out and "default device" in out


# ------------------------------------------------------------------ functional
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_apply_along_axis(be, axis):
    a = random_array(np.random.default_rng(3), (3, 4, 5), np.float64)
    t = hf.asarray(a, device=be.device)
    cases = [(lambda v: v.sum(), lambda v: v.sum()),
             (lambda v: hf.stack([v.min(), v.max()]), lambda v: np.stack([v.min(), v.max()])),
             (lambda v: hf.reshape(v, (1, -1)) * 2, lambda v: v.reshape(1, -1) * 2)]
    for hfn, npf in cases:
        r = hf.apply_along_axis(hfn, axis, t)
        ref = np.apply_along_axis(npf, axis, a)
        assert isinstance(r, hf.Tensor) and r.shape == ref.shape
        np.testing.assert_allclose(host(r), ref)
    r = np.apply_along_axis(lambda v, k: v * k, axis, t, k=3)  # kwargs reach func1d
    np.testing.assert_allclose(host(r), a * 3)


def test_apply_along_axis_errors(be):
    t = hf.ones((2, 3), device=be.device)
    with pytest.raises(np.exceptions.AxisError, match="apply_along_axis"):
        hf.apply_along_axis(lambda v: v, 2, t)
    with pytest.raises(ValueError, match="apply_along_axis"):
        hf.apply_along_axis(lambda v: v, 1, hf.ones((0, 3), device=be.device))
    with pytest.raises(ValueError, match="different shapes"):
        calls = iter(range(10))
        hf.apply_along_axis(lambda v: v[:next(calls) % 2 + 1], 1, t)


@pytest.mark.parametrize("axes", [[0], [0, 2], [-1, 1], 1])
def test_apply_over_axes(be, axes):
    a = random_array(np.random.default_rng(4), (2, 3, 4), np.float32)
    t = hf.asarray(a, device=be.device)
    for fn in (hf.sum, hf.max, np.sum):
        r = hf.apply_over_axes(fn, t, axes)
        ref = np.apply_over_axes(getattr(np, fn.__name__), a, axes)
        assert r.shape == ref.shape
        np.testing.assert_allclose(host(r), ref, rtol=1e-6)
    with pytest.raises(ValueError, match="apply_over_axes"):
        hf.apply_over_axes(lambda x, ax: x.sum(), t, 0)


def test_piecewise(be):
    rng = np.random.default_rng(5)
    a = random_array(rng, (4, 5), np.float64)
    t = hf.asarray(a, device=be.device)
    ref = np.piecewise(a, [a < 0, a > 1], [lambda v: -v, lambda v: v ** 2, 0.5])
    r = hf.piecewise(t, [t < 0, t > 1], [lambda v: -v, lambda v: v ** 2, 0.5])
    np.testing.assert_allclose(host(r), ref)
    r = np.piecewise(t, [t < 0], [7, lambda v: v * 3])  # through NEP 18, "otherwise" last
    np.testing.assert_allclose(host(r), np.piecewise(a, [a < 0], [7, lambda v: v * 3]))
    # one condition given bare (a 1-d x); an n-d one's rows are the conditions, as NumPy's
    v = a[0]
    np.testing.assert_allclose(host(hf.piecewise(t[0], t[0] > 0, [2.0])),
                               np.piecewise(v, v > 0, [2.0]))
    c = rng.random((2, 4, 5)) < 0.5
    np.testing.assert_allclose(host(hf.piecewise(t, hf.asarray(c, device=be.device), [3, 4])),
                               np.piecewise(a, c, [3, 4]))
    # later conditions win where they overlap
    np.testing.assert_allclose(host(hf.piecewise(t, [t > 0, t > 0.5], [1, 2])),
                               np.piecewise(a, [a > 0, a > 0.5], [1, 2]))
    i = np.arange(-3, 4)
    np.testing.assert_array_equal(host(hf.piecewise(hf.asarray(i, device=be.device),
                                                    [i < 0], [lambda v: v * 2, 9])),
                                  np.piecewise(i, [i < 0], [lambda v: v * 2, 9]))
    with pytest.raises(ValueError, match="piecewise"):
        hf.piecewise(t, [t < 0], [1, 2, 3])


# ------------------------------------------------------------------ around, real_if_close
@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64, np.complex128, np.int32,
                                np.uint8, np.int64])
@pytest.mark.parametrize("decimals", [-2, -1, 0, 1, 3])
def test_around(be, dt, decimals):
    rng = np.random.default_rng(6)
    a = random_array(rng, (3, 5), dt, special=True, scale=300.0)
    if np.dtype(dt).kind in "iu":
        a = (a.astype(np.int64) % 1000).astype(dt)
    t = hf.asarray(a, device=be.device)
    want = np.round(a, decimals)
    for got in (hf.around(t, decimals), np.round(t, decimals), np.around(t, decimals),
                t.round(decimals), hf.around(t.mT, decimals).mT):
        assert isinstance(got, hf.Tensor) and got.dtype == want.dtype
        np.testing.assert_allclose(host(got), want, rtol=1e-6 if dt == np.float32 else 1e-3
                                   if dt == np.float16 else 1e-12, equal_nan=True)
    out = hf.empty(a.shape, dtype=np.result_type(dt, np.float64), device=be.device)
    assert np.round(t, decimals, out=out) is out


def test_real_if_close(be):
    a = np.array([1 + 1e-15j, 2 - 3e-16j])
    t = hf.asarray(a, device=be.device)
    r = hf.real_if_close(t)
    assert r.dtype == np.float64 and np.array_equal(host(r), np.real_if_close(a))
    b = np.array([1 + 1e-3j])
    assert hf.real_if_close(hf.asarray(b, device=be.device)).dtype == np.complex128
    assert hf.real_if_close(hf.asarray(b, device=be.device), tol=1e-2).dtype == np.float64
    x = hf.ones((2,), device=be.device)
    assert hf.real_if_close(x) is x and np.real_if_close(x) is x


# ------------------------------------------------------------------ require, chkfinite
def test_require_and_asarray_chkfinite(be):
    a = np.arange(12.0).reshape(3, 4)
    t = hf.asarray(a, device=be.device)
    assert hf.require(t) is t  # (np.require has no NEP 18 dispatch: NumPy converts)
    c = hf.require(t.mT, requirements="C")
    assert c.strides == (3, 1) and np.array_equal(host(c), a.T)
    f = hf.require(t, np.float32, ["F", "A"])
    assert f.dtype == np.float32 and hf.isfortran(f)
    assert hf.require(t, requirements="O") is not t
    with pytest.raises(ValueError, match="require"):
        hf.require(t, requirements="CF")
    with pytest.raises(ValueError, match="require"):
        hf.require(t, requirements="Q")
    assert np.array_equal(host(hf.asarray_chkfinite(t)), a)
    for bad in (np.nan, np.inf, -np.inf):
        b = a.copy()
        b[1, 2] = bad
        with pytest.raises(ValueError, match="infs or NaNs"):
            hf.asarray_chkfinite(hf.asarray(b, device=be.device))


# ------------------------------------------------------------------ numbers as text
def test_number_formatting(be):
    for v in (5, -5, 0, 255):
        t = hf.asarray(v, device=be.device)
        assert hf.binary_repr(t) == np.binary_repr(v)
        assert hf.binary_repr(t, 10) == np.binary_repr(v, 10)
        assert hf.base_repr(abs(v), 16, 2) == np.base_repr(abs(v), 16, 2)
    for v in (np.float32(0.1), np.float16(3.14), np.float64(1e-300), 2.5):
        t = hf.asarray(v, device=be.device)
        assert hf.format_float_positional(t) == np.format_float_positional(v)
        assert hf.format_float_scientific(t, 4) == np.format_float_scientific(v, 4)
    with pytest.raises(TypeError, match="0-d"):
        hf.binary_repr(hf.ones((2,), dtype=hf.int64, device=be.device))


# ------------------------------------------------------------------ text and raw files
def test_text_and_raw_files(be, tmp_path):
    import io
    a = np.random.default_rng(7).standard_normal((4, 3))
    path = tmp_path / "raw.bin"
    a.tofile(path)
    got = hf.fromfile(path, device=be.device)
    assert got.device == be.device and np.array_equal(host(got), a.ravel())
    got = hf.fromstring("1, 2, 3.5", sep=",", device=be.device)
    assert np.array_equal(host(got), np.fromstring("1, 2, 3.5", sep=","))
    text = "# c\n1,2,3\n4,,6\n"
    got = hf.genfromtxt(io.StringIO(text), delimiter=",", device=be.device)
    np.testing.assert_array_equal(host(got), np.genfromtxt(io.StringIO(text), delimiter=","))
    got = hf.genfromtxt(io.StringIO(text), delimiter=",", filling_values=-1, unpack=True)
    assert len(got) == 3 and np.array_equal(host(got[1]), [2.0, -1.0])
    with pytest.raises(TypeError, match="masked"):
        hf.genfromtxt(io.StringIO(text), delimiter=",", usemask=True)


# ------------------------------------------------------------------ the last Generator methods
def test_generator_f_power_logseries_hypergeometric(be):
    st = pytest.importorskip("scipy.stats")
    g = hf.random.default_rng(11, device=be.device)
    n = 20000
    x = host(g.f(3.0, 7.0, n))
    assert st.kstest(x, st.f(3, 7).cdf).pvalue > 1e-4
    x = host(g.power(2.5, n))
    assert x.min() >= 0 and x.max() <= 1 and st.kstest(x, st.powerlaw(2.5).cdf).pvalue > 1e-4
    x = host(g.logseries(0.7, n))
    assert x.dtype == np.int64 and x.min() >= 1
    counts = np.bincount(x, minlength=8)[1:8] / n
    np.testing.assert_allclose(counts, st.logser(0.7).pmf(np.arange(1, 8)), atol=0.015)
    for ng, nb, ns in ((30, 20, 12), (30, 20, 45), (5, 0, 3), (0, 5, 3), (7, 9, 16)):
        x = host(g.hypergeometric(ng, nb, ns, n))
        d = st.hypergeom(ng + nb, ng, ns)
        assert x.min() >= d.support()[0] and x.max() <= d.support()[1]
        assert abs(x.mean() - d.mean()) < 5 * np.sqrt(d.var() / n) + 1e-9
    # tensor parameters broadcast against size
    x = g.hypergeometric(hf.asarray(np.array([5, 10]), device=be.device), 3, 4, (50, 2))
    assert x.shape == (50, 2) and int(hf.max(x[:, 0])) <= 4
    # reproducible, and the errors name the method
    assert np.array_equal(host(hf.random.default_rng(3).logseries(0.5, 10)),
                          host(hf.random.default_rng(3).logseries(0.5, 10)))
    for call, what in ((lambda: g.f(0, 1), "dfnum"), (lambda: g.power(-1), "power"),
                       (lambda: g.logseries(1.0), "logseries"),
                       (lambda: g.hypergeometric(2, 2, 5), "nsample")):
        with pytest.raises(ValueError, match=what):
            call()


# ------------------------------------------------------------------ stride tricks
@pytest.mark.parametrize("window,axis", [((2, 3), None), (3, 1), ((2, 2), (0, 0)), (1, -1),
                                         ((4, 5), None)])
def test_sliding_window_view(be, window, axis):
    a = random_array(np.random.default_rng(8), (4, 5), np.float32)
    t = hf.asarray(a, device=be.device)
    want = np.lib.stride_tricks.sliding_window_view(a, window, axis)
    for got in (hf.lib.stride_tricks.sliding_window_view(t, window, axis),
                np.lib.stride_tricks.sliding_window_view(t, window, axis)):
        assert isinstance(got, hf.Tensor) and got.shape == want.shape
        np.testing.assert_array_equal(host(got), want)
    v = hf.lib.stride_tricks.sliding_window_view(t[:, ::-2], 2, axis=0)
    np.testing.assert_array_equal(host(v), np.lib.stride_tricks.sliding_window_view(
        a[:, ::-2], 2, axis=0))


def test_stride_tricks_errors_and_as_strided(be):
    t = hf.asarray(np.arange(10.0), device=be.device)
    st = hf.lib.stride_tricks
    with pytest.raises(ValueError, match="larger than input"):
        st.sliding_window_view(t, 11)
    with pytest.raises(ValueError, match="negative"):
        st.sliding_window_view(t, -1)
    with pytest.raises(np.exceptions.AxisError):
        st.sliding_window_view(t, 2, axis=1)
    v = st.as_strided(t, shape=(4, 3), strides=(16, 8))
    np.testing.assert_array_equal(host(v), np.lib.stride_tricks.as_strided(
        np.arange(10.0), shape=(4, 3), strides=(16, 8)))
    with pytest.raises(ValueError, match="multiples"):
        st.as_strided(t, shape=(2,), strides=(3,))
