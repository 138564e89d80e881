"""Histogram against np.histogram with explicit edges: every real data dtype against
integer and float edges (instantiated pairs and cast ones), layouts (contiguous, stepped,
reversed, transposed), values on the edges, NaN / +-inf / -0.0, many bins (past the
kernel's shared-memory bins), one edge (no bins), empty data, and the rules."""
import numpy as np
import pytest

from hipfer.prims import descriptors as d
from hipfer.prims.infer import infer

from _util import assert_same, layouts, random_array, run_prim

REAL = [np.dtype(t) for t in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                              "uint64", "float16", "float32", "float64")]
EDGES = [np.dtype(t) for t in ("int64", "uint8", "int16", "float16", "float32", "float64")]


def _ref(x, edges):
    x = np.ravel(x)
    if edges.shape[0] == 1:
        return np.zeros(0, np.int64)
    return np.histogram(x, bins=edges)[0].astype(np.int64)


def _edges(rng, dt, n, lo, hi):
    e = np.unique(np.linspace(lo, hi, n).astype(dt))
    return e if e.shape[0] > 1 else np.array([lo, hi], dt)


@pytest.mark.parametrize("xdt", REAL, ids=str)
@pytest.mark.parametrize("edt", EDGES, ids=str)
@pytest.mark.parametrize("uniform", [False, True])
def test_counts(be, rng, uniform, xdt, edt):
    hi = 100 if xdt.kind in "iu" else 3.0
    if xdt.itemsize == 1:
        hi = 100
    e_np = _edges(rng, edt, 11, 0 if xdt.kind == "u" else -50 if xdt.kind == "i" else -3, hi)
    edges = be.asarray(e_np)
    low = 0 if xdt.kind == "u" else -60
    for name, x, xn in layouts(be, rng, (5, 7, 6), xdt, low=low, high=110) if xdt.kind in "iu" \
            else layouts(be, rng, (5, 7, 6), xdt):
        assert_same(run_prim(be, d.Histogram(uniform=uniform), [x, edges]), _ref(xn, e_np))


@pytest.mark.parametrize("dt", ["float16", "float32", "float64"])
@pytest.mark.parametrize("uniform", [False, True])
def test_values_on_edges_and_specials(be, rng, uniform, dt):
    e_np = np.array([-1.0, -0.0, 0.5, 1.0, 2.0], dt)
    x_np = np.concatenate([e_np, e_np, np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 2.0,
                                                 -1.0, 1.9999, -1.00001], dt),
                           random_array(rng, (100,), np.dtype(dt), special=True)]).astype(dt)
    got = run_prim(be, d.Histogram(uniform=uniform), [be.asarray(x_np), be.asarray(e_np)])
    assert_same(got, _ref(x_np, e_np))


@pytest.mark.parametrize("bins", [1, 2047, 2048, 2049, 5000])
@pytest.mark.parametrize("uniform", [False, True])
def test_many_bins(be, rng, uniform, bins):
    e_np = np.linspace(-4, 4, bins + 1)
    x_np = rng.standard_normal(20000).astype(np.float32)
    got = run_prim(be, d.Histogram(uniform=uniform), [be.asarray(x_np), be.asarray(e_np)])
    assert_same(got, _ref(x_np, e_np))
    again = run_prim(be, d.Histogram(uniform=uniform), [be.asarray(x_np), be.asarray(e_np)])
    assert_same(again, be.asnumpy(got))


@pytest.mark.parametrize("uniform", [False, True])
def test_one_edge_and_empty(be, uniform):
    e1 = be.asarray(np.array([0.5]))
    assert_same(run_prim(be, d.Histogram(uniform=uniform), [be.asarray(np.ones(4)), e1]),
                np.zeros(0, np.int64))
    e = be.asarray(np.array([0.0, 1.0, 2.0]))
    assert_same(run_prim(be, d.Histogram(uniform=uniform), [be.asarray(np.zeros(0, np.float32)), e]),
                np.zeros(2, np.int64))


def test_rules():
    f, i = np.dtype(np.float64), np.dtype(np.int64)
    assert infer(d.Histogram(), (f, f), ((3, 4), (5,))) == (((4,), i),)
    with pytest.raises(TypeError, match="Histogram: x"):
        infer(d.Histogram(), (np.dtype(bool), f), ((3,), (5,)))
    with pytest.raises(TypeError, match="Histogram: edges"):
        infer(d.Histogram(), (f, np.dtype(np.complex64)), ((3,), (5,)))
    with pytest.raises(ValueError, match="1-d"):
        infer(d.Histogram(), (f, f), ((3,), (2, 2)))
    with pytest.raises(ValueError, match="at least one edge"):
        infer(d.Histogram(), (f, f), ((3,), (0,)))
