"""argmax, argmin, count_nonzero and searchsorted against NumPy (namespace and prims),
across dtypes, axes, keepdims, layouts, 0-d / empty tensors, NaN, ties and -0.0."""
import numpy as np
import pytest

import hipfer as hf
from hipfer.prims import descriptors as d
from hipfer.prims.optable import ReduceOp

from _util import StridedOut, assert_same, dtypes_of, ids, layouts, random_array, run_prim

REAL = dtypes_of("biuf")


def host(t):
    return np.asarray(t.to_device("cpu"))


def tie_data(rng, shape, dt, nan=True):
    """Few distinct values (many ties); floats with NaN, +-inf and -0.0 / 0.0."""
    dt = np.dtype(dt)
    if dt.kind == "b":
        return random_array(rng, shape, dt)
    x = rng.integers(-3 if dt.kind != "u" else 0, 4, size=shape).astype(dt)
    if dt.kind == "f" and x.size:
        flat = x.reshape(-1)
        flat[rng.random(flat.size) < 0.15] = -0.0
        if nan:
            flat[rng.random(flat.size) < 0.1] = np.nan
        flat[rng.random(flat.size) < 0.05] = np.inf
    return x


# ----------------------------------------------------------------- argmax / argmin
@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("dt", REAL, ids=ids(REAL))
def test_arg_extremes(be, rng, name, dt):
    fn, ref = getattr(hf, name), getattr(np, name)
    for nan in (False, True):
        for lname, xb, xn in layouts(be, rng, (5, 7), dt):
            xn = xn.copy()
            xn[...] = tie_data(rng, xn.shape, dt, nan)
            xb[...] = be.asarray(xn)
            t = hf.asarray(xb)
            for axis in (None, 0, 1, -1):
                for keep in (False, True):
                    got = host(fn(t, axis=axis, keepdims=keep))
                    assert_same(got, ref(xn, axis=axis, keepdims=keep))


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_nan_first_and_zero_signs(be, name):
    fn = getattr(hf, name)
    x = np.array([1.0, -0.0, 0.0, np.nan, 5.0, np.nan, -7.0])
    assert int(fn(hf.asarray(x))) == 3  # the first NaN is the extreme both ways
    z = np.array([-0.0, 0.0, -0.0])
    assert int(fn(hf.asarray(z))) == 0  # -0.0 == 0.0: the first wins


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_long_axis_and_0d(be, rng, name):
    fn, ref = getattr(hf, name), getattr(np, name)
    x = tie_data(rng, (3, 3000), np.float32)  # long axis: the GPU's block path
    for axis in (0, 1, None):
        assert_same(host(fn(hf.asarray(x), axis=axis)), ref(x, axis=axis))
    s = np.float64(2.5)
    assert_same(host(fn(hf.asarray(s))), np.int64(0))
    assert host(fn(hf.asarray(s), keepdims=True)).shape == ()


def test_arg_errors(be):
    with pytest.raises(ValueError):
        hf.argmax(hf.asarray(np.zeros((0,), np.float32)))
    with pytest.raises(TypeError):
        hf.argmin(hf.asarray(np.ones(3, np.complex64)))
    with pytest.raises(IndexError):
        hf.argmax(hf.asarray(np.ones((2, 3))), axis=2)
    with pytest.raises(ValueError):  # an empty reduced axis with outputs to fill
        hf.argmax(hf.asarray(np.zeros((3, 0))), axis=1)
    # an empty tensor whose reduced axis is not empty: an empty result
    assert host(hf.argmax(hf.asarray(np.zeros((0, 3))), axis=1)).shape == (0,)


@pytest.mark.parametrize("op", [ReduceOp.MAX, ReduceOp.MIN])
def test_prim_argreduce_strided_out(be, rng, op):
    x = tie_data(rng, (6, 9, 4), np.float64)
    ref = np.argmax if op is ReduceOp.MAX else np.argmin
    for axis in (0, 1, 2):
        out_shape = tuple(n for i, n in enumerate(x.shape) if i != axis)
        so = StridedOut(be, out_shape, np.int64)
        run_prim(be, d.ArgReduce(op, axis), [be.asarray(x)], out=so.view)
        assert_same(be.asnumpy(so.view), ref(x, axis=axis))
        so.check_gaps()


# ------------------------------------------------------------------ count_nonzero
@pytest.mark.parametrize("dt", dtypes_of("biufc"), ids=ids(dtypes_of("biufc")))
def test_count_nonzero(be, rng, dt):
    x = tie_data(rng, (4, 6), dt) if np.dtype(dt).kind != "c" else random_array(rng, (4, 6), dt)
    if np.dtype(dt).kind == "c":
        x[0, :3] = 0
    t = hf.asarray(x)
    for axis in (None, 0, 1, (0, 1)):
        for keep in (False, True):
            got = host(hf.count_nonzero(t, axis=axis, keepdims=keep))
            want = np.count_nonzero(x, axis=axis, keepdims=keep)
            assert_same(got, np.asarray(want, np.int64))
    assert_same(host(hf.count_nonzero(hf.asarray(np.zeros((0, 2), dt)))), np.int64(0))


