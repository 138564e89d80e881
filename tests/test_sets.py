"""unique_all / unique_counts / unique_inverse / unique_values and isin against NumPy:
dtypes, ties, every NaN distinct, -0.0 == 0.0, N-d and non-contiguous inputs, 0-d and
empty tensors."""
import numpy as np
import pytest

import hipfer as hf

from _util import assert_same, dtypes_of, ids, layouts

REAL = dtypes_of("biuf")


def host(t):
    return np.asarray(t.to_device("cpu"))


def tie_data(rng, shape, dt):
    dt = np.dtype(dt)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    x = rng.integers(0 if dt.kind == "u" else -4, 5, size=shape).astype(dt)
    if dt.kind == "f" and x.size:
        flat = x.reshape(-1)
        flat[rng.random(flat.size) < 0.15] = -0.0
        flat[rng.random(flat.size) < 0.1] = np.nan
        flat[rng.random(flat.size) < 0.05] = -np.inf
    return x


def ref(x):
    """NumPy's sorted unique with first indices, inverse (x's shape) and counts."""
    v, i, inv, c = np.unique(x.reshape(-1), return_index=True, return_inverse=True,
                             return_counts=True, equal_nan=False)
    return v, i.astype(np.int64), inv.reshape(x.shape).astype(np.int64), c.astype(np.int64)


def check_all(x, t):
    v, i, inv, c = ref(x)
    r = hf.unique_all(t)
    assert_same(host(r.values), v)
    assert_same(host(r.indices), i)
    assert_same(host(r.inverse_indices), inv)
    assert_same(host(r.counts), c)
    assert_same(host(hf.unique_values(t)), v)
    rc = hf.unique_counts(t)
    assert_same(host(rc.values), v)
    assert_same(host(rc.counts), c)
    ri = hf.unique_inverse(t)
    assert_same(host(ri.values), v)
    assert_same(host(ri.inverse_indices), inv)


@pytest.mark.parametrize("dt", REAL, ids=ids(REAL))
def test_unique(be, rng, dt):
    for lname, xb, xn in layouts(be, rng, (5, 6), dt):
        xn = tie_data(rng, xn.shape, dt)
        xb[...] = be.asarray(xn)
        check_all(xn, hf.asarray(xb))


def test_unique_nan_zero_signs_0d_empty(be, rng):
    x = np.array([np.nan, 0.0, -0.0, 1.0, np.nan, 0.0, -np.inf])
    check_all(x, hf.asarray(x))
    r = hf.unique_counts(hf.asarray(x))
    assert host(r.counts).tolist() == [1, 3, 1, 1, 1]  # -inf, zeros, 1, NaN, NaN
    s = np.float32(2.5)
    check_all(np.asarray(s), hf.asarray(s))
    for shape in ((0,), (2, 0)):
        e = np.zeros(shape, np.int32)
        r = hf.unique_all(hf.asarray(e))
        assert host(r.values).shape == (0,) and host(r.values).dtype == np.int32
        assert host(r.indices).shape == (0,) and host(r.counts).shape == (0,)
        assert host(r.inverse_indices).shape == shape
        assert host(r.inverse_indices).dtype == np.int64


def test_unique_errors(be):
    with pytest.raises(TypeError):
        hf.unique_all(np.ones(3))


def complex_ties(rng, shape, dt):
    """Complex values with ties in the real part, the imaginary part, both; NaN parts."""
    x = (rng.integers(-2, 3, shape) + 1j * rng.integers(-2, 3, shape)).astype(dt)
    flat = x.reshape(-1)
    flat[rng.random(flat.size) < 0.1] = complex(np.nan, 1.0)
    flat[rng.random(flat.size) < 0.1] = complex(-0.0, 0.0)
    return x


@pytest.mark.parametrize("dt", [np.complex64, np.complex128], ids=str)
def test_unique_and_isin_complex(be, rng, dt):
    x = complex_ties(rng, (6, 7), dt)
    t = hf.asarray(x)
    r = hf.unique_all(t)
    v, c = host(r.values), host(r.counts)
    keep = ~np.isnan(v)  # NaN-part values are each distinct (count 1 each)
    ref_v, ref_c = np.unique(x[~np.isnan(x)], return_counts=True)
    np.testing.assert_array_equal(v[keep], ref_v)
    np.testing.assert_array_equal(c[keep], ref_c)
    assert (~keep).sum() == np.isnan(x).sum() and (c[~keep] == 1).all()
    np.testing.assert_array_equal(v[host(r.inverse_indices)][~np.isnan(x)], x[~np.isnan(x)])
    np.testing.assert_array_equal(x.reshape(-1)[host(r.indices)][keep], ref_v)
    np.testing.assert_array_equal(host(hf.unique_values(hf.conj(t)))[:3],
                                  np.unique(np.conj(x)[~np.isnan(x)])[:3])
    x2 = complex_ties(rng, (5,), dt)
    for invert in (False, True):
        assert_same(host(hf.isin(t, hf.asarray(x2), invert=invert)),
                    np.isin(x, x2, invert=invert))


@pytest.mark.parametrize("dt", REAL, ids=ids(REAL))
def test_isin(be, rng, dt):
    x1 = tie_data(rng, (4, 5), dt)
    x2 = tie_data(rng, (7,), dt)
    for invert in (False, True):
        got = host(hf.isin(hf.asarray(x1), hf.asarray(x2), invert=invert))
        assert_same(got, np.isin(x1, x2, invert=invert))
        got = host(hf.isin(hf.asarray(be.asarray(x1).T), hf.asarray(x2.reshape(7, 1)), invert=invert))
        assert_same(got, np.isin(x1.T, x2, invert=invert))


def test_isin_scalars_nan_empty(be):
    a = np.array([1, 5, 9], np.int32)
    assert_same(host(hf.isin(hf.asarray(a), 5)), np.array([False, True, False]))
    assert_same(host(hf.isin(5, hf.asarray(a))), np.bool_(True))
    f = np.array([np.nan, 0.0, 2.0])
    assert_same(host(hf.isin(hf.asarray(f), hf.asarray(np.array([np.nan, -0.0])))),
                np.array([False, True, False]))
    assert_same(host(hf.isin(hf.asarray(f), hf.asarray(np.array([np.nan])), invert=True)),
                np.array([True, True, True]))
    assert_same(host(hf.isin(hf.asarray(a), hf.asarray(np.zeros(0, np.int32)))),
                np.zeros(3, bool))
    assert host(hf.isin(hf.asarray(np.zeros((0, 2))), hf.asarray(f))).shape == (0, 2)
