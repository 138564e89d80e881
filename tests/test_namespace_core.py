"""The namespace functions built so far, end to end on each backend, against NumPy."""
import numpy as np
import pytest

import hipfer as hf
from hipfer._elementwise import _BINARY, _UNARY

from test_tensor import host, rand

FLOATS = [np.float32, np.float64, np.complex64, np.complex128]


def tol(dtype):
    return dict(rtol=2e-5, atol=1e-6) if np.dtype(dtype) in (np.float32, np.complex64) \
        else dict(rtol=1e-12, atol=1e-14)


_NP_NAME = {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "asinh": "arcsinh",
            "acosh": "arccosh", "atanh": "arctanh", "atan2": "arctan2", "pow": "power",
            "abs": "absolute"}


def np_ref(name):
    extra = {
        "rsqrt": lambda x: 1 / np.sqrt(x),
        "clamp_min": lambda x, lo: np.where(x < lo, lo, x),
        "clamp_max": lambda x, hi: np.where(x > hi, hi, x),
        "xlogy": lambda x, y: np.where((x == 0) & ~np.isnan(y), 0, x * np.log(y)),
    }
    return extra.get(name) or getattr(np, _NP_NAME.get(name, name))


@pytest.mark.parametrize("name", sorted(_UNARY))
@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64, np.complex128])
def test_unary_functions(be, rng, name, dtype):
    row = _UNARY[name].row
    a = rand(rng, (4, 5), dtype)
    kind = np.dtype(dtype).kind
    if kind not in row.kinds and not (kind in "iu" and row.family == "analytic"):
        with pytest.raises(TypeError):
            getattr(hf, name)(hf.asarray(a))
        return
    got = host(getattr(hf, name)(hf.asarray(a)[:, ::-2]))
    with np.errstate(all="ignore"):
        src = a[:, ::-2]
        if np.dtype(dtype).kind in "iu" and row.family == "analytic":
            src = src.astype(np.float64)
        ref = np_ref(name)(src)
    assert got.dtype == ref.dtype, (got.dtype, ref.dtype)
    np.testing.assert_allclose(got, ref, equal_nan=True, **tol(ref.dtype))


@pytest.mark.parametrize("name", sorted(_BINARY))
def test_binary_functions_with_promotion(be, rng, name):
    row = _BINARY[name].row
    kinds = row.kinds
    da, db = (np.int32, np.float64) if "f" in kinds else (np.int16, np.int64)
    if kinds == "b":  # logical_and / _or / _xor
        da = db = np.bool_
    a, b = rand(rng, (3, 1, 4), da), rand(rng, (5, 4), db)
    if name in ("pow",):
        a = np.abs(a)
    got = host(getattr(hf, name)(hf.asarray(a), hf.asarray(b)))
    with np.errstate(all="ignore"):
        ref = np_ref(name)(a.astype(np.result_type(da, db)), b.astype(np.result_type(da, db)))
    np.testing.assert_allclose(got, ref, equal_nan=True, rtol=1e-12)


def test_operators_and_scalars(be, rng):
    a = rand(rng, (3, 4), np.float32)
    b = rand(rng, (4,), np.float32)
    x, y = hf.asarray(a), hf.asarray(b)
    r = host(2 * x + y / 3 - 1)
    assert r.dtype == np.float32
    np.testing.assert_allclose(r, 2 * a + b / 3 - 1, rtol=1e-6)
    np.testing.assert_array_equal(host(x > y), a > b)
    np.testing.assert_array_equal(host(x <= 0.5), a <= 0.5)
    np.testing.assert_array_equal(host(1 < x), 1 < a)
    np.testing.assert_allclose(host(-x), -a)
    np.testing.assert_allclose(host(abs(x)), np.abs(a))
    np.testing.assert_allclose(host(x ** 2), a ** 2, rtol=1e-6)
    i = hf.asarray(np.arange(6))
    assert host(i + 1).dtype == np.int64
    assert host(i / 2).dtype == np.float64
    np.testing.assert_array_equal(host(i & 3), np.arange(6) & 3)
    x = hf.asarray(a.copy())  # asarray shares memory with NumPy input on the CPU
    x += 1
    np.testing.assert_allclose(host(x), a + 1, rtol=1e-6)
    with pytest.raises(TypeError):
        x + "a"