# ------------------------------------------------------------------- searchsorted
@pytest.mark.parametrize("dt", REAL, ids=ids(REAL))
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted(be, rng, dt, side):
    x1 = np.sort(tie_data(rng, (17,), dt))  # NaN last, as np.sort
    x2 = tie_data(rng, (3, 5), dt)
    got = host(hf.searchsorted(hf.asarray(x1), hf.asarray(x2), side=side))
    assert_same(got, np.searchsorted(x1, x2, side=side))
    # non-contiguous operands: a reversed view of a descending copy, a transposed x2
    xb = be.asarray(np.ascontiguousarray(x1[::-1]))[::-1]
    got = host(hf.searchsorted(hf.asarray(xb), hf.asarray(be.asarray(x2).T), side=side))
    assert_same(got, np.searchsorted(x1, x2.T, side=side))


def test_searchsorted_sorter_scalars_empty(be, rng):
    x = rng.standard_normal(20)
    x[[3, 11]] = np.nan
    sorter = np.argsort(x, kind="stable")
    v = rng.standard_normal((2, 4))
    got = host(hf.searchsorted(hf.asarray(x), hf.asarray(v), sorter=hf.asarray(sorter)))
    assert_same(got, np.searchsorted(x, v, sorter=sorter))
    xs = np.sort(x)
    for s in (0.25, 3, -1.5):
        assert_same(host(hf.searchsorted(hf.asarray(xs), s, side="right")),
                    np.searchsorted(xs, s, side="right"))
    ints = np.array([1, 3, 3, 7], np.int16)
    assert_same(host(hf.searchsorted(hf.asarray(ints), 3.5)), np.searchsorted(ints, 3.5))
    assert_same(host(hf.searchsorted(hf.asarray(np.zeros(0)), hf.asarray(v))),
                np.zeros(v.shape, np.int64))
    assert host(hf.searchsorted(hf.asarray(xs), hf.asarray(np.zeros((0, 3))))).shape == (0, 3)
    nan = np.array([np.nan])
    for side in ("left", "right"):
        assert_same(host(hf.searchsorted(hf.asarray(xs), hf.asarray(nan), side=side)),
                    np.searchsorted(xs, nan, side=side))


def test_searchsorted_errors(be):
    a = hf.asarray(np.arange(4.0))
    with pytest.raises(ValueError):
        hf.searchsorted(hf.asarray(np.ones((2, 2))), a)
    with pytest.raises(ValueError):
        hf.searchsorted(a, a, side="middle")
    # complex is searched as NumPy does it (lexicographic), no longer refused
    assert_same(np.asarray(hf.searchsorted(hf.asarray(np.ones(3, np.complex128)), a), copy=True),
                np.searchsorted(np.ones(3, np.complex128), np.arange(4.0)))


def test_prim_searchsorted_strided_out(be, rng):
    x1 = np.sort(rng.standard_normal(33)).astype(np.float32)
    x2 = rng.standard_normal((4, 6)).astype(np.float32)
    for kind in ("step", "transposed"):
        so = StridedOut(be, x2.shape, np.int64, kind)
        run_prim(be, d.SearchSorted("right"), [be.asarray(x1), be.asarray(x2)], out=so.view)
        assert_same(be.asnumpy(so.view), np.searchsorted(x1, x2, side="right"))
        so.check_gaps()


def test_prims_infer_and_support(be):
    from hipfer.prims.infer import infer
    f4, i8, c8 = np.dtype("f4"), np.dtype("i8"), np.dtype("c8")
    assert infer(d.ArgReduce(ReduceOp.MAX, 1), [f4], [(2, 3)]) == (((2,), i8),)
    assert infer(d.Cumulative(d.ScanOp.PROD, -1, True), [c8], [(2, 3)]) == (((2, 4), c8),)
    assert infer(d.SearchSorted("right"), [f4, f4], [(5,), ()]) == (((), i8),)
    bad = [(d.ArgReduce(ReduceOp.MAX, 0), [c8], [(3,)], TypeError),
           (d.ArgReduce(ReduceOp.SUM, 0), [f4], [(3,)], ValueError),
           (d.ArgReduce(ReduceOp.MIN, 0), [f4], [()], ValueError),
           (d.ArgReduce(ReduceOp.MIN, 0), [f4], [(0, 2)], ValueError),
           (d.Cumulative(d.ScanOp.SUM, 2), [f4], [(2, 3)], ValueError),
           (d.SearchSorted(), [f4, np.dtype("f8")], [(3,), (2,)], TypeError),
           (d.SearchSorted(), [f4, f4], [(3, 1), (2,)], ValueError),
           (d.SearchSorted("up"), [f4, f4], [(3,), (2,)], ValueError)]
    for desc, dts, shapes, err in bad:
        with pytest.raises(err):
            infer(desc, dts, shapes)
    B = be.backend
    assert B.has_scalar_support(d.SearchSorted(), [f4, f4])
    assert B.has_scalar_support(d.ArgReduce(ReduceOp.MAX, -1), [np.dtype(bool)])
    assert B.has_scalar_support(d.Cumulative(d.ScanOp.SUM, 0), [c8])
    assert not B.has_scalar_support(d.ArgReduce(ReduceOp.MAX, 0), [c8])
