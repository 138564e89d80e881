"""Sort, Argsort and Topk against Python's stable sorted() with explicit keys: both
directions, stable and not, NaN placement, -0.0 == 0.0 ties, every axis, strided
inputs and outputs."""
import math

import numpy as np
import pytest

from hipfer.prims import descriptors as d

from _util import StridedOut, assert_same, dtypes_of, random_array, run_prim

SORT_DTYPES = dtypes_of("biuf")


def _key(descending):
    """Ascending: numbers then NaN; descending: NaN then numbers, largest first. Python's
    sorted is stable, so ties keep their index order in both directions."""
    def key(v):
        v = v.item()
        nan = isinstance(v, float) and math.isnan(v)
        if descending:
            return (0, 0) if nan else (1, -v)
        return (1, 0) if nan else (0, v)
    return key


def _ref_argsort(x, axis, descending):
    x = np.moveaxis(x, axis, -1)
    out = np.empty(x.shape, np.int64)
    key = _key(descending)
    for pos in np.ndindex(*x.shape[:-1]):
        row = x[pos]
        out[pos] = sorted(range(row.size), key=lambda i: key(row[i]))
    return np.moveaxis(out, -1, axis)


def _data(rng, shape, dt):
    """Random values with many ties, and for floats NaN, +-inf, -0.0 and 0.0."""
    dt = np.dtype(dt)
    if dt.kind == "f":
        x = rng.integers(-3, 4, size=shape).astype(dt)
        flat = x.reshape(-1)
        flat[::7] = np.nan
        flat[1::11] = -0.0
        flat[2::13] = np.inf
        flat[3::17] = -np.inf
        return x
    if dt.kind in "iu":
        return random_array(rng, shape, dt, low=0 if dt.kind == "u" else -3, high=4)
    return random_array(rng, shape, dt)


def _views(be, rng, shape, dt):
    """(backend view, NumPy equivalent) of tie-rich data: contiguous, reversed, stepped,
    transposed."""
    x = _data(rng, shape, dt)
    big = _data(rng, tuple(2 * n for n in shape), dt)
    t = _data(rng, shape[::-1], dt)
    rev = tuple(slice(None, None, -1) for _ in shape)
    step = tuple(slice(None, None, 2) for _ in shape)
    return [(be.asarray(x), x), (be.asarray(x)[rev], x[rev]), (be.asarray(big)[step], big[step]),
            (be.asarray(t).T, t.T)]


@pytest.mark.parametrize("dt", SORT_DTYPES, ids=str)
@pytest.mark.parametrize("descending", [False, True], ids=["asc", "desc"])
def test_sort_and_argsort_stable(be, rng, dt, descending):
    shape = (4, 6, 9)
    for axis in (0, 1, -1):
        for x, xn in _views(be, rng, shape, dt):
            idx = _ref_argsort(xn, axis % 3, descending)
            got = run_prim(be, d.Argsort(axis, descending, True), [x])
            assert_same(got, idx)
            got = run_prim(be, d.Sort(axis, descending, True), [x])
            ref = np.take_along_axis(xn, idx, axis % 3)
            assert_same(got, ref)
            if dt.kind == "f":  # -0.0 and 0.0 kept in index order: the signs must match
                np.testing.assert_array_equal(np.signbit(got), np.signbit(ref))


@pytest.mark.parametrize("dt", SORT_DTYPES, ids=str)
@pytest.mark.parametrize("descending", [False, True], ids=["asc", "desc"])
def test_unstable_sort(be, rng, dt, descending):
    xn = _data(rng, (5, 40), dt)
    x = be.asarray(xn)
    ref = np.take_along_axis(xn, _ref_argsort(xn, 1, descending), 1)
    got = run_prim(be, d.Sort(-1, descending, False), [x])
    np.testing.assert_array_equal(got, ref)  # values (not the sign of zeros)
    idx = run_prim(be, d.Argsort(-1, descending, False), [x])
    assert idx.dtype == np.int64
    np.testing.assert_array_equal(np.sort(idx, axis=1), np.broadcast_to(np.arange(40), (5, 40)))
    np.testing.assert_array_equal(np.take_along_axis(xn, idx, 1), ref)


def test_sort_edge_shapes(be, rng):
    for shape, axis in [((0,), 0), ((3, 0), 1), ((0, 4), 1), ((1,), 0), ((5,), -1)]:
        xn = random_array(rng, shape, np.float32)
        assert_same(run_prim(be, d.Sort(axis), [be.asarray(xn)]), np.sort(xn, axis=axis))
        assert run_prim(be, d.Argsort(axis), [be.asarray(xn)]).shape == shape
    xn = _data(rng, (6, 5), np.float64)
    so = StridedOut(be, (6, 5), np.float64, "step")
    got = run_prim(be, d.Sort(0, True), [be.asarray(xn)], out=so.view)
    assert_same(got, np.take_along_axis(xn, _ref_argsort(xn, 0, True), 0))
    so.check_gaps()


# -------------------------------------------------------------------------- Topk
@pytest.mark.parametrize("dt", SORT_DTYPES, ids=str)
@pytest.mark.parametrize("largest", [True, False], ids=["largest", "smallest"])
def test_topk(be, rng, dt, largest):
    shape = (3, 10, 4)
    for axis in (1, 0, -1):
        n = shape[axis]
        for k in sorted({0, 1, 3, n}):
            if k > n:
                continue
            xn = _data(rng, shape, dt)
            x = be.asarray(xn)
            # NaN ranks above every number: first when largest, last when smallest
            idx = np.take(_ref_argsort(xn, axis % 3, largest), np.arange(k), axis=axis)
            for sorted_ in (True, False):
                vals, got_idx = run_prim(be, d.Topk(axis, k, largest, sorted_), [x])
                assert_same(got_idx, idx)
                assert_same(vals, np.take_along_axis(xn, idx, axis % 3))


def test_topk_strided(be, rng):
    xn = _data(rng, (8, 6), np.float32)
    x = be.asarray(xn)[::-2]
    values = StridedOut(be, (4, 3), np.float32, "transposed")
    indices = StridedOut(be, (4, 3), np.int64, "step")
    vals, idx = run_prim(be, d.Topk(1, 3), [x], out=(values.view, indices.view))
    ref = np.take(_ref_argsort(xn[::-2], 1, True), np.arange(3), axis=1)
    assert_same(idx, ref)
    assert_same(vals, np.take_along_axis(xn[::-2], ref, 1))
    indices.check_gaps()
