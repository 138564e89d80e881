"""Mixed operands (hipfer/_core.operands; docs/numpy.md, "Mixed operands"): a Tensor with
a NumPy array, a list, a tuple, a NumPy scalar or a Python scalar, in the operators
(both orders, in place) and the binary namespace functions. Runs in the refuse-host
mode: no operand reaches the Tensor's __array__."""
from __future__ import annotations

import operator

import numpy as np
import pytest

import hipfer as hf
from hipfer._tensor import Tensor

pytestmark = pytest.mark.usefixtures("refuse_host")

OPS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
       operator.mod, operator.pow, operator.eq, operator.ne, operator.lt, operator.le,
       operator.gt, operator.ge]
INT_OPS = [operator.and_, operator.or_, operator.xor, operator.lshift, operator.rshift]
INPLACE = [operator.iadd, operator.isub, operator.imul, operator.itruediv]


def host(t):
    assert isinstance(t, Tensor), type(t)
    return np.asarray(t, copy=True)


def check(got, want):
    g, want = host(got), np.asarray(want)
    assert g.shape == want.shape and g.dtype == want.dtype, (g.dtype, want.dtype)
    np.testing.assert_allclose(g, want, rtol=1e-12, equal_nan=True)


def _other_forms(y):
    """The non-tensor forms of y: NumPy array, list, tuple."""
    return [("ndarray", y), ("list", y.tolist()), ("tuple", tuple(y.tolist()))]


@pytest.mark.parametrize("op", OPS, ids=lambda o: o.__name__)
def test_operator_both_orders(be, rng, op):
    x = rng.uniform(0.5, 2.0, (2, 3))
    y = rng.uniform(0.5, 2.0, 3)
    y[0] = x[0, 0]  # a tie, for the comparisons
    t = hf.asarray(be.asarray(x))
    for kind, other in _other_forms(y):
        with np.errstate(all="ignore"):
            check(op(t, other), op(x, y))
            # ndarray on the left: NumPy's operator calls Tensor.__array_ufunc__; a list
            # or tuple on the left: Python calls the Tensor's reflected operator
            r = op(other, t)
            check(r, op(y, x))


@pytest.mark.parametrize("op", INT_OPS, ids=lambda o: o.__name__)
def test_integer_operators(be, rng, op):
    x = rng.integers(0, 8, (2, 3))
    y = rng.integers(0, 4, 3)
    t = hf.asarray(be.asarray(x))
    for kind, other in _other_forms(y):
        check(op(t, other), op(x, y))
        check(op(other, t), op(y, x))


def test_eq_is_never_a_python_bool(be):
    t = hf.asarray(be.asarray(np.array([1.0, 2.0, 3.0])))
    for other in (np.array([1.0, 2.0, 5.0]), [1, 2, 3], (1, 2, 5)):
        for r in (t == other, other == t, t != other, other != t):
            assert isinstance(r, Tensor) and r.dtype == np.bool_
    check(t == np.array([1.0, 2.0, 5.0]), [True, True, False])
    check(t != [1, 2, 3], [False, False, False])


@pytest.mark.parametrize("op", INPLACE, ids=lambda o: o.__name__)
def test_inplace(be, rng, op):
    x = rng.uniform(0.5, 2.0, (2, 3))
    y = rng.uniform(0.5, 2.0, 3)
    for kind, other in _other_forms(y):
        t = hf.asarray(be.asarray(x.copy()))
        r = op(t, other)
        assert r is t
        check(t, op(x.copy(), y))


def test_inplace_refuses_promotion_and_broadcast(be):
    t = hf.asarray(be.asarray(np.arange(3, dtype=np.int32)))
    with pytest.raises(TypeError, match="promote"):
        t += np.ones(3)  # float64 array: strong, the result would be float64
    with pytest.raises(ValueError, match="shape"):
        t += np.ones((2, 3), dtype=np.int32)
    a = np.arange(3.0)
    with pytest.raises(TypeError):  # a NumPy out= never receives device data implicitly
        a += hf.asarray(be.asarray(np.ones(3)))


def test_promotion_rule(be):
    t32 = hf.asarray(be.asarray(np.ones(3, dtype=np.float32)))
    assert (t32 + np.ones(3)).dtype == np.float64  # NumPy arrays are strong
    assert (np.ones(3) + t32).dtype == np.float64
    assert (t32 + np.ones(3, dtype=np.float16)).dtype == np.float32
    assert (t32 + np.array(2.0)).dtype == np.float64  # a 0-d array too, as in NumPy 2
    assert (t32 + [1.0, 2.0, 3.0]).dtype == np.float64  # a list: asarray's default dtype
    assert (t32 + 2.0).dtype == np.float32  # Python scalars stay weak
    assert (t32 + np.float64(2)).dtype == np.float64  # NumPy scalars as 0-d tensors
    assert (np.float64(2) * t32).dtype == np.float64  # on the left: __array_ufunc__
    assert isinstance(np.float32(2) - t32, Tensor)
    assert isinstance(np.float32(2) < t32, Tensor)
    ti = hf.asarray(be.asarray(np.ones(3, dtype=np.int8)))
    assert (ti + [1, 2, 3]).dtype == np.int64
    assert (ti + np.array([1, 2, 3], dtype=np.uint8)).dtype == np.int16
    assert (ti == [True, False, True]).dtype == np.bool_


