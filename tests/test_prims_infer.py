"""Validation and the backend contract: bad dtypes / shapes / modes / descriptors raise
TypeError or ValueError naming the problem; a backend is every family Protocol; its
has_*_support answers are honest; the plan cache hands back the same Plan."""
import numpy as np
import pytest

from hipfer.prims import descriptors as d
from hipfer.prims.descriptors import GemmOp, GenerateKind
from hipfer.prims.infer import infer
from hipfer.prims.optable import BinaryOp, ReduceOp, UnaryOp
from hipfer.prims.protocols import ALL_FAMILIES, SUPPORT_METHOD
from hipfer.prims.semiring import Semiring

from _util import ALL_DTYPES, plan_shapes

F32, F64, I32, B, C64 = (np.dtype(t) for t in (np.float32, np.float64, np.int32, np.bool_,
                                                np.complex64))


def _plan(be, desc, dtypes, shapes):
    return plan_shapes(be, desc, dtypes, shapes)


@pytest.mark.parametrize("desc,dtypes,shapes,match", [
    (d.ScalarUnary(UnaryOp.NEG), (B,), ((3,),), "NEG.*does not support dtype bool"),
    (d.AnalyticUnary(UnaryOp.SQRT), (I32,), ((3,),), "SQRT.*does not support dtype int32"),
    (d.ScalarBinary(BinaryOp.ADD), (F32, F64), ((3,), (3,)), "differ.*promote them first"),
    (d.AnalyticBinary(BinaryOp.HYPOT), (C64, C64), ((3,), (3,)), "complex64"),
    (d.ScalarWhere(), (I32, F32, F32), ((3,), (3,), (3,)), "condition must be bool"),
    (d.MaskWhere(), (B, I32, I32), ((3,), (3,), (3,)), "does not support dtype int32"),
    (d.ComplexScale(), (C64, F64), ((3,), (3,)), "same precision"),
    (d.ComplexRealUnary(UnaryOp.ABS), (F32,), ((3,),), "does not support dtype float32"),
    (d.ScalarReduce(ReduceOp.MEAN, ("i",), ()), (I32,), ((3,),), "MEAN.*int32"),
    (d.MetadataReduce(ReduceOp.SUM, ("i",), ()), (F32,), ((3,),), "float32"),
    (d.Sort(), (C64,), ((3,),), "complex64"),
    (d.Uniform(), (I32,), ((3,),), "int32"),
    (d.Integer(0, 10), (F32,), ((3,),), "float32"),
    (d.IndexSelect(0), (F32, F32), ((3,), (2,)), "index must be an integer tensor"),
    (d.Scatter(0), (F32, I32, F64), ((3,), (2,), (2,)), "src dtype"),
    (d.BatchedGemm(Semiring.MAX_PLUS), (C64, C64), ((1, 2, 2), (1, 2, 2)), "MAX_PLUS"),
    (d.Contract(("i",), ("i",), ()), (F32, F64), ((2,), (2,)), "dtypes differ"),
])
def test_bad_dtypes(be, desc, dtypes, shapes, match):
    with pytest.raises(TypeError, match=match):
        _plan(be, desc, dtypes, shapes)


