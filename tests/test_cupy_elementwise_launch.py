"""The CuPy elementwise backend's launch logic, checked without a GPU.

The kernels are replaced by fakes that check the call: the variant (vector kernel only
for contiguous, aligned operands of the output's shape), the argument count and the
exact NumPy scalar types of the C++ parameters, and -- for the N-d kernel -- that the
shape/strides structs address exactly the elements NumPy's broadcasting would (computed
as elementwise.cuh's nd_offsets does). Arrays are NumPy views standing in for CuPy ones.
"""
from __future__ import annotations

import types

import numpy as np
import pytest

pytest.importorskip("cupy")

from hipfer.backends.cupy import _engine as eng  # noqa: E402
from hipfer.backends.cupy import elementwise as ce  # noqa: E402
from hipfer.prims import descriptors as d  # noqa: E402
from hipfer.prims.infer import infer  # noqa: E402
from hipfer.prims.optable import BinaryOp, UnaryOp  # noqa: E402
from hipfer.prims.semiring import Semiring  # noqa: E402

# inputs of each kernel template and the C++ types of its trailing scalars ('T': the
# element type of the output, int64 for a bool iota)
_KINDS = {"unary": (1, ("conj",)), "binary": (2, ("conj",)), "where": (3, ("conj",)),
          "generate": (0, ("T", "T")), "unary_scaled": (1, ("conj", "T", "T")),
          "binary_scaled": (2, ("conj", "T", "T"))}


class Arr:
    """The parts of a cupy.ndarray the launcher reads, over a NumPy view."""

    def __init__(self, a):
        self.a = a
        self.shape, self.dtype, self.strides, self.flags = a.shape, a.dtype, a.strides, a.flags
        self.data = types.SimpleNamespace(ptr=a.__array_interface__["data"][0])


def _nd_offsets(n, shape, strides):
    """elementwise.cuh's nd_offsets for i = 0 .. n-1, one array per operand."""
    i = np.arange(n, dtype=np.int64)
    offs = [np.zeros(n, np.int64) for _ in strides]
    for ax in range(int(shape["ndim"]) - 1, 0, -1):
        q, r = np.divmod(i, shape["dim"][ax])
        for o, s in zip(offs, strides):
            o += r * s["s"][ax]
        i = q
    for o, s in zip(offs, strides):
        o += i * s["s"][0]
    return offs


def _addresses(arr, out_shape):
    """Byte address of each element of arr broadcast to out_shape, in C order."""
    b = np.broadcast_to(arr.a, out_shape)
    idx = np.indices(out_shape).reshape(len(out_shape), -1) if out_shape else np.zeros((0, 1), int)
    return arr.data.ptr + (np.asarray(b.strides, np.int64)[:, None] * idx).sum(axis=0)


class FakeKernel:
    calls: list = []

    def __init__(self, expr):
        self.expr = expr
        head = expr.split("<")[0]
        self.variant = head.rsplit("_", 1)[1]
        self.n_in, self.scalars = _KINDS[head[len("hf::ew_"):].rsplit("_", 1)[0]]

    def __call__(self, grid, block, args):
        FakeKernel.calls.append(self)
        ins, out = args[:self.n_in], args[self.n_in]
        n = args[self.n_in + 1]
        assert type(n) is np.int64 and n == out.a.size > 0
        rest = args[self.n_in + 2:]
        if self.variant == "nd":
            geom, rest = rest[:self.n_in + 2], rest[self.n_in + 2:]
            assert geom[0].dtype == eng.SHAPE_DTYPE and all(g.dtype == eng.STRIDES_DTYPE for g in geom[1:])
            offs = _nd_offsets(int(n), geom[0], geom[1:])
            for arr, off in zip(list(ins) + [out], offs):
                got = arr.data.ptr + off * arr.dtype.itemsize
                np.testing.assert_array_equal(got, _addresses(arr, out.shape))
        else:
            width = 16 // max(a.dtype.itemsize for a in list(ins) + [out])
            for arr in list(ins) + [out]:
                assert arr.a.flags.c_contiguous and arr.a.size == out.a.size
                assert arr.data.ptr % (width * arr.dtype.itemsize) == 0
        assert len(rest) == len(self.scalars)
        work = np.int64 if "gen_iota, bool" in self.expr else out.dtype.type
        for v, kind in zip(rest, self.scalars):
            want = np.int32 if kind == "conj" else work
            assert type(v) is want, (self.expr, kind, type(v))
        self.last_scalars = rest


@pytest.fixture(autouse=True)
def fake_gpu(monkeypatch):
    monkeypatch.setattr(eng, "get_kernels", lambda file, pair: tuple(FakeKernel(e) for e in pair))
    monkeypatch.setattr(eng, "grid_for", lambda n, per_thread=1, **k: 1)
    FakeKernel.calls = []


