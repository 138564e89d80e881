"""Elementwise prims against NumPy references written here: every UnaryOp / BinaryOp over
every dtype its row accepts, on contiguous, strided, reversed, transposed, broadcast,
0-d and empty operands, conj flags and strided outputs; where, casts, generators."""
import numpy as np
import pytest

from hipfer.prims import descriptors as d
from hipfer.prims.optable import BinaryOp, UnaryOp

from _util import (ALL_DTYPES, COMPLEX, FLOATS, StridedOut, assert_elementwise, assert_same,
                    broadcast_view, dtypes_of, layouts, random_array, run_prim, with_ties)


def _imag(x):
    return np.imag(x) if x.dtype.kind == "c" else np.zeros_like(x)


def _ldexp(x, n):
    """The LDEXP row's exponent is a float holding an integer: truncated and clamped to
    +-100000, NaN gives NaN (hipfer.ldexp passes integers only)."""
    m = np.clip(n.astype(np.float64), -100000, 100000)
    return np.where(np.isnan(m), np.nan, np.ldexp(x, np.nan_to_num(m).astype(np.int32))
                    ).astype(x.dtype)


REF_UNARY = {
    UnaryOp.NEG: lambda x: -x,
    UnaryOp.CONJ: np.conj,
    UnaryOp.ABS: lambda x: np.hypot(x.real, x.imag) if x.dtype.kind == "c" else np.abs(x),
    UnaryOp.RECIPROCAL: lambda x: 1 / x,
    UnaryOp.REAL: lambda x: x.real,
    UnaryOp.IMAG: _imag,
    UnaryOp.SQUARE: lambda x: x * x,
    UnaryOp.SQRT: np.sqrt,
    UnaryOp.RSQRT: lambda x: 1 / np.sqrt(x),
    UnaryOp.EXP: np.exp,
    UnaryOp.EXPM1: np.expm1,
    UnaryOp.LOG: np.log,
    UnaryOp.LOG1P: np.log1p,
    UnaryOp.SIN: np.sin,
    UnaryOp.COS: np.cos,
    UnaryOp.TAN: np.tan,
    UnaryOp.TANH: np.tanh,
    UnaryOp.ASIN: np.arcsin,
    UnaryOp.ACOS: np.arccos,
    UnaryOp.ATAN: np.arctan,
    UnaryOp.SINH: np.sinh,
    UnaryOp.COSH: np.cosh,
    UnaryOp.ASINH: np.arcsinh,
    UnaryOp.ACOSH: np.arccosh,
    UnaryOp.ATANH: np.arctanh,
    UnaryOp.POSITIVE: np.positive,
    UnaryOp.BITWISE_INVERT: np.invert,
    UnaryOp.LOGICAL_NOT: np.logical_not,
    UnaryOp.CEIL: np.ceil,
    UnaryOp.FLOOR: np.floor,
    UnaryOp.TRUNC: np.trunc,
    UnaryOp.ROUND: np.round,
    UnaryOp.SIGN: lambda x: np.where(np.isnan(x), complex(np.nan, np.nan), np.sign(x))
    if x.dtype.kind == "c" else np.sign(x),  # the standard's: a NaN part gives nan + nan j
    UnaryOp.SIGNBIT: np.signbit,
    UnaryOp.ISNAN: np.isnan,
    UnaryOp.ISINF: np.isinf,
    UnaryOp.ISFINITE: np.isfinite,
    UnaryOp.LOG2: np.log2,
    UnaryOp.LOG10: np.log10,
    UnaryOp.CBRT: np.cbrt,
    UnaryOp.EXP2: np.exp2,
    # float16 sinc computes in float32 and rounds once (the kernels' float16 rule)
    UnaryOp.SINC: lambda x: np.sinc(x.astype(np.float32)).astype(x.dtype)
    if x.dtype == np.float16 else np.sinc(x),
    UnaryOp.I0: lambda x: np.i0(x.astype(np.float64)).astype(x.dtype),  # summed in float64
    UnaryOp.DEG2RAD: np.deg2rad,
    UnaryOp.RAD2DEG: np.rad2deg,
    UnaryOp.SPACING: np.spacing,
    UnaryOp.FREXP_MANTISSA: lambda x: np.frexp(x)[0],
    UnaryOp.FREXP_EXPONENT: lambda x: np.frexp(x)[1].astype(x.dtype),
    UnaryOp.BITWISE_COUNT: lambda x: np.bitwise_count(x).astype(x.dtype),
}