def test_results_on_the_tensors_device(be):
    t = hf.asarray(be.asarray(np.ones(3)))
    for r in (t + np.ones(3), np.ones(3) + t, t * [1, 2, 3], hf.add(t, np.ones(3)),
              hf.maximum([0.0, 2.0, 0.5], t), hf.where(t > 0, t, np.zeros(3))):
        assert isinstance(r, Tensor) and r.device == be.device


def test_namespace_functions(be, rng):
    x, y = rng.standard_normal(4), rng.standard_normal(4)
    t = hf.asarray(be.asarray(x))
    check(hf.add(t, y), x + y)
    check(hf.add(y.tolist(), t), y + x)
    check(hf.atan2(t, y), np.arctan2(x, y))
    check(hf.maximum(y, t), np.maximum(y, x))
    check(hf.where(t > 0, y, t), np.where(x > 0, y, x))
    check(hf.searchsorted(hf.sort(t), y), np.searchsorted(np.sort(x), y))


def test_broadcasting_and_empty(be):
    t = hf.asarray(be.asarray(np.arange(6.0).reshape(2, 3)))
    check(t + np.arange(3.0)[None], np.arange(6.0).reshape(2, 3) + np.arange(3.0))
    check(t[:, :0] + np.zeros((2, 0)), np.zeros((2, 0)))
    check(t[:, ::2] * [[1.0], [2.0]], np.arange(6.0).reshape(2, 3)[:, ::2] * [[1.0], [2.0]])


def test_special_values(be):
    t = hf.asarray(be.asarray(np.array([np.nan, np.inf, -0.0, 1.0])))
    other = np.array([np.nan, -np.inf, 0.0, -1.0])
    check(t == other, np.array([np.nan, np.inf, -0.0, 1.0]) == other)
    r = host(t * other)
    np.testing.assert_array_equal(np.signbit(r), np.signbit(np.array([np.nan, np.inf, -0.0,
                                                                      1.0]) * other))


def test_not_operands(be):
    t = hf.asarray(be.asarray(np.ones(3)))
    for bad in ("abc", object(), {1: 2}, None):
        with pytest.raises(TypeError):
            t + bad
        with pytest.raises(TypeError):
            bad + t
        assert (t == bad) is False  # Python's fallback for a non-operand: identity
    with pytest.raises(TypeError):
        t + ["a", "b", "c"]
    with pytest.raises(TypeError):
        t + np.array(["a", "b", "c"])
    with pytest.raises(TypeError):
        t + [[1, 2], [3]]  # ragged
    with pytest.raises(TypeError):  # its mask would be lost
        hf.add(t, np.ma.masked_array([1.0, 2.0, 3.0], mask=[0, 1, 0]))


def test_foreign_arrays_name_the_remedy(be):
    class GPUArray:  # stands for a CuPy or torch array: it exports DLPack
        def __dlpack__(self, **kw):
            raise AssertionError("never read implicitly")

        def __dlpack_device__(self):
            return (2, 0)
    t = hf.asarray(be.asarray(np.ones(3)))
    with pytest.raises(TypeError, match=r"hipfer\.asarray"):
        t + GPUArray()
    with pytest.raises(TypeError, match=r"hipfer\.asarray"):
        hf.multiply(GPUArray(), t)


@pytest.mark.parametrize("dt", ["uint8", "int8", "uint64", "int64", "int16"])
@pytest.mark.parametrize("name", ["greater", "greater_equal", "less", "less_equal", "equal",
                                  "not_equal"])
def test_comparison_with_an_int_beyond_the_dtype(be, rng, dt, name):
    """NumPy 2 compares an integer array with any Python int (an int past the dtype's
    range gives one answer everywhere); arithmetic with it still overflows."""
    info = np.iinfo(dt)
    x_np = rng.integers(info.min, info.max, (4, 3), dtype=dt, endpoint=True)
    x = hf.asarray(be.asarray(x_np))
    for v in (int(info.min) - 1, int(info.max) + 1, -(2 ** 70), 2 ** 70):
        for got, want in ((getattr(hf, name)(x, v), getattr(np, name)(x_np, v)),
                          (getattr(hf, name)(v, x[::-1]), getattr(np, name)(v, x_np[::-1]))):
            assert got.dtype == np.bool_ and got.shape == want.shape
            np.testing.assert_array_equal(be.asnumpy(got), want)
    with pytest.raises(OverflowError):
        hf.add(x, int(info.max) + 1)
