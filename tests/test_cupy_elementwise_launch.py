"""The CuPy elementwise backend's launch logic, checked without a GPU.

The kernels are replaced by fakes that check the call: the variant (vector kernel only
for contiguous, aligned operands of the output's shape), the argument count and the
exact NumPy scalar types of the C++ parameters, and -- for the N-d kernel -- that the
shape/strides structs address exactly the elements NumPy's broadcasting would (computed
as elementwise.cuh's nd_offsets does). Arrays are NumPy views standing in for CuPy ones.
"""
from __future__ import annotations

import math
import types

import numpy as np
import pytest

pytest.importorskip("cupy")

from hipfer.backends.cupy import _engine as eng  # noqa: E402
from hipfer.backends.cupy import elementwise as ce  # noqa: E402
from hipfer.kernels import elementwise as ek  # noqa: E402
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


def _runs(n, shape, strides, run):
    """elementwise.cuh's for_runs: (flat C index, offsets per operand) of every element
    the N-d kernel touches, run by run (a run: up to `run` elements of the inner axis)."""
    nd = int(shape["ndim"])
    dims = [int(x) for x in shape["dim"][:nd]]
    st = [[int(x) for x in s["s"][:nd]] for s in strides]
    n0 = dims[-1]
    per_row = -(-n0 // run)
    runs = (n // n0 if nd > 1 else 1) * per_row
    w = np.arange(runs, dtype=np.int64)
    row, c = (np.divmod(w, per_row) if nd > 1 else (np.zeros_like(w), w))
    offs = [np.zeros(runs, np.int64) for _ in st]
    i = row.copy()
    for ax in range(nd - 2, 0, -1):
        i, r = np.divmod(i, dims[ax])
        for o, s in zip(offs, st):
            o += r * s[ax]
    for o, s in zip(offs, st):
        o += i * s[0] if nd > 1 else 0
        o += c * run * s[-1]
    j = np.arange(run)
    keep = (c[:, None] * run + j[None, :]) < n0  # cnt = min(run, n0 - j0)
    flat = (row * n0 + c * run)[:, None] + j[None, :]
    return flat[keep], [(o[:, None] + j[None, :] * s[-1])[keep] for o, s in zip(offs, st)]


def _tiles(n, shape, strides, ma, mb, tile=32):
    """elementwise.cuh's for_tiles: offsets per operand of every element of every tile."""
    nd = int(shape["ndim"])
    assert nd >= 2
    dims = [int(x) for x in shape["dim"][:nd]]
    st = [[int(x) for x in s["s"][:nd]] for s in strides]
    na, nb = dims[-2], dims[-1]
    TA, TB = tile * ma, tile * mb
    ta, tb = -(-na // TA), -(-nb // TB)
    tiles = n // (na * nb) * ta * tb
    out = [[] for _ in st]
    seen = set()
    for t in range(tiles):
        bt, r = divmod(t, ta * tb)
        band, q = divmod(r, ek.TILE_BAND * tb)  # bands of TILE_BAND rows of tiles, column-major inside
        rows = min(ek.TILE_BAND, ta - band * ek.TILE_BAND)
        ib, ia = divmod(q, rows)
        ia += band * ek.TILE_BAND
        base = [0] * len(st)
        i = bt
        for ax in range(nd - 3, 0, -1):
            i, q = divmod(i, dims[ax])
            base = [b + q * s[ax] for b, s in zip(base, st)]
        base = [b + (i * s[0] if nd > 2 else 0) + ia * TA * s[-2] + ib * TB * s[-1]
                for b, s in zip(base, st)]
        assert 0 <= ia < ta and 0 <= ib < tb and (bt, ia, ib) not in seen
        seen.add((bt, ia, ib))
        ea, eb = min(TA, na - ia * TA), min(TB, nb - ib * TB)
        a, b = np.meshgrid(np.arange(ea), np.arange(eb), indexing="ij")
        for o, bs, s in zip(out, base, st):
            o.append((bs + a * s[-2] + b * s[-1]).ravel())
    return [np.concatenate(o) for o in out]


def _addresses(arr, out_shape):
    """Byte address of each element of arr broadcast to out_shape, in C order."""
    b = np.broadcast_to(arr.a, out_shape)
    idx = np.indices(out_shape).reshape(len(out_shape), -1) if out_shape else np.zeros((0, 1), int)
    return arr.data.ptr + (np.asarray(b.strides, np.int64)[:, None] * idx).sum(axis=0)


def _check_mapping(arrays, out, offs):
    """The kernel wrote every element of out exactly once, from the input elements NumPy's
    broadcasting pairs with it. offs: element offsets per operand (out last), one per write."""
    want = [_addresses(a, out.shape) for a in arrays] + [_addresses(out, out.shape)]
    got = [a.data.ptr + o * a.dtype.itemsize for a, o in zip(list(arrays) + [out], offs)]
    assert len(got[-1]) == out.a.size and len(np.unique(got[-1])) == out.a.size
    order_w, order_g = np.argsort(want[-1], kind="stable"), np.argsort(got[-1], kind="stable")
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g[order_g], w[order_w])


class FakeKernel:
    calls: list = []

    def __init__(self, expr):
        self.expr = expr
        head = expr.split("<")[0]
        self.variant = head.rsplit("_", 1)[1]
        self.n_in, self.scalars = _KINDS[head[len("hf::ew_"):].rsplit("_", 1)[0]]

    def __call__(self, grid, block, args, shared_mem=0, align=None):
        if align is not None:  # the engine's kernels launch only when these pointers are aligned
            assert self.variant == "vec" and len(align) == self.n_in + 1
            if any(a.data.ptr & m for a, m in zip(args, align)):
                return False
        FakeKernel.calls.append(self)
        ins, out = args[:self.n_in], args[self.n_in]
        n = args[self.n_in + 1]
        assert type(n) is np.int64 and n == out.a.size > 0
        rest = args[self.n_in + 2:]
        ops = list(ins) + [out]
        if self.variant in ("nd", "tile"):
            geom, rest = rest[:self.n_in + 2], rest[self.n_in + 2:]
            assert geom[0].dtype == eng.SHAPE_DTYPE and all(g.dtype == eng.STRIDES_DTYPE for g in geom[1:])
            if self.variant == "nd":
                run = ek.nd_run(*(a.dtype for a in ops))
                flat, offs = _runs(int(n), geom[0], geom[1:], run)
                if "generate" in self.expr:  # iota's i: the C-order position in out
                    np.testing.assert_array_equal(np.sort(flat), np.arange(int(n)))
                    want = _addresses(out, out.shape)
                    np.testing.assert_array_equal(out.data.ptr + offs[-1] * out.dtype.itemsize, want[flat])
            else:
                assert block == (ek.TILE_BLOCK,) and self.n_in > 0
                offs = _tiles(int(n), geom[0], geom[1:], *ek.tile_shape(*(a.dtype for a in ops)), ek.TILE)
            _check_mapping(ins, out, offs)
        else:
            width = ek.vec_width(*(a.dtype for a in ops))
            splat = 0
            if self.n_in:  # bit k: input k is a broadcast scalar, read at offset 0
                splat, rest = rest[0], rest[1:]
                assert type(splat) is np.int32
            self.splat = splat
            for k, arr in enumerate(ops):
                if splat >> k & 1:
                    assert arr.a.size == 1
                else:
                    assert arr.a.size == out.a.size and arr.data.ptr % (width * arr.dtype.itemsize) == 0
            # one flat index for every operand: each must be dense in the same memory order
            offs = [np.zeros(int(n), np.int64) if splat >> k & 1 else np.arange(int(n), dtype=np.int64)
                    for k in range(len(ops))]
            if self.n_in:
                _check_mapping(ins, out, offs)
            else:
                assert out.a.flags.c_contiguous
        self.grid, self.block = grid, block
        assert len(rest) == len(self.scalars)
        work = np.int64 if "gen_iota, bool" in self.expr else out.dtype.type
        for v, kind in zip(rest, self.scalars):
            want = np.int32 if kind == "conj" else work
            assert type(v) is want, (self.expr, kind, type(v))
        self.last_scalars = rest
        return True


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
    k = _run(d.ComplexRealUnary(UnaryOp.ABS), [_aligned(7, np.complex64)], out=Arr(_aligned(7, np.float32)))
    assert k.variant == "vec" and "hf::complex<float>, float" in k.expr
    # one complex128 per 16 bytes: no vector kernel, the N-d one at rank 1
    z = np.ones(7, np.complex128)
    assert _run(d.ScalarBinary(BinaryOp.ADD), [z, z]).variant == "nd"


@pytest.mark.parametrize("desc, make", [
    (d.ScalarBinary(BinaryOp.ADD), lambda: [np.ones((4, 5), np.float32), np.ones((4, 5), np.float32)]),
    (d.ScalarBinary(BinaryOp.ADD), lambda: [np.arange(9.0)[1:], np.ones(8)]),         # unaligned
    (d.ScalarBinary(BinaryOp.MUL), lambda: [np.ones((6,), np.int16), np.ones((1,), np.int16)]),
    (d.AnalyticUnary(UnaryOp.EXP), lambda: [np.arange(24.0).reshape(4, 6).T]),       # transposed
    (d.AnalyticUnary(UnaryOp.EXP), lambda: [np.ones((0, 3))]),                       # empty
    (d.ScalarBinary(BinaryOp.ADD), lambda: [np.ones((3, 1, 4)), np.ones((5, 1))]),   # broadcast
])
def test_run_fresh_launches_what_the_checked_call_does(desc, make):
    """run_fresh -- Backend.runner's path for an out it has just allocated -- picks the
    same kernel with the same arguments as the checked __call__ (FakeKernel checks them)."""
    arrays = [Arr(a) for a in make()]
    run, outs = _plan(desc, [a.a for a in arrays])
    (shape, dt), = outs
    got = []
    for call in (run, run.run_fresh):
        before = len(FakeKernel.calls)
        call(arrays, Arr(np.empty(shape, dt)))
        got.append([(k.expr, k.grid, k.block) for k in FakeKernel.calls[before:]])
    assert got[0] == got[1]
    assert len(got[0]) == (0 if 0 in shape else 1)


@pytest.mark.parametrize("make", [
    lambda: [np.arange(24.0).reshape(4, 6).T],                       # transposed
    lambda: [np.arange(24.0).reshape(4, 6)[::-1, ::2]],              # negative + step
    lambda: [np.arange(24.0).reshape(2, 3, 4)[:, 1:, ::3]],          # sliced, 3-d
    lambda: [np.arange(5.0)[1:]],                                    # contiguous, unaligned
])
def test_strided_inputs_take_the_nd_kernel(make):
    assert _run(d.AnalyticUnary(UnaryOp.SQRT), make()).variant == "nd"


@pytest.mark.parametrize("shapes, variant", [(((3, 1, 4), (5, 1)), "nd"), (((), (2, 3)), "nd"),
                                             (((6,), (1,)), "vec"), (((2, 1), (2, 7)), "nd")])
def test_broadcast_binary(shapes, variant):
    a = np.ones(shapes[0], np.int16)
    b = np.ones(shapes[1], np.int16)[..., ::-1]
    assert _run(d.ScalarBinary(BinaryOp.MUL), [a, b]).variant == variant  # a scalar b: vec


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


# ---------------------------------------------------------------- layouts (issue 7)
def _variant(desc, arrays, out=None):
    return _run(desc, arrays, out=out).variant


def test_output_order_k_lets_permuted_dense_operands_vectorise():
    x = np.ones((40, 24), np.float32, order="F")
    assert _variant(d.AnalyticUnary(UnaryOp.EXP), [x], out=Arr(np.empty((40, 24), np.float32, order="F"))) == "vec"
    a = np.ones((8, 5, 6), np.float64).transpose(2, 0, 1)
    out = Arr(np.empty((8, 5, 6), np.float64).transpose(2, 0, 1))
    assert _variant(d.ScalarBinary(BinaryOp.ADD), [a, a + 1], out=out) == "vec"


@pytest.mark.parametrize("dt", [np.float32, np.int8, np.complex128, np.bool_])
def test_a_transposed_copy_takes_the_tiled_kernel(dt):
    """MakeContiguous of a transposed array (a C-ordered out, the input's unit stride on
    the other axis): the tiled copy kernel."""
    x = np.ones((48, 40), dt).T
    k = _run(d.MakeContiguous(), [x])
    assert k.variant == "tile" and k.block == (ek.TILE_BLOCK,) and "_tile<" in k.expr
    k = _run(d.PointwiseCast(np.dtype(dt)), [np.ones((3, 64, 40), dt).transpose(0, 2, 1)],
             out=Arr(np.empty((3, 40, 64), dt)))
    assert k.variant == "tile"


@pytest.mark.parametrize("desc, arrays", [
    (d.AnalyticUnary(UnaryOp.EXP), lambda: [np.ones((48, 40), np.float32).T]),
    (d.ScalarBinary(BinaryOp.ADD), lambda: [np.ones((48, 40), np.float32).T, np.ones((40, 48), np.float32)]),
    (d.ScalarBinary(BinaryOp.ADD), lambda: [np.ones((40, 48), np.float32), np.ones((48, 40), np.float32).T]),
    (d.ScalarBinary(BinaryOp.MUL), lambda: [np.ones((3, 37, 45), np.complex64).transpose(0, 2, 1),
                                            np.ones((45,), np.complex64)[None, :, None]]),
    (d.MaskWhere(), lambda: [np.ones((33, 70), bool).T, np.ones((70, 33)), np.ones((33, 70)).T]),
    (d.PointwiseCast(np.float16), lambda: [np.ones((3, 64, 40), np.int64).transpose(0, 2, 1)[:, ::-1]]),
])
def test_other_ops_on_transposed_inputs_take_the_nd_kernel(desc, arrays):
    """Only copies have a tiled kernel (compile time, see elementwise.tile_of): the other
    ops read an input transposed to a C-ordered out through the N-d kernel, over blocks
    of the two axes (two more axes) where their lengths allow (FakeKernel checks the
    addresses)."""
    arrays = arrays()
    k = _run(desc, arrays)
    assert k.variant == "nd"
    blocked = all(n % 8 == 0 for n in arrays[0].shape[-2:])
    run, _ = _plan(desc, arrays)
    assert isinstance(run, ce._Launcher)  # the plan runs the launcher itself
    assert (run.lay_c[-1][0]["ndim"] >= 4) == blocked  # its C-order layout's geometry rank


def test_blocked_geometry():
    shape, strides = (40, 96), [(1, 40), (96, 1), (96, 1)]
    assert ce._blocked(shape, strides, 0, 4) == (
        (5, 3, 8, 32), [(8, 32 * 40, 1, 40), (8 * 96, 32, 96, 1), (8 * 96, 32, 96, 1)])
    assert ce._blocked((3, 64, 64), [(4096, 1, 64), (4096, 64, 1)], 1, 4) == (
        (3, 2, 2, 32, 32), [(4096, 32, 32 * 64, 1, 64), (4096, 32 * 64, 32, 64, 1)])
    assert ce._blocked((36, 64), [(1, 36), (64, 1)], 0, 4) is None  # 36: not a multiple of 8


def test_f_ordered_out_of_c_inputs():
    x = np.ones((40, 64), np.float32)
    assert _variant(d.AnalyticUnary(UnaryOp.EXP), [x], out=Arr(np.empty((40, 64), np.float32, order="F"))) == "nd"
    assert _variant(d.MakeContiguous(), [x], out=Arr(np.empty((40, 64), np.float32, order="F"))) == "tile"


@pytest.mark.parametrize("arrays", [
    lambda: [np.ones((64, 32), np.float32), np.ones(32, np.float32)[None, :]],   # row broadcast
    lambda: [np.ones((64, 32), np.float32), np.ones(64, np.float32)[:, None]],   # column broadcast
    lambda: [np.ones(64, np.float32)[:, None], np.ones(32, np.float32)[None, :]],  # outer
    lambda: [np.ones((64, 64), np.float32)[:, ::2], np.ones((64, 32), np.float32)],  # step-sliced
    lambda: [np.ones((7, 3), np.float32).T, np.ones((3, 7), np.float32)],        # small: no tiles
])
def test_broadcast_and_strided_take_the_nd_kernel(arrays):
    assert _variant(d.ScalarBinary(BinaryOp.ADD), arrays()) == "nd"


def _aligned(n, dt, align=64):
    """n ones of dt starting at an address that is a multiple of align (as CuPy's are)."""
    dt = np.dtype(dt)
    buf = np.ones(n * dt.itemsize + align, np.uint8)
    k = -buf.__array_interface__["data"][0] % align
    return buf[k:k + n * dt.itemsize].view(dt)


def test_broadcast_scalars_take_the_vector_kernel():
    """A 0-d (or size-1) operand broadcast over a dense one: the vector kernel, reading it
    once (its bit in splat), whatever its alignment."""
    c, x = _aligned(1003, bool), _aligned(1003, np.float32)
    zero = np.empty(2, np.float32)[1:].reshape(())  # 4-byte aligned only
    run, _ = _plan(d.MaskWhere(), [c, x, zero])
    run([Arr(c), Arr(x), Arr(zero)], Arr(_aligned(1003, np.float32)))
    k = FakeKernel.calls[-1]
    assert k.variant == "vec" and k.splat == 4
    k = _run(d.ScalarBinary(BinaryOp.MUL), [np.array(2.0), _aligned(64 * 32, np.float64).reshape(64, 32)],
             out=Arr(_aligned(64 * 32, np.float64).reshape(64, 32)))
    assert k.variant == "vec" and k.splat == 1
    k = _run(d.ScalarBinary(BinaryOp.ADD), [np.ones((64, 32), np.float32), np.ones((1, 1), np.float32)])
    assert k.variant == "vec" and k.splat == 2
    k = _run(d.ScalarBinary(BinaryOp.ADD), [np.ones((64, 32), np.float32), np.ones((64, 32), np.float32)])
    assert k.variant == "vec" and k.splat == 0


def test_generate_keeps_c_order_for_any_out():
    run, _ = _plan_generate(d.Generate(d.GenerateKind.IOTA), (5, 7), np.dtype(np.float32))
    run((), Arr(np.empty((5, 7), np.float32, order="F")), start=1, step=2)  # FakeKernel checks C positions
    assert FakeKernel.calls[-1].variant == "nd"


def _random_operand(rng, shape, dt):
    """An array of `shape` (or a broadcastable one) in a random layout: permuted, sliced,
    reversed, offset by one element, or with axes broadcast."""
    shape = list(shape)
    if rng.random() < 0.3:
        shape = [1 if rng.random() < 0.5 else n for n in shape]
    if rng.random() < 0.2:
        shape = shape[rng.integers(0, len(shape) + 1):]
    step = [int(rng.choice([1, 1, 2, -1])) for _ in shape]
    perm = rng.permutation(len(shape))
    big = [abs(s) * n for s, n in zip(step, shape)]
    base = np.empty([big[p] for p in perm] + ([1] if rng.random() < 0.3 else []), dt)
    base = base.reshape(-1)[1:] if rng.random() < 0.3 and base.size > 1 else base.reshape(-1)
    base = np.empty(math.prod(big) + 1, dt)[1:] if base.size < math.prod(big) else base
    a = base[:math.prod(big)].reshape([big[p] for p in perm]).transpose(np.argsort(perm))
    return a[tuple(slice(None, None, s) for s in step)]


@pytest.mark.parametrize("seed", range(40))
def test_random_layouts_address_what_numpy_broadcasts(seed):
    """Whatever variant runs, it writes each out element once from the right inputs
    (FakeKernel emulates the kernels' run / tile / vector walks)."""
    rng = np.random.default_rng(seed)
    nd = int(rng.integers(1, 5))
    shape = tuple(int(rng.choice([1, 2, 3, 5, 17, 33, 40])) for _ in range(nd))
    dt = np.dtype(rng.choice([np.int8, np.float32, np.float64, np.complex128]))
    arrays = [_random_operand(rng, shape, dt) for _ in range(2)]
    out_shape = np.broadcast_shapes(*(a.shape for a in arrays))
    out = Arr(_random_operand(rng, out_shape, dt)) if rng.random() < 0.5 else None
    if out is not None and out.shape != out_shape:
        out = None
    k = _run(d.ScalarBinary(BinaryOp.ADD), arrays, out=out)
    assert k is None or k.variant in ("vec", "nd", "tile")
    c = _random_operand(rng, out_shape, np.bool_)
    if np.broadcast_shapes(c.shape, out_shape) == out_shape:
        _run(d.MaskWhere() if dt.kind in "fc" else d.MetadataWhere(), [c] + arrays, out=out)


@pytest.mark.parametrize("shape", [(40, 600), (2, 50, 1100)])
def test_tiles_walk_in_bands(shape):
    """More tile rows than one band (TILE_BAND), the last band partial, with batch axes."""
    x = np.ones(shape, np.float32)
    k = _run(d.MakeContiguous(), [np.swapaxes(x, -1, -2)])
    assert k.variant == "tile"


def test_grid_for_keeps_a_launch_within_32_bit_threads():
    # HIP caps a launch's total threads at 32 bits; grid-stride loops cover the rest
    for block in (64, 256, 1024):
        g = eng.grid_for(1 << 40, 1, block=block, max_waves=1 << 20)
        assert 1 <= g and g * block <= 1 << 31
    assert eng.grid_for(1000, 4) == 1
