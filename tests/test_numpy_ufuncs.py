"""NumPy's elementwise names (hipfer._elementwise's NumPy section): hipfer.<name> against
np.<name> on fresh random data, per backend, across dtypes (NumPy's TypeError where
NumPy has no loop), shapes (0-d, empty, 1-d, n-d), strided and transposed inputs,
broadcasting, Python scalars and special values; results and dtypes. Exact functions
compare exactly (signed zeros too), analytic ones within tests/_util.RTOL. Every test
runs in the refuse-host mode, so a hidden device-to-host copy fails here."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import hipfer as hf
from hipfer._tensor import Tensor
from tests._util import ALL_DTYPES, RTOL, ids, random_array

pytestmark = pytest.mark.usefixtures("refuse_host")

UNARY = ["absolute", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh",
         "bitwise_not", "invert", "conjugate", "fabs", "exp2", "rint", "fix", "sinc", "i0",
         "spacing", "deg2rad", "rad2deg", "degrees", "radians", "angle", "isneginf",
         "isposinf", "iscomplex", "isreal", "bitwise_count", "nan_to_num"]
BINARY = ["arctan2", "left_shift", "right_shift", "power", "true_divide", "mod", "fmod",
          "fmax", "fmin", "float_power", "gcd", "lcm", "heaviside", "ldexp", "logaddexp2"]
#: compared within RTOL (math libraries differ by an ulp or two); the rest exactly
ANALYTIC = {"arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh", "exp2", "sinc",
            "i0", "angle", "arctan2", "power", "float_power", "logaddexp2", "true_divide"}


def host(t) -> np.ndarray:
    assert isinstance(t, Tensor), type(t)
    return np.asarray(t, copy=True)  # explicit: allowed in the refuse-host mode


#: NumPy < 2.3 (before gh-27784): float16 sinc(0) is NaN, not 1 (its 1e-20 stand-in for a
#: zero x underflows in float16); NumPy's answer then has 1 there, as NumPy >= 2.3 gives
OLD_SINC = np.lib.NumpyVersion(np.__version__) < "2.3.0"


def numpy_ref(fn, *xs):
    """NumPy's answer, or the TypeError NumPy raises (no loop for the dtypes)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            r = fn(*xs)
        except TypeError as e:
            return e
    if fn is np.sinc and OLD_SINC and np.asarray(r).dtype == np.float16:
        r = np.where(np.asarray(xs[0]) == 0, np.float16(1), r)
    return r


#: fmax/fmin of +0 and -0: C99 leaves which zero comes back to the library
ZERO_SIGN_FREE = {"fmax", "fmin"}


def _flushed(g, w, got):
    """w with the float32 subnormals a GPU flushed to zero set to zero there (the GPU
    kernels compile with flush-to-zero, as CuPy's do: a known divergence, docs/numpy.md)."""
    if got.device.kind != "gpu" or w.dtype not in (np.float32, np.complex64):
        return w
    tiny = np.finfo(np.float32).tiny
    w = w.copy()
    for gp, wp in ((g.real, w.real), (g.imag, w.imag)) if w.dtype.kind == "c" else ((g, w),):
        sub = (np.abs(wp) < tiny) & (wp != 0) & (gp == 0)
        wp[sub] = gp[sub]
    return w


def check(got, want, analytic: bool, zero_sign: bool = True):
    g, w = host(got), np.asarray(want)
    assert g.shape == w.shape, (g.shape, w.shape)
    assert g.dtype == w.dtype, (g.dtype, w.dtype)
    w = _flushed(g, w, got)
    if w.dtype.kind in "biu" or not analytic:
        np.testing.assert_array_equal(g, w)
        if w.dtype.kind in "fc" and zero_sign:  # the signs of zeros too
            for gp, wp in ((g.real, w.real), (g.imag, w.imag)) if w.dtype.kind == "c" else ((g, w),):
                zero = (wp == 0) & (gp == 0)
                assert np.array_equal(np.signbit(gp[zero]), np.signbit(wp[zero]))
        return
    tol = RTOL[w.dtype]
    np.testing.assert_allclose(g, w, rtol=tol, atol=tol, equal_nan=True)


