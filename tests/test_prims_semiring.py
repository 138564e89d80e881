"""SemiringCore / SemiringFastPath: BatchedGemm (op N/T/C, batch broadcast, alpha/beta,
ints, complex, all four semirings against brute-force loops), Contract against
np.einsum / brute force, ElementwiseBinary, Trace / AntiTrace / AntiDiag (with the
adjoint identity) and MakeContiguous."""
import itertools

import numpy as np
import pytest

from hipfer.prims import descriptors as d
from hipfer.prims.descriptors import GemmOp
from hipfer.prims.optable import BinaryOp
from hipfer.prims.semiring import Semiring

from _util import (ACC_RTOL, StridedOut, assert_accumulated, assert_elementwise, assert_same, dtypes_of, layouts,
                    nan_filled, random_array, run_prim)

TROPICAL = [Semiring.MAX_PLUS, Semiring.MIN_PLUS, Semiring.MAX_MUL]
_ADD = {"max": np.maximum, "min": np.minimum, "add": np.add}
_MUL = {"add": np.add, "mul": np.multiply}


def _wide(dt):
    return {"c": np.complex128, "f": np.float64, "i": np.int64, "u": np.uint64}.get(dt.kind)


def _data(rng, shape, dt, semiring=Semiring.STANDARD):
    """Small values: tropical integer sums must not overflow; MaxMul wants x >= 0."""
    if semiring is Semiring.MAX_MUL:
        if dt.kind in "iu":
            return random_array(rng, shape, dt, low=0, high=9)
        return np.abs(random_array(rng, shape, dt))
    if semiring.is_tropical and dt.kind in "iu":
        return random_array(rng, shape, dt, low=0 if dt.kind == "u" else -20, high=20)
    return random_array(rng, shape, dt)


def _zero(semiring, dt):
    z = semiring.zero
    if dt.kind in "iu" and np.isinf(z):
        return np.iinfo(dt).min if z < 0 else np.iinfo(dt).max
    return z


# ------------------------------------------------------------------ references
def _ref_standard(A, B, dt):
    """(reference, magnitude) of the batched product, exact for ints (mod 2^n)."""
    if dt.kind == "b":
        return (A.astype(np.int64) @ B.astype(np.int64)) > 0, None
    w = _wide(dt)
    with np.errstate(over="ignore"):
        ref = np.matmul(A.astype(w), B.astype(w))
    mag = None if dt.kind in "iu" else np.abs(A).astype(np.float64) @ np.abs(B).astype(np.float64)
    return ref, mag


def _ref_tropical(A, B, semiring, dt):
    """Brute-force loops: out[b,i,j] = (+)_k A[b,i,k] (x) B[b,k,j]."""
    add, mul = _ADD[semiring.add], _MUL[semiring.mul]
    nb = max(A.shape[0], B.shape[0]) if 0 not in (A.shape[0], B.shape[0]) else 0
    m, k, n = A.shape[1], A.shape[2], B.shape[2]
    out = np.empty((nb, m, n), dt)
    for b, i, j in itertools.product(range(nb), range(m), range(n)):
        acc = dt.type(_zero(semiring, dt))
        for kk in range(k):
            acc = add(acc, mul(A[b % A.shape[0], i, kk], B[b % B.shape[0], kk, j]))
        out[b, i, j] = acc
    return out


def _apply_op(x, op):
    if op is GemmOp.N:
        return x
    x = x.transpose(0, 2, 1)
    return np.conj(x) if op is GemmOp.C else x


def _stored(rng, batch, rows, cols, op, dt, semiring):
    """An operand that is (batch, rows, cols) after op."""
    shape = (batch, rows, cols) if op is GemmOp.N else (batch, cols, rows)
    return _data(rng, shape, dt, semiring)


def _check_gemm(got, A, B, dt, semiring):
    if semiring.is_tropical:
        assert_same(got, _ref_tropical(A, B, semiring, dt))
        return
    ref, mag = _ref_standard(A, B, dt)
    assert_accumulated(got, ref.astype(dt), mag, dt)


# -------------------------------------------------------------------- BatchedGemm
_GEMM = [(Semiring.STANDARD, t) for t in dtypes_of("biufc")
         if t not in (np.int16, np.uint16, np.uint32)] + \
        [(s, t) for s in TROPICAL for t in (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64),
                                            np.dtype(np.int32), np.dtype(np.uint8))]


