"""NumPy's set routines in hipfer (unique with its flags and axis=, union1d, intersect1d,
setdiff1d, setxor1d, isin with NumPy's keywords) against NumPy: dtypes, ties, NaN,
-0.0, N-d and non-contiguous inputs, empty and 0-d tensors, np.<name> dispatch."""
import numpy as np
import pytest

import hipfer as hf

from _util import dtypes_of, ids

REAL = dtypes_of("biuf")
ALL = REAL + dtypes_of("c")


def host(t):
    return np.asarray(t.to_device("cpu"))


def tie_data(rng, shape, dt, nan=True):
    """Small values with many repeats; floats get -0.0, NaN and -inf sprinkled in."""
    dt = np.dtype(dt)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    x = rng.integers(0 if dt.kind == "u" else -4, 5, size=shape).astype(dt)
    if dt.kind == "c":
        x = (x + 1j * rng.integers(-1, 2, size=shape)).astype(dt)
        if nan and x.size:  # NaN real and/or imaginary parts: NumPy's complex NaN order
            flat = x.reshape(-1)
            flat[rng.random(flat.size) < 0.1] = complex(np.nan, 1)
            flat[rng.random(flat.size) < 0.1] = complex(2, np.nan)
            flat[rng.random(flat.size) < 0.05] = complex(np.nan, np.nan)
        return x
    if dt.kind == "f" and x.size:
        flat = x.reshape(-1)
        flat[rng.random(flat.size) < 0.15] = -0.0
        if nan:
            flat[rng.random(flat.size) < 0.1] = np.nan
        flat[rng.random(flat.size) < 0.05] = -np.inf
    return x


def same(got, want):
    assert isinstance(got, hf.Tensor)
    want = np.asarray(want)
    g = host(got)
    if want.dtype.kind in "iu" and g.dtype == np.int64:  # NumPy's intp indices
        want = want.astype(np.int64)
    assert g.dtype == want.dtype, (g.dtype, want.dtype)
    assert g.shape == want.shape, (g.shape, want.shape)
    np.testing.assert_array_equal(g, want)


def same_all(got, want):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        same(g, w)


FLAGS = [dict(), dict(return_index=True), dict(return_inverse=True), dict(return_counts=True),
         dict(return_index=True, return_inverse=True, return_counts=True)]


@pytest.mark.parametrize("dt", ALL, ids=ids(ALL))
@pytest.mark.parametrize("equal_nan", [True, False])
def test_unique_flat(be, rng, dt, equal_nan):
    x = tie_data(rng, (4, 6), dt)
    t = hf.asarray(be.asarray(x))
    for kw in FLAGS:
        if kw == dict(return_inverse=True) and not equal_nan:
            continue  # NumPy's unstable sort then numbers the distinct NaNs in any order
        same_all(hf.unique(t, equal_nan=equal_nan, **kw), np.unique(x, equal_nan=equal_nan, **kw))
    v, inv = hf.unique(t, return_inverse=True, equal_nan=equal_nan)
    np.testing.assert_array_equal(host(v)[host(inv)], x)  # values[inverse] rebuilds x
    # non-contiguous views
    same_all(hf.unique(t[::2, ::-3], return_index=True, return_inverse=True),
             np.unique(x[::2, ::-3], return_index=True, return_inverse=True))
    same_all(hf.unique(t.mT, return_inverse=True), np.unique(x.T, return_inverse=True))


@pytest.mark.parametrize("shape", [(), (0,), (1,), (0, 3)])
def test_unique_small(be, rng, shape):
    x = tie_data(rng, shape, np.float32)
    t = hf.asarray(be.asarray(x))
    for kw in FLAGS:
        same_all(hf.unique(t, **kw), np.unique(x, **kw))


@pytest.mark.parametrize("dt", ALL, ids=ids(ALL))
@pytest.mark.parametrize("shape,axis", [((6, 3), 0), ((3, 6), 1), ((2, 5, 2), 1), ((4, 2), -1),
                                        ((5,), 0), ((3, 0), 0)])
def test_unique_axis(be, rng, dt, shape, axis):
    x = tie_data(rng, shape, dt, nan=False)
    if np.dtype(dt).kind in "iuf":
        with np.errstate(invalid="ignore"):  # -inf % 2, discarded
            x = np.where(np.isfinite(x), x % 2, x).astype(dt)  # few distinct slices: repeats
    t = hf.asarray(be.asarray(x))
    for kw in FLAGS:
        same_all(hf.unique(t, axis=axis, **kw), np.unique(x, axis=axis, **kw))


def test_unique_errors(be):
    t = hf.asarray(be.asarray(np.arange(6).reshape(2, 3)))
    with pytest.raises(np.exceptions.AxisError):
        hf.unique(t, axis=2)
    with pytest.raises(TypeError):
        hf.unique(t, axis=1.5)