@pytest.mark.parametrize("desc,dtypes,shapes,match", [
    (d.ScalarBinary(BinaryOp.ADD), (F32, F32), ((3,), (4,)), r"\(3,\), \(4,\) cannot be broadcast"),
    (d.ScalarUnary(UnaryOp.NEG), (F32, F32), ((3,), (3,)), "takes 1 operand"),
    (d.ScalarUnary(UnaryOp.EXP), (F32,), ((3,),), "belongs to the analytic family"),
    (d.ScalarBinary(BinaryOp.POW), (F32, F32), ((3,), (3,)), "not one of this family's ops"),
    (d.ScalarReduce(ReduceOp.VAR, ("i",), ()), (F32,), ((3,),), "not one of this family"),
    (d.ScalarReduce(ReduceOp.SUM, ("i", "j"), ()), (F32,), ((3,),),
     "2 labels but the operand has 1"),
    (d.ScalarReduce(ReduceOp.SUM, ("i", "i"), ()), (F32,), ((3, 3),), "repeats"),
    (d.ScalarReduce(ReduceOp.SUM, ("i",), ("k",)), (F32,), ((3,),), "do not appear"),
    (d.ScalarReduce(ReduceOp.MAX, ("i",), ()), (F32,), ((0,),), "no identity"),
    (d.AnalyticReduce(ReduceOp.VAR, ("i",), (), -1.0), (F32,), ((3,),), "correction"),
    (d.Trace(("i", "i"), ()), (F32,), ((2, 3),), "sizes 2 and 3"),
    (d.AntiDiag(("i",), ("i", "j")), (F32,), ((3,),), "use AntiTrace"),
    (d.AntiTrace(("i",), ("i", "j")), (F32,), ((3,),), "output shape is needed"),
    (d.BatchedGemm(), (F32, F32), ((1, 2, 3), (1, 4, 5)), "inner sizes differ"),
    (d.BatchedGemm(op_a=GemmOp.T), (F32, F32), ((1, 2, 3), (1, 3, 5)), "inner sizes differ"),
    (d.BatchedGemm(), (F32, F32), ((2, 3), (3, 2)), "3-d"),
    (d.BatchedGemm(), (F32, F32), ((2, 2, 3), (3, 3, 2)), "batch sizes"),
    (d.Contract(("i",), ("i",), ()), (F32, F32), ((2,), (3,)), "size 2 in a and 3 in b"),
    (d.Contract(("i",), ("j",), ("i", "i")), (F32, F32), ((2,), (3,)), "repeats a label"),
    (d.IndexSelect(0), (F32, I32), ((3,), (2, 2)), "must be 1-d"),
    (d.IndexSelect(2), (F32, I32), ((3, 4), (2,)), "axis 2 is out of range"),
    (d.Gather(0), (F32, I32), ((3, 4), (2, 5)), "exceeds operand shape"),
    (d.Scatter(0, "mul"), (F32, I32, F32), ((3,), (2,), (2,)), "reduce must be None or 'add'"),
    (d.IndexPut(), (F32, I32, F32), ((3,), (2,), (3,)), "IndexPut values.*cannot be broadcast"),
    (d.IndexPut(), (F32, I32, F32), ((3,), (2,), (2, 2)), "do not broadcast to"),
    (d.Sort(), (F32,), ((),), "0-d"),
    (d.Topk(0, 5), (F32,), ((3,),), "k=5 is out of range"),
    (d.Integer(5, 5), (I32,), ((3,),), "low < high"),
    (d.Integer(0, 300), (np.dtype(np.uint8),), ((3,),), "does not fit uint8"),
    (d.ElementwiseBinary(BinaryOp.SUB), (F32, F32), ((3,), (3,)), "ADD or MUL"),
    (d.ScalarUnary(UnaryOp.NEG), (F32,), ((-1,),), "negative dimension"),
])
def test_bad_shapes_and_modes(be, desc, dtypes, shapes, match):
    with pytest.raises(ValueError, match=match):
        _plan(be, desc, dtypes, shapes)


def test_unknown_descriptor(be):
    with pytest.raises(TypeError, match="unknown descriptor"):
        _plan(be, object(), (F32,), ((3,),))
    with pytest.raises(TypeError, match="unknown descriptor"):
        infer("ScalarUnary", (F32,), ((3,),))
    for method in SUPPORT_METHOD.values():
        assert getattr(be.backend, method)(object()) is False


def test_backend_is_every_family(be):
    for name, proto in ALL_FAMILIES.items():
        assert isinstance(be.backend, proto), name
        assert callable(getattr(be.backend, SUPPORT_METHOD[name]))