@pytest.mark.parametrize("semiring,dt", _GEMM, ids=[f"{s.name}-{t}" for s, t in _GEMM])
def test_batched_gemm(be, rng, semiring, dt):
    m, k, n = 3, 4, 5
    for op_a, op_b in itertools.product(GemmOp, GemmOp):
        desc = d.BatchedGemm(semiring, op_a, op_b)
        for ba, bb in [(2, 2), (1, 3), (3, 1)]:
            a = _stored(rng, ba, m, k, op_a, dt, semiring)
            b = _stored(rng, bb, k, n, op_b, dt, semiring)
            got = run_prim(be, desc, [be.asarray(a), be.asarray(b)])
            _check_gemm(got, _apply_op(a, op_a), _apply_op(b, op_b), dt, semiring)
    # strided operands (a reversed batch, a transposed view) and a strided out
    desc = d.BatchedGemm(semiring, GemmOp.N, GemmOp.N)
    an = _data(rng, (4, m, k), dt, semiring)
    bn = _data(rng, (2, n, k), dt, semiring)
    so = StridedOut(be, (2, m, n), dt, "step")
    got = run_prim(be, desc, [be.asarray(an)[::-2], be.asarray(bn).transpose(0, 2, 1)],
                   out=so.view)
    _check_gemm(got, an[::-2], bn.transpose(0, 2, 1), dt, semiring)
    so.check_gaps()
    # k == 0 gives the semiring zero; batch 0 gives an empty result
    a0, b0 = np.zeros((2, m, 0), dt), np.zeros((2, 0, n), dt)
    got = run_prim(be, desc, [be.asarray(a0), be.asarray(b0)])
    assert_same(got, np.full((2, m, n), _zero(semiring, dt), dt))
    got = run_prim(be, desc, [be.asarray(np.zeros((0, m, k), dt)),
                              be.asarray(np.zeros((1, k, n), dt))])
    assert got.shape == (0, m, n)


@pytest.mark.parametrize("dt", [np.dtype(t) for t in (np.complex64, np.complex128)], ids=str)
def test_gemm_conj_flags(be, rng, dt):
    for op_a, op_b in itertools.product(GemmOp, GemmOp):
        desc = d.BatchedGemm(Semiring.STANDARD, op_a, op_b)
        a = _stored(rng, 2, 3, 4, op_a, dt, Semiring.STANDARD)
        b = _stored(rng, 2, 4, 2, op_b, dt, Semiring.STANDARD)
        for ca, cb in [(True, False), (False, True), (True, True)]:
            got = run_prim(be, desc, [be.asarray(a), be.asarray(b)], conj=(ca, cb))
            A = _apply_op(np.conj(a) if ca else a, op_a)
            B = _apply_op(np.conj(b) if cb else b, op_b)
            _check_gemm(got, A, B, dt, Semiring.STANDARD)


@pytest.mark.parametrize("dt", [np.dtype(t) for t in (np.float16, np.float32, np.float64, np.complex128,
                                                      np.int32, np.uint8)], ids=str)
def test_gemm_alpha_beta(be, rng, dt):
    desc = d.BatchedGemm()
    a, b = _data(rng, (2, 3, 4), dt), _data(rng, (2, 4, 5), dt)
    ref, mag = _ref_standard(a, b, dt)
    ref = ref.astype(dt)
    got = run_prim(be, desc, [be.asarray(a), be.asarray(b)], out=nan_filled(be, (2, 3, 5), dt),
                   alpha=2, beta=0)
    with np.errstate(over="ignore"):
        assert_accumulated(got, dt.type(2) * ref, None if mag is None else 2 * mag, dt)
    c = _data(rng, (2, 3, 5), dt)
    alpha, beta = (3, 2) if dt.kind in "iu" else (0.5, -1.5)
    got = run_prim(be, desc, [be.asarray(a), be.asarray(b)], out=be.asarray(c.copy()),
                   alpha=alpha, beta=beta)
    with np.errstate(over="ignore"):
        expected = np.asarray(alpha).astype(dt) * ref + np.asarray(beta).astype(dt) * c
    assert_accumulated(got, expected,
                       None if mag is None else abs(alpha) * mag + abs(beta) * np.abs(c), dt)


