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
