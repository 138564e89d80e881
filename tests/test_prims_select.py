"""Select (order statistics along the last axis) and Partition against NumPy's sort: every
real and bool dtype, rows long enough for the GPU's radix select and short ones (its
sort path), up to and past the select's 8 ranks a row, ranks shared by the rows or per
row, strided and transposed inputs, NaN / +-inf / -0.0 and many ties; then median,
quantile, percentile and their nan variants at those sizes, and the rules."""
import numpy as np
import pytest

import hipfer as hf
from hipfer.prims import descriptors as d
from hipfer.prims.infer import infer

from _util import random_array, run_prim

DTYPES = [np.dtype(t) for t in ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32",
                                "int64", "uint64", "float16", "float32", "float64")]
#: (rows, n, ranks a row): the select path (long rows, few ranks) and the sort path
SIZES = [(1, 5000, 1), (3, 3000, 3), (2, 2500, 8), (40, 30, 2), (2, 3000, 9)]


def _data(rng, shape, dt, pattern):
    x = random_array(rng, shape, dt, special=pattern == "special")
    if pattern == "ties":  # a few distinct values
        x = np.take(x.ravel()[:4], rng.integers(0, min(4, x.size), shape))
    if pattern == "special" and dt.kind == "f":
        flat = x.reshape(-1)
        pos = rng.choice(flat.size, size=flat.size // 5, replace=False)
        flat[pos] = rng.choice(np.array([np.nan, np.inf, -np.inf, 0.0, -0.0], dt), pos.size)
    return x


def _views(be, x):
    """(backend view, NumPy equivalent): contiguous, every other column, transposed."""
    rows, n = x.shape
    wide = np.repeat(x, 2, axis=1)
    yield be.asarray(x), x
    yield be.asarray(wide)[:, ::2], wide[:, ::2]
    yield be.xp.asarray(be.asarray(np.ascontiguousarray(x.T))).T, x


@pytest.mark.parametrize("dt", DTYPES, ids=str)
@pytest.mark.parametrize("pattern", ["random", "ties", "special"])
def test_select(be, rng, dt, pattern):
    for rows, n, q in SIZES:
        x = _data(rng, (rows, n), dt, pattern)
        s = np.sort(x, axis=-1)
        for xv, xn in _views(be, x):
            k = rng.integers(0, n, (rows, q))
            k[:, 0] = n - 1  # the largest: NaN where the row holds one
            got = run_prim(be, d.Select(), [xv, be.asarray(k)])
            np.testing.assert_array_equal(got, np.take_along_axis(s, k, axis=-1))
            shared = np.sort(rng.integers(0, n, q))  # the same ranks for every row
            kb = be.xp.broadcast_to(be.asarray(shared), (rows, q))
            got = run_prim(be, d.Select(), [xv, kb])
            np.testing.assert_array_equal(got, s[:, shared])


def test_select_nd_and_clamped(be, rng):
    x = random_array(rng, (2, 3, 1200), np.float32)
    k = rng.integers(-5, 1300, (2, 3, 2))
    got = run_prim(be, d.Select(), [be.asarray(x), be.asarray(k)])
    want = np.take_along_axis(np.sort(x, -1), np.clip(k, 0, 1199), -1)
    np.testing.assert_array_equal(got, want)


def test_select_rules():
    f32, i64 = np.dtype(np.float32), np.dtype(np.int64)
    assert infer(d.Select(), (f32, i64), ((3, 10), (3, 2))) == (((3, 2), f32),)
    with pytest.raises(TypeError, match="int64"):
        infer(d.Select(), (f32, np.dtype(np.int32)), ((3, 10), (3, 2)))
    with pytest.raises(ValueError, match="does not match"):
        infer(d.Select(), (f32, i64), ((3, 10), (2, 2)))
    with pytest.raises(ValueError, match="empty"):
        infer(d.Select(), (f32, i64), ((3, 0), (3, 1)))
    with pytest.raises(TypeError):
        infer(d.Select(), (np.dtype(np.complex64), i64), ((3, 10), (3, 1)))
    with pytest.raises(ValueError, match="kth"):
        infer(d.Partition(0, (3, 1)), (f32,), ((10,),))
    with pytest.raises(ValueError, match="kth"):
        infer(d.Partition(0, (10,)), (f32,), ((10,),))


def _le(a, b):
    """a <= b in sort order (NaN last)."""
    return (a <= b) | np.isnan(b) if a.dtype.kind == "f" else a <= b


def check_partition(p, x, kth, axis):
    """p is a partition of x along axis around every rank in kth."""
    p, x = np.moveaxis(p, axis, -1), np.moveaxis(x, axis, -1)
    s = np.sort(x, axis=-1)
    np.testing.assert_array_equal(np.sort(p, axis=-1), s)  # the same values
    for k in kth:
        np.testing.assert_array_equal(p[..., k], s[..., k])
        pk = p[..., k:k + 1]
        assert _le(p[..., :k], pk).all() and _le(pk, p[..., k + 1:]).all()


@pytest.mark.parametrize("dt", DTYPES, ids=str)
@pytest.mark.parametrize("pattern", ["random", "ties", "special"])
def test_partition(be, rng, dt, pattern):
    for shape, axis in (((4000,), 0), ((3, 2600), 1), ((2600, 2), 0), ((30, 20), 1)):
        x = _data(rng, shape, dt, pattern)
        n = shape[axis]
        t = be.asarray(x)
        for kth in ((0,), (n // 2,), (n - 1,), (3, n // 3, n - 2),
                    tuple(np.unique(rng.integers(0, n, 12)))):
            p = run_prim(be, d.Partition(axis, kth), [t])
            check_partition(p, x, kth, axis)
            idx = run_prim(be, d.Partition(axis, kth, indices=True), [t])
            assert idx.dtype == np.int64
            np.testing.assert_array_equal(np.sort(idx, axis=axis),
                                          np.broadcast_to(np.expand_dims(np.arange(n), 1 - axis)
                                                          if len(shape) == 2 else np.arange(n),
                                                          shape))
            check_partition(np.take_along_axis(x, idx, axis=axis), x, kth, axis)


def test_partition_namespace(be, rng):
    x = random_array(rng, (5, 3000), np.float32, special=True)
    t = hf.asarray(x)
    for kth, axis in ((1500, 1), ([-1, 0, 7], 1), (2, 0), (10, None)):
        p = be.asnumpy(hf.partition(t, kth, axis=axis))
        xs = x.ravel() if axis is None else x
        ax = 0 if axis is None else axis
        ks = sorted({k % xs.shape[ax] for k in np.atleast_1d(kth).tolist()})
        check_partition(p, xs, ks, ax)
        i = be.asnumpy(hf.argpartition(t, kth, axis=axis))
        check_partition(np.take_along_axis(xs, i, axis=ax), xs, ks, ax)
        check_partition(be.asnumpy(np.partition(t, kth, axis=axis)), xs, ks, ax)  # NEP 18
    empty = np.array([], dtype=np.int64)  # no rank: NumPy's identity
    for axis in (0, 1, None):
        np.testing.assert_array_equal(be.asnumpy(hf.partition(t, empty, axis=axis)),
                                      np.partition(x, empty, axis=axis))
        np.testing.assert_array_equal(be.asnumpy(hf.argpartition(t, empty, axis=axis)),
                                      np.argpartition(x, empty, axis=axis))


@pytest.mark.parametrize("dt", ["int16", "uint32", "int64", "float16", "float32", "float64"])
def test_order_statistics_functions(be, rng, dt):
    """median, quantile, percentile, nanmedian, nanquantile on rows the select takes."""
    dt = np.dtype(dt)
    x = random_array(rng, (3, 4001), dt, low=0 if dt.kind == "u" else -1000, high=1000) \
        if dt.kind in "iu" \
        else random_array(rng, (3, 4001), dt)
    t = hf.asarray(x)
    for axis in (None, 1, 0):
        np.testing.assert_allclose(be.asnumpy(hf.median(t, axis=axis)), np.median(x, axis=axis),
                                   rtol=1e-3 if dt == np.float16 else 1e-12)
        for method in ("linear", "nearest", "hazen", "midpoint"):
            q = [0.1, 0.5, 0.99]
            np.testing.assert_allclose(be.asnumpy(hf.quantile(t, q, axis=axis, method=method)),
                                       np.quantile(x, q, axis=axis, method=method),
                                       rtol=1e-3 if dt == np.float16 else 1e-12)
        np.testing.assert_allclose(be.asnumpy(hf.percentile(t, 37.5, axis=axis)),
                                   np.percentile(x, 37.5, axis=axis),
                                   rtol=1e-3 if dt == np.float16 else 1e-12)
    if dt.kind == "f":
        x[0, ::7] = np.nan
        x[1, 5] = np.nan
        x[2, :] = np.nan
        t = hf.asarray(x)
        np.testing.assert_array_equal(be.asnumpy(hf.median(t, axis=1)), np.median(x, axis=1))
        with pytest.warns(RuntimeWarning):
            got = be.asnumpy(hf.nanmedian(t, axis=1))
        with pytest.warns(RuntimeWarning):
            want = np.nanmedian(x, axis=1)
        np.testing.assert_allclose(got, want, rtol=1e-3 if dt == np.float16 else 1e-12)
        with pytest.warns(RuntimeWarning):
            got = be.asnumpy(hf.nanquantile(t, [0.25, 0.75], axis=1))
        with pytest.warns(RuntimeWarning):
            want = np.nanquantile(x, [0.25, 0.75], axis=1)
        np.testing.assert_allclose(got, want, rtol=1e-3 if dt == np.float16 else 1e-12)
