"""Details of the array API 2025.12 on every backend: tuples from meshgrid, broadcast_arrays
and the inspection namespace's devices() (which also adds to a list, as SciPy's test
fixtures write ``devices() + [None]``), dtypes() listing only the standard's dtypes
(float16 on request), floor_divide / ``//`` / ``//=`` with the standard's answers at
infinite operands (remainder beside it), complex expm1 at signed zeros, and linspace
with 0-d tensor bounds computed on their device.
"""
from __future__ import annotations

import math
import pickle

import array_api_strict as xps
import numpy as np
import pytest

import hipfer as hf
from hipfer._device import Device

nan, inf = math.nan, math.inf
FLOATS = [np.float16, np.float32, np.float64]


def host(t):
    return np.asarray(t.to_device("cpu"))


def same_bits(got, want):
    """Equal values, NaN where NaN, the sign of every zero: compared as bytes."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)
    if got.dtype.kind in "fc":  # one NaN bit pattern
        got, want = (np.where(np.isnan(x), np.array(nan, x.dtype), x) for x in (got, want))
    assert got.tobytes() == want.tobytes(), (got, want)


# ------------------------------------------------------------------ tuples
def test_meshgrid_and_broadcast_arrays_return_tuples(be, rng):
    x, y = rng.standard_normal(3), rng.standard_normal(4)
    tx, ty = hf.asarray(x), hf.asarray(y)
    for indexing in ("xy", "ij"):
        out = hf.meshgrid(tx, ty, indexing=indexing)
        want = xps.meshgrid(xps.asarray(x), xps.asarray(y), indexing=indexing)
        assert type(out) is tuple and type(want) is tuple and len(out) == len(want)
        for t, w in zip(out, want):
            assert t.device == be.device
            same_bits(host(t), np.asarray(w))
    assert hf.meshgrid() == () and type(hf.meshgrid(tx)) is tuple
    out = hf.broadcast_arrays(hf.reshape(tx, (3, 1)), ty)
    assert type(out) is tuple and [t.shape for t in out] == [(3, 4), (3, 4)]
    assert hf.broadcast_arrays() == ()


# ------------------------------------------------------------------ inspection
def test_devices_is_a_tuple_that_adds_lists():
    devs = hf.__array_namespace_info__().devices()
    assert isinstance(devs, tuple) and devs[0] == Device("cpu")
    assert all(isinstance(d, Device) for d in devs)
    for got, want in [(devs + (None,), (*devs, None)), (devs + [None], (*devs, None)),
                      ([None] + devs, (None, *devs)), ((None,) + devs, (None, *devs))]:
        assert isinstance(got, tuple) and tuple(got) == want
    assert tuple(devs + [None] + [1]) == (*devs, None, 1)  # still adds lists afterwards
    with pytest.raises(TypeError):
        devs + 1
    assert tuple(pickle.loads(pickle.dumps(devs))) == tuple(devs)


def test_dtypes_are_the_standards():
    info, strict = hf.__array_namespace_info__(), xps.__array_namespace_info__()
    assert set(info.dtypes()) == set(strict.dtypes())
    for kind in ("bool", "signed integer", "unsigned integer", "integral", "real floating",
                 "complex floating", "numeric", ("bool", "real floating")):
        assert set(info.dtypes(kind=kind)) == set(strict.dtypes(kind=kind)), kind
    assert set(info.default_dtypes()) == set(strict.default_dtypes())
    # float16, hipfer's extension: only when asked for, with its kind
    assert "float16" not in info.dtypes(device="cpu")
    ext = info.dtypes(extensions=True)
    assert set(ext) == set(info.dtypes()) | {"float16"} and ext["float16"] == hf.float16
    assert set(info.dtypes(kind="real floating", extensions=True)) == {"float16", "float32", "float64"}
    assert info.dtypes(kind="integral", extensions=True) == info.dtypes(kind="integral")


# ------------------------------------------------------------ floor_divide
def _spec_floor_divide(a, b):
    """The standard's floor_divide on floats: floor(a / b) where an operand is infinite (a / b
    is integral there), NumPy's floor division elsewhere."""
    with np.errstate(all="ignore"):
        return np.where(np.isinf(a) | np.isinf(b), a / b, np.floor_divide(a, b)).astype(a.dtype)


