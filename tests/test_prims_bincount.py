"""Bincount against NumPy's bincount: every index dtype, layouts (contiguous, stepped,
reversed, transposed), empty input, strided outputs, weights with NaN / inf, many bins
(past the kernel's shared-memory bins), run-to-run determinism, and the rules."""
import numpy as np
import pytest

from hipfer.prims import descriptors as d
from hipfer.prims.infer import infer

from _util import INDEX_DTYPES, StridedOut, assert_same, layouts, random_array, run_prim

F64 = np.dtype(np.float64)


def _ref(x, length, w=None):
    out = np.bincount(np.ravel(x).astype(np.intp), None if w is None else np.ravel(w),
                      minlength=length)
    return out[:length]


@pytest.mark.parametrize("idt", INDEX_DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(37,), (3, 4, 5)], ids=str)
def test_counts(be, rng, idt, shape):
    for name, x, xn in layouts(be, rng, shape, idt, low=0, high=9):
        for length in (10, 13):
            assert_same(run_prim(be, d.Bincount(length), [x]), _ref(xn, length))


@pytest.mark.parametrize("idt", [np.dtype(np.int32), np.dtype(np.int64), np.dtype(np.uint8)],
                         ids=str)
@pytest.mark.parametrize("shape", [(41,), (4, 6)], ids=str)
def test_weighted(be, rng, idt, shape):
    xs = layouts(be, rng, shape, idt, low=0, high=6)
    ws = layouts(be, rng, shape, F64, special=True)
    for (_, x, xn), (_, w, wn) in zip(xs, ws[::-1]):
        got = run_prim(be, d.Bincount(8, True), [x, w])
        assert_same(got, _ref(xn, 8, wn))


def test_nan_and_inf_weights(be):
    x = np.array([0, 1, 1, 2, 2, 3, 3, 3], np.int64)
    w = np.array([np.nan, 1.0, np.inf, np.inf, -np.inf, 1e308, 1e308, -1e308])
    got = run_prim(be, d.Bincount(5, True), [be.asarray(x), be.asarray(w)])
    assert_same(got, _ref(x, 5, w))


def test_empty_and_zero_length(be):
    x = be.asarray(np.zeros((0,), np.int32))
    assert_same(run_prim(be, d.Bincount(4), [x]), np.zeros(4, np.int64))
    assert_same(run_prim(be, d.Bincount(0), [x]), np.zeros(0, np.int64))
    w = be.asarray(np.zeros((0,), F64))
    assert_same(run_prim(be, d.Bincount(3, True), [x, w]), np.zeros(3, F64))
    x2 = be.asarray(np.zeros((3, 0), np.int64))
    assert_same(run_prim(be, d.Bincount(2), [x2]), np.zeros(2, np.int64))


def test_zero_d(be):
    x = be.asarray(np.array(3, np.int16))
    assert_same(run_prim(be, d.Bincount(5), [x]), _ref(np.array([3]), 5))
    w = be.asarray(np.array(2.5))
    assert_same(run_prim(be, d.Bincount(4, True), [x, w]), _ref(np.array([3]), 4, [2.5]))


@pytest.mark.parametrize("length", [5000, 70000])
def test_many_bins(be, rng, length):
    xn = rng.integers(0, length, size=20000).astype(np.int64)
    xn[:50] = length - 1
    assert_same(run_prim(be, d.Bincount(length), [be.asarray(xn)]), _ref(xn, length))
    wn = rng.standard_normal(20000)
    got = run_prim(be, d.Bincount(length, True), [be.asarray(xn), be.asarray(wn)])
    assert_same(got, _ref(xn, length, wn))


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("kind", ["step", "transposed"])
def test_strided_out(be, rng, weighted, kind):
    xn = rng.integers(0, 7, size=(50,)).astype(np.int32)
    wn = rng.standard_normal(50)
    dt = F64 if weighted else np.dtype(np.int64)
    so = StridedOut(be, (7,), dt, kind)
    ins = [be.asarray(xn)] + ([be.asarray(wn)] if weighted else [])
    got = run_prim(be, d.Bincount(7, weighted), ins, out=so.view)
    assert_same(got, _ref(xn, 7, wn if weighted else None))
    so.check_gaps()


def test_deterministic(be, rng):
    """Weighted sums repeat bit for bit (summed in C order: exactly NumPy's)."""
    n = 200000
    xn = rng.integers(0, 3, size=n).astype(np.int64)
    wn = rng.standard_normal(n) * np.exp(rng.uniform(-30, 30, size=n))
    x, w = be.asarray(xn), be.asarray(wn)
    runs = [run_prim(be, d.Bincount(3, True), [x, w]) for _ in range(3)]
    for r in runs:
        assert r.tobytes() == runs[0].tobytes()
    assert_same(runs[0], _ref(xn, 3, wn))
    counts = [run_prim(be, d.Bincount(3), [x]) for _ in range(3)]
    for c in counts:
        assert_same(c, _ref(xn, 3))


def test_rules():
    i64, i32 = np.dtype(np.int64), np.dtype(np.int32)
    assert infer(d.Bincount(5), (i32,), ((2, 3),)) == (((5,), i64),)
    assert infer(d.Bincount(5, True), (i32, F64), ((2, 3), (2, 3))) == (((5,), F64),)
    with pytest.raises(TypeError, match="Bincount: x must be an integer"):
        infer(d.Bincount(5), (F64,), ((3,),))
    with pytest.raises(TypeError, match="Bincount: x must be an integer"):
        infer(d.Bincount(5), (np.dtype(np.bool_),), ((3,),))
    with pytest.raises(TypeError, match="Bincount: weights must be float64"):
        infer(d.Bincount(5, True), (i64, np.dtype(np.float32)), ((3,), (3,)))
    with pytest.raises(ValueError, match="Bincount: weights of shape"):
        infer(d.Bincount(5, True), (i64, F64), ((3,), (4,)))
    with pytest.raises(ValueError, match="Bincount takes 2 operand"):
        infer(d.Bincount(5, True), (i64,), ((3,),))
    with pytest.raises(ValueError, match="Bincount: length must be"):
        infer(d.Bincount(-1), (i64,), ((3,),))


def test_random_full_range_values_in_range(be, rng):
    """Indices drawn over the dtype's range, folded into [0, length) by the caller."""
    for idt in INDEX_DTYPES:
        xn = np.abs(random_array(rng, (64,), idt).astype(np.int64) % 17).astype(idt)
        assert_same(run_prim(be, d.Bincount(17), [be.asarray(xn)]), _ref(xn, 17))