@pytest.mark.parametrize("semiring", TROPICAL, ids=lambda s: s.name)
def test_tropical_alpha_beta(be, rng, semiring):
    dt = np.dtype(np.float64)
    desc = d.BatchedGemm(semiring)
    a, b = _data(rng, (1, 3, 4), dt, semiring), _data(rng, (1, 4, 2), dt, semiring)
    ref = _ref_tropical(a, b, semiring, dt)
    got = run_prim(be, desc, [be.asarray(a), be.asarray(b)], out=nan_filled(be, (1, 3, 2), dt))
    assert_same(got, ref)
    c = _data(rng, (1, 3, 2), dt, semiring)
    got = run_prim(be, desc, [be.asarray(a), be.asarray(b)], out=be.asarray(c.copy()), beta=1)
    assert_same(got, _ADD[semiring.add](c, ref))
    for alpha, beta in [(2, 0), (1, 0.5), (1, 2)]:
        with pytest.raises(ValueError, match="alpha must be 1 and beta 0 or 1"):
            run_prim(be, desc, [be.asarray(a), be.asarray(b)], alpha=alpha, beta=beta)


# ------------------------------------------------------------------- Contract
SIZES = {"i": 3, "j": 4, "k": 2, "l": 5, "b": 2, "x": 3, "y": 2, "z": 0}
CONTRACT_CASES = [
    (("i", "j"), ("j", "k"), ("i", "k")),              # matrix product
    (("b", "i", "j"), ("b", "j", "k"), ("b", "k", "i")),  # batched, permuted output
    (("i", "j", "k"), ("k", "l"), ("l", "i")),         # j only in a: reduced first
    (("i",), ("j",), ("j", "i")),                      # outer product
    (("i", "j"), ("i", "j"), ()),                      # full contraction
    (("i", "j", "x"), ("j", "k", "y"), ("k", "i")),    # labels only in a and only in b
    (("i", "b", "j"), ("j", "b"), ("i", "b")),         # batch label in the middle
    (("i", "z"), ("z", "k"), ("i", "k")),              # empty inner label
    ((), ("i",), ("i",)),                              # scalar operand
]


def _einsum_ref(ma, mb, mc, a, b, dt):
    letters = {m: chr(ord("a") + i) for i, m in enumerate(SIZES)}
    spec = "".join(letters[m] for m in ma) + "," + "".join(letters[m] for m in mb) + "->" + \
        "".join(letters[m] for m in mc)
    if dt.kind == "b":
        return np.einsum(spec, a.astype(np.int64), b.astype(np.int64)) > 0, None
    w = _wide(dt)
    ref = np.einsum(spec, a.astype(w), b.astype(w))
    mag = None if dt.kind in "iu" else np.einsum(spec, np.abs(a).astype(np.float64),
                                                  np.abs(b).astype(np.float64))
    return ref, mag


def _tropical_contract_ref(ma, mb, mc, a, b, semiring, dt):
    """Broadcast both operands over every label, combine, reduce the non-output labels."""
    labels = list(dict.fromkeys(ma + mb))

    def expand(x, modes):
        x = x.transpose([modes.index(m) for m in labels if m in modes])
        return x.reshape([SIZES[m] if m in modes else 1 for m in labels])
    full = _MUL[semiring.mul](expand(a, ma), expand(b, mb))
    full = np.broadcast_to(full, [SIZES[m] for m in labels])
    red = tuple(i for i, m in enumerate(labels) if m not in mc)
    r = _ADD[semiring.add].reduce(full, axis=red, initial=_zero(semiring, dt))
    kept = [m for m in labels if m in mc]
    return np.asarray(r).transpose([kept.index(m) for m in mc]).astype(dt)


_CONTRACT_DT = [(Semiring.STANDARD, np.dtype(t)) for t in (np.float32, np.float64, np.complex64,
                                                            np.complex128, np.int32, np.int8,
                                                            np.bool_)] + \
               [(s, np.dtype(t)) for s in TROPICAL for t in (np.float64, np.int64)]


@pytest.mark.parametrize("semiring,dt", _CONTRACT_DT,
                         ids=[f"{s.name}-{t}" for s, t in _CONTRACT_DT])
