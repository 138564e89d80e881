"""Without a GPU: every elementwise op row has its device functor in kernels/ops.cuh,
and elementwise.instances() lists every kernel the CuPy backend can ask for (so the
offline compile check covers everything that can run)."""
from __future__ import annotations

import re

import numpy as np
import pytest

from hipfer.kernels import DTYPES, KERNEL_DIR, all_instances, dtypes_of_kinds, module_source
from hipfer.kernels import elementwise as ek
from hipfer.prims import descriptors as d
from hipfer.prims.infer import real_dtype
from hipfer.prims.optable import BinaryOp, UnaryOp
from hipfer.prims.semiring import Semiring

ROWS = [op.row for op in list(UnaryOp) + list(BinaryOp)]


@pytest.fixture(scope="module")
def exprs():
    return {e for _, _, es in ek.instances() for e in es}


def test_every_op_row_has_a_functor():
    src = (KERNEL_DIR / "ops.cuh").read_text()
    functors = set(re.findall(r"struct\s+(op_\w+)\s*\{", src))
    functors |= set(re.findall(r"HF_ANALYTIC\((op_\w+),", src))
    missing = [r.name for r in ROWS if f"op_{r.name}" not in functors]
    assert not missing, f"ops.cuh lacks functors for {missing}"


def _names(pair):
    return {e for e in pair if e is not None}


def test_every_row_and_dtype_is_instantiated(exprs):
    for row in ROWS:
        build = ek.unary if row.arity == 1 else ek.binary
        for dt in dtypes_of_kinds(row.kinds):
            vec, nd = build(row, dt)
            assert nd in exprs and (vec is None or vec in exprs), (row.name, dt)
            assert ek.tile_of((vec, nd)) is None, (row.name, dt)  # copies only
            assert (vec is None) == (ek.vec_width(dt, ek.result_dtype(row, dt)) == 1)


def test_result_dtypes_follow_the_row_rule():
    assert ek.unary(UnaryOp.ABS.row, np.complex64)[0] == "hf::ew_unary_vec<hf::op_absolute, hf::complex<float>, float>"
    assert ek.binary(BinaryOp.GREATER.row, np.float64)[1] == \
        "hf::ew_binary_nd<hf::op_greater, double, double, bool>"
    assert ek.unary(UnaryOp.REAL.row, np.int16)[0].endswith("short, short>")


def test_other_kernels_are_instantiated(exprs):
    wanted = set()
    for t in DTYPES:
        wanted |= _names(ek.where(t)) | _names(ek.scaled_copy(t))
        wanted |= {e for k in d.GenerateKind for e in _names(ek.generate(k, t))}
        wanted |= {e for s in DTYPES for e in _names(ek.cast(s, t))}
    for t in dtypes_of_kinds("c"):
        wanted |= _names(ek.complex_scale(t))
    for s in Semiring:
        for op in (BinaryOp.ADD, BinaryOp.MUL):
            for t in dtypes_of_kinds("iuf" if s.is_tropical else "biufc"):
                wanted |= _names(ek.semiring_plain(op, s, t)) | _names(ek.semiring_scaled(op, s, t))
    missing = sorted(wanted - exprs)
    assert not missing, missing[:5]


def test_tropical_functors():
    assert ek.semiring_functor(BinaryOp.ADD, Semiring.MAX_PLUS) == "hf::op_maximum"
    assert ek.semiring_functor(BinaryOp.MUL, Semiring.MIN_PLUS) == "hf::op_add"
    assert ek.semiring_functor(BinaryOp.MUL, Semiring.MAX_MUL) == "hf::op_multiply"
    vec, nd = ek.semiring_scaled(BinaryOp.ADD, Semiring.MIN_PLUS, np.int32)
    assert vec is None and "ep_accumulate<hf::op_minimum>" in nd
    with pytest.raises(ValueError, match="ADD or MUL"):
        ek.semiring_functor(BinaryOp.SUB, Semiring.STANDARD)


def test_groups_are_named_and_sourced():
    groups = ek.instances()
    assert all(g.startswith("ew_") and f == ek.FILE and es for g, f, es in groups)
    assert len({g for g, _, _ in groups}) == len(groups)
    assert "ew_" in " ".join(g for g, _, _ in all_instances())
    src = module_source(ek.FILE)
    assert not re.search(r'^\s*#\s*include\s+"', src, re.M)  # ops.cuh and common.cuh are inlined
    for kernel in ("unary", "binary", "where", "generate", "unary_scaled", "binary_scaled"):
        for variant in ("vec", "nd") + (("tile",) if kernel in ek.TILED else ()):
            assert re.search(rf"void (HF_TILE_BOUNDS\(.*\) )?ew_{kernel}_{variant}\(", src), (kernel, variant)