def test_support_is_per_family(be):
    b = be.backend
    assert b.has_scalar_support(d.ScalarUnary(UnaryOp.NEG))
    assert not b.has_scalar_support(d.AnalyticUnary(UnaryOp.EXP))
    assert b.has_analytic_support(d.AnalyticUnary(UnaryOp.EXP), (F32,))
    assert b.has_semiring_core_support(d.BatchedGemm(Semiring.MIN_PLUS), (F64, F64))
    assert not b.has_semiring_core_support(d.Contract((), (), ()))
    assert b.has_sort_support(d.Topk(0, 1), (I32,))
    assert b.has_rng_support(d.Normal(), (F32,))
    if be.name == "numpy":
        assert not b.has_fused_support(d.ScalarUnary(UnaryOp.NEG))
        assert b.has_fast_path_support(d.Contract(("i",), ("i",), ()), (F64, F64))


def _valid_cases():
    """(descriptor, dtypes, shapes) over every family and dtype; infer filters them."""
    s = (2, 3)
    for dt in ALL_DTYPES:
        for op in UnaryOp:
            fam = d.ScalarUnary if op.row.family == "scalar" else d.AnalyticUnary
            yield fam(op), (dt,), (s,)
        for op in BinaryOp:
            fam = {"scalar": d.ScalarBinary, "analytic": d.AnalyticBinary,
                   "metadata": d.MetadataBinary}[op.row.family]
            yield fam(op), (dt, dt), (s, s)
            yield d.MetadataBinary(op), (dt, dt), (s, s)
        for op in ReduceOp:
            for fam in (d.ScalarReduce, d.MetadataReduce):
                yield fam(op, ("i", "j"), ("j",)), (dt,), (s,)
            yield d.AnalyticReduce(op, ("i", "j"), ()), (dt,), (s,)
        for op in (UnaryOp.ABS, UnaryOp.REAL, UnaryOp.IMAG):
            yield d.ComplexRealUnary(op), (dt,), (s,)
            yield d.ComplexRealReduce(op, ReduceOp.SUM, ("i", "j"), ("i",)), (dt,), (s,)
        for w in (d.ScalarWhere(), d.MetadataWhere(), d.MaskWhere()):
            yield w, (B, dt, dt), (s, s, s)
        for target in ALL_DTYPES:
            yield d.PointwiseCast(target), (dt,), (s,)
        for kind in GenerateKind:
            yield d.Generate(kind), (dt,), (s,)
        yield d.ComplexScale(), (dt, F32 if dt == C64 else F64), (s, s)
        for sr in Semiring:
            yield d.BatchedGemm(sr, GemmOp.T, GemmOp.C), (dt, dt), ((1, 3, 2), (2, 4, 3))
            yield d.Contract(("i", "j"), ("j", "k"), ("k", "i"), sr), (dt, dt), (s, (3, 4))
            yield d.ElementwiseBinary(BinaryOp.MUL, sr), (dt, dt), (s, s)
        yield d.ReduceAdd(("i", "j"), ("j",)), (dt,), (s,)
        yield d.Trace(("i", "i"), ()), (dt,), ((3, 3),)
        yield d.AntiTrace(("i",), ("i", "i", "j")), (dt,), ((3,), (3, 3, 2))
        yield d.AntiDiag(("i",), ("i", "i")), (dt,), ((3,),)
        yield d.MakeContiguous(), (dt,), (s,)
        for idt in (I32, np.dtype(np.uint64)):
            yield d.IndexSelect(1), (dt, idt), (s, (4,))
            yield d.Gather(0), (dt, idt), (s, s)
            yield d.Scatter(0, "add"), (dt, idt, dt), (s, s, s)
            yield d.IndexPut(True), (dt, idt, idt, dt), (s, (2,), (2,), ())
            yield d.Bincount(4), (idt,), (s,)
            yield d.Bincount(4, True), (idt, dt), (s, s)
        yield d.Polyval(), (dt, dt), ((3,), s)
        for desc in (d.Uniform(), d.Normal(), d.Integer(0, 2), d.Sort(0, True),
                     d.Argsort(1), d.Topk(1, 2)):
            yield desc, (dt,), (s,)