def run(name, *xs):
    """hipfer.<name> and np.<name> on the same data: equal results, or both TypeError."""
    ref = numpy_ref(getattr(np, name), *xs)
    args = [hf.asarray(x) if isinstance(x, np.ndarray) else x for x in xs]
    if isinstance(ref, TypeError):
        with pytest.raises(TypeError):
            getattr(hf, name)(*args)
        return
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        got = getattr(hf, name)(*args)
    # |complex| is a hypot: an ulp apart between math libraries
    analytic = name in ANALYTIC or (name == "absolute" and any(
        np.iscomplexobj(x) for x in xs))
    check(got, ref, analytic, zero_sign=name not in ZERO_SIGN_FREE)


def _second(rng, name, x1, dt, shape):
    """The second operand of name: counts that NumPy defines (shifts below the width,
    nonnegative integer powers, ldexp's exponents), else random data of dt."""
    if name in ("left_shift", "right_shift") and dt.kind in "iu":
        return rng.integers(0, 8 * dt.itemsize, shape).astype(dt)
    if name == "power" and dt.kind in "iu":
        return rng.integers(0, 6, shape).astype(dt)
    if name == "ldexp":
        return rng.integers(-30, 30, shape).astype(dt if dt.kind in "iu" else np.int32)
    x2 = random_array(rng, shape, dt, special=True)
    if x2.shape == x1.shape and x2.size:  # ties: fmax/fmin/heaviside at equal or zero values
        x2.reshape(-1)[::4] = x1.reshape(-1)[::4]
    return x2


SHAPES = [(), (0,), (7,), (3, 4)]
#: the functions of integers (and bool) only
INTEGER_ONLY = {"left_shift", "right_shift", "gcd", "lcm", "bitwise_not", "invert",
                "bitwise_count"}


@pytest.mark.parametrize("dt", ALL_DTYPES, ids=ids(ALL_DTYPES))
@pytest.mark.parametrize("name", UNARY)
def test_unary(be, rng, name, dt):
    for shape in SHAPES:
        run(name, random_array(rng, shape, dt, special=True))


@pytest.mark.parametrize("dt", ALL_DTYPES, ids=ids(ALL_DTYPES))
@pytest.mark.parametrize("name", BINARY)
def test_binary(be, rng, name, dt):
    for shape in SHAPES:
        x1 = random_array(rng, shape, dt, special=True)
        run(name, x1, _second(rng, name, x1, dt, shape))
    x1 = random_array(rng, (3, 1), dt, special=True)  # broadcasting
    run(name, x1, _second(rng, name, x1, dt, (4,)))


@pytest.mark.parametrize("name", UNARY)
def test_unary_strided_and_transposed(be, rng, name):
    for dt in (np.dtype(np.float32), np.dtype(np.int16), np.dtype(np.complex128)):
        big = random_array(rng, (6, 8), dt, special=True)
        want = numpy_ref(getattr(np, name), big[::2, 1::3])
        if isinstance(want, TypeError):
            continue
        t = hf.asarray(big)
        analytic = name in ANALYTIC or (name == "absolute" and dt.kind == "c")  # a hypot
        check(getattr(hf, name)(t[::2, 1::3]), want, analytic)
        check(getattr(hf, name)(hf.permute_dims(t, (1, 0))), numpy_ref(getattr(np, name), big.T),
              analytic)


@pytest.mark.parametrize("name", BINARY)
def test_binary_strided_mixed_and_scalars(be, rng, name):
    integer = name in INTEGER_ONLY
    a = random_array(rng, (4, 6), np.int64 if integer else np.float64, special=True)
    b = _second(rng, name, a, np.dtype(np.int64 if integer or name == "ldexp" else np.float64),
                (6, 4))
    want = numpy_ref(getattr(np, name), a[:, ::2], b.T[:, 1::2])
    check(getattr(hf, name)(hf.asarray(a)[:, ::2], hf.permute_dims(hf.asarray(b), (1, 0))[:, 1::2]),
          want, name in ANALYTIC)
    # mixed dtypes promote as NumPy's
    i8 = random_array(rng, (5,), np.int8, low=-20, high=20)
    if name in ("left_shift", "right_shift", "gcd", "lcm", "ldexp"):
        run(name, i8, np.abs(i8).astype(np.int32) % 7)
    else:
        run(name, i8, random_array(rng, (5,), np.float32, special=True))
    # a Python scalar is weak
    x = random_array(rng, (5,), np.float32 if name not in ("gcd", "lcm") else np.int16)
    if name in ("left_shift", "right_shift", "gcd", "lcm", "ldexp"):
        x = x.astype(np.int16) if name != "ldexp" else x
        run(name, x, 3)
    else:
        run(name, x, 1.5)
        run(name, 2.5, x)