def test_contract(be, rng, semiring, dt):
    if not be.backend.has_fast_path_support(d.Contract(("i",), ("i",), (), semiring), (dt, dt)):
        # honest refusal: the GPU fast path needs hipTENSOR/cuTENSOR bindings
        with pytest.raises(TypeError, match="contraction library"):
            run_prim(be, d.Contract(("i",), ("i",), (), semiring),
                     [be.asarray(np.ones(3, dt)), be.asarray(np.ones(3, dt))])
        return
    for ma, mb, mc in CONTRACT_CASES:
        desc = d.Contract(ma, mb, mc, semiring)
        an = _data(rng, [SIZES[m] for m in ma], dt, semiring)
        bn = _data(rng, [SIZES[m] for m in mb], dt, semiring)
        a, b = be.asarray(an), be.asarray(bn)
        if an.ndim >= 2:  # read a through a transposed view of a copy
            a = be.asarray(np.ascontiguousarray(an.T)).T
        got = run_prim(be, desc, [a, b])
        _check_contract(got, ma, mb, mc, an, bn, semiring, dt)
        if mc:
            so = StridedOut(be, [SIZES[m] for m in mc], dt, "transposed")
            got = run_prim(be, desc, [a, b], out=so.view)
            _check_contract(got, ma, mb, mc, an, bn, semiring, dt)
        if dt.kind == "c":
            for conj in [(True, False), (False, True), (True, True)]:
                got = run_prim(be, desc, [a, b], conj=conj)
                _check_contract(got, ma, mb, mc, np.conj(an) if conj[0] else an,
                                np.conj(bn) if conj[1] else bn, semiring, dt)


def _check_contract(got, ma, mb, mc, an, bn, semiring, dt):
    if semiring.is_tropical:
        assert_same(got, _tropical_contract_ref(ma, mb, mc, an, bn, semiring, dt))
    else:
        ref, mag = _einsum_ref(ma, mb, mc, an, bn, dt)
        assert_accumulated(got, np.asarray(ref).astype(dt), mag, dt)


@pytest.mark.parametrize("dt", [np.dtype(np.float64), np.dtype(np.int32)], ids=str)
def test_contract_alpha_beta(be, rng, dt):
    if not be.backend.has_fast_path_support(d.Contract(("i",), ("i",), ()), (dt, dt)):
        pytest.skip(f"no Contract fast path on {be.name} (test_contract checks the refusal)")
    ma, mb, mc = ("i", "j", "k"), ("k", "l"), ("l", "i")
    an = _data(rng, [SIZES[m] for m in ma], dt)
    bn = _data(rng, [SIZES[m] for m in mb], dt)
    ref, mag = _einsum_ref(ma, mb, mc, an, bn, dt)
    ref = ref.astype(dt)
    desc = d.Contract(ma, mb, mc)
    got = run_prim(be, desc, [be.asarray(an), be.asarray(bn)], out=nan_filled(be, ref.shape, dt),
                   alpha=3, beta=0)
    with np.errstate(over="ignore"):
        assert_accumulated(got, dt.type(3) * ref, None if mag is None else 3 * mag, dt)
    c = _data(rng, ref.shape, dt)
    got = run_prim(be, desc, [be.asarray(an), be.asarray(bn)], out=be.asarray(c.copy()),
                   alpha=2, beta=-1)
    with np.errstate(over="ignore"):
        expected = dt.type(2) * ref - c
    assert_accumulated(got, expected, None if mag is None else 2 * mag + np.abs(c), dt)
    tropical = d.Contract(ma, mb, mc, Semiring.MIN_PLUS)
    if not be.backend.has_fast_path_support(tropical, (dt, dt)):
        return  # a hipTENSOR / cuTENSOR fast path is (+, x) only; test_contract checks the refusal
    an = _data(rng, an.shape, dt, Semiring.MIN_PLUS)
    bn = _data(rng, bn.shape, dt, Semiring.MIN_PLUS)
    c = _data(rng, ref.shape, dt, Semiring.MIN_PLUS)
    tref = _tropical_contract_ref(ma, mb, mc, an, bn, Semiring.MIN_PLUS, dt)
    got = run_prim(be, tropical, [be.asarray(an), be.asarray(bn)], out=be.asarray(c.copy()),
                   beta=1)
    assert_same(got, np.minimum(c, tref))


# ---------------------------------------------------------- ElementwiseBinary
_EWB = [(Semiring.STANDARD, t) for t in dtypes_of("biufc") if t.itemsize != 2 or t.kind == "f"] + \
       [(s, np.dtype(t)) for s in TROPICAL for t in (np.float16, np.float32, np.int64, np.uint8)]


