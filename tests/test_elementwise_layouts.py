"""Elementwise kernels over strided, broadcast and transposed layouts (issue 7): the N-d
kernel's runs (vector loads for unit-stride operands, one load for stride 0, tails of
rows that are not a multiple of the run), inputs laid out transposed to the output (the
tiled kernel for plain copies: tile edges, batch axes, several bands; the N-d kernel for
the other ops),
outputs in any memory order (F-ordered or permuted outs take the vector kernel when the
inputs are laid out alike), scalar (0-d) operands, unaligned pointers, empty and 0-d.

Every result is compared exactly with the same op on C-contiguous copies (the vector
kernel on the GPU: the paths must be bit-identical) and with NumPy."""
import numpy as np
import pytest

from hipfer.prims import descriptors as d
from hipfer.prims.infer import infer
from hipfer.prims.optable import BinaryOp, UnaryOp

from _util import assert_elementwise, assert_same, random_array, run_prim


def _out(be, shape, dt, order):
    B = be.backend
    if order == "C":
        return B.empty(shape, np.dtype(dt))
    if order == "F":
        return B.empty(tuple(reversed(shape)), np.dtype(dt)).T
    # order == "P": a permuted dense buffer (last axis first)
    perm = (len(shape) - 1,) + tuple(range(len(shape) - 1))
    buf = B.empty(tuple(shape[p] for p in perm), np.dtype(dt))
    return buf.transpose(tuple(int(p) for p in np.argsort(perm)))


def _check(be, desc, host, views, out_order="C", conj=None, exact_ref=None):
    """Run desc on device views (made from host arrays by `views`) into an out of the
    given order; compare exactly with the contiguous-copy run and with NumPy."""
    def as_tuple(v):
        return v if isinstance(v, tuple) else (v,)
    dev_in = as_tuple(views(*(be.asarray(h) for h in host)))
    host_in = as_tuple(views(*host))
    shape = np.broadcast_shapes(*(np.shape(v) for v in host_in))
    (oshape, odt), = infer(desc, tuple(v.dtype for v in host_in), tuple(v.shape for v in host_in))
    assert tuple(oshape) == tuple(shape)
    got = run_prim(be, desc, dev_in, conj=conj, out=_out(be, oshape, odt, out_order))
    flat = [be.asarray(np.ascontiguousarray(np.broadcast_to(v, shape))) for v in host_in]
    ref = run_prim(be, desc, flat, conj=conj)
    assert_same(got, ref)
    if exact_ref is not None:
        assert_elementwise(got, exact_ref(*host_in))
    return got


M, N = 67, 133  # odd sizes: rows leave run tails and tile edges


@pytest.mark.parametrize("order", ["C", "F", "P"])
@pytest.mark.parametrize("dt", [np.float32, np.float64, np.complex64, np.float16, np.int8],
                         ids=lambda t: np.dtype(t).name)
def test_unary_layouts(be, rng, dt, order):
    x = random_array(rng, (N, M * 2), dt)
    desc = d.ScalarUnary(UnaryOp.NEG) if np.dtype(dt).kind in "iu" else d.ScalarUnary(UnaryOp.SQUARE)
    for views in (lambda a: a.T,                 # transposed
                  lambda a: a[:, ::2],           # step-sliced
                  lambda a: a[::-1, 1:],         # reversed rows, unaligned
                  lambda a: a[3:40, 5:90].T,     # transposed window
                  lambda a: a):                  # contiguous
        _check(be, desc, [x], views, order)


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("dt", [np.float32, np.float64, np.complex128, np.int16, np.bool_],
                         ids=lambda t: np.dtype(t).name)
def test_binary_layouts(be, rng, dt, order):
    a = random_array(rng, (M, N), dt)
    b = random_array(rng, (N, M), dt)
    u = random_array(rng, (M,), dt)
    v = random_array(rng, (N,), dt)
    desc = d.ScalarBinary(BinaryOp.MUL if np.dtype(dt).kind == "b" else BinaryOp.ADD)
    cases = [
        ([a, b], lambda p, q: (p, q.T)),                  # C + transposed
        ([a, b], lambda p, q: (q.T, p)),                  # transposed + C
        ([b, b], lambda p, q: (p.T, q.T)),                # both transposed
        ([a, v], lambda p, q: (p, q[None, :])),           # row broadcast
        ([a, u], lambda p, q: (p, q[:, None])),           # column broadcast
        ([u, v], lambda p, q: (p[:, None], q[None, :])),  # outer
        ([b, u], lambda p, q: (p.T, q[:, None])),         # transposed + column
        ([a, v], lambda p, q: (p[:, 1:], q[None, :-1])),  # unaligned rows
        ([a, a], lambda p, q: (p[:, :132:3], q[:, 1::3])),   # step-sliced
        ([a, u[:1].reshape(())], lambda p, q: (p, q)),     # 0-d scalar
    ]
    for host, views in cases:
        _check(be, desc, host, lambda p, q, views=views: views(p, q), order)


def test_binary_three_d_batched_tiles(be, rng):
    a = random_array(rng, (3, 45, 37), np.float32)
    b = random_array(rng, (3, 37, 45), np.float32)
    _check(be, d.ScalarBinary(BinaryOp.SUB), [a, b], lambda p, q: (p.transpose(0, 2, 1), q), "C",
           exact_ref=lambda p, q: p - q)
    _check(be, d.ScalarBinary(BinaryOp.SUB), [a, b], lambda p, q: (p.transpose(2, 0, 1), q.transpose(1, 0, 2)),
           "C")
    _check(be, d.ScalarBinary(BinaryOp.SUB), [a, b], lambda p, q: (p, q.transpose(0, 2, 1)), "F")


