"""The paths of the elementwise kernels (kernels/elementwise.cuh) that layout tests do
not reach by accident: vector-kernel tails for every width, contiguous views whose
pointers are not 16-byte aligned, grid-stride loops over more elements than one grid
covers, mixed element widths in one vector access, scaled outputs whose old contents are
NaN garbage (beta == 0 never reads them), and the bool iota. On the NumPy backend these
are quick sanity checks of the same semantics."""
import numpy as np
import pytest

from hipfer.prims import descriptors as d
from hipfer.prims.optable import BinaryOp, UnaryOp
from hipfer.prims.semiring import Semiring

from _util import assert_elementwise, assert_same, random_array, run_prim

WIDTHS = [np.bool_, np.int8, np.int16, np.float32, np.float64, np.complex64, np.complex128]


@pytest.mark.parametrize("dt", WIDTHS, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("n", [1, 3, 15, 16, 17, 33, 100])
def test_vector_tails(be, rng, dt, n):
    a, b = random_array(rng, (n,), dt), random_array(rng, (n,), dt)
    got = run_prim(be, d.ScalarBinary(BinaryOp.ADD), [be.asarray(a), be.asarray(b)])
    assert_elementwise(got, a | b if a.dtype == np.bool_ else a + b)
    got = run_prim(be, d.ScalarWhere(), [be.asarray(a != b), be.asarray(a), be.asarray(b)])
    assert_same(got, np.where(a != b, a, b))


@pytest.mark.parametrize("dt", [np.int8, np.float32, np.complex64], ids=lambda t: np.dtype(t).name)
def test_unaligned_contiguous_views(be, rng, dt):
    n = 50
    a = random_array(rng, (n + 3,), dt)
    b = random_array(rng, (n + 5,), dt)
    buf = be.backend.empty((n + 1,), np.dtype(dt))
    got = run_prim(be, d.ScalarBinary(BinaryOp.MUL), [be.asarray(a)[1:n + 1], be.asarray(b)[3:n + 3]],
                   out=buf[1:])
    assert_elementwise(got, a[1:n + 1] * b[3:n + 3])


def test_grid_stride_loops(be, rng):
    a = rng.standard_normal(3_000_001).astype(np.float32)
    got = run_prim(be, d.AnalyticUnary(UnaryOp.EXP), [be.asarray(a)])
    assert_elementwise(got, np.exp(a))
    m = rng.standard_normal((1500, 1700))
    got = run_prim(be, d.ScalarBinary(BinaryOp.SUB), [be.asarray(m).T, be.asarray(m[:1]).T])
    assert_elementwise(got, m.T - m[:1].T)


def test_mixed_widths_in_one_vector_access(be, rng):
    x = random_array(rng, (37,), np.float64, special=True)
    y = random_array(rng, (37,), np.float64)
    assert_same(run_prim(be, d.ScalarBinary(BinaryOp.GREATER), [be.asarray(x), be.asarray(y)]), x > y)
    z = random_array(rng, (37,), np.complex64)
    assert_elementwise(run_prim(be, d.ComplexRealUnary(UnaryOp.ABS), [be.asarray(z)]), np.abs(z))
    i = random_array(rng, (37,), np.int8)
    assert_same(run_prim(be, d.PointwiseCast(np.complex128), [be.asarray(i)]), i.astype(np.complex128))
    f = rng.uniform(-100, 100, 37).astype(np.float32)
    assert_same(run_prim(be, d.PointwiseCast(np.int8), [be.asarray(f)]), f.astype(np.int8))


def _nan_out(be, shape, dt):
    out = be.backend.empty(shape, np.dtype(dt))
    out[...] = np.nan
    return out


@pytest.mark.parametrize("dt", [np.float32, np.complex128], ids=lambda t: np.dtype(t).name)
def test_beta_zero_never_reads_out(be, rng, dt):
    a, b = random_array(rng, (5, 7), dt), random_array(rng, (5, 7), dt)
    got = run_prim(be, d.ElementwiseBinary(BinaryOp.ADD), [be.asarray(a), be.asarray(b)],
                   out=_nan_out(be, (5, 7), dt), alpha=2, beta=0)
    assert_elementwise(got, 2 * (a + b))
    got = run_prim(be, d.MakeContiguous(), [be.asarray(a).T], out=_nan_out(be, (7, 5), dt), alpha=3, beta=0)
    assert_elementwise(got, 3 * a.T)


def test_scaled_accumulate(be, rng):
    a, b = random_array(rng, (4, 6), np.float64), random_array(rng, (6,), np.float64)
    o = random_array(rng, (4, 6), np.float64)
    out = be.asarray(o.copy())
    got = run_prim(be, d.ElementwiseBinary(BinaryOp.MUL), [be.asarray(a), be.asarray(b)], out=out,
                   alpha=0.5, beta=-2)
    assert_elementwise(got, 0.5 * (a * b) - 2 * o)
    out = be.asarray(o.copy())
    got = run_prim(be, d.ElementwiseBinary(BinaryOp.MUL, Semiring.MIN_PLUS), [be.asarray(a), be.asarray(b)],
                   out=out, beta=1)
    assert_elementwise(got, np.minimum(o, a + b))


def test_bool_iota_counts_in_int64(be):
    got = run_prim(be, d.Generate(d.GenerateKind.IOTA), [], spec=((6,), np.dtype(np.bool_)), start=-4, step=2)
    assert_same(got, np.arange(6) * 2 - 4 != 0)
