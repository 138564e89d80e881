"""Elementwise prims on NumPy: unary/binary ops from the op table, where, casts,
generators and the scaled copies.

An op row's ``name`` is the NumPy function (``getattr(np, name)``); ``_EXTRAS`` holds
the few NumPy lacks. Every implementation is called as ``fn(*inputs, out=out)`` and
writes into ``out``, which may be any strided view of the output shape.
"""
from __future__ import annotations

from functools import reduce
from operator import mul

import numpy as np

from ...prims import descriptors as d
from ...prims.optable import BinaryOp
from ._common import (NUMERIC_KINDS, Handler, as_dtype, by_chunks, conj_flags, conj_loader,
                      fp_ignore, fp_restore, numeric, quiet, scaled, tropical_scaled)


# ------------------------------------------------------------- the NumPy extras
def _rsqrt(x, out):
    np.sqrt(x, out=out)
    np.divide(1, out, out=out)


def _real(x, out):
    np.copyto(out, x.real)


def _imag(x, out):
    if x.dtype.kind == "c":
        np.copyto(out, x.imag)
    else:
        out[...] = 0


def _clamp_min(x, lo, out):
    if x.dtype.kind in "biu":
        np.maximum(x, lo, out=out)
    else:  # (x < lo) ? lo : x -- NaN in x passes through, a NaN bound is ignored
        np.copyto(out, np.where(x < lo, lo, x))


def _clamp_max(x, hi, out):
    if x.dtype.kind in "biu":
        np.minimum(x, hi, out=out)
    else:
        np.copyto(out, np.where(x > hi, hi, x))


def _xlogy(x, y, out):
    # PyTorch's rule: 0 where x == 0 unless y is NaN (y == y is False only for NaN)
    zero = (x == 0) & (y == y)
    np.multiply(x, np.log(y), out=out)
    np.copyto(out, 0, where=zero)


def _power(a, b, out):
    """Integers: exact and wrapping; a negative exponent (NumPy refuses it) gives the
    truncated 1 / a**|b|: 1 for a == 1, +-1 for a == -1, else 0."""
    if a.dtype.kind not in "iu":
        np.power(a, b, out=out)
        return
    neg = b < 0
    if not neg.any():
        np.power(a, b, out=out)
        return
    np.power(a, np.where(neg, 0, b), out=out)
    odd = (b & 1).astype(bool)
    np.copyto(out, np.where(a == 1, 1, np.where(a == -1, np.where(odd, -1, 1), 0)).astype(out.dtype),
              where=neg)


def _sign(x, out):
    np.sign(x, out=out)
    if x.dtype.kind == "c":  # the standard: a NaN part gives nan + nan j (NumPy: inf + nan j -> 1)
        np.copyto(out, complex(np.nan, np.nan), where=np.isnan(x.real) | np.isnan(x.imag))


def _expm1(x, out):
    if x.dtype.kind != "c":
        np.expm1(x, out=out)
        return
    # the standard's special values: exp(z) - 1 where a part is infinite or NaN (NumPy's
    # formula gives inf + nan j at inf + 0j), a real z keeps its zero imaginary part, and
    # +-0 + 0j gives +0 + 0j (NumPy: -0 + 0j at -0 + 0j); all read before out (maybe x) is written
    bad = ~np.isfinite(x)
    fix = np.exp(x) - 1 if bad.any() else None
    real = (x.imag == 0) & ~bad
    imag = np.where(real, x.imag, 0) if real.any() else None
    zero = real & (x.real == 0)
    np.expm1(x, out=out)
    if fix is not None:
        np.copyto(out, fix, where=bad)
    if imag is not None:
        out.imag[...] = np.where(real, imag, out.imag)
        out.real[...] = np.where(zero, 0, out.real)