@pytest.mark.parametrize("dt", [np.float32, np.complex128, np.int8], ids=lambda t: np.dtype(t).name)
def test_where_layouts(be, rng, dt):
    c = random_array(rng, (N, M), np.bool_)
    x = random_array(rng, (M, N), dt)
    y = random_array(rng, (N,), dt)
    desc = d.MaskWhere() if np.dtype(dt).kind in "fc" else d.MetadataWhere()
    zero = np.zeros((), dt)
    for host, views in [
        ([c, x, y], lambda c_, p, q: (c_.T, p, q[None, :])),        # transposed cond
        ([c, x, y], lambda c_, p, q: (c_, p.T, q[:, None])),       # transposed x, column y
        ([c, x, zero], lambda c_, p, q: (c_, p.T, q)),              # scalar
        ([c, x, zero], lambda c_, p, q: (c_.T, p, q)),              # scalar, where(c, x, 0.0)
    ]:
        _check(be, desc, host, views, "C", exact_ref=np.where)
        _check(be, desc, host, views, "F")


def test_where_scalar_contiguous_long(be, rng):
    n = 100_003
    c, x = random_array(rng, (n,), np.bool_), random_array(rng, (n,), np.float32)
    _check(be, d.MaskWhere(), [c, x, np.zeros((), np.float32)], lambda *v: v, exact_ref=np.where)
    _check(be, d.MaskWhere(), [c, x, np.zeros((), np.float32)], lambda c_, p, q: (c_[1:], p[:-1], q))


def test_complex_conj_through_every_path(be, rng):
    a = random_array(rng, (M, N), np.complex64)
    b = random_array(rng, (N, M), np.complex64)
    desc = d.ScalarBinary(BinaryOp.SUB)
    for views in (lambda p, q: (p, q.T), lambda p, q: (q.T, p[:, ::-1]), lambda p, q: (p[:, :1], q.T)):
        got = _check(be, desc, [a, b], views, "C", conj=(True, False))
        va, vb = views(a, b)
        assert_elementwise(got, np.conj(va) - vb)
        got = _check(be, desc, [a, b], views, "F", conj=(False, True))
        assert_elementwise(got, va - np.conj(vb))
    got = _check(be, d.PointwiseCast(np.complex128), [b], lambda p: p.T, "C", conj=(True,))
    assert_same(got, np.conj(b.T).astype(np.complex128))


def test_cast_transposed(be, rng):
    x = random_array(rng, (N, M), np.float64, special=True)
    got = _check(be, d.PointwiseCast(np.float32), [x], lambda p: p.T, "C")
    assert_same(got, x.T.astype(np.float32))
    i = random_array(rng, (N, M), np.int64)
    _check(be, d.PointwiseCast(np.int8), [i], lambda p: p.T[::2], "F")


def test_scaled_and_generate_on_permuted_outs(be, rng):
    x = random_array(rng, (M, N), np.float64)
    o = random_array(rng, (N, M), np.float64)
    out = be.asarray(o.copy()).T  # F-ordered (M, N)
    got = run_prim(be, d.MakeContiguous(), [be.asarray(x)], out=out, alpha=2, beta=-1)
    assert_elementwise(got, 2 * x - o.T)
    for order in ("C", "F", "P"):
        got = run_prim(be, d.Generate(d.GenerateKind.IOTA), [], spec=((5, 7, 3), np.dtype(np.float32)),
                       out=_out(be, (5, 7, 3), np.float32, order), start=1, step=2)
        assert_same(got, (np.arange(105, dtype=np.float32) * 2 + 1).reshape(5, 7, 3))


def test_empty_and_zero_d(be, rng):
    x = random_array(rng, (), np.float32)
    assert_elementwise(run_prim(be, d.AnalyticUnary(UnaryOp.EXP), [be.asarray(x)]), np.exp(x))
    e = np.zeros((0, 5), np.float32)
    assert run_prim(be, d.ScalarBinary(BinaryOp.ADD), [be.asarray(e).T, be.asarray(e).T]).shape == (5, 0)


def test_tiles_over_several_bands(be, rng):
    """More rows of tiles than one band of the tiled walk, the last band partial."""
    a = random_array(rng, (70, 1100), np.float32)
    b = random_array(rng, (1100, 70), np.float32)
    got = _check(be, d.ScalarBinary(BinaryOp.ADD), [a, b], lambda p, q: (p.T, q), "C")
    assert_elementwise(got, a.T + b)
    _check(be, d.AnalyticUnary(UnaryOp.EXP), [b], lambda p: p.T, "C", exact_ref=np.exp)


@pytest.mark.parametrize("dt", [np.float32, np.int8, np.complex128, np.float16], ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("shape", [(70, 1100), (3, 45, 37), (17, 16)])
def test_transposed_copies(be, rng, dt, shape):
    """MakeContiguous of a transposed array (the tiled copy on the GPU): every byte."""
    x = random_array(rng, shape, dt)
    src = be.asarray(x)
    view = src.swapaxes(-1, -2) if hasattr(src, "swapaxes") else src
    got = run_prim(be, d.MakeContiguous(), [view])
    assert_same(got, np.ascontiguousarray(np.swapaxes(x, -1, -2)))