def test_special_values(be):
    f = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0, 0.5, -7.25], np.float64)
    for name in UNARY:
        run(name, f)
        run(name, f.astype(np.float16))
    c = np.array([complex(np.nan, 1), complex(1, np.inf), complex(-0.0, -0.0), 2 - 1j])
    for name in ("iscomplex", "isreal", "nan_to_num", "angle", "conjugate", "absolute"):
        run(name, c)
    g = np.array([0.0, -0.0, np.nan, 1.0, np.inf, -np.inf])
    for name in ("fmax", "fmin", "heaviside", "fmod", "mod", "arctan2", "logaddexp2"):
        a, b = np.meshgrid(g, g)
        run(name, a.ravel(), b.ravel())


def test_same_functions_and_warm_path():
    assert hf.true_divide is hf.divide
    assert hf.invert is hf.bitwise_invert and hf.bitwise_not is hf.bitwise_invert
    assert hf.radians is hf.deg2rad and hf.degrees is hf.rad2deg
    # the NumPy names run through the same warm path as their array-API spellings
    for numpy_name, api_name in (("absolute", "abs"), ("arccos", "acos"), ("power", "pow"),
                                 ("arctan2", "atan2"), ("left_shift", "bitwise_left_shift")):
        assert type(getattr(hf, numpy_name)) is type(getattr(hf, api_name)), numpy_name


def test_integer_inputs_follow_numpy_floats(be):
    # NumPy's smallest float that holds the integer type
    for dt, want in ((np.int8, np.float16), (np.uint8, np.float16), (np.bool_, np.float16),
                     (np.int16, np.float32), (np.uint16, np.float32), (np.int32, np.float64),
                     (np.uint64, np.float64)):
        x = hf.asarray(np.array([0, 1], dt))
        for name in ("arcsin", "exp2", "rint", "fabs", "spacing", "deg2rad"):
            assert getattr(hf, name)(x).dtype == np.dtype(want), (name, dt)
    assert hf.fix(hf.asarray(np.array([-2, 3], np.int8))).dtype == np.int8
    assert hf.power(hf.asarray([True]), hf.asarray([False])).dtype == np.int8


def test_tuples(be, rng):
    for dt in (np.float16, np.float32, np.float64, np.int8, np.int32, np.bool_):
        x = random_array(rng, (9,), dt, special=True)
        for name in ("modf", "frexp"):
            want = numpy_ref(getattr(np, name), x)
            got = getattr(hf, name)(hf.asarray(x))
            assert isinstance(got, tuple) and len(got) == 2
            for g, w in zip(got, want):
                check(g, w, False)
        y = random_array(rng, (9,), dt)
        want = numpy_ref(np.divmod, x, y)
        if isinstance(want, TypeError):
            with pytest.raises(TypeError):
                hf.divmod(hf.asarray(x), hf.asarray(y))
            continue
        got = hf.divmod(hf.asarray(x), hf.asarray(y))
        for g, w in zip(got, want):
            check(g, w, False)
    with pytest.raises(TypeError):
        hf.modf(hf.asarray(np.array([1j])))


def test_keywords(be):
    x = np.array([np.nan, np.inf, -np.inf, 1.5], np.float32)
    check(hf.nan_to_num(hf.asarray(x), nan=-1.0, posinf=9.0, neginf=-9.0),
          np.nan_to_num(x, nan=-1.0, posinf=9.0, neginf=-9.0), False)
    t = hf.asarray(x)
    assert hf.nan_to_num(t, copy=False) is t
    check(t, np.nan_to_num(x), False)
    c = np.array([complex(np.nan, np.inf), complex(-np.inf, 2)])
    check(hf.nan_to_num(hf.asarray(c), posinf=np.inf), np.nan_to_num(c, posinf=np.inf), False)
    z = np.array([1 + 1j, -1, -2j, 0], np.complex64)
    check(hf.angle(hf.asarray(z), deg=True), np.angle(z, deg=True), True)
    assert hf.iscomplexobj(hf.asarray(z)) and not hf.isrealobj(hf.asarray(z))
    assert hf.isrealobj(hf.asarray(x)) and not hf.iscomplexobj(hf.asarray(x))
    assert hf.iscomplexobj([1j]) and hf.isrealobj(3.0)