@pytest.mark.parametrize("dt", REAL, ids=ids(REAL))
def test_set_ops(be, rng, dt):
    a, b = tie_data(rng, (3, 5), dt), tie_data(rng, (7,), dt)
    ta, tb = hf.asarray(be.asarray(a)), hf.asarray(be.asarray(b))
    same(hf.union1d(ta, tb), np.union1d(a, b))
    same(hf.intersect1d(ta, tb), np.intersect1d(a, b))
    same_all(hf.intersect1d(ta, tb, return_indices=True), np.intersect1d(a, b, return_indices=True))
    same(hf.setdiff1d(ta, tb), np.setdiff1d(a, b))
    same(hf.setxor1d(ta, tb), np.setxor1d(a, b))
    # assume_unique with inputs that are unique
    ua, ub = np.unique(a), np.unique(b)
    if dt.kind == "f":
        ua, ub = ua[~np.isnan(ua)], ub[~np.isnan(ub)]
    tua, tub = hf.asarray(be.asarray(ua[::-1].copy())), hf.asarray(be.asarray(ub))
    ua = ua[::-1]
    same(hf.intersect1d(tua, tub, assume_unique=True), np.intersect1d(ua, ub, assume_unique=True))
    same_all(hf.intersect1d(tua, tub, assume_unique=True, return_indices=True),
             np.intersect1d(ua, ub, assume_unique=True, return_indices=True))
    same(hf.setdiff1d(tua, tub, assume_unique=True), np.setdiff1d(ua, ub, assume_unique=True))
    same(hf.setxor1d(tua, tub, assume_unique=True), np.setxor1d(ua, ub, assume_unique=True))


def test_set_ops_mixed_and_empty(be, rng):
    a = tie_data(rng, (6,), np.int32)
    ta = hf.asarray(be.asarray(a))
    b = [1, 2, 9]
    same(hf.union1d(ta, b), np.union1d(a, b))
    same(hf.setdiff1d(ta, b), np.setdiff1d(a, b))
    same(hf.setxor1d(ta, b), np.setxor1d(a, b))
    same(hf.intersect1d(b, ta), np.intersect1d(b, a))
    e = np.zeros((0,), np.int32)
    te = hf.asarray(be.asarray(e))
    for fn in ("union1d", "intersect1d", "setdiff1d", "setxor1d"):
        same(getattr(hf, fn)(te, te), getattr(np, fn)(e, e))
        same(getattr(hf, fn)(ta, te), getattr(np, fn)(a, e))


@pytest.mark.parametrize("dt", ALL, ids=ids(ALL))
def test_isin_numpy_keywords(be, rng, dt):
    x, y = tie_data(rng, (3, 4), dt), tie_data(rng, (5,), dt)
    tx, ty = hf.asarray(be.asarray(x)), hf.asarray(be.asarray(y))
    for kw in (dict(), dict(invert=True), dict(assume_unique=False, invert=True),
               dict(kind="sort")):
        same(hf.isin(tx, ty, **kw), np.isin(x, y, **kw))
    same(np.isin(tx[:, ::-2], ty[::2], False, True), np.isin(x[:, ::-2], y[::2], False, True))
    if np.dtype(dt).kind in "biu":
        same(hf.isin(tx, ty, kind="table"), np.isin(x, y, kind="table"))
    else:
        with pytest.raises(ValueError):
            hf.isin(tx, ty, kind="table")
    with pytest.raises(ValueError):
        hf.isin(tx, ty, kind="hash")


def test_isin_array_like(be, rng):
    x = tie_data(rng, (4,), np.int64)
    tx = hf.asarray(be.asarray(x))
    same(hf.isin(tx, [0, 1]), np.isin(x, [0, 1]))
    same(hf.isin([0, 1, 7], tx), np.isin([0, 1, 7], x))
    same(hf.isin(tx, 2), np.isin(x, 2))


# ------------------------------------------------------------------ NumPy dispatch
def test_numpy_dispatch(be, rng, refuse_host):
    a = tie_data(rng, (3, 4), np.float64)
    b = tie_data(rng, (5,), np.float64)
    ta, tb = hf.asarray(be.asarray(a)), hf.asarray(be.asarray(b))
    r = np.unique(ta, return_counts=True, return_inverse=True)
    w = np.unique(a, return_counts=True, return_inverse=True)
    for g, e in zip(r, w):
        assert isinstance(g, hf.Tensor)
        np.testing.assert_array_equal(be.asnumpy(g), e)
    for name in ("union1d", "intersect1d", "setdiff1d", "setxor1d", "isin"):
        g = getattr(np, name)(ta, tb)
        assert isinstance(g, hf.Tensor), name
        np.testing.assert_array_equal(be.asnumpy(g), getattr(np, name)(a, b))
    g = np.isin(ta, tb, invert=True, kind="sort")
    np.testing.assert_array_equal(be.asnumpy(g), np.isin(a, b, invert=True))
    r = np.unique(ta.astype(hf.int32) if hasattr(ta, "astype") else ta, axis=0)
    assert isinstance(r, hf.Tensor)