def _clamp_min(x, lo):
    return np.where(x < lo, lo, x)


def _clamp_max(x, hi):
    return np.where(x > hi, hi, x)


def _xlogy(x, y):
    return np.where((x == 0) & ~np.isnan(y), 0, x * np.log(y))


def _floor_divide(a, b):
    """NumPy's, except floats at an infinite operand: the standard's floor(a / b)."""
    q = np.floor_divide(a, b)
    if a.dtype.kind != "f":
        return q
    return np.where(np.isinf(a) | np.isinf(b), a / b, q).astype(q.dtype)


def _pow(a, b):
    """Integers: wrapping, and a negative exponent gives the truncated 1 / a**|b|."""
    if a.dtype.kind not in "iu":
        return a ** b
    neg = b < 0
    p = np.power(a, np.where(neg, 0, b))
    if a.dtype.kind == "u" or not neg.any():
        return p
    trunc = np.where(a == 1, 1, np.where(a == -1, np.where(b % 2 == 1, -1, 1), 0))
    return np.where(neg, trunc, p).astype(a.dtype)


def _sub(a, b):
    return a ^ b if a.dtype == np.bool_ else a - b


REF_BINARY = {
    BinaryOp.ADD: lambda a, b: a | b if a.dtype == np.bool_ else a + b,
    BinaryOp.SUB: _sub,
    BinaryOp.MUL: lambda a, b: a & b if a.dtype == np.bool_ else a * b,
    BinaryOp.DIV: lambda a, b: a / b,
    BinaryOp.MAXIMUM: lambda a, b: np.where(np.isnan(a) | (a > b), a, b)
    if a.dtype.kind == "f" else np.where(a > b, a, b),
    BinaryOp.MINIMUM: lambda a, b: np.where(np.isnan(a) | (a < b), a, b)
    if a.dtype.kind == "f" else np.where(a < b, a, b),
    BinaryOp.CLAMP_MIN: _clamp_min,
    BinaryOp.CLAMP_MAX: _clamp_max,
    BinaryOp.GREATER: lambda a, b: a > b,
    BinaryOp.GREATER_EQUAL: lambda a, b: a >= b,
    BinaryOp.POW: _pow,
    BinaryOp.ATAN2: np.arctan2,
    BinaryOp.HYPOT: np.hypot,
    BinaryOp.XLOGY: _xlogy,
    BinaryOp.EQUAL: lambda a, b: a == b,
    BinaryOp.NOT_EQUAL: lambda a, b: a != b,
    BinaryOp.BITWISE_AND: lambda a, b: a & b,
    BinaryOp.BITWISE_OR: lambda a, b: a | b,
    BinaryOp.BITWISE_XOR: lambda a, b: a ^ b,
    BinaryOp.BITWISE_LEFT_SHIFT: np.left_shift,
    BinaryOp.BITWISE_RIGHT_SHIFT: np.right_shift,
    BinaryOp.LOGICAL_AND: np.logical_and,
    BinaryOp.LOGICAL_OR: np.logical_or,
    BinaryOp.LOGICAL_XOR: np.logical_xor,
    BinaryOp.FLOOR_DIVIDE: _floor_divide,
    BinaryOp.REMAINDER: np.remainder,
    BinaryOp.COPYSIGN: np.copysign,
    BinaryOp.NEXTAFTER: np.nextafter,
    BinaryOp.LOGADDEXP: np.logaddexp,
    BinaryOp.LOGADDEXP2: np.logaddexp2,
    BinaryOp.FMOD: np.fmod,
    BinaryOp.FMAX: np.fmax,
    BinaryOp.FMIN: np.fmin,
    BinaryOp.HEAVISIDE: np.heaviside,
    BinaryOp.GCD: np.gcd,
    BinaryOp.LCM: np.lcm,
    BinaryOp.LDEXP: _ldexp,
    BinaryOp.DIVMOD_QUOTIENT: np.floor_divide,
}