@pytest.mark.parametrize("semiring,dt", _EWB, ids=[f"{s.name}-{t}" for s, t in _EWB])
@pytest.mark.parametrize("op", [BinaryOp.ADD, BinaryOp.MUL], ids=lambda o: o.name)
def test_elementwise_binary(be, rng, semiring, dt, op):
    desc = d.ElementwiseBinary(op, semiring)
    if dt.kind == "b":
        fn = np.logical_or if op is BinaryOp.ADD else np.logical_and
    else:
        fn = _ADD[semiring.add] if op is BinaryOp.ADD else _MUL[semiring.mul]
    pairs = zip(layouts(be, rng, (3, 4), dt), layouts(be, rng, (3, 4), dt)[::-1])
    for (_, a, an), (_, b, bn) in pairs:
        with np.errstate(over="ignore"):
            ref = fn(an, bn)
        # complex MUL may be fused (fma) on a GPU: equal to rounding, not bitwise
        assert_elementwise(run_prim(be, desc, [a, b], out=nan_filled(be, (3, 4), dt)), ref)
    an, bn = random_array(rng, (3, 1), dt), random_array(rng, (4,), dt)
    c = random_array(rng, (3, 4), dt)
    with np.errstate(over="ignore"):
        ref = fn(an, bn)
    if semiring.is_tropical:
        got = run_prim(be, desc, [be.asarray(an), be.asarray(bn)], out=be.asarray(c.copy()), beta=1)
        assert_same(got, _ADD[semiring.add](c, ref))
        with pytest.raises(ValueError):
            run_prim(be, desc, [be.asarray(an), be.asarray(bn)], alpha=2)
    elif dt.kind != "b":
        alpha, beta = (2, 3) if dt.kind in "iu" else (1.5, -0.5)
        got = run_prim(be, desc, [be.asarray(an), be.asarray(bn)], out=be.asarray(c.copy()),
                       alpha=alpha, beta=beta)
        with np.errstate(over="ignore"):
            expected = np.asarray(alpha).astype(dt) * ref + np.asarray(beta).astype(dt) * c
        if dt.kind in "fc":
            np.testing.assert_allclose(got, expected, rtol=ACC_RTOL[dt] * 10)
        else:
            assert_same(got, expected)
    if dt.kind == "c":
        got = run_prim(be, desc, [be.asarray(an), be.asarray(bn)], conj=(True, False))
        np.testing.assert_allclose(got, fn(np.conj(an), bn), rtol=ACC_RTOL[dt])


# ------------------------------------------------------- Trace and its adjoints
TRACE_CASES = [
    (("i", "i"), ()),
    (("i", "i", "j"), ("j",)),
    (("i", "j", "i", "k"), ("k", "j")),
    (("i", "j"), ("j", "i")),
    (("i", "i", "i"), ("i",)),
    (("i", "j"), ()),
    ((), ()),
]
TSIZES = {"i": 3, "j": 4, "k": 2}


def _letters(modes):
    return "".join(modes)


def _trace_ref(ma, mc, x):
    spec = f"{_letters(ma)}->{_letters(mc)}"
    if x.dtype == np.bool_:
        return np.einsum(spec, x.astype(np.int64)) > 0
    with np.errstate(over="ignore"):
        return np.einsum(spec, x.astype(_wide(x.dtype))).astype(x.dtype)


@pytest.mark.parametrize("dt", [np.dtype(t) for t in (np.float32, np.float64, np.complex128,
                                                      np.int32, np.uint8, np.bool_)], ids=str)
def test_trace(be, rng, dt):
    for ma, mc in TRACE_CASES:
        shape = [TSIZES[m] for m in ma]
        xn = random_array(rng, shape, dt)
        desc = d.Trace(ma, mc)
        x = be.asarray(xn)[tuple(slice(None, None, -1) for _ in shape)]
        got = run_prim(be, desc, [x])
        xr = xn[tuple(slice(None, None, -1) for _ in shape)]
        mag = None if dt.kind in "biu" else _trace_ref(ma, mc, np.abs(xr).astype(np.float64))
        assert_accumulated(got, _trace_ref(ma, mc, xr), mag, dt)
        if dt.kind in "fc":
            c = random_array(rng, got.shape, dt)
            got = run_prim(be, desc, [be.asarray(xn)], out=be.asarray(c.copy()), alpha=2, beta=0.5,
                           conj=(True,))
            ref = 2 * _trace_ref(ma, mc, np.conj(xn)) + 0.5 * c
            assert_accumulated(got, ref.astype(dt), 2 * mag + np.abs(c), dt)