def test_tile_names_and_run_lengths():
    assert ek.tile_of(ek.binary(BinaryOp.ADD.row, np.float32)) is None
    assert ek.tile_of(ek.where(np.complex64)) is None
    assert ek.tile_of(ek.cast(np.int8, np.float16)) is None
    for t in DTYPES:  # the plain copies have one, and it is instantiated
        tile = ek.tile_of(ek.cast(t, t))
        assert tile.startswith("hf::ew_unary_tile<hf::cast_op<") and tile in {
            e for _, _, es in ek.instances() for e in es}
    assert ek.tile_of(ek.scaled_copy(np.float32)) is None
    assert ek.tile_of(ek.generate(d.GenerateKind.IOTA, np.float32)) is None
    # nd_run<...>: max(4, one 16-byte access of the widest operand)
    assert [ek.nd_run(t) for t in (np.int8, np.float16, np.float32, np.float64, np.complex128)] == [16, 8, 4, 4, 4]
    assert ek.nd_run(np.bool_, np.float32) == 4
    src = module_source(ek.FILE)
    assert ek.nd_runs((5, 7), 4) == 10 and ek.nd_runs((9,), 4) == 3
    assert ek.tiles((3, 33, 64), 1, 1) == 3 * 2 * 2 and ek.tiles((3, 33, 300), 2, 4) == 3 * 1 * 3
    assert [ek.tile_shape(t) for t in (np.int8, np.float16, np.float32, np.float64, np.complex128)] == \
        [(4, 2), (4, 2), (2, 2), (2, 1), (1, 1)]
    assert "static const int MA = size >= 16 ? 1 : size >= 4 ? 2 : 4;" in src
    assert "static const int MB = size >= 8 ? 1 : 2;" in src
    src = module_source(ek.FILE)
    assert "const int value = pack_width<T...>::value > 4 ? pack_width<T...>::value : 4;" in src
    # vec_width<...>: 16 bytes of the narrowest operand, at most 32 of the widest
    assert "static const int a = 16 / narrowest<T...>::value, b = 32 / widest<T...>::value;" in src
    assert [ek.vec_width(*t) for t in ((np.float32,), (np.complex64, np.float32), (np.bool_, np.float32),
                                       (np.complex128, np.float64), (np.complex128,), (np.int8, np.float64))] \
        == [4, 4, 8, 2, 1, 4]
    assert f"#define HF_TILE {ek.TILE}" in src and f"#define HF_TILE_BAND {ek.TILE_BAND}" in src and "#define HF_TILE_ROWS 8" in src
    assert ek.TILE_BLOCK == ek.TILE * 8 and ek.TILE_BLOCK % 64 == 0


def test_cupy_handlers_ask_only_for_listed_kernels(exprs, monkeypatch):
    """supports() is honest: whatever a handler accepts, its kernels are in instances()."""
    pytest.importorskip("cupy")
    from hipfer.backends.cupy import elementwise as ce

    asked = []
    class Asked:  # stands in for a launcher: records the kernel pair it was made for
        def __init__(self, pair, *a, **k):
            asked.append(pair)

    monkeypatch.setattr(ce, "_Launcher", Asked)

    def descriptors():
        for op in UnaryOp:
            yield d.ScalarUnary(op) if op.row.family == "scalar" else d.AnalyticUnary(op), 1
            yield d.ComplexRealUnary(op), 1
        for op in BinaryOp:
            fam = {"scalar": d.ScalarBinary, "analytic": d.AnalyticBinary}.get(op.row.family)
            if fam:
                yield fam(op), 2
            yield d.MetadataBinary(op), 2
        for s in Semiring:
            yield d.ElementwiseBinary(BinaryOp.ADD, s), 2
            yield d.ElementwiseBinary(BinaryOp.MUL, s), 2
        yield d.ComplexScale(), 0
        for k in d.GenerateKind:
            yield d.Generate(k), 0
        for t in DTYPES:
            yield d.PointwiseCast(t), 1
        yield d.MakeContiguous(), 1

    for desc, arity in descriptors():
        h = ce.HANDLERS[type(desc)]
        for t in DTYPES:
            dts = (t,) * arity if arity else ((t, real_dtype(t)) if isinstance(desc, d.ComplexScale) else (t,))
            if not h.supports(desc, dts):
                continue
            outs = (((), t),)
            run = h.make(desc, dts, ((),) * len(dts), outs, None, (False,) * len(dts))
            if isinstance(desc, (d.MakeContiguous, d.ElementwiseBinary)):
                # the scaled launchers are built on first use: build them too
                try:
                    run([], None, alpha=1, beta=1)
                except (TypeError, AttributeError):
                    pass
    for where in (d.ScalarWhere(), d.MetadataWhere(), d.MaskWhere()):
        for t in DTYPES:
            dts = (np.dtype(bool), t, t)
            if ce.HANDLERS[type(where)].supports(where, dts):
                ce.HANDLERS[type(where)].make(where, dts, ((),) * 3, (((), t),), None, (False,) * 3)
    missing = sorted({e for pair in asked for e in _names(pair)} - exprs)
    assert asked and not missing, missing[:5]
