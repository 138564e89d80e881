"""Shape and dtype inference for every descriptor, shared by all backends.

``infer(desc, dtypes, shapes)`` checks that the operands fit the descriptor and returns
the output specs: a tuple of ``(shape, dtype)`` pairs (two for Topk: values and indices).
Errors are TypeError (dtypes) and ValueError (shapes, modes, parameters), each naming
the descriptor and the problem. Backends call it once per plan, never per execute.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from . import descriptors as d
from .optable import BinaryOp, ReduceOp, UnaryOp

_INDEX_KINDS = "iu"


def real_dtype(dt: np.dtype) -> np.dtype:
    """complex64 -> float32, complex128 -> float64, else unchanged."""
    if dt.kind == "c":
        return np.dtype(np.float32) if dt.itemsize == 8 else np.dtype(np.float64)
    return dt


def complex_dtype(dt: np.dtype) -> np.dtype:
    if dt.kind == "c":
        return dt
    return np.dtype(np.complex64) if dt == np.float32 else np.dtype(np.complex128)


def broadcast_shapes(*shapes, what="operands") -> tuple:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(f"{what}: shapes {', '.join(map(str, shapes))} cannot be broadcast together") from None


def _name(desc) -> str:
    return type(desc).__name__


def _expect(desc, dtypes, shapes, n):
    if len(dtypes) != n or len(shapes) != n:
        raise ValueError(f"{_name(desc)} takes {n} operand(s), got {len(dtypes)} dtype(s) and "
                         f"{len(shapes)} shape(s)")


def _check_kind(desc, op_name, dt, kinds):
    if dt.kind not in kinds:
        raise TypeError(f"{_name(desc)}({op_name}) does not support dtype {dt}")


def _norm_axis(desc, axis, ndim):
    if not -ndim <= axis < max(ndim, 1):
        raise ValueError(f"{_name(desc)}: axis {axis} is out of range for {ndim}-d operand")
    return axis % max(ndim, 1)


def check_modes(desc, modes, shape, what="modes_a", allow_repeats=False):
    if len(modes) != len(shape):
        raise ValueError(f"{_name(desc)}: {what} {modes} has {len(modes)} labels but the operand "
                         f"has {len(shape)} axes")
    sizes = {}
    for m, n in zip(modes, shape):
        if m in sizes:
            if not allow_repeats:
                raise ValueError(f"{_name(desc)}: label {m!r} repeats in {what} {modes}")
            if sizes[m] != n:
                raise ValueError(f"{_name(desc)}: label {m!r} has sizes {sizes[m]} and {n}")
        sizes[m] = n
    return sizes


def _out_modes(desc, modes_c, sizes, what="modes_c"):
    if len(set(modes_c)) != len(modes_c):
        raise ValueError(f"{_name(desc)}: {what} {modes_c} repeats a label")
    missing = [m for m in modes_c if m not in sizes]
    if missing:
        raise ValueError(f"{_name(desc)}: output labels {missing} do not appear in the inputs")
    return tuple(sizes[m] for m in modes_c)


# ------------------------------------------------------------------ elementwise
def _unary(desc, dtypes, shapes, op: UnaryOp, family):
    _expect(desc, dtypes, shapes, 1)
    row = op.row
    if row.family != family:
        raise ValueError(f"{_name(desc)}: {op.name} belongs to the {row.family} family")
    dt = dtypes[0]
    _check_kind(desc, op.name, dt, row.kinds)
    if row.result == "bool":  # isnan, isinf, isfinite, signbit
        out = np.dtype(np.bool_)
    else:
        out = real_dtype(dt) if row.result == "real" else dt
    return ((tuple(shapes[0]), out),)


def _binary(desc, dtypes, shapes, op: BinaryOp, families, kinds=None):
    _expect(desc, dtypes, shapes, 2)
    row = op.row
    if row.family not in families:
        raise ValueError(f"{_name(desc)}: {op.name} is not one of this family's ops")
    a, b = dtypes
    if a != b:
        raise TypeError(f"{_name(desc)}({op.name}): operand dtypes differ ({a} and {b}); "
                        "promote them first")
    _check_kind(desc, op.name, a, kinds or row.kinds)
    out = np.dtype(np.bool_) if row.result == "bool" else a
    return ((broadcast_shapes(*shapes, what=_name(desc)), out),)


def _where(desc, dtypes, shapes, kinds):
    _expect(desc, dtypes, shapes, 3)
    c, a, b = dtypes
    if c != np.bool_:
        raise TypeError(f"{_name(desc)}: the condition must be bool, got {c}")
    if a != b:
        raise TypeError(f"{_name(desc)}: value dtypes differ ({a} and {b})")
    _check_kind(desc, "where", a, kinds)
    return ((broadcast_shapes(*shapes, what=_name(desc)), a),)


# ------------------------------------------------------------------- reductions
_REDUCE_OPS = {
    d.ScalarReduce: (ReduceOp.SUM, ReduceOp.PROD, ReduceOp.MEAN, ReduceOp.MAX, ReduceOp.MIN),
    d.AnalyticReduce: (ReduceOp.VAR, ReduceOp.STD),
    d.MetadataReduce: (ReduceOp.SUM, ReduceOp.PROD, ReduceOp.MAX, ReduceOp.MIN,
                       ReduceOp.ALL, ReduceOp.ANY),
}


def reduced_size(modes_a, modes_c, shape) -> int:
    n = 1
    for m, s in zip(modes_a, shape):
        if m not in modes_c:
            n *= s
    return n


def _reduce(desc, dtypes, shapes, op: ReduceOp, kinds=None):
    _expect(desc, dtypes, shapes, 1)
    dt = dtypes[0]
    sizes = check_modes(desc, desc.modes_a, shapes[0])
    out_shape = _out_modes(desc, desc.modes_c, sizes)
    _check_kind(desc, op.name, dt, kinds or op.kinds)
    if op in (ReduceOp.MAX, ReduceOp.MIN) and reduced_size(desc.modes_a, desc.modes_c, shapes[0]) == 0 \
            and int(np.prod(out_shape)) > 0:
        raise ValueError(f"{_name(desc)}({op.name}): zero-size reduction has no identity")
    if op in (ReduceOp.ALL, ReduceOp.ANY):
        out = np.dtype(np.bool_)
    elif op is ReduceOp.SUM and dt == np.bool_:
        out = np.dtype(np.int64)
    elif op in (ReduceOp.VAR, ReduceOp.STD):
        out = real_dtype(dt)
    else:
        out = dt
    return ((out_shape, out),)


# ------------------------------------------------------------------ the table
def infer(desc, dtypes: Sequence[np.dtype], shapes: Sequence[tuple]):
    """Validate and return ((out_shape, out_dtype), ...) for desc applied to the operands."""
    dtypes = tuple(np.dtype(t) for t in dtypes)
    shapes = tuple(tuple(int(n) for n in s) for s in shapes)
    for s in shapes:
        if any(n < 0 for n in s):
            raise ValueError(f"{_name(desc)}: negative dimension in shape {s}")
    t = type(desc)

    if t is d.ScalarUnary:
        return _unary(desc, dtypes, shapes, desc.op, "scalar")
    if t is d.AnalyticUnary:
        return _unary(desc, dtypes, shapes, desc.op, "analytic")
    if t is d.ComplexRealUnary:
        if desc.op not in (UnaryOp.ABS, UnaryOp.REAL, UnaryOp.IMAG):
            raise ValueError(f"ComplexRealUnary: op must be ABS, REAL or IMAG, got {desc.op.name}")
        _expect(desc, dtypes, shapes, 1)
        _check_kind(desc, desc.op.name, dtypes[0], "c")
        return ((shapes[0], real_dtype(dtypes[0])),)
    if t is d.ScalarBinary:
        return _binary(desc, dtypes, shapes, desc.op, ("scalar",))
    if t is d.AnalyticBinary:
        return _binary(desc, dtypes, shapes, desc.op, ("analytic",))
    if t is d.MetadataBinary:
        if desc.op not in (BinaryOp.EQUAL, BinaryOp.NOT_EQUAL, BinaryOp.ADD, BinaryOp.SUB,
                           BinaryOp.MUL, BinaryOp.BITWISE_AND):
            raise ValueError(f"MetadataBinary: {desc.op.name} is not a metadata op")
        return _binary(desc, dtypes, shapes, desc.op, ("scalar", "metadata"), kinds="biu")
    if t is d.ElementwiseBinary:
        if desc.op not in (BinaryOp.ADD, BinaryOp.MUL):
            raise ValueError(f"ElementwiseBinary: op must be ADD or MUL, got {desc.op.name}")
        kinds = "biufc" if not desc.semiring.is_tropical else "iuf"
        return _binary(desc, dtypes, shapes, desc.op, ("scalar",), kinds=kinds)
    if t is d.ScalarWhere:
        return _where(desc, dtypes, shapes, "biufc")
    if t is d.MetadataWhere:
        return _where(desc, dtypes, shapes, "biu")
    if t is d.MaskWhere:
        return _where(desc, dtypes, shapes, "fc")
    if t is d.ComplexScale:
        _expect(desc, dtypes, shapes, 2)
        a, s = dtypes
        if a.kind != "c" or s.kind != "f" or real_dtype(a) != s:
            raise TypeError(f"ComplexScale: needs (complex, real of the same precision), got ({a}, {s})")
        return ((broadcast_shapes(*shapes, what="ComplexScale"), a),)
    if t is d.PointwiseCast:
        _expect(desc, dtypes, shapes, 1)
        return ((shapes[0], desc.dtype),)
    if t is d.MakeContiguous:
        _expect(desc, dtypes, shapes, 1)
        return ((shapes[0], dtypes[0]),)

    if t in _REDUCE_OPS:
        if desc.op not in _REDUCE_OPS[t]:
            raise ValueError(f"{_name(desc)}: {desc.op.name} is not one of this family's reductions")
        if t is d.AnalyticReduce and desc.correction < 0:
            raise ValueError("AnalyticReduce: correction must be >= 0")
        kinds = "biu" if t is d.MetadataReduce else None
        if t is d.ScalarReduce and desc.op in (ReduceOp.MEAN,):
            kinds = "fc"
        return _reduce(desc, dtypes, shapes, desc.op, kinds)
    if t is d.ReduceAdd:
        return _reduce(desc, dtypes, shapes, ReduceOp.SUM)
    if t is d.ComplexRealReduce:
        if desc.unary not in (UnaryOp.ABS, UnaryOp.REAL, UnaryOp.IMAG):
            raise ValueError(f"ComplexRealReduce: unary must be ABS, REAL or IMAG, got {desc.unary.name}")
        if desc.reduce not in (ReduceOp.SUM, ReduceOp.MAX, ReduceOp.MIN, ReduceOp.MEAN):
            raise ValueError(f"ComplexRealReduce: reduce must be SUM, MAX, MIN or MEAN, got {desc.reduce.name}")
        _expect(desc, dtypes, shapes, 1)
        _check_kind(desc, desc.unary.name, dtypes[0], "c")
        ((shape, _),) = _reduce(desc, dtypes, shapes, desc.reduce, "c")
        return ((shape, real_dtype(dtypes[0])),)

    if t is d.Trace:
        _expect(desc, dtypes, shapes, 1)
        sizes = check_modes(desc, desc.modes_a, shapes[0], allow_repeats=True)
        return ((_out_modes(desc, desc.modes_c, sizes), dtypes[0]),)
    if t in (d.AntiTrace, d.AntiDiag):
        return _anti(desc, dtypes, shapes)

    if t is d.BatchedGemm:
        return _gemm(desc, dtypes, shapes)
    if t is d.Contract:
        _expect(desc, dtypes, shapes, 2)
        if dtypes[0] != dtypes[1]:
            raise TypeError(f"Contract: operand dtypes differ ({dtypes[0]} and {dtypes[1]})")
        if desc.semiring.is_tropical:
            _check_kind(desc, desc.semiring.name, dtypes[0], "iuf")
        sa = check_modes(desc, desc.modes_a, shapes[0])
        sb = check_modes(desc, desc.modes_b, shapes[1], what="modes_b")
        for m in set(sa) & set(sb):
            if sa[m] != sb[m]:
                raise ValueError(f"Contract: label {m!r} has size {sa[m]} in a and {sb[m]} in b")
        return ((_out_modes(desc, desc.modes_c, {**sa, **sb}), dtypes[0]),)

    if t in (d.IndexSelect, d.Gather, d.Scatter, d.IndexPut):
        return _indexing(desc, dtypes, shapes)

    if t is d.Generate:
        _expect(desc, dtypes, shapes, 1)
        return ((shapes[0], dtypes[0]),)
    if t in (d.Uniform, d.Normal):
        _expect(desc, dtypes, shapes, 1)
        _check_kind(desc, _name(desc), dtypes[0], "f")
        return ((shapes[0], dtypes[0]),)
    if t is d.Integer:
        _expect(desc, dtypes, shapes, 1)
        dt = dtypes[0]
        _check_kind(desc, "Integer", dt, "iu")
        info = np.iinfo(dt)
        if not desc.low < desc.high:
            raise ValueError(f"Integer: need low < high, got [{desc.low}, {desc.high})")
        if desc.low < info.min or desc.high - 1 > info.max:
            raise ValueError(f"Integer: [{desc.low}, {desc.high}) does not fit {dt}")
        return ((shapes[0], dt),)

    if t in (d.Sort, d.Argsort, d.Topk):
        _expect(desc, dtypes, shapes, 1)
        dt, shape = dtypes[0], shapes[0]
        _check_kind(desc, _name(desc), dt, "biuf")
        if len(shape) == 0:
            raise ValueError(f"{_name(desc)}: needs at least one axis, got a 0-d operand")
        axis = _norm_axis(desc, desc.axis, len(shape))
        if t is d.Sort:
            return ((shape, dt),)
        if t is d.Argsort:
            return ((shape, np.dtype(np.int64)),)
        if not 0 <= desc.k <= shape[axis]:
            raise ValueError(f"Topk: k={desc.k} is out of range for an axis of size {shape[axis]}")
        out = shape[:axis] + (desc.k,) + shape[axis + 1:]
        return ((out, dt), (out, np.dtype(np.int64)))

    if t in (d.ArgReduce, d.Cumulative, d.SearchSorted):
        return _search_scan(desc, dtypes, shapes)

    if t in (d.Factorize, d.Fft):
        return _linalg_fft(desc, dtypes, shapes)

    if t is d.Nonzero:
        return _nonzero(desc, dtypes, shapes)
    if t is d.Fused:
        from . import fused_ops
        return fused_ops.infer(desc, dtypes, shapes)

    raise TypeError(f"unknown descriptor {desc!r}")


def _anti(desc, dtypes, shapes):
    if len(dtypes) != 1 or len(shapes) not in (1, 2):
        raise ValueError(f"{_name(desc)} takes one operand and optionally the output shape")
    sa = check_modes(desc, desc.modes_a, shapes[0])
    if len(shapes) == 2:
        out = shapes[1]
        sc = check_modes(desc, desc.modes_c, out, what="modes_c", allow_repeats=True)
    else:
        out = None
        sc = {}
    for m in desc.modes_a:
        if m not in desc.modes_c:
            raise ValueError(f"{_name(desc)}: label {m!r} of modes_a is missing from modes_c")
        if m in sc and sc[m] != sa[m]:
            raise ValueError(f"{_name(desc)}: label {m!r} has size {sa[m]} in a and {sc[m]} in the output")
    extra = [m for m in desc.modes_c if m not in sa]
    if extra:
        if type(desc) is d.AntiDiag:
            raise ValueError(f"AntiDiag: output labels {extra} are not in modes_a (use AntiTrace)")
        if out is None:
            raise ValueError(f"AntiTrace: the output shape is needed for labels {extra}")
    if out is None:
        out = tuple(sa[m] for m in desc.modes_c)
    return ((tuple(out), dtypes[0]),)


def _gemm(desc, dtypes, shapes):
    _expect(desc, dtypes, shapes, 2)
    if dtypes[0] != dtypes[1]:
        raise TypeError(f"BatchedGemm: operand dtypes differ ({dtypes[0]} and {dtypes[1]})")
    kinds = "iuf" if desc.semiring.is_tropical else "biufc"
    _check_kind(desc, desc.semiring.name, dtypes[0], kinds)
    sa, sb = shapes
    if len(sa) != 3 or len(sb) != 3:
        raise ValueError(f"BatchedGemm: operands must be 3-d (batch, rows, cols), got {sa} and {sb}")
    m, ka = (sa[1], sa[2]) if desc.op_a is d.GemmOp.N else (sa[2], sa[1])
    kb, n = (sb[1], sb[2]) if desc.op_b is d.GemmOp.N else (sb[2], sb[1])
    if ka != kb:
        raise ValueError(f"BatchedGemm: inner sizes differ ({ka} and {kb}) for shapes {sa}, {sb}")
    if sa[0] != sb[0] and 1 not in (sa[0], sb[0]):
        raise ValueError(f"BatchedGemm: batch sizes {sa[0]} and {sb[0]} differ")
    out = ((max(sa[0], sb[0]) if 0 not in (sa[0], sb[0]) else 0, m, n), dtypes[0])
    if desc.argmax:
        if not desc.semiring.is_tropical:
            raise ValueError("BatchedGemm: argmax needs a tropical semiring (MAX_PLUS, "
                             "MIN_PLUS or MAX_MUL), not STANDARD")
        return (out, (out[0], np.dtype(np.int64)))
    return (out,)


def _indexing(desc, dtypes, shapes):
    t = type(desc)
    if t is d.IndexPut:
        if len(dtypes) < 3 or len(shapes) != len(dtypes):
            raise ValueError("IndexPut takes (a, index_0, ..., index_k-1, values)")
        a, vals = shapes[0], shapes[-1]
        idx = shapes[1:-1]
        for it in dtypes[1:-1]:
            if it.kind not in _INDEX_KINDS:
                raise TypeError(f"IndexPut: index tensors must be integer, got {it}")
        if dtypes[-1] != dtypes[0]:
            raise TypeError(f"IndexPut: values dtype {dtypes[-1]} differs from {dtypes[0]}")
        if len(idx) > len(a):
            raise ValueError(f"IndexPut: {len(idx)} index tensors for a {len(a)}-d operand")
        target = broadcast_shapes(*idx, what="IndexPut indices") + tuple(a[len(idx):])
        if broadcast_shapes(vals, target, what="IndexPut values") != target:
            raise ValueError(f"IndexPut: values of shape {vals} do not broadcast to {target}")
        return ((tuple(a), dtypes[0]),)

    n_in = 3 if t is d.Scatter else 2
    _expect(desc, dtypes, shapes, n_in)
    a, ix = shapes[0], shapes[1]
    if dtypes[1].kind not in _INDEX_KINDS:
        raise TypeError(f"{_name(desc)}: index must be an integer tensor, got {dtypes[1]}")
    if len(a) == 0:
        raise ValueError(f"{_name(desc)}: operand must have at least one axis")
    axis = _norm_axis(desc, desc.axis, len(a))
    if t is d.IndexSelect:
        if len(ix) != 1:
            raise ValueError(f"IndexSelect: index must be 1-d, got shape {ix}")
        return ((a[:axis] + (ix[0],) + a[axis + 1:], dtypes[0]),)
    if len(ix) != len(a):
        raise ValueError(f"{_name(desc)}: index has {len(ix)} axes, the operand {len(a)}")
    for k in range(len(a)):
        if k != axis and ix[k] > a[k]:
            raise ValueError(f"{_name(desc)}: index shape {ix} exceeds operand shape {a} on axis {k}")
    if t is d.Gather:
        return ((tuple(ix), dtypes[0]),)
    if desc.reduce not in (None, "add"):
        raise ValueError(f"Scatter: reduce must be None or 'add', got {desc.reduce!r}")
    src = shapes[2]
    if dtypes[2] != dtypes[0]:
        raise TypeError(f"Scatter: src dtype {dtypes[2]} differs from {dtypes[0]}")
    if len(src) != len(a) or any(i > s for i, s in zip(ix, src)):
        raise ValueError(f"Scatter: index shape {ix} exceeds src shape {src}")
    return ((tuple(a), dtypes[0]),)


def probe_shapes(desc, n_inputs: int) -> tuple:
    """Small shapes that satisfy desc's shape rules, so ``infer(desc, dtypes,
    probe_shapes(...))`` checks dtypes (and the descriptor's own parameters) alone.
    Used by ``has_*_support(desc, dtypes)``, which knows no shapes."""
    t = type(desc)
    ones = lambda n: (1,) * n  # noqa: E731
    if t is d.Fused:
        from . import fused_ops
        return fused_ops.probe_shapes(desc)
    if hasattr(desc, "modes_b"):
        return ones(len(desc.modes_a)), ones(len(desc.modes_b))
    if t in (d.AntiTrace, d.AntiDiag):
        return ones(len(desc.modes_a)), ones(len(desc.modes_c))
    if hasattr(desc, "modes_a"):
        return (ones(len(desc.modes_a)),)
    if t is d.BatchedGemm:
        return (1, 1, 1), (1, 1, 1)
    if hasattr(desc, "axis"):
        nd = max(desc.axis + 1, -desc.axis, 1)
        base = list(ones(nd))
        if t is d.Topk:
            base[desc.axis] = max(desc.k, 1)
        if t is d.IndexSelect:
            return tuple(base), (1,)
        return (tuple(base),) * n_inputs
    if t is d.IndexPut:
        k = max(n_inputs - 2, 1)
        return (ones(k),) + ((),) * (n_inputs - 1)
    if t is d.SearchSorted:
        return (1,), ()
    if t is d.Factorize:
        return ((2, 2), (2, 1)) if desc.kind is d.FactorKind.SOLVE else ((2, 2),)
    if t is d.Fft:
        return ((2,) * (max(desc.axes, default=-1) + 1),)
    return ((),) * max(n_inputs, 1)


def _search_scan(desc, dtypes, shapes):
    """ArgReduce, Cumulative and SearchSorted (appended by the searching helper)."""
    t = type(desc)
    if t is d.SearchSorted:
        _expect(desc, dtypes, shapes, 2)
        if desc.side not in ("left", "right"):
            raise ValueError(f"SearchSorted: side must be 'left' or 'right', got {desc.side!r}")
        if dtypes[0] != dtypes[1]:
            raise TypeError(f"SearchSorted: dtypes differ ({dtypes[0]} and {dtypes[1]}); promote them first")
        _check_kind(desc, desc.side, dtypes[0], "biuf")
        if len(shapes[0]) != 1:
            raise ValueError(f"SearchSorted: x1 must be 1-d, got shape {shapes[0]}")
        return ((shapes[1], np.dtype(np.int64)),)
    _expect(desc, dtypes, shapes, 1)
    dt, shape = dtypes[0], shapes[0]
    if len(shape) == 0:
        raise ValueError(f"{_name(desc)}: needs at least one axis, got a 0-d operand")
    axis = _norm_axis(desc, desc.axis, len(shape))
    if t is d.ArgReduce:
        if desc.op not in (ReduceOp.MAX, ReduceOp.MIN):
            raise ValueError(f"ArgReduce: op must be MAX or MIN, got {desc.op.name}")
        _check_kind(desc, desc.op.name, dt, "biuf")
        out = shape[:axis] + shape[axis + 1:]
        if shape[axis] == 0 and int(np.prod(out)) > 0:
            raise ValueError(f"ArgReduce({desc.op.name}): an empty axis has no extreme")
        return ((out, np.dtype(np.int64)),)
    if not isinstance(desc.op, d.ScanOp):
        raise ValueError(f"Cumulative: op must be a ScanOp, got {desc.op!r}")
    _check_kind(desc, desc.op.name, dt, "biufc")
    out = shape[:axis] + (shape[axis] + bool(desc.include_initial),) + shape[axis + 1:]
    return ((out, dt),)


def _linalg_fft(desc, dtypes, shapes):
    """Factorize and Fft (appended by the linalg/fft helper)."""
    if type(desc) is d.Fft:
        return _fft(desc, dtypes, shapes)
    k, K = desc.kind, d.FactorKind
    _expect(desc, dtypes, shapes, 2 if k is K.SOLVE else 1)
    dt, shape = dtypes[0], shapes[0]
    _check_kind(desc, k.name, dt, "fc")
    if len(shape) < 2:
        raise ValueError(f"Factorize({k.name}): needs a (..., M, N) operand, got shape {shape}")
    *batch, m, n = shape
    batch = tuple(batch)
    if k not in (K.QR, K.SVD, K.SVDVALS) and m != n:
        raise ValueError(f"Factorize({k.name}): needs square matrices, got shape {shape}")
    real, cplx, kk = real_dtype(dt), complex_dtype(dt), min(m, n)
    if k is K.SOLVE:
        b = shapes[1]
        if dtypes[1] != dt:
            raise TypeError(f"Factorize(SOLVE): operand dtypes differ ({dt} and {dtypes[1]})")
        if len(b) != len(shape) or tuple(b[:-2]) != batch or b[-2] != m:
            raise ValueError(f"Factorize(SOLVE): b of shape {b} does not fit a of shape {shape} "
                             "(need (..., M, R) with a's batch shape)")
        return ((tuple(b), dt),)
    if k in (K.CHOLESKY, K.INV):
        return ((shape, dt),)
    if k is K.DET:
        return ((batch, dt),)
    if k is K.SLOGDET:
        return ((batch, dt), (batch, real))
    if k is K.EIGVALSH:
        return ((batch + (m,), real),)
    if k is K.EIGH:
        return ((batch + (m,), real), (shape, dt))
    if k is K.EIGVALS:
        return ((batch + (m,), cplx),)
    if k is K.EIG:
        return ((batch + (m,), cplx), (shape, cplx))
    if k is K.SVDVALS:
        return ((batch + (kk,), real),)
    if k is K.SVD:
        u, v = (m, n) if desc.full else (kk, kk)
        return ((batch + (m, u), dt), (batch + (kk,), real), (batch + (v, n), dt))
    q = m if desc.full else kk  # QR
    return ((batch + (m, q), dt), (batch + (q, n), dt))


def _fft(desc, dtypes, shapes):
    _expect(desc, dtypes, shapes, 1)
    dt, shape = dtypes[0], shapes[0]
    kind = desc.kind
    if not isinstance(kind, d.FftKind):
        raise ValueError(f"Fft: kind must be an FftKind, got {kind!r}")
    if desc.norm not in ("backward", "ortho", "forward"):
        raise ValueError(f"Fft: norm must be 'backward', 'ortho' or 'forward', got {desc.norm!r}")
    _check_kind(desc, kind.name, dt, "f" if kind is d.FftKind.R2C else "c")
    if kind is not d.FftKind.C2C and desc.inverse:
        raise ValueError("Fft: inverse applies to C2C only (R2C is forward, C2R inverse)")
    axes, sizes = tuple(desc.axes), tuple(desc.sizes)
    if not axes or len(axes) != len(sizes):
        raise ValueError(f"Fft: needs one size per axis and at least one axis, got axes {axes}, sizes {sizes}")
    if len(set(axes)) != len(axes) or any(not 0 <= a < len(shape) for a in axes):
        raise ValueError(f"Fft: axes {axes} must be distinct and in [0, {len(shape)})")
    if any(int(n) < 1 for n in sizes):
        raise ValueError(f"Fft: invalid number of data points {sizes}: each must be >= 1")
    out = list(shape)
    for a, n in zip(axes, sizes):
        out[a] = int(n)
    if kind is d.FftKind.R2C:
        out[axes[-1]] = sizes[-1] // 2 + 1
    out_dt = {d.FftKind.C2C: dt, d.FftKind.R2C: complex_dtype(dt),
              d.FftKind.C2R: real_dtype(dt)}[kind]
    return ((tuple(out), out_dt),)


def _nonzero(desc, dtypes, shapes):
    """Nonzero (appended by the indexing helper)."""
    _expect(desc, dtypes, shapes, 1)
    if dtypes[0] != np.bool_:
        raise TypeError(f"Nonzero: the operand must be bool, got {dtypes[0]} (compare with 0 first)")
    shape = shapes[0]
    i64 = np.dtype(np.int64)
    return (((len(shape), int(np.prod(shape))), i64), ((), i64))