def _floor_divide_float(a, b, out):
    """NumPy's floor division, except where an operand is infinite: there the standard's
    floor(a / b), which a / b already is (+-inf, +-0 or NaN; NumPy pairs // with % and gives
    NaN for inf // 2 and -1 for 2 // -inf)."""
    inf = np.isinf(a) | np.isinf(b)  # before out, which may be a or b, is written
    fix = np.divide(a, b) if inf.any() else None
    np.floor_divide(a, b, out=out)
    if fix is not None:
        np.copyto(out, fix, where=inf)


def _calc(x):
    """x as the kernels compute it: float16 in float32 (rounded once, where stored)."""
    return x.astype(np.float32) if x.dtype == np.float16 else x


def _sinc(x, out):
    np.copyto(out, np.sinc(_calc(x)), casting="unsafe")


def _i0(x, out):  # the kernels sum NumPy's series in float64 for every dtype
    np.copyto(out, np.i0(x.astype(np.float64)), casting="unsafe")


def _frexp_mantissa(x, out):
    np.copyto(out, np.frexp(x)[0])


def _frexp_exponent(x, out):
    np.copyto(out, np.frexp(x)[1], casting="unsafe")


def _bitwise_count(x, out):
    np.copyto(out, np.bitwise_count(x), casting="unsafe")


def _ldexp(x, n, out):
    """n holds integers in x's float dtype; clamped as the kernels do (beyond +-100000
    every finite x over- or underflows already)."""
    m = np.clip(n.astype(np.float64), -100000, 100000)  # (a float16 cannot hold the bound)
    nan = np.isnan(m)  # not reached from hipfer.ldexp (integer n): NaN as the kernels
    np.ldexp(x, np.where(nan, 0, m).astype(np.int32), out=out)
    if nan.any():
        np.copyto(out, np.nan, where=nan)


def _quietly(fn):
    """fn under errstate: integer x // 0 and x % 0 (0 by NumPy's rule) would warn."""
    def run(*xs, out):
        tok = fp_ignore()
        try:
            fn(*xs, out=out)
        finally:
            fp_restore(tok)
    run.ufunc = fn  # the bare ufunc under the error state every op runs in (hipfer._warmpath)
    return run


_EXTRAS = {
    "rsqrt": _rsqrt, "real": _real, "imag": _imag,
    "clamp_min": _clamp_min, "clamp_max": _clamp_max, "xlogy": _xlogy,
    "power": _power, "sign": _sign, "expm1": _expm1,
    "floor_divide": _quietly(np.floor_divide), "remainder": _quietly(np.remainder),
    "fmod": _quietly(np.fmod), "divmod_quotient": _quietly(np.floor_divide), "sinc": _sinc, "i0": _i0, "frexp_mantissa": _frexp_mantissa,
    "frexp_exponent": _frexp_exponent, "bitwise_count": _bitwise_count, "ldexp": _ldexp,
}
# floats only: integers keep the bare ufunc (and hipfer._warmpath's loop)
_FLOAT_EXTRAS = {"floor_divide": _floor_divide_float}
# NumPy refuses bool subtraction; C++ bool arithmetic gives a - b == (a != b)
_BOOL_EXTRAS = {"subtract": np.not_equal}

# Complex special values where NumPy before 2.3 departs from the standard (C99 Annex G),
# from NumPy >= 2.3 and from our kernels: op -> (the inputs, the value there). Where the
# installed NumPy gets one right (probed once, below) its ufunc runs bare.
_ANNEX_G = {
    # acosh(+-0 + nan j) = nan + pi/2 j (NumPy 2.2: nan + nan j)
    "arccosh": (lambda x: (x.real == 0) & np.isnan(x.imag), complex(np.nan, np.pi / 2)),
    # the sign of the infinite part is unspecified; this is NumPy >= 2.3's and the GPU's
    "arcsin": (lambda x: np.isneginf(x.real) & np.isnan(x.imag), complex(np.nan, np.inf)),
    "arcsinh": (lambda x: np.isnan(x.real) & np.isneginf(x.imag), complex(np.inf, np.nan)),
}