_UNARY_DESC = {"scalar": d.ScalarUnary, "analytic": d.AnalyticUnary}
_BINARY_DESC = {"scalar": d.ScalarBinary, "analytic": d.AnalyticBinary,
                "metadata": d.MetadataBinary}
_UNARY_CASES = [(op, t) for op in UnaryOp for t in dtypes_of(op.row.kinds)]
_BINARY_CASES = [(op, t) for op in BinaryOp for t in dtypes_of(op.row.kinds)
                 if op.row.family != "metadata" or t.kind in "biu"]
_METADATA_ARITH = [(op, t) for op in (BinaryOp.ADD, BinaryOp.SUB, BinaryOp.MUL)
                   for t in dtypes_of("biu")]


def _out_dtype(row, dt):
    if row.result == "bool":
        return np.dtype(np.bool_)
    if row.result == "real" and dt.kind == "c":
        return np.dtype(np.float32) if dt == np.complex64 else np.dtype(np.float64)
    return dt


def _ref(fn, *xs):
    with np.errstate(all="ignore"):
        return fn(*xs)


# -------------------------------------------------------------------- unary
@pytest.mark.parametrize("op,dt", _UNARY_CASES, ids=[f"{o.name}-{t}" for o, t in _UNARY_CASES])
def test_unary(be, rng, op, dt):
    desc = _UNARY_DESC[op.row.family](op)
    odt = _out_dtype(op.row, dt)
    ref = REF_UNARY[op]
    for _, x, xn in layouts(be, rng, (5, 6), dt, special=True):
        assert_elementwise(run_prim(be, desc, [x]), _ref(ref, xn), odt)
    for shape in [(), (0, 3), (7,)]:
        xn = random_array(rng, shape, dt, special=True)
        assert_elementwise(run_prim(be, desc, [be.asarray(xn)]), _ref(ref, xn), odt)
    # a stride-0 (broadcast) input
    x, xn = broadcast_view(be, random_array(rng, (1, 6), dt), (4, 6))
    assert_elementwise(run_prim(be, desc, [x]), _ref(ref, xn), odt)
    # strided and transposed outputs
    xn = random_array(rng, (4, 3), dt, special=True)
    for kind in ("step", "transposed"):
        so = StridedOut(be, (4, 3), odt, kind)
        got = run_prim(be, desc, [be.asarray(xn)], out=so.view)
        assert_elementwise(got, _ref(ref, xn), odt)
        so.check_gaps()
    if dt.kind == "c":  # a conj-flagged input is read conjugated
        xn = random_array(rng, (3, 4), dt)
        got = run_prim(be, desc, [be.asarray(xn)], conj=(True,))
        assert_elementwise(got, _ref(ref, np.conj(xn)), odt)


# ------------------------------------------------------------------- binary
def _binary_inputs(rng, op, dt, shape_a, shape_b):
    a = random_array(rng, shape_a, dt, special=True)
    b = random_array(rng, shape_b, dt, special=True)
    if op is BinaryOp.XLOGY and a.size:
        a.reshape(-1)[::3] = 0  # the x == 0 rule
    return a, with_ties(rng, a, b)


@pytest.mark.parametrize("op,dt", _BINARY_CASES, ids=[f"{o.name}-{t}" for o, t in _BINARY_CASES])
def test_binary(be, rng, op, dt):
    desc = _BINARY_DESC[op.row.family](op)
    _check_binary(be, rng, desc, op, dt)