_EDGE = [inf, -inf, nan, 0.0, -0.0, 2.0, -2.0, 0.5, -0.5, 7.0, -7.0, 1e-3, -3e4]


def _edge_grid(dt):
    a, b = np.meshgrid(np.array(_EDGE, dt), np.array(_EDGE, dt))
    return a.ravel(), b.ravel()


@pytest.mark.parametrize("dt", FLOATS, ids=str)
def test_floor_divide_function_operator_and_in_place(be, dt):
    a, b = _edge_grid(dt)
    want = _spec_floor_divide(a, b)
    ta, tb = hf.asarray(a), hf.asarray(b)
    same_bits(host(hf.floor_divide(ta, tb)), want)
    same_bits(host(ta // tb), want)
    c = hf.asarray(a, copy=True)
    c //= tb
    same_bits(host(c), want)
    # views: reversed and stepped operands, and out aliasing the dividend
    same_bits(host(ta[::-1] // tb[::-1]), want[::-1])
    same_bits(host(ta[::3] // tb[::3]), want[::3])


@pytest.mark.parametrize("dt", [np.float32, np.float64], ids=str)
@pytest.mark.parametrize("s", [inf, -inf, 2.0, -0.5, 0.0, -0.0])
def test_floor_divide_python_scalars_both_orders(be, dt, s):
    a = np.array(_EDGE, dt)
    ta = hf.asarray(a)
    sa = np.full_like(a, s)
    same_bits(host(ta // s), _spec_floor_divide(a, sa))
    same_bits(host(s // ta), _spec_floor_divide(sa, a))
    same_bits(host(hf.floor_divide(s, ta)), _spec_floor_divide(sa, a))
    c = hf.asarray(a, copy=True)
    c //= s
    same_bits(host(c), _spec_floor_divide(a, sa))


def test_floor_divide_broadcast_0d_empty(be, rng):
    a = np.array([inf, -3.0, 2.5, -inf])[:, None]
    b = np.array([-inf, 2.0, inf])
    same_bits(host(hf.asarray(a) // hf.asarray(b)), _spec_floor_divide(*np.broadcast_arrays(a, b)))
    z = hf.asarray(np.float64(inf)) // hf.asarray(np.float64(-2.0))
    assert z.shape == () and host(z) == -inf
    assert (hf.zeros((0, 3)) // hf.ones(3)).shape == (0, 3)
    # the finite cases stay NumPy's (and integers are untouched)
    x, y = rng.standard_normal(50) * 10, rng.standard_normal(50)
    same_bits(host(hf.asarray(x) // hf.asarray(y)), np.floor_divide(x, y))
    i, j = rng.integers(-100, 100, 50), rng.integers(1, 9, 50)
    same_bits(host(hf.asarray(i) // hf.asarray(j)), i // j)
    assert math.isinf(float(hf.asarray(inf) // 2)) and float(hf.asarray(2.0) // -inf) == 0.0


@pytest.mark.parametrize("dt", [np.float32, np.float64], ids=str)
def test_remainder_matches_python_at_infinities(be, dt):
    """The standard: remainder is Python's % (and NaN where Python raises for x % 0)."""
    a, b = _edge_grid(dt)
    want = np.array([x % y if y != 0 else nan for x, y in zip(a.tolist(), b.tolist())], dt)
    same_bits(host(hf.remainder(hf.asarray(a), hf.asarray(b))), want)
    same_bits(host(hf.asarray(a) % hf.asarray(b)), want)


# ------------------------------------------------------------------ expm1
@pytest.mark.parametrize("dt", [np.complex64, np.complex128], ids=str)
def test_complex_expm1_at_zeros_and_near(be, rng, dt):
    z = np.array([complex(0.0, 0.0), complex(-0.0, 0.0), complex(0.0, -0.0), complex(-0.0, -0.0)], dt)
    got = host(hf.expm1(hf.asarray(z)))
    assert not np.signbit(got.real).any()  # the standard: 0 + 0j, also at -0 + 0j
    assert (np.signbit(got.imag) == np.signbit(z.imag)).all()  # conj(expm1(z)) == expm1(conj(z))
    # elsewhere the fix-ups leave NumPy's values alone
    w = (rng.standard_normal(20) + 1j * rng.standard_normal(20)).astype(dt)
    w[:3] = [complex(-0.0, 1e-3), complex(1e-30, -0.0), complex(-2.0, 0.0)]
    np.testing.assert_allclose(host(hf.expm1(hf.asarray(w))), np.expm1(w), rtol=4 * np.finfo(dt).eps)


# ------------------------------------------------------------------ linspace
_BOUNDS = [(0.0, 1.0), (-3.5, 7.25), (2.0, 2.0), (1e-300, 1e-300 + 1e-310), (inf, 1.0)]


@pytest.mark.parametrize("start,stop", _BOUNDS)
def test_linspace_with_0d_tensor_bounds(be, start, stop):
    for num in (0, 1, 2, 7):
        for endpoint in (True, False):
            for dtype in (None, hf.float32):
                want = host(hf.linspace(start, stop, num, endpoint=endpoint, dtype=dtype))
                for args in [(hf.asarray(start), hf.asarray(stop)), (hf.asarray(start), stop),
                             (start, hf.asarray(stop))]:
                    got = hf.linspace(*args, num, endpoint=endpoint, dtype=dtype)
                    assert got.device == be.device
                    same_bits(host(got), want)  # the scalar path's values exactly


def test_linspace_0d_tensor_bounds_against_strict(be):
    got = hf.linspace(hf.asarray(0.0), hf.asarray(1.0), 5)
    want = xps.linspace(xps.asarray(0.0), xps.asarray(1.0), 5)
    same_bits(host(got), np.asarray(want))
    z = hf.linspace(hf.asarray(1 + 2j), hf.asarray(3 - 1j, dtype=hf.complex64), 4, endpoint=False)
    assert z.dtype == hf.complex128
    np.testing.assert_allclose(host(z), np.linspace(1 + 2j, 3 - 1j, 4, endpoint=False), rtol=1e-15)
    i = hf.linspace(hf.asarray(0, dtype=hf.int32), hf.asarray(np.float32(3)), 4)
    assert i.dtype == hf.float64 and host(i).tolist() == [0.0, 1.0, 2.0, 3.0]


def test_linspace_0d_bounds_read_nothing_to_the_host(be, monkeypatch):
    def refuse(self, *args, **kwargs):
        raise AssertionError("linspace read a tensor's value to the host")
    for name in ("__array__", "__bool__", "__float__", "__complex__", "__int__", "__index__",
                 "item", "tolist"):
        if hasattr(hf.Tensor, name):
            monkeypatch.setattr(hf.Tensor, name, refuse)
    y = hf.linspace(hf.asarray(-1.0), hf.asarray(1.0), 9)
    monkeypatch.undo()
    assert y.device == be.device
    same_bits(host(y), np.linspace(-1.0, 1.0, 9))


def test_linspace_bound_errors(be):
    # NumPy's array bounds: a new leading axis (tests/test_numpy_creation.py checks values)
    assert hf.linspace(hf.asarray([0.0, 1.0]), 1.0, 3).shape == (3, 2)
    with pytest.raises(TypeError, match="linspace"):
        hf.linspace(hf.asarray(1j), 1.0, 3, dtype=hf.float64)
    with pytest.raises(TypeError, match="linspace"):
        hf.linspace(True, 1.0, 3)