def _annex_g_fix(name):
    """np.<name> with _ANNEX_G's special value put right, or None where NumPy has it."""
    ufunc, (where, value) = getattr(np, name), _ANNEX_G[name]
    probe = np.array([complex(0.0, np.nan), complex(-np.inf, np.nan), complex(np.nan, -np.inf)])
    with np.errstate(all="ignore"):
        got = ufunc(probe)[where(probe)]
    want = np.full_like(got, value)
    if all(np.array_equal(g, w, equal_nan=True) for g, w in ((got.real, want.real),
                                                            (got.imag, want.imag))):
        return None

    def fixed(x, out):
        ufunc(x, out=out)
        np.copyto(out, value, where=where(x))
    return fixed


_COMPLEX_EXTRAS = {name: f for name in _ANNEX_G if (f := _annex_g_fix(name)) is not None}


def numpy_impl(name: str, dt: np.dtype):
    """The function computing op ``name`` on dtype dt, called as fn(*xs, out=out)."""
    if dt.kind == "b" and name in _BOOL_EXTRAS:
        return _BOOL_EXTRAS[name]
    if dt.kind == "c" and name in _COMPLEX_EXTRAS:
        return _COMPLEX_EXTRAS[name]
    if dt.kind == "f" and name in _FLOAT_EXTRAS:
        return _FLOAT_EXTRAS[name]
    fn = _EXTRAS.get(name)
    return fn if fn is not None else getattr(np, name)


def _apply(fn, dtypes, conj):
    """run(inputs, out) calling fn with flagged complex inputs conjugated."""
    if quiet(dtypes):
        def run_quiet(inputs, out):
            fn(*inputs, out=out)
        return run_quiet
    if not any(conj_flags(dtypes, conj)):
        def run(inputs, out):
            tok = fp_ignore()  # np.errstate(all="ignore"), at a third of its cost
            try:
                fn(*inputs, out=out)
            finally:
                fp_restore(tok)
        return run
    load = conj_loader(dtypes, conj)
    flags = conj_flags(dtypes, conj)
    k = flags.index(True)

    def conj_then_fn(*xs, out):
        fn(*load(xs), out=out)

    def conj_into_out(*xs, out):
        # the one conjugated operand written into out, then the ufunc in place: no temporary
        np.conjugate(xs[k], out=out)
        fn(*xs[:k], out, *xs[k + 1:], out=out)

    # a NumPy ufunc reads each element before writing it: out may stand in for an input
    # (flagged inputs are complex: conj_flags)
    in_place = isinstance(fn, np.ufunc) and sum(flags) == 1

    def run_conj(inputs, out):
        tok = fp_ignore()
        try:  # in chunks: the conjugated values stay in cache
            if (in_place and out.dtype == dtypes[k] and out.shape == inputs[k].shape
                    and not any(np.may_share_memory(x, out) for x in inputs)):
                by_chunks(conj_into_out, inputs, out)
            else:
                by_chunks(conj_then_fn, inputs, out)
        finally:
            fp_restore(tok)
    return run_conj


# ------------------------------------------------------------------ handlers
def _make_op(desc, dtypes, shapes, outs, strides, conj):
    return _apply(numpy_impl(desc.op.row.name, dtypes[0]), dtypes, conj)


def _where(cond, a, b, out):
    np.copyto(out, np.where(cond, a, b))


def _make_where(desc, dtypes, shapes, outs, strides, conj):
    return _apply(_where, dtypes, conj)


def _make_complex_scale(desc, dtypes, shapes, outs, strides, conj):
    flip = conj_flags(dtypes, conj)[0]

    def run(inputs, out):
        with np.errstate(all="ignore"):
            np.multiply(inputs[0], inputs[1], out=out)
            if flip:  # conj(a) * s == conj(a * s) for real s
                np.conjugate(out, out=out)
    return run