def _anti_ref(ma, mc, a, out_shape):
    """Loops: out[idx] = a[labels of ma] where repeated labels of mc agree, else 0."""
    out = np.zeros(out_shape, a.dtype)
    for idx in np.ndindex(*out_shape):
        val = {}
        if all(val.setdefault(m, i) == i for m, i in zip(mc, idx)):
            out[idx] = a[tuple(val[m] for m in ma)]
    return out


ANTI_CASES = [  # (modes_a, modes_c) -- AntiTrace may add labels of its own
    (("i",), ("i", "i")),
    (("j", "i"), ("i", "j", "i")),
    ((), ("i", "i")),
    (("k",), ("i", "k", "i", "j")),
    (("i", "j"), ("j", "i")),
]


@pytest.mark.parametrize("dt", [np.dtype(t) for t in (np.float64, np.complex64, np.int16,
                                                      np.bool_)], ids=str)
def test_anti_trace_and_diag(be, rng, dt):
    for ma, mc in ANTI_CASES:
        an = random_array(rng, [TSIZES[m] for m in ma], dt)
        out_shape = tuple(TSIZES[m] for m in mc)
        ref = _anti_ref(ma, mc, an, out_shape)
        for desc in (d.AntiTrace(ma, mc), d.AntiDiag(ma, mc)):
            if type(desc) is d.AntiDiag and not set(mc) <= set(ma):
                continue
            got = run_prim(be, desc, [be.asarray(an)], out=nan_filled(be, out_shape, dt),
                           out_shape=out_shape)
            assert_same(got, ref)
            so = StridedOut(be, out_shape, dt, "step")
            assert_same(run_prim(be, desc, [be.asarray(an)], out=so.view, out_shape=out_shape), ref)
            so.check_gaps()
            if dt.kind in "fc":
                c = random_array(rng, out_shape, dt)
                got = run_prim(be, desc, [be.asarray(an)], out=be.asarray(c.copy()), alpha=2,
                               beta=-1, conj=(True,), out_shape=out_shape)
                expected = 2 * _anti_ref(ma, mc, np.conj(an), out_shape) - c
                np.testing.assert_allclose(got, expected, rtol=ACC_RTOL[dt])
    # AntiDiag infers its output shape
    an = random_array(rng, (3, 4), dt)
    got = run_prim(be, d.AntiDiag(("i", "j"), ("j", "i", "i")), [be.asarray(an)])
    assert_same(got, _anti_ref(("i", "j"), ("j", "i", "i"), an, (4, 3, 3)))


@pytest.mark.parametrize("dt", [np.dtype(np.float64), np.dtype(np.complex128)], ids=str)
def test_trace_adjoint_identity(be, rng, dt):
    """<Trace(x), y> == <x, AntiTrace(y)> for random x, y."""
    for ma, mc in TRACE_CASES:
        xn = random_array(rng, [TSIZES[m] for m in ma], dt)
        yn = random_array(rng, [TSIZES[m] for m in mc], dt)
        tx = run_prim(be, d.Trace(ma, mc), [be.asarray(xn)])
        aty = run_prim(be, d.AntiTrace(mc, ma), [be.asarray(yn)], out_shape=xn.shape)
        lhs, rhs = np.sum(tx * yn), np.sum(xn * aty)
        assert abs(lhs - rhs) <= 1e-12 * (np.sum(np.abs(xn)) * np.max(np.abs(yn), initial=1))


# -------------------------------------------------------------- MakeContiguous
@pytest.mark.parametrize("dt", [np.dtype(t) for t in (np.bool_, np.int8, np.uint64, np.float32,
                                                      np.complex128)], ids=str)
def test_make_contiguous(be, rng, dt):
    desc = d.MakeContiguous()
    for _, x, xn in layouts(be, rng, (3, 5), dt):
        assert_same(run_prim(be, desc, [x]), xn)
    x = be.xp.broadcast_to(be.asarray(random_array(rng, (5,), dt)), (3, 5))
    assert_same(run_prim(be, desc, [x]), be.asnumpy(x))
    for shape in [(), (0, 4)]:
        xn = random_array(rng, shape, dt)
        assert_same(run_prim(be, desc, [be.asarray(xn)]), xn)
    if dt.kind in "fc":
        xn = random_array(rng, (4, 3), dt)
        c = random_array(rng, (3, 4), dt)
        got = run_prim(be, desc, [be.asarray(xn).T], conj=(True,), out=be.asarray(c.copy()),
                       alpha=2, beta=0.5)
        np.testing.assert_allclose(got, 2 * np.conj(xn.T) + 0.5 * c, rtol=ACC_RTOL[dt])