def _plan(desc, arrays, conj=None, with_strides=True):
    dts = tuple(a.dtype for a in arrays)
    shapes = tuple(a.shape for a in arrays)
    outs = infer(desc, dts, shapes)
    strides = tuple(a.strides for a in arrays) if with_strides else None
    conj = conj or (False,) * len(arrays)
    return ce.HANDLERS[type(desc)].make(desc, dts, shapes, outs, strides, conj), outs


def _run(desc, arrays, out=None, **params):
    run, outs = _plan(desc, arrays)
    (shape, dt), = outs
    out = Arr(np.empty(shape, dt)) if out is None else out
    before = len(FakeKernel.calls)
    run([Arr(a) for a in arrays], out, **params)
    return FakeKernel.calls[-1] if len(FakeKernel.calls) > before else None


def test_contiguous_aligned_takes_the_vector_kernel():
    x = np.ones((4, 5), np.float32)
    assert _run(d.AnalyticUnary(UnaryOp.EXP), [x]).variant == "vec"
    assert _run(d.ScalarBinary(BinaryOp.ADD), [x, x + 1]).variant == "vec"
    k = _run(d.ComplexRealUnary(UnaryOp.ABS), [np.ones(7, np.complex64)])
    assert k.variant == "vec" and "hf::complex<float>, float" in k.expr
    # one complex128 per 16 bytes: no vector kernel, the N-d one at rank 1
    assert _run(d.ComplexRealUnary(UnaryOp.ABS), [np.ones(7, np.complex128)]).variant == "nd"


@pytest.mark.parametrize("make", [
    lambda: [np.arange(24.0).reshape(4, 6).T],                       # transposed
    lambda: [np.arange(24.0).reshape(4, 6)[::-1, ::2]],              # negative + step
    lambda: [np.arange(24.0).reshape(2, 3, 4)[:, 1:, ::3]],          # sliced, 3-d
    lambda: [np.arange(5.0)[1:]],                                    # contiguous, unaligned
])
def test_strided_inputs_take_the_nd_kernel(make):
    assert _run(d.AnalyticUnary(UnaryOp.SQRT), make()).variant == "nd"


@pytest.mark.parametrize("shapes", [((3, 1, 4), (5, 1)), ((), (2, 3)), ((6,), (1,)), ((2, 1), (2, 7))])
def test_broadcast_binary(shapes):
    a = np.ones(shapes[0], np.int16)
    b = np.ones(shapes[1], np.int16)[..., ::-1]
    assert _run(d.ScalarBinary(BinaryOp.MUL), [a, b]).variant == "nd"


def test_where_and_mask_where_broadcast():
    c = np.array([True, False, True])
    a = np.ones((2, 3), np.float64)
    b = np.ones((2, 1), np.float64)
    assert _run(d.MaskWhere(), [c, a, b]).variant == "nd"
    assert _run(d.ScalarWhere(), [np.ones(16, bool), np.ones(16, np.int8), np.ones(16, np.int8)]).variant == "vec"


@pytest.mark.parametrize("make_out", [lambda: np.empty((12, 6), np.float32)[::2],
                                      lambda: np.empty((6, 6), np.float32).T,
                                      lambda: np.empty((6, 6), np.float32)[:, ::-1]])
def test_strided_out_uses_its_own_strides(make_out):
    x = np.ones((6, 6), np.float32)
    assert _run(d.ScalarUnary(UnaryOp.NEG), [x], out=Arr(make_out())).variant == "nd"


def test_strided_out_layouts_are_remembered():
    x = np.ones((4, 4), np.float64)
    run, _ = _plan(d.ScalarUnary(UnaryOp.SQUARE), [x])
    out = np.empty((4, 8))[:, ::2]
    for _ in range(3):
        run([Arr(x)], Arr(out))
    assert len(FakeKernel.calls) == 3


def test_zero_d_and_empty():
    x = np.array(2.5)
    assert _run(d.AnalyticUnary(UnaryOp.LOG), [x]).variant == "nd"
    assert _run(d.AnalyticUnary(UnaryOp.LOG), [np.ones((0, 3))]) is None


def test_conj_mask_and_cast():
    z = np.ones(8, np.complex64)
    run, _ = _plan(d.ScalarBinary(BinaryOp.ADD), [z, z], conj=(False, True))
    run([Arr(z), Arr(z)], Arr(np.empty(8, np.complex64)))
    assert FakeKernel.calls[-1].last_scalars[0] == 2
    run, _ = _plan(d.PointwiseCast(np.int8), [z], conj=(True,))
    run([Arr(z)], Arr(np.empty(8, np.int8)))
    k = FakeKernel.calls[-1]
    assert "cast_op<signed char>, hf::complex<float>, signed char" in k.expr and k.last_scalars[0] == 1