@pytest.mark.parametrize("op,dt", _METADATA_ARITH,
                         ids=[f"{o.name}-{t}" for o, t in _METADATA_ARITH])
def test_metadata_binary(be, rng, op, dt):
    _check_binary(be, rng, d.MetadataBinary(op), op, dt)


def _check_binary(be, rng, desc, op, dt):
    odt = _out_dtype(op.row, dt)
    ref = REF_BINARY[op]
    la = layouts(be, rng, (4, 6), dt, special=True)
    lb = layouts(be, rng, (4, 6), dt, special=True)
    for (_, a, an), (_, b, bn) in zip(la, lb[1:] + lb[:1]):  # mixed layouts
        assert_elementwise(run_prim(be, desc, [a, b]), _ref(ref, an, bn), odt)
    # same-shape pairs with ties, broadcasting, scalars, empty
    for sa, sb in [((5, 6), (5, 6)), ((4, 1), (1, 5)), ((3, 4), ()), ((), (2, 3)), ((), ()),
                   ((0, 3), (1, 3)), ((2, 3, 4), (4,))]:
        an, bn = _binary_inputs(rng, op, dt, sa, sb)
        got = run_prim(be, desc, [be.asarray(an), be.asarray(bn)])
        assert_elementwise(got, _ref(ref, an, bn), odt)
    # explicit stride-0 operand and a strided output
    an, bn = _binary_inputs(rng, op, dt, (3, 5), (3, 5))
    b, bb = broadcast_view(be, bn[:1], (3, 5))
    so = StridedOut(be, (3, 5), odt, "step")
    got = run_prim(be, desc, [be.asarray(an), b], out=so.view)
    assert_elementwise(got, _ref(ref, an, bb), odt)
    so.check_gaps()
    if dt.kind == "c":
        an, bn = _binary_inputs(rng, op, dt, (3, 4), (3, 4))
        for conj in [(True, False), (False, True), (True, True)]:
            got = run_prim(be, desc, [be.asarray(an), be.asarray(bn)], conj=conj)
            ca = np.conj(an) if conj[0] else an
            cb = np.conj(bn) if conj[1] else bn
            assert_elementwise(got, _ref(ref, ca, cb), odt)


def test_special_rules(be):
    """The rules the op table fixes beyond NumPy's names."""
    f = np.float64
    nan, inf = np.nan, np.inf
    x = np.array([nan, 1.0, 5.0, 2.0, nan], f)
    bound = np.array([0.0, nan, 3.0, 4.0, 1.0], f)
    got = run_prim(be, d.ScalarBinary(BinaryOp.CLAMP_MIN), [be.asarray(x), be.asarray(bound)])
    assert_same(got, np.array([nan, 1.0, 5.0, 4.0, nan], f))
    got = run_prim(be, d.ScalarBinary(BinaryOp.CLAMP_MAX), [be.asarray(x), be.asarray(bound)])
    assert_same(got, np.array([nan, 1.0, 3.0, 2.0, nan], f))
    got = run_prim(be, d.ScalarBinary(BinaryOp.MAXIMUM), [be.asarray(x), be.asarray(bound)])
    assert_same(got, np.array([nan, nan, 5.0, 4.0, nan], f))
    xs = np.array([0.0, 0.0, 0.0, 2.0, 0.0], f)
    ys = np.array([0.0, inf, nan, np.e, -1.0], f)
    got = run_prim(be, d.AnalyticBinary(BinaryOp.XLOGY), [be.asarray(xs), be.asarray(ys)])
    assert_same(got, np.array([0.0, 0.0, nan, 2.0, 0.0], f))
    u = np.array([0, 1, 200], np.uint8)
    assert_same(run_prim(be, d.ScalarUnary(UnaryOp.NEG), [be.asarray(u)]),
                np.array([0, 255, 56], np.uint8))
    i8 = np.array([127, -128], np.int8)
    assert_same(run_prim(be, d.ScalarBinary(BinaryOp.ADD), [be.asarray(i8), be.asarray(i8)]),
                np.array([-2, 0], np.int8))
    t = np.array([True, True, False, False])
    s = np.array([True, False, True, False])
    assert_same(run_prim(be, d.MetadataBinary(BinaryOp.SUB), [be.asarray(t), be.asarray(s)]),
                t != s)
    c = np.array([3 + 4j, -5j], np.complex64)
    assert_same(run_prim(be, d.ScalarUnary(UnaryOp.ABS), [be.asarray(c)]),
                np.array([5, 5], np.float32))
    assert_same(run_prim(be, d.ScalarUnary(UnaryOp.IMAG), [be.asarray(np.array([nan, 1.0]))]),
                np.zeros(2))