def test_support_is_honest(be):
    """Where infer accepts, support True means plan works, False means plan refuses
    with TypeError; the NumPy backend supports everything infer accepts."""
    b = be.backend
    checked = 0
    for desc, dtypes, shapes in _valid_cases():
        try:
            infer(desc, dtypes, shapes)
        except (TypeError, ValueError):
            continue
        fam = d.family_of(desc)
        supported = getattr(b, SUPPORT_METHOD[fam])(desc, dtypes)
        if be.name == "numpy":
            assert supported, (desc, dtypes)
        if supported:
            assert _plan(be, desc, dtypes, shapes).outs == infer(desc, dtypes, shapes)
        else:
            with pytest.raises(TypeError, match="not supported"):
                _plan(be, desc, dtypes, shapes)
        checked += 1
    assert checked > 1000


def test_plan_cache(be):
    b = be.backend
    desc = d.ScalarBinary(BinaryOp.ADD)
    p1 = _plan(be, desc, (F32, F32), ((3, 4), (4,)))
    p2 = _plan(be, d.ScalarBinary(BinaryOp.ADD), (np.dtype("float32"),) * 2, ((3, 4), (4,)))
    assert p1 is p2
    assert p1.out_shape == (3, 4) and p1.out_dtype == F32
    p3 = _plan(be, desc, (F32, F32), ((3, 4), (1, 4)))
    assert p3 is not p1
    t = _plan(be, d.Topk(0, 2), (I32,), ((5, 3),))
    assert t.outs == (((2, 3), I32), ((2, 3), np.dtype(np.int64)))
    out = b.empty((3, 4), F32)
    x = be.asarray(np.ones((3, 4), np.float32))
    y = be.asarray(np.arange(4, dtype=np.float32))
    assert b.execute(p1, (x, y), out) is out


def test_each_descriptor_carries_its_rules():
    """Every registered class lives in its family's module, is exported by
    hipfer.prims.descriptors and hipfer.prims, defines its own infer, and has only its
    dataclass fields (the rules are methods: the plan-cache key is unchanged)."""
    import dataclasses
    import hipfer.prims as prims
    assert d.FAMILIES == tuple(ALL_FAMILIES)
    assert [m.__name__.rsplit(".", 1)[1] for m in d.FAMILY_MODULES] == list(d.FAMILIES)
    assert set(d.FAMILY_OF.values()) == set(d.FAMILIES)
    for cls, fam in d.FAMILY_OF.items():
        assert cls.family == fam and cls.__module__ == f"hipfer.prims.descriptors.{fam}"
        assert getattr(d, cls.__name__) is cls and getattr(prims, cls.__name__) is cls
        assert cls.__name__ in d.__all__
        assert "infer" in vars(cls), f"{cls.__name__} has no infer rule of its own"
        assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen
        assert not any(f.name in ("family", "infer", "probe_shapes")
                       for f in dataclasses.fields(cls))


def test_a_descriptor_names_a_known_family():
    n = len(d.FAMILY_OF)
    with pytest.raises(TypeError, match="family 'nope' is not one of semiring_core"):
        class Bad(d.Descriptor, family="nope"):
            pass
    with pytest.raises(TypeError, match="family '' is not one of"):
        class NoFamily(d.Descriptor):
            pass
    assert len(d.FAMILY_OF) == n


def test_probe_shapes_of_unknown_descriptors():
    from hipfer.prims.infer import probe_shapes
    with pytest.raises(TypeError, match="unknown descriptor"):
        probe_shapes(object(), 1)
    assert probe_shapes(d.Topk(-1, 3), 1) == ((3,),)
    assert infer(d.Topk(-1, 3), (F32,), probe_shapes(d.Topk(-1, 3), 1))