def test_where(be, rng):
    c = rng.random((4, 5)) < 0.5
    a, b = rand(rng, (4, 5), np.complex64), rand(rng, (5,), np.complex64)
    got = hf.where(hf.asarray(c), hf.conj(hf.asarray(a)), hf.asarray(b))
    np.testing.assert_array_equal(host(got), np.where(c, np.conj(a), b))
    gi = hf.where(hf.asarray(c), hf.asarray(np.arange(5)), 0)
    np.testing.assert_array_equal(host(gi), np.where(c, np.arange(5), 0))


@pytest.mark.parametrize("dtype", [np.bool_, np.int32, np.uint8, np.float32, np.float64, np.complex128])
def test_reductions(be, rng, dtype):
    a = rand(rng, (3, 4, 5), dtype)
    x = hf.asarray(a)
    t = tol(np.float64 if np.dtype(dtype).kind in "biu" else dtype)
    for axis in (None, 0, (0, 2), -1):
        np.testing.assert_allclose(host(hf.sum(x, axis=axis)), np.sum(a, axis=axis), **t)
        np.testing.assert_allclose(host(hf.sum(x, axis=axis, keepdims=True)),
                                   np.sum(a, axis=axis, keepdims=True), **t)
        np.testing.assert_array_equal(host(hf.any(x, axis=axis)), np.any(a, axis=axis))
        np.testing.assert_array_equal(host(hf.all(x, axis=axis)), np.all(a, axis=axis))
        if np.dtype(dtype).kind != "c":
            np.testing.assert_array_equal(host(hf.max(x, axis=axis)), np.max(a, axis=axis))
            np.testing.assert_array_equal(host(hf.min(x, axis=axis)), np.min(a, axis=axis))
        if np.dtype(dtype).kind in "fc":
            np.testing.assert_allclose(host(hf.mean(x, axis=axis)), np.mean(a, axis=axis), **t)
            np.testing.assert_allclose(host(hf.var(x, axis=axis, correction=1)),
                                       np.var(a, axis=axis, ddof=1), **t)
            np.testing.assert_allclose(host(hf.std(x, axis=axis)), np.std(a, axis=axis), **t)
    if np.dtype(dtype).kind in "fc":
        np.testing.assert_allclose(host(hf.prod(x[:, :2, :2], axis=1)), np.prod(a[:, :2, :2], axis=1), **t)
    assert host(hf.sum(hf.asarray(np.array([], dtype=dtype)))) == 0


def test_reduction_nan_and_errors(be):
    a = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, -np.inf]])
    x = hf.asarray(a)
    np.testing.assert_array_equal(host(hf.max(x, axis=1)), np.max(a, axis=1))
    np.testing.assert_array_equal(host(hf.min(x, axis=0)), np.min(a, axis=0))
    with pytest.raises(ValueError, match="zero-size"):
        hf.max(hf.asarray(np.zeros((0, 3))), axis=0)
    with pytest.raises(IndexError):
        hf.sum(x, axis=2)
    with pytest.raises(TypeError):
        hf.max(hf.asarray(np.ones(2, complex)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128, np.int64])
def test_matmul(be, rng, dtype):
    a, b = rand(rng, (2, 3, 4), dtype), rand(rng, (4, 5), dtype)
    t = tol(dtype)
    x, y = hf.asarray(a), hf.asarray(b)
    np.testing.assert_allclose(host(x @ y), a @ b, **t)
    np.testing.assert_allclose(host(hf.matmul(x.mT[..., ::-1, :], x)), a.swapaxes(-1, -2)[..., ::-1, :] @ a, **t)
    np.testing.assert_allclose(host(hf.conj(x) @ y), np.conj(a) @ b, **t)
    np.testing.assert_allclose(host(x @ hf.conj(y).mT.mT), a @ np.conj(b), **t)
    np.testing.assert_allclose(host(y[:, 0] @ y), b[:, 0] @ b, **t)  # 1-d @ 2-d
    np.testing.assert_allclose(host(x @ y[:, 1]), a @ b[:, 1], **t)  # 2-d @ 1-d
    with pytest.raises(ValueError, match="inner"):
        x @ x