# --------------------------------------------------------------- complex -> real
@pytest.mark.parametrize("op", [UnaryOp.ABS, UnaryOp.REAL, UnaryOp.IMAG])
@pytest.mark.parametrize("dt", COMPLEX, ids=str)
def test_complex_real_unary(be, rng, op, dt):
    desc = d.ComplexRealUnary(op)
    odt = _out_dtype(op.row, dt)
    for _, x, xn in layouts(be, rng, (3, 5), dt):
        assert_elementwise(run_prim(be, desc, [x]), REF_UNARY[op](xn), odt)
        assert_elementwise(run_prim(be, desc, [x], conj=(True,)), REF_UNARY[op](np.conj(xn)), odt)


@pytest.mark.parametrize("dt", COMPLEX, ids=str)
def test_complex_scale(be, rng, dt):
    rdt = np.dtype(np.float32) if dt == np.complex64 else np.dtype(np.float64)
    desc = d.ComplexScale()
    for (_, a, an), (_, s, sn) in zip(layouts(be, rng, (3, 4), dt), layouts(be, rng, (3, 4), rdt)):
        assert_elementwise(run_prim(be, desc, [a, s]), an * sn, dt)
        assert_elementwise(run_prim(be, desc, [a, s], conj=(True, False)), np.conj(an) * sn, dt)
    an, sn = random_array(rng, (3, 1), dt), random_array(rng, (4,), rdt)
    assert_elementwise(run_prim(be, desc, [be.asarray(an), be.asarray(sn)]), an * sn, dt)


# ---------------------------------------------------------------------- where
_WHERE = [(d.ScalarWhere(), t) for t in ALL_DTYPES] + \
         [(d.MetadataWhere(), t) for t in dtypes_of("biu")] + \
         [(d.MaskWhere(), t) for t in dtypes_of("fc")]


@pytest.mark.parametrize("desc,dt", _WHERE, ids=[f"{type(w).__name__}-{t}" for w, t in _WHERE])
def test_where(be, rng, desc, dt):
    lc = layouts(be, rng, (4, 5), np.bool_)
    la = layouts(be, rng, (4, 5), dt, special=True)
    lb = layouts(be, rng, (4, 5), dt, special=True)
    for (_, c, cn), (_, a, an), (_, b, bn) in zip(lc, la[1:] + la[:1], lb[2:] + lb[:2]):
        assert_same(run_prim(be, desc, [c, a, b]), np.where(cn, an, bn))
    for sc, sa, sb in [((4, 1), (1, 5), ()), ((), (3,), (2, 1)), ((0, 2), (2,), (1, 2))]:
        cn = random_array(rng, sc, np.bool_)
        an, bn = random_array(rng, sa, dt), random_array(rng, sb, dt)
        got = run_prim(be, desc, [be.asarray(cn), be.asarray(an), be.asarray(bn)])
        assert_same(got, np.where(cn, an, bn))
    if dt.kind == "c":
        cn, an, bn = (random_array(rng, (6,), t) for t in (np.bool_, dt, dt))
        got = run_prim(be, desc, [be.asarray(cn), be.asarray(an), be.asarray(bn)],
                       conj=(False, True, False))
        assert_same(got, np.where(cn, np.conj(an), bn))


