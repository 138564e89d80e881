"""cumulative_sum / cumulative_prod against NumPy (namespace and the Cumulative prim):
dtypes and the standard's dtype rules, axes, include_initial, layouts, conjugation,
empty and long axes (the GPU's tiled scan), and bit-for-bit repeatability."""
import numpy as np
import pytest

import hipfer as hf
from hipfer.prims import descriptors as d

from _util import (StridedOut, assert_accumulated, assert_same, dtypes_of, ids, layouts,
                   random_array, run_prim)

ALL = dtypes_of("biufc")


def host(t):
    return np.asarray(t.to_device("cpu"))


def small(rng, shape, dt):
    """Values whose running products stay finite (ints in [-2, 2], floats near 1)."""
    dt = np.dtype(dt)
    if dt.kind in "iu":
        return random_array(rng, shape, dt, low=0 if dt.kind == "u" else -2, high=2)
    if dt.kind in "fc":
        return (random_array(rng, shape, dt, scale=0.3) + 1).astype(dt)
    return random_array(rng, shape, dt)


def reference(x, op, axis, dtype, include_initial):
    fn = np.cumulative_sum if op == "sum" else np.cumulative_prod
    if x.dtype == np.bool_ and dtype == np.bool_:  # bool in bool: or / and
        r = (np.logical_or if op == "sum" else np.logical_and).accumulate(x, axis=axis)
        if include_initial:
            pad = np.zeros if op == "sum" else np.ones
            shape = list(x.shape)
            shape[axis] = 1
            r = np.concatenate([pad(shape, bool), r], axis=axis)
        return r
    return fn(x, axis=axis, dtype=dtype, include_initial=include_initial)


def check(got, want, x, op, axis, init=False):
    """Exact for bool / int results; floats within rounding: sums relative to the running
    sum of magnitudes, products relative to the product itself."""
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if want.dtype.kind not in "fc":
        assert_same(got, want)
        return
    if op == "sum":
        mag = np.cumulative_sum(np.abs(x).astype(np.float64), axis=axis, include_initial=init)
    else:
        mag = np.abs(want).astype(np.float64)
    assert_accumulated(got, want, mag, want.dtype)


def expected_dtype(dt):
    dt = np.dtype(dt)
    return {"b": np.dtype(np.int64), "i": np.dtype(np.int64), "u": np.dtype(np.uint64)}.get(dt.kind, dt)


@pytest.mark.parametrize("op", ["sum", "prod"])
@pytest.mark.parametrize("dt", ALL, ids=ids(ALL))
def test_cumulative(be, rng, op, dt):
    fn = hf.cumulative_sum if op == "sum" else hf.cumulative_prod
    for lname, xb, xn in layouts(be, rng, (4, 6), dt):
        xn = small(rng, xn.shape, dt)
        xb[...] = be.asarray(xn)
        t = hf.asarray(xb)
        for axis in (0, 1, -1):
            for init in (False, True):
                got = host(fn(t, axis=axis, include_initial=init))
                want = reference(xn, op, axis % 2, expected_dtype(dt), init)
                assert got.dtype == expected_dtype(dt)
                check(got, want, xn, op, axis, init)


@pytest.mark.parametrize("op", ["sum", "prod"])
def test_cumulative_dtype_argument_and_wrap(be, rng, op):
    fn = hf.cumulative_sum if op == "sum" else hf.cumulative_prod
    # full-range int8: sums and products wrap in the requested integer dtype
    x = random_array(rng, (50,), np.int8) if op == "sum" else small(rng, (50,), np.int8)
    for dt in (np.int8, np.int16, np.uint8, np.float32, np.float64):
        got = host(fn(hf.asarray(x), dtype=dt))
        want = reference(x.astype(dt), op, 0, np.dtype(dt), False)
        check(got, want, x.astype(dt), op, 0)
    w = random_array(rng, (40,), np.int8)
    assert_same(host(fn(hf.asarray(w), dtype=np.int8)), reference(w, op, 0, np.dtype(np.int8), False))
    b = random_array(rng, (9,), np.bool_)
    assert_same(host(fn(hf.asarray(b), dtype=hf.bool)), reference(b, op, 0, np.dtype(bool), False))


def test_cumulative_1d_axis_optional_and_errors(be, rng):
    x = rng.standard_normal(7)
    check(host(hf.cumulative_sum(hf.asarray(x))), np.cumulative_sum(x), x, "sum", 0)
    with pytest.raises(ValueError):
        hf.cumulative_sum(hf.asarray(np.ones((2, 3))))  # axis required for N-d
    with pytest.raises(ValueError):
        hf.cumulative_prod(hf.asarray(np.float64(1.0)))  # 0-d
    with pytest.raises(IndexError):
        hf.cumulative_sum(hf.asarray(np.ones((2, 3))), axis=2)


def test_cumulative_empty(be):
    for shape, axis in (((0,), 0), ((3, 0), 1), ((0, 4), 1), ((0, 4), 0)):
        x = np.zeros(shape, np.float32)
        for init in (False, True):
            for op, fn in (("sum", hf.cumulative_sum), ("prod", hf.cumulative_prod)):
                got = host(fn(hf.asarray(x), axis=axis, include_initial=init))
                assert_same(got, reference(x, op, axis, np.dtype(np.float32), init))


def test_cumulative_conjugated_and_broadcast(be, rng):
    x = random_array(rng, (3, 5), np.complex128)
    got = host(hf.cumulative_sum(hf.conj(hf.asarray(x)), axis=1))
    check(got, np.cumulative_sum(np.conj(x), axis=1), x, "sum", 1)
    row = rng.standard_normal(5)
    b = hf.asarray(be.xp.broadcast_to(be.asarray(row), (4, 5)))  # stride-0 lines
    want = np.cumulative_sum(np.broadcast_to(row, (4, 5)), axis=0)
    check(host(hf.cumulative_sum(b, axis=0)), want, np.broadcast_to(row, (4, 5)), "sum", 0)


@pytest.mark.parametrize("shape,axis", [((3, 5000), 1), ((300_000,), 0), ((2, 70_000), 1),
                                        ((20_000, 3), 0)])
def test_cumulative_long_axes(be, rng, shape, axis):
    """Tiles, tiles with carries, and the recursive carry scan; exact for ints, within
    float rounding and bit-for-bit repeatable for floats."""
    xi = random_array(rng, shape, np.int64)
    assert_same(host(hf.cumulative_sum(hf.asarray(xi), axis=axis)), np.cumsum(xi, axis=axis))
    xf = rng.standard_normal(shape)
    t = hf.asarray(xf)
    a = host(hf.cumulative_sum(t, axis=axis, include_initial=True))
    want = np.cumulative_sum(xf, axis=axis, include_initial=True)
    mag = np.cumulative_sum(np.abs(xf), axis=axis, include_initial=True)
    assert_accumulated(a, want, mag, np.float64)
    assert_same(host(hf.cumulative_sum(t, axis=axis, include_initial=True)), a)


@pytest.mark.parametrize("init", [False, True])
def test_prim_cumulative_strided_out(be, rng, init):
    x = random_array(rng, (5, 8), np.int32)
    for axis in (0, 1):
        out_shape = list(x.shape)
        out_shape[axis] += init
        for kind in ("step", "transposed"):
            so = StridedOut(be, out_shape, np.int32, kind)
            run_prim(be, d.Cumulative(d.ScanOp.SUM, axis, init), [be.asarray(x)], out=so.view)
            want = np.cumulative_sum(x, axis=axis, dtype=np.int32, include_initial=init)
            assert_same(be.asnumpy(so.view), want)
            so.check_gaps()