def test_sort_topk_take(be, rng):
    a = rng.standard_normal((4, 9))
    a[1, 3] = np.nan
    a[2, :4] = 0.5  # ties
    x = hf.asarray(a)
    np.testing.assert_array_equal(host(hf.sort(x, axis=1)), np.sort(a, axis=1))
    np.testing.assert_array_equal(host(hf.argsort(x, axis=1)), np.argsort(a, axis=1, kind="stable"))
    v, i = hf.topk(x, 3, axis=1)
    ref_i = np.argsort(np.where(np.isnan(a), -np.inf, -a), axis=1, kind="stable")[:, :3]
    np.testing.assert_array_equal(host(i), ref_i)
    np.testing.assert_array_equal(host(v), np.take_along_axis(a, ref_i, 1))
    idx = np.array([3, -1, 0, 3])
    np.testing.assert_array_equal(host(hf.take(x, hf.asarray(idx), axis=1)), np.take(a, idx, axis=1))
    with pytest.raises(IndexError, match="out of bounds"):
        hf.take(x, hf.asarray(np.array([0, 9])), axis=1)


def test_creation(be):
    np.testing.assert_array_equal(host(hf.zeros((2, 3))), np.zeros((2, 3)))
    np.testing.assert_array_equal(host(hf.ones((2,), dtype=hf.int8)), np.ones(2, np.int8))
    np.testing.assert_array_equal(host(hf.full((2, 2), 1 + 2j)), np.full((2, 2), 1 + 2j))
    np.testing.assert_array_equal(host(hf.full((3,), hf.asarray(2.5))), np.full(3, 2.5))
    np.testing.assert_array_equal(host(hf.arange(10)), np.arange(10))
    np.testing.assert_allclose(host(hf.arange(1.0, 2.0, 0.25)), np.arange(1.0, 2.0, 0.25))
    np.testing.assert_array_equal(host(hf.arange(5, 0, -2)), np.arange(5, 0, -2))
    assert hf.empty((0, 4)).shape == (0, 4)
    assert hf.zeros(()).shape == ()
    x = hf.asarray(np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(host(hf.zeros_like(x)), np.zeros((2, 3)))
    np.testing.assert_array_equal(host(hf.full_like(x, 7, dtype=hf.int32)), np.full((2, 3), 7, np.int32))


def test_random_same_on_every_device(be):
    g = hf.random.Generator(1234)
    u = g.random((1000,))
    u32 = g.random((7,), dtype=hf.float32)
    z = g.standard_normal((501,))
    k = g.integers(-5, 5, (300,), dtype=hf.int8)
    h = hf.random.Generator(1234)
    with hf.default_device("cpu"):
        ref = [h.random((1000,)), h.random((7,), dtype=hf.float32), h.standard_normal((501,)),
               h.integers(-5, 5, (300,), dtype=hf.int8)]
    np.testing.assert_array_equal(host(u), host(ref[0]))
    np.testing.assert_array_equal(host(u32), host(ref[1]))
    np.testing.assert_allclose(host(z), host(ref[2]), rtol=1e-13, atol=1e-13)
    np.testing.assert_array_equal(host(k), host(ref[3]))
    assert 0 <= host(u).min() and host(u).max() < 1 and abs(host(u).mean() - 0.5) < 0.05
    assert host(k).min() >= -5 and host(k).max() <= 4
    assert abs(host(z).std() - 1) < 0.1


def test_default_device_context(be):
    with hf.default_device("cpu"):
        assert hf.zeros(3).device == hf.Device("cpu")
    assert hf.zeros(3).device == be.device