def test_conjugate_of_complex_is_lazy(be):
    z = np.array([1 + 2j, -3j])
    got = hf.conjugate(hf.asarray(z))
    assert got.is_conj()
    check(got, np.conjugate(z), False)


def test_errors(be):
    c = hf.asarray(np.array([1 + 1j]))
    f = hf.asarray(np.array([1.5]))
    for fn in (hf.fabs, hf.isposinf, hf.isneginf, hf.i0, hf.spacing, hf.frexp):
        with pytest.raises(TypeError):
            fn(c)
    with pytest.raises(TypeError):
        hf.bitwise_count(f)
    with pytest.raises(TypeError):
        hf.ldexp(f, f)
    with pytest.raises(TypeError):
        hf.ldexp(f, 1.5)
    with pytest.raises(TypeError):
        hf.gcd(f, f)
    with pytest.raises(TypeError):
        hf.arccos([0.5])  # a list alone has no device: hipfer.asarray it first
    with pytest.raises(TypeError, match="isposinf"):
        hf.isposinf(c)


@pytest.mark.parametrize("name", UNARY + ["modf", "frexp"])
def test_numpy_reaches_hipfer_unary(be, rng, name):
    dt = np.int16 if name in INTEGER_ONLY else np.float32
    x = hf.asarray(random_array(rng, (4,), dt, special=True))
    got = getattr(np, name)(x)
    for g in got if isinstance(got, tuple) else (got,):
        assert isinstance(g, Tensor), name


@pytest.mark.parametrize("name", BINARY + ["divmod"])
def test_numpy_reaches_hipfer_binary(be, rng, name):
    x = hf.asarray(random_array(rng, (4,), np.float32))
    y = hf.asarray(np.array([1, 2, 3, 4], np.int32)) if name == "ldexp" else x
    if name in ("left_shift", "right_shift", "gcd", "lcm"):
        x = y = hf.asarray(np.array([1, 2, 3, 4], np.int32))
    got = getattr(np, name)(x, y)
    for g in got if isinstance(got, tuple) else (got,):
        assert isinstance(g, Tensor), name
    want = numpy_ref(getattr(np, name), host(x), host(y))
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        check(g, w, name in ANALYTIC)


def test_numpy_out_keyword(be):
    x = hf.asarray(np.array([0.25, -0.5], np.float64))
    out = hf.asarray(np.zeros(2))
    assert np.arcsin(x, out=out) is out
    check(out, np.arcsin(np.array([0.25, -0.5])), True)


def test_numpy_reaches_hipfer_functions(be):
    z = hf.asarray(np.array([1 + 1j, np.nan]))
    assert np.iscomplexobj(z) is True and np.isrealobj(z) is False
    check(np.nan_to_num(z, nan=2.0), np.nan_to_num(np.array([1 + 1j, np.nan]), nan=2.0), False)
    check(np.angle(z, deg=True), np.angle(np.array([1 + 1j, np.nan]), deg=True), True)
    n = np.array([3, -2, 0], np.int16)
    check(hf.ldexp(2.0, hf.asarray(n)), np.ldexp(2.0, n), False)
    check(np.ldexp(hf.asarray(np.float32([1.5, 2, 3])), 4), np.ldexp(np.float32([1.5, 2, 3]), 4),
          False)


@pytest.mark.parametrize("name", ["absolute", "arcsin", "exp2", "rint", "sinc", "angle",
                                  "iscomplex", "isreal", "nan_to_num", "conjugate"])
def test_conjugated_inputs(be, rng, name):
    """A lazily conjugated tensor (hipfer.conj) reads as its conjugate everywhere."""
    z = random_array(rng, (3, 4), np.complex128)
    z.reshape(-1)[::5] = complex(np.nan, np.inf)
    got = getattr(hf, name)(hf.conj(hf.asarray(z)))
    check(got, numpy_ref(getattr(np, name), np.conj(z)), name in ANALYTIC)


@pytest.mark.parametrize("name", ["fmax", "fmin", "power", "true_divide", "float_power"])
def test_conjugated_operands(be, rng, name):
    a = random_array(rng, (5,), np.complex64)
    b = random_array(rng, (5,), np.complex64)
    got = getattr(hf, name)(hf.conj(hf.asarray(a)), hf.asarray(b))
    check(got, numpy_ref(getattr(np, name), np.conj(a), b), name in ANALYTIC)