def _make_cast(desc, dtypes, shapes, outs, strides, conj):
    src, dst = dtypes[0], desc.dtype
    flip = conj_flags(dtypes, conj)[0]
    if dst.kind == "b":  # anything -> bool is != 0 (conj cannot change that)
        def cast(x, out):
            np.not_equal(x, 0, out=out)
    elif src.kind == "c" and dst.kind != "c":  # complex -> real drops the imaginary part
        def cast(x, out):
            np.copyto(out, x.real, casting="unsafe")
    elif flip:
        def cast(x, out):
            np.copyto(out, x, casting="unsafe")
            np.conjugate(out, out=out)
    else:
        def cast(x, out):
            np.copyto(out, x, casting="unsafe")

    def run(inputs, out):
        tok = fp_ignore()
        try:
            cast(inputs[0], out)
        finally:
            fp_restore(tok)
    return run


def _make_generate(desc, dtypes, shapes, outs, strides, conj):
    dt, shape = dtypes[0], shapes[0]
    n = reduce(mul, shape, 1)
    if desc.kind is d.GenerateKind.CONSTANT:
        def constant(inputs, out, value=0):
            out[...] = as_dtype(value, dt)
        return constant
    # iota: start + i * step computed in the output dtype (ints wrap); bool via int64
    work = np.dtype(np.int64) if dt.kind == "b" else dt

    def iota(inputs, out, start=0, step=1):
        if n == 0:
            return
        idx = np.arange(n, dtype=np.int64 if work.kind in "iu" else work).astype(work, copy=False)
        with np.errstate(all="ignore"):
            idx *= as_dtype(step, work)
            idx += as_dtype(start, work)
        out[...] = idx.reshape(shape)
    return iota


def _make_contiguous(desc, dtypes, shapes, outs, strides, conj):
    if conj_flags(dtypes, conj)[0]:
        def compute(inputs, out):
            np.conjugate(inputs[0], out=out)
    else:
        def compute(inputs, out):
            np.copyto(out, inputs[0])
    return scaled(compute, outs[0][1])


_SEMIRING_FN = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}


def _make_elementwise_binary(desc, dtypes, shapes, outs, strides, conj):
    sr = desc.semiring
    fn = _SEMIRING_FN[sr.add if desc.op is BinaryOp.ADD else sr.mul]
    load = conj_loader(dtypes, conj)

    def compute(inputs, out):
        fn(*load(inputs), out=out)
    if sr.is_tropical:
        return tropical_scaled(compute, outs[0][1], sr)
    return scaled(compute, outs[0][1])


def _cast_supported(desc, dtypes) -> bool:
    return desc.dtype.kind in NUMERIC_KINDS and numeric(desc, dtypes)


def _make_polyval(desc, dtypes, shapes, outs, strides, conj):
    """Polyval: NumPy's own np.polyval (y = y * x + p[k], in the operands' one dtype)."""
    load = conj_loader(dtypes, conj)

    def run(inputs, out):
        p, x = load(inputs)
        with np.errstate(all="ignore"):  # inf * 0 is NaN, as the kernels give, unannounced
            out[...] = np.polyval(p, x)
    return run


_OP = Handler(_make_op)
_WHERE = Handler(_make_where)

HANDLERS = {
    d.ScalarUnary: _OP, d.AnalyticUnary: _OP, d.ComplexRealUnary: _OP,
    d.ScalarBinary: _OP, d.AnalyticBinary: _OP, d.MetadataBinary: _OP,
    d.ScalarWhere: _WHERE, d.MetadataWhere: _WHERE, d.MaskWhere: _WHERE,
    d.Generate: Handler(_make_generate),
    d.PointwiseCast: Handler(_make_cast, _cast_supported),
    d.ComplexScale: Handler(_make_complex_scale),
    d.MakeContiguous: Handler(_make_contiguous),
    d.ElementwiseBinary: Handler(_make_elementwise_binary),
    d.Polyval: Handler(_make_polyval),
}