# ----------------------------------------------------------------------- casts
def _cast_source(rng, src, dst, shape):
    """Values whose cast is specified: no NaN/inf, in range, non-negative to unsigned."""
    if src.kind in "fc":
        lo = 0 if dst.kind == "u" else -100
        x = rng.uniform(lo, 100, shape)
        x.reshape(-1)[::4] = 0
        x.reshape(-1)[1::5] = 0.5
        if src.kind == "c":
            im = rng.uniform(-100, 100, shape)
            im.reshape(-1)[::3] = 0
            x = x + 1j * im
        return x.astype(src)
    return random_array(rng, shape, src)


_CAST = [(s, t) for s in ALL_DTYPES for t in ALL_DTYPES]


@pytest.mark.parametrize("src,dst", _CAST, ids=[f"{s}-{t}" for s, t in _CAST])
def test_cast(be, rng, src, dst):
    desc = d.PointwiseCast(dst)
    for shape in [(3, 7), (), (0,)]:
        xn = _cast_source(rng, src, dst, shape)
        expected = (xn != 0) if dst.kind == "b" else xn.real.astype(dst) \
            if src.kind == "c" and dst.kind != "c" else xn.astype(dst)
        assert_same(run_prim(be, desc, [be.asarray(xn)]), expected)
    xn = _cast_source(rng, src, dst, (6, 4))
    x = be.asarray(xn)[::-2].T
    got = run_prim(be, desc, [x], conj=(True,))
    xc = np.conj(xn[::-2].T) if src.kind == "c" else xn[::-2].T
    expected = (xc != 0) if dst.kind == "b" else xc.real.astype(dst) \
        if src.kind == "c" and dst.kind != "c" else xc.astype(dst)
    assert_same(got, expected)


# -------------------------------------------------------------------- generate
@pytest.mark.parametrize("dt", ALL_DTYPES, ids=str)
def test_generate(be, dt):
    shape = (3, 4)
    n = 12
    if dt.kind == "b":
        iota = (np.arange(n) * 2 - 3 != 0).reshape(shape)
    elif dt.kind == "u":
        iota = (np.arange(n, dtype=np.uint64) * 2 + 1).astype(dt).reshape(shape)
    else:
        iota = (np.arange(n) * 2 - 3).astype(dt).reshape(shape)
    start = 1 if dt.kind == "u" else -3
    got = run_prim(be, d.Generate(d.GenerateKind.IOTA), [], spec=(shape, dt), start=start, step=2)
    assert_same(got, iota)
    so = StridedOut(be, shape, dt, "transposed")
    got = run_prim(be, d.Generate(d.GenerateKind.IOTA), [], out=so.view, spec=(shape, dt),
                   start=start, step=2)
    assert_same(got, iota)
    got = run_prim(be, d.Generate(d.GenerateKind.IOTA), [], spec=((5,), dt))
    assert_same(got, np.arange(5).astype(dt))
    value = 1 if dt.kind == "b" else 7
    so = StridedOut(be, shape, dt, "step")
    got = run_prim(be, d.Generate(d.GenerateKind.CONSTANT), [], out=so.view, spec=(shape, dt),
                   value=value)
    assert_same(got, np.full(shape, value, dt))
    so.check_gaps()
    for shape in [(), (0, 2)]:
        got = run_prim(be, d.Generate(d.GenerateKind.CONSTANT), [], spec=(shape, dt), value=value)
        assert_same(got, np.full(shape, value, dt))


@pytest.mark.parametrize("dt", FLOATS, ids=str)
def test_generate_float_step(be, dt):
    got = run_prim(be, d.Generate(d.GenerateKind.IOTA), [], spec=((2, 5), dt), start=0.5, step=0.25)
    assert_elementwise(got, (0.5 + 0.25 * np.arange(10)).reshape(2, 5), dt)