def test_conj_ignored_for_real_inputs():
    x = np.ones(4, np.float32)
    run, _ = _plan(d.ScalarUnary(UnaryOp.CONJ), [x], conj=(True,))
    run([Arr(x)], Arr(np.empty(4, np.float32)))
    assert FakeKernel.calls[-1].last_scalars[0] == 0


@pytest.mark.parametrize("dt", [np.bool_, np.uint8, np.int64, np.float32, np.complex128])
def test_generate(dt):
    dt = np.dtype(dt)
    run, _ = _plan_generate(d.Generate(d.GenerateKind.IOTA), (5, 4), dt)
    run((), Arr(np.empty((5, 4), dt)), start=1, step=2)
    assert FakeKernel.calls[-1].variant == ("nd" if dt.itemsize == 16 else "vec")
    run, _ = _plan_generate(d.Generate(d.GenerateKind.CONSTANT), (3, 4), dt)
    run((), Arr(np.empty((3, 8), dt)[:, ::2]), value=1)
    assert FakeKernel.calls[-1].variant == "nd"


def _plan_generate(desc, shape, dt):
    outs = infer(desc, (dt,), (shape,))
    return ce.HANDLERS[type(desc)].make(desc, (dt,), (shape,), outs, None, (False,)), outs


def test_make_contiguous_scaled_and_plain():
    x = np.arange(12.0).reshape(3, 4).T
    assert "cast_op<double>" in _run(d.MakeContiguous(), [x]).expr
    k = _run(d.MakeContiguous(), [x], alpha=2, beta=0.5)
    assert "unary_scaled" in k.expr and k.last_scalars[1:] == (2.0, 0.5)


def test_elementwise_binary_semirings():
    a = np.ones((3, 4), np.float32)
    assert "op_add" in _run(d.ElementwiseBinary(BinaryOp.ADD), [a, a]).expr
    k = _run(d.ElementwiseBinary(BinaryOp.MUL), [a, a], alpha=3, beta=1)
    assert "binary_scaled_vec<hf::op_multiply, hf::ep_axpby, float>" in k.expr
    k = _run(d.ElementwiseBinary(BinaryOp.MUL, Semiring.MAX_PLUS), [a, a], beta=1)
    assert "binary_scaled_nd<hf::op_add, hf::ep_accumulate<hf::op_maximum>, float>" in k.expr
    assert "op_minimum" in _run(d.ElementwiseBinary(BinaryOp.ADD, Semiring.MIN_PLUS), [a, a]).expr
    with pytest.raises(ValueError, match="alpha must be 1"):
        _run(d.ElementwiseBinary(BinaryOp.ADD, Semiring.MAX_MUL), [a, a], alpha=2)


def test_bad_out_and_unplanned_layouts():
    x = np.ones((2, 3), np.float32)
    run, _ = _plan(d.AnalyticUnary(UnaryOp.SIN), [x])
    with pytest.raises(ValueError, match="shape"):
        run([Arr(x)], Arr(np.empty((3, 2), np.float32)))
    with pytest.raises(ValueError, match="dtype"):
        run([Arr(x)], Arr(np.empty((2, 3), np.float64)))
    run, _ = _plan(d.AnalyticUnary(UnaryOp.SIN), [x], with_strides=False)
    with pytest.raises(ValueError, match="without strides"):
        run([Arr(x.T.copy().T)], Arr(np.empty((2, 3), np.float32)))


def test_supports():
    h = ce.HANDLERS
    assert h[d.AnalyticUnary].supports(d.AnalyticUnary(UnaryOp.EXP), (np.dtype(np.float32),))
    assert not h[d.AnalyticUnary].supports(d.AnalyticUnary(UnaryOp.EXP), (np.dtype(np.int32),))
    assert h[d.AnalyticUnary].supports(d.AnalyticUnary(UnaryOp.EXP), (np.dtype(np.float16),))
    assert not h[d.AnalyticUnary].supports(d.AnalyticUnary(UnaryOp.EXP), (np.dtype(np.longdouble),))
    assert h[d.MetadataBinary].supports(d.MetadataBinary(BinaryOp.EQUAL), (np.dtype(np.int8),) * 2)
    assert not h[d.MetadataBinary].supports(d.MetadataBinary(BinaryOp.EQUAL), (np.dtype(np.float32),) * 2)
    assert not h[d.MaskWhere].supports(d.MaskWhere(), (np.dtype(bool),) + (np.dtype(np.int32),) * 2)
    assert h[d.ComplexScale].supports(d.ComplexScale(), (np.dtype(np.complex64), np.dtype(np.float32)))
    assert not h[d.ComplexScale].supports(d.ComplexScale(), (np.dtype(np.complex64), np.dtype(np.float64)))
    assert h[d.Generate].supports(d.Generate(d.GenerateKind.IOTA), None)
