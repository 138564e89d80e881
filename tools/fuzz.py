#!/usr/bin/env python3
"""Differential fuzzer of hipfer (issue 19): seeded random calls across the namespace and
the Tensor operators, each run on hipfer, on NumPy and -- where the standard has the
function -- on array-api-strict, and compared.

    python3 tools/fuzz.py --cases 100000 --seed 1 [--device cpu] [--only FAMILY[,..]]
                          [--fn REGEX] [--jobs N] [--findings FILE]
    python3 tools/fuzz.py --seed 1 --replay 1234      # one case again, with its snippet
    python3 tools/fuzz.py --divergences               # the deliberate-divergence table

Generator. Case i of a seed draws everything from np.random.default_rng([seed, i]), so
any case replays alone and a run splits over processes by case index. A case is a family
(FAMILIES below), a function and its arguments: tensors of any of the 14 dtypes, of 0-d,
empty, size-1 and up to 4-d shapes, built on the device in one of several layouts
(contiguous, transposed, sliced with steps -- negative ones too --, broadcast through
stride 0, a conjugated view of complex data) and holding special values (NaN, +-inf,
-0.0, huge, tiny and subnormal floats, integer extremes); Python scalars; axes, shapes,
keywords, and now and then an argument that is wrong on purpose (both sides must raise).
Each case is a few lines of source with ``{m}`` for the namespace (``{m}.add(x0, x1)``):
the same text runs on hipfer (``hf``), NumPy (``np``; a ``src_np`` where NumPy spells it
otherwise) and array-api-strict (``xs``), and is the reproducer.

Inputs. The operands are built on the device; the reference sides get
``np.asarray(t.to_device("cpu"))`` of each (a copy), so nothing leaves the device
implicitly. The layout itself is checked too: the host copy must equal the same view
built by NumPy (for copy=False cases the reference gets that view, strides and all).

Comparison. Expected is array-api-strict's answer where it applies and gives one (the
standard decides where NumPy and the standard disagree), else NumPy's, after the
deliberate divergences below. Then: same result structure, same dtype, same shape, and
values -- integers and bools exactly, floats with NaN in the same places, infinities
equal, finite values within a tolerance scaled by the result dtype's eps and the
operation (TOLERANCES), signed zeros equal where the result is a copy or the standard
fixes the sign (elementwise functions, manipulation, indexing). An exception on both
sides agrees whatever its kind (ValueError/TypeError/IndexError/... are one family);
hipfer may also refuse an input array-api-strict refuses (outside the standard), and may
accept what NumPy refuses only under a divergence of the table. A hipfer exception that
is not a user error (AttributeError, KeyError, AssertionError, ...) or whose message names
an internal descriptor (ScalarBinary, Gather, ...) or another function than the one
called is a crash. A hipfer result that is no Tensor, lives on another device, or an
input that a function changed, is a finding too.

Outcomes per family: cases, agree, differ, hipfer-only error, reference-only error,
crash. The first few findings per function go to --findings with their reproducers.
"""
from __future__ import annotations

import argparse
import math
import re
import signal
import sys
import time
import traceback
import warnings
from dataclasses import dataclass, field

from pathlib import Path

import numpy as np

# this checkout's hipfer, not whichever one is installed
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import hipfer as hf  # noqa: E402
from hipfer.prims import descriptors as _desc  # noqa: E402

try:
    import array_api_strict as xs
    from array_api_strict._array_object import Array as _XsArray
    xs.set_array_api_strict_flags(api_version="2025.12")
except ImportError:  # the reference of the standard is optional
    xs = _XsArray = None

# ------------------------------------------------------------------------------ dtypes
DTYPES = [np.dtype(t) for t in ("bool", "int8", "int16", "int32", "int64", "uint8",
                                "uint16", "uint32", "uint64", "float16", "float32",
                                "float64", "complex64", "complex128")]
F16 = np.dtype("float16")
# the standard's dtypes: array-api-strict runs only on these
STD_DTYPES = frozenset(t for t in DTYPES if t != F16)


def dname(dt) -> str:
    """Source spelling of a dtype in any of the three namespaces ({m}.float32)."""
    return "{m}." + np.dtype(dt).name


# exceptions a user may get for a wrong call; anything else out of hipfer is a crash
USER_ERRORS = (ValueError, TypeError, IndexError, OverflowError, NotImplementedError,
               MemoryError, ZeroDivisionError)
# internal names no message may show (the descriptors of hipfer.prims)
DESCRIPTORS = sorted(n for n in dir(_desc) if isinstance(getattr(_desc, n), type)
                     and issubclass(getattr(_desc, n), _desc.Descriptor))
_DESC_RE = re.compile(r"\b(" + "|".join(DESCRIPTORS) + r")\b")
_FN_RE = re.compile(r"(?:in-place )?([a-z][a-z0-9_]*)\(\)")
_PUBLIC = {n for n in dir(hf) if not n.startswith("_") and callable(getattr(hf, n))}
_PUBLIC |= {n for n in dir(hf.linalg) if not n.startswith("_")}
_PUBLIC |= {n for n in dir(hf.fft) if not n.startswith("_")}

# ------------------------------------------------------------------ deliberate divergences
#: (id, where, NumPy, the standard, hipfer and how the fuzzer compares). hipfer follows the
#: standard and NumPy 2's rules; where they disagree, the standard decides.
DIVERGENCES = [
    ("uint64-signed", "uint64 with a signed integer (promotion, comparisons)",
     "float64 / compares", "no promotion (unspecified)",
     "TypeError, as array-api-strict: expected to raise"),
    ("outside-standard", "inputs array-api-strict refuses (e.g. logical_not(int), "
     "clip/sort/max of complex)", "computes", "unspecified",
     "hipfer may raise; if it computes, it must match NumPy"),
    ("int-float-fn", "float functions of bool/integer inputs (sqrt, atan2, mean, ...)",
     "smallest float holding the input (int8 -> float16)", "unspecified",
     "the default float, float64: reference NumPy on the float64 input"),
    ("int-pow-neg", "integer ** negative integer", "ValueError", "unspecified",
     "hipfer gives truncated 1/a**|b|: those elements are not compared"),
    ("shift-neg", "bit shifts by a negative amount", "implementation-defined",
     "unspecified", "those elements are not compared"),
    ("float-int-cast", "astype of NaN, inf or out-of-range floats to integers",
     "platform values", "unspecified", "those elements are not compared"),
    ("f16-acc", "float16 sum/prod/mean/var/std/cumulative_*", "float16 arithmetic "
     "(var overflows, cumsum rounds every step)", "(float16 is not standard)",
     "accumulates in float32: reference NumPy in float32, rounded once"),
    ("inplace-promote", "x op= y where result_type(x, y) is not x.dtype",
     "same-kind casts into x", "must not change x's dtype", "TypeError: expected"),
    ("clip-dtype", "clip with bounds of another dtype", "promotes (int8 x, int16 bound ->"
     " int16)", "x's dtype (bounds of another kind: unspecified)", "x's dtype; an integer "
     "bound clamped to x's range first; a float bound of an integer x: TypeError"),
    ("setitem-shape", "x[key] = v, v not broadcasting to the selection", "accepts some "
     "where the selection is empty", "v must broadcast", "raises: expected to"),
    ("sign-nan", "sign of a complex with a NaN part", "1+0j for inf+nanj",
     "NaN + NaN j", "the standard's: reference fixed there"),
    ("bool-subtract", "bool - bool", "TypeError", "unspecified (numeric only)",
     "C++ semantics a != b: reference not_equal"),
    ("descending", "sort/argsort descending=True", "(no such keyword)",
     "a stable descending sort", "reference: argsort of the reversed axis (as "
     "array-api-strict)"),
    ("0-d-axis", "reductions, argmax/argmin, count_nonzero of a 0-d x with axis 0 or -1",
     "ufunc reductions take an int one (mean/var/std raise)", "out of range",
     "hipfer takes them as over no axis (NumPy's): reference with axis=None"),
    ("0-d-input", "cumulative_sum/prod and diff of a 0-d x", "as a 1-d x",
     "unspecified (x should have >= 1 axis)", "hipfer may raise"),
    ("can-cast-kinds", "can_cast across kinds (int64 -> float64, bool -> int8)",
     "'safe' casting: True", "no table across kinds (array-api-strict: False)",
     "by its promotion, NumPy's across kinds: reference NumPy"),
    ("s-without-axes", "fftn & co. with s but no axes", "the last len(s) axes "
     "(deprecated)", "axes must be given with s", "ValueError: expected"),
    ("f16-fft", "transforms of float16", "float16 arithmetic in places",
     "(float16 is not standard)", "computed in float32: reference NumPy on float32"),
    ("fill-kind", "full/full_like with a fill value the dtype does not hold (complex "
     "into real, float into integer, int into bool)", "casts (or raises)", "unspecified",
     "anything but a crash agrees"),
    ("arange-wrap", "arange whose values an integer dtype does not hold", "OverflowError "
     "for start and start + step, wraps the rest", "unspecified", "wraps; may raise: "
     "only dtype and shape compared"),
    ("0-d-input-2", "sort/argsort and squeeze(axis=0) of a 0-d x, repeat(axis=0)",
     "as a 1-d x", "unspecified / out of range", "hipfer may raise"),
    ("conj-real", "conj of a real (bool, integer, float) x", "conj(bool) is int8",
     "numeric x: x itself", "x itself: reference x"),
    ("vacuous-extreme", "argmax/argmin/max/min of an empty x whose result is empty",
     "ValueError when a reduced axis is empty", "unspecified", "the empty result (an "
     "extreme over nothing raises only where an element needs one)"),
    ("svd-nonfinite", "pinv (and svd, svdvals, matrix_rank) of inf or NaN", "NaN results",
     "unspecified", "LinAlgError first (OpenBLAS's gesdd may never return)"),
    ("take-axis", "take(x, i) of an n-d x without axis", "flattens", "axis required",
     "ValueError; may raise"),
    ("n-ary-promotion", "result_type, concat, stack of 3+ dtypes across kinds",
     "not associative (uint16, int16, float32 -> float32)", "no tables across kinds",
     "each kind first, then across (order-free): reference casts to that first"),
    ("arange-float-int", "arange with float start/step and an integer dtype",
     "casts start and start + step, steps by their difference", "unspecified",
     "casts start and step: values not compared; may raise"),
    ("take-empty", "take with out-of-range indices and an empty result", "checks only "
     "where the taken axis is empty", "unspecified", "always checks a non-empty index"),
    ("f16-linalg", "solver-backed linalg (inv, det, qr, svdvals, pinv, ...) of float16",
     "TypeError, but not for some empty x (pinv)", "(float16 is not standard)",
     "TypeError for every x, empty ones too"),
    ("fft-no-axes", "fftn/ifftn over no axis (0-d x, axes=())", "x unchanged (its dtype)",
     "complex output", "a complex copy"),
    ("fft-empty", "transforms of an empty x padded by n / s", "may return uninitialised "
     "memory", "zeros", "zeros: reference zeros"),
    ("scalar-x2", "searchsorted with a Python scalar x2", "compared in float64",
     "(scalar: x1's dtype)", "a weak scalar in x1's dtype: reference casts it so"),
    ("expm1-inf", "expm1 of a complex with an infinite or NaN part, or a zero imaginary "
     "one", "nan + nan j at inf + inf j; inf + nan j at 9000 + 0j", "C99 Annex G; "
     "x + 0j gives expm1(x) + 0j", "the standard's: infinite/NaN parts not compared "
     "(test_elementwise_spec checks them), zero imaginary parts kept"),
    ("unique-order", "unique_* of -0.0 and 0.0", "keeps one of them", "unspecified",
     "the sign of a zero in the values is not compared"),
    ("floordiv-inf", "floor_divide, // and //= of floats with an infinite operand",
     "pairs // with %: nan for inf // 2, -1 for 2 // -inf", "floor(x1 / x2) preferred: "
     "+-inf, +-0", "the standard's: reference Ref.floor_divide"),
]

# ------------------------------------------------------------------------- tolerances
#: tolerance class -> (rtol in eps, atol in eps of the case's scale); see Case.scale
TOLERANCES = {
    "exact": (0, 0),        # copies, integers, comparisons: bit for bit (NaN payloads aside)
    "ulp": (4, 0),          # correctly rounded arithmetic (+ - * /, sqrt, casts)
    "analytic": (64, 64),   # libm functions: a few ulps, GPU libraries differ from glibc
    "acc": (64, 64),        # accumulations: atol relative to the sum of magnitudes
    "linalg": (2048, 2048),  # factorizations on well-conditioned inputs
    "fft": (256, 256),      # transforms: relative to the largest magnitude in or out
    "none": None,           # empty(): only dtype and shape
}


# ---------------------------------------------------------------- reference helpers
class Ref:
    """What NumPy spells otherwise, or where the reference needs a divergence's rule."""

    @staticmethod
    def floats(*xs_):
        """The operands of a float-only function, in float64 when they promote to a
        bool/integer dtype (divergence int-float-fn)."""
        dt = np.result_type(*xs_)
        if dt.kind in "iu":  # a Python int must fit the integer dtype (NumPy 2's ufuncs)
            info = np.iinfo(dt)
            for v in xs_:
                if isinstance(v, int) and not isinstance(v, bool) and \
                        not int(info.min) <= v <= int(info.max):
                    raise OverflowError(f"Python int {v} out of bounds for {dt}")
        if dt.kind in "biu":
            return [x.astype(np.float64) if isinstance(x, np.ndarray) else float(x)
                    for x in xs_]
        return list(xs_)

    @staticmethod
    def f64(x):
        return x.astype(np.float64) if x.dtype.kind in "biu" else x

    @staticmethod
    def rsqrt(x):
        with np.errstate(all="ignore"):
            return 1 / np.sqrt(Ref.f64(x))

    @staticmethod
    def clamp_min(x, lo):
        x, lo = np.asarray(x) if not np.isscalar(x) else x, lo
        dt = np.result_type(x, lo)
        if dt.kind in "biu":
            return np.maximum(x, lo)
        return np.where(np.less(x, lo), lo, x).astype(dt)

    @staticmethod
    def clamp_max(x, hi):
        dt = np.result_type(x, hi)
        if dt.kind in "biu":
            return np.minimum(x, hi)
        return np.where(np.greater(x, hi), hi, x).astype(dt)

    @staticmethod
    def xlogy(x, y):
        x, y = Ref.floats(x, y)
        dt = np.result_type(x, y)
        x, y = (np.asarray(v).astype(dt) for v in (x, y))
        with np.errstate(all="ignore"):
            out = np.multiply(x, np.log(y))
        return np.where(np.equal(x, 0) & np.equal(y, y), 0, out).astype(dt)

    @staticmethod
    def nonneg(a, b):
        """An integer exponent / shift b with its negative entries made 0 (those are not
        compared: Ref.negative_int); b itself where a ** b is not an integer one."""
        if np.result_type(a, b).kind not in "iu":
            return b
        if isinstance(b, np.ndarray):
            return np.where(b < 0, 0, b).astype(b.dtype)
        return 0 if isinstance(b, int) and b < 0 else b

    @staticmethod
    def sign(x):
        out = np.array(np.sign(x))
        if x.dtype.kind == "c":  # divergence sign-nan
            out[np.isnan(x.real) | np.isnan(x.imag)] = complex(np.nan, np.nan)
        return out

    @staticmethod
    def expm1(x):
        """expm1; a complex z with a zero imaginary part keeps it (expm1(x) + 0j, the
        standard's; NumPy's overflows to inf + nan j: divergence expm1-inf)."""
        out = np.array(np.expm1(x))
        if x.dtype.kind == "c":
            real = (x.imag == 0) & np.isfinite(x.real)
            out.real[real] = np.expm1(x.real[real])
            out.imag[real] = x.imag[real]
            out.real[real & (x.real == 0)] = 0.0  # the standard: +-0 + 0j gives +0 + 0j
        return out

    @staticmethod
    def floor_divide(a, b):
        """NumPy's floor division, except floats with an infinite operand: the standard's
        floor(a / b), which a / b already is (divergence floordiv-inf)."""
        with np.errstate(all="ignore"):
            q = np.asarray(np.floor_divide(a, b))
            if q.dtype.kind != "f":
                return q
            a, b = (np.asarray(v).astype(q.dtype) for v in (a, b))  # a weak scalar may overflow
            return np.where(np.isinf(a) | np.isinf(b), np.true_divide(a, b), q).astype(q.dtype)

    @staticmethod
    def nonfinite_complex(x):
        """Complex elements with an infinite or NaN part: expm1 there is the standard's
        (C99 Annex G, tests/test_elementwise_spec.py checks it), NumPy's differs
        (nan + nan j at inf + inf j, at -inf + nan j): not compared (expm1-inf)."""
        return ~np.isfinite(x) if x.dtype.kind == "c" else np.zeros(x.shape, bool)

    @staticmethod
    def subtract(a, b):
        if np.result_type(a, b) == np.bool_:  # divergence bool-subtract
            return np.not_equal(a, b)
        return np.subtract(a, b)

    @staticmethod
    def via32(fn, x, **kw):
        """fn on float16 x computed in float32 and rounded once (divergence f16-acc)."""
        if x.dtype == F16 and kw.get("dtype") is None:
            out = fn(x.astype(np.float32), **kw)
            return np.asarray(out).astype(F16)
        return fn(x, **kw)

    @staticmethod
    def argsort(x, axis=-1, descending=False, stable=True):
        if not descending:
            return np.argsort(x, axis=axis, stable=True)
        res = np.flip(np.argsort(np.flip(x, axis=axis), axis=axis, stable=True), axis=axis)
        return x.shape[axis] - 1 - res if x.ndim else res

    @staticmethod
    def sort(x, axis=-1, descending=False, stable=True):
        if x.ndim == 0:
            return np.sort(x, axis=axis)
        return np.take_along_axis(x, Ref.argsort(x, axis, descending), axis=axis)

    @staticmethod
    def clip(x, min=None, max=None):
        """clip in x's dtype, the bounds clamped to x's range (divergence clip-dtype)."""
        if x.dtype.kind not in "iuf":
            return np.clip(x, min, max)
        wide = x.astype(object if x.dtype.kind in "iu" else np.float64)

        def bound(b):
            if b is None:
                return None
            if isinstance(b, np.ndarray):
                if b.dtype.kind not in "biuf":
                    raise TypeError("clip of a complex bound")
                if x.dtype.kind in "iu" and b.dtype.kind == "f":
                    raise TypeError("float bound of an integer x")
                return b.astype(object) if x.dtype.kind in "iu" else b.astype(np.float64)
            if x.dtype.kind in "iu" and isinstance(b, float):
                raise TypeError("float bound of an integer x")
            return b
        lo, hi = bound(min), bound(max)
        out = wide
        if lo is not None:
            out = np.where(np.asarray(out < lo) | np.isnan(np.asarray(lo, float)), lo, out)
        if hi is not None:
            out = np.where(np.asarray(out > hi) | np.isnan(np.asarray(hi, float)), hi, out)
        if x.dtype.kind in "iu":
            info = np.iinfo(x.dtype)
            out = np.clip(np.asarray(out, object), int(info.min), int(info.max))
        with np.errstate(all="ignore"):
            return np.asarray(np.broadcast_to(out, np.broadcast_shapes(
                x.shape, np.shape(lo) if lo is not None else (),
                np.shape(hi) if hi is not None else ()))).astype(x.dtype)

    @staticmethod
    def astype(x, dt, copy=True):
        return x.astype(dt, copy=copy)

    @staticmethod
    def negative_int(a, b):
        if np.result_type(a, b).kind not in "iu":
            return np.asarray(False)
        return np.asarray(b) < 0

    @staticmethod
    def arg_extreme(fn, x, axis=None, keepdims=False):
        """argmax/argmin/max/min; where the result is empty (no element is computed over
        nothing) that empty result (divergence vacuous-extreme: NumPy refuses any empty x
        it reduces over an empty axis)."""
        if x.size == 0 and x.ndim and axis is not None:
            axes = axis if isinstance(axis, tuple) else (axis,)
            if any(not -x.ndim <= a < x.ndim for a in axes):
                raise np.exceptions.AxisError(f"axis {axis} out of range")
            axes = [a % x.ndim for a in axes]
            shape = [1 if i in axes else n for i, n in enumerate(x.shape)]
            if 0 in shape:
                dt = np.int64 if fn in (np.argmax, np.argmin) else x.dtype
                out = np.zeros(shape, dt)
                return out if keepdims else np.squeeze(out, tuple(axes))
        return fn(x, axis=axis, keepdims=keepdims)

    @staticmethod
    def common(arrays):
        """The arrays cast to hipfer's n-ary result dtype: each kind category first (the
        standard's tables), then across categories (NumPy's), so that the result does
        not depend on the order (divergence n-ary-promotion). NumPy's n-ary result_type
        is not associative (uint16, int16, float32 -> float32, pairwise float64)."""
        dt = Ref.result_type(*[a.dtype for a in arrays])
        return [a.astype(dt) for a in arrays]

    @staticmethod
    def result_type(*args):
        py = (bool, int, float, complex)
        scalars = [a for a in args if isinstance(a, py)]
        typed = [np.dtype(a if isinstance(a, (type, np.dtype)) else a.dtype)
                 for a in args if not isinstance(a, py)]
        cats: dict = {}
        for t in typed:
            c = _CATEGORY[t.kind]
            cats[c] = np.promote_types(cats[c], t) if c in cats else t
        res = None
        for c in ("bool", "int", "float"):
            if c in cats:
                res = cats[c] if res is None else np.promote_types(res, cats[c])
        for v in scalars:  # weak scalars, as NumPy 2
            res = np.result_type(np.empty(0, res), v)
        return res

    @staticmethod
    def weak(x, v):
        """A Python scalar as an operand of x takes x's dtype where its kind fits."""
        fits = {bool: "biufc", int: "iufc", float: "fc", complex: "c"}[type(v)]
        if x.dtype.kind in fits:
            with np.errstate(all="ignore"):
                return np.asarray(v).astype(x.dtype)
        return v

    @staticmethod
    def fft(fn, x, **kw):
        """A transform; of an empty x, zeros (NumPy's pocketfft may return uninitialised
        memory for an empty x padded by n or s: divergence fft-empty)."""
        out = fn(x, **kw)
        return np.zeros_like(out) if x.size == 0 else out

    @staticmethod
    def conj_view(v):
        """conj(v) with v's strides (hipfer's conj is a flag on the same data; NumPy's a
        copy): v's view of a conjugated copy of the array owning its memory."""
        own = v
        while isinstance(own.base, np.ndarray):
            own = own.base
        if not own.flags.c_contiguous:
            return np.conj(v)
        c = np.conj(own).reshape(-1)
        start = (v.__array_interface__["data"][0] - own.__array_interface__["data"][0])
        return np.lib.stride_tricks.as_strided(c[start // v.itemsize:], v.shape, v.strides)

    @staticmethod
    def matrix_rank(x):
        """np.linalg.matrix_rank, with 0 for empty matrices (as NumPy 2.3+)."""
        if 0 in x.shape[-2:]:
            return np.zeros(x.shape[:-2], np.int64)
        return np.linalg.matrix_rank(x)

    @staticmethod
    def refuse_nonfinite():
        raise np.linalg.LinAlgError("the matrix holds inf or NaN (not decomposed)")

    @staticmethod
    def kind_in(kinds, *args):
        """The operands promote to a dtype of one of these kinds."""
        try:
            return np.result_type(*args).kind in kinds
        except TypeError:
            return False

    @staticmethod
    def _unit_stripped(target, value):
        """value's shape less the leading 1s beyond the selection's rank (NumPy's
        assignment drops them: x[0:2] = ones((1, 2)))."""
        vs, ts = list(np.shape(value)), np.shape(target)
        while len(vs) > len(ts) and vs[0] == 1:
            vs.pop(0)
        return tuple(vs)

    @staticmethod
    def value_for(target, value):
        """value broadcast to the selection where it broadcasts (NumPy's boolean-mask
        assignment takes only 0-d and 1-d values)."""
        if isinstance(value, np.ndarray) and not Ref.not_broadcastable(target, value):
            v = value.reshape(Ref._unit_stripped(target, value))
            return np.broadcast_to(v, np.shape(target))
        return value

    @staticmethod
    def not_broadcastable(target, value):
        vs = Ref._unit_stripped(target, value)
        try:
            return np.broadcast_shapes(np.shape(target), vs) != np.shape(target)
        except ValueError:
            return True

    @staticmethod
    def bad_cast(x, to):
        """Float elements that no integer/bool dtype holds: NaN, inf, out of range."""
        to = np.dtype(to)
        if to.kind == "b":
            return np.zeros(x.shape, bool)
        info = np.iinfo(to)
        with np.errstate(all="ignore"):
            p = x.real.astype(np.float64)  # a complex x casts its real part
            bad = ~np.isfinite(p) | (p < float(info.min)) | (p >= float(info.max) + 1)
        return bad

    @staticmethod
    def inplace_promotes(x, y):
        """x op= y changes x's dtype (divergence inplace-promote)."""
        try:
            return np.result_type(x, y) != x.dtype
        except TypeError:
            return True


# ------------------------------------------------------------------------------ values
_F_SPECIAL = ("nan", "inf", "-inf", "-0.0", "0.0", "max", "-max", "tiny", "-tiny", "sub",
              "1.0", "-1.0", "0.5", "2.5", "-2.5")


def _float_special(name, dt):
    fi = np.finfo(dt)
    return {"max": fi.max, "-max": -fi.max, "tiny": fi.smallest_normal,
            "-tiny": -fi.smallest_normal, "sub": fi.smallest_subnormal}.get(name) \
        if name in ("max", "-max", "tiny", "-tiny", "sub") else float(name)


def values(r, shape, dt, prof=None):
    """Random NumPy data of dtype dt; prof narrows it: 'small' (|v| <= 5), 'nonneg',
    'finite' (floats without specials), 'unit' (floats in [-1, 1]), 'ties' (few values)."""
    dt = np.dtype(dt)
    shape = tuple(shape)
    n = math.prod(shape)
    if dt.kind == "b":
        return np.asarray(r.random(n) < r.choice([0.1, 0.5, 0.9])).reshape(shape)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        lo, hi = int(info.min), int(info.max)
        pick = prof or r.choice(["small", "mid", "full", "edge"], p=[.4, .25, .15, .2])
        if pick == "ties":
            pick = "small"
        if pick == "nonneg":
            lo = 0
            pick = r.choice(["small", "mid"])
        if pick == "small":
            a = r.integers(max(lo, -5), min(hi, 5), size=n, endpoint=True)
        elif pick == "mid":
            a = r.integers(max(lo, -120), min(hi, 120), size=n, endpoint=True)
        elif pick == "full":
            a = r.integers(lo, hi, size=n, endpoint=True, dtype=dt)
        else:
            pool = [v for v in (lo, lo + 1, -1, 0, 1, 2, hi - 1, hi) if lo <= v <= hi]
            a = np.array([pool[i] for i in r.integers(0, len(pool), size=n)], dtype=object)
        return np.asarray(a).astype(dt).reshape(shape)
    if dt.kind == "c":
        part = np.dtype(np.float32 if dt == np.complex64 else np.float64)
        re_, im = values(r, shape, part, prof), values(r, shape, part, prof)
        out = np.empty(shape, dt)
        out.real, out.imag = re_, im
        return out
    with np.errstate(all="ignore"):
        if prof == "unit":
            v = r.uniform(-1, 1, n)
        else:
            v = r.standard_normal(n) * r.choice([1.0, 3.0, 100.0, 1e4])
        if prof == "nonneg":
            v = np.abs(v)
        if prof == "ties" or r.random() < 0.25:
            v = np.round(v * 2) / 2
        if prof == "ties":
            v = np.round(v / 2 % 4 - 2, 0)
        v = v.astype(dt)
        if prof not in ("finite", "unit", "nonneg") and n and r.random() < 0.35:
            k = int(r.integers(1, min(n, 4) + 1))
            for pos in r.choice(n, size=k, replace=False):
                v[pos] = _float_special(str(r.choice(_F_SPECIAL)), dt)
    return v.reshape(shape)


# ------------------------------------------------------------------------------ operands
@dataclass
class Operand:
    name: str
    base: np.ndarray
    steps: list          # source lines with {m}, applied after {m}.asarray(b_<name>)
    layout: str
    index: bool = False  # an index (take, x[i]): no part of dtype promotion

    def lines(self) -> list:
        return [f"{self.name} = {{m}}.asarray(b_{self.name})"] + self.steps


def _sliced(r, shape):
    """(base shape, key) so that base[key] has shape: steps 1..3, either sign."""
    base, key = [], []
    for s in shape:
        k = int(r.choice([1, 2, 3, -1, -2]))
        ak = abs(k)
        n = max(s * ak + int(r.integers(0, 3)), 1)
        if s == 0:
            base.append(n)
            key.append(slice(0, 0, k))
            continue
        span = (s - 1) * ak + 1
        lo = int(r.integers(0, n - span + 1))
        if k > 0:
            key.append(slice(lo, lo + span, k))
        else:
            hi = lo + span - 1
            key.append(slice(hi, lo - 1 if lo > 0 else None, k))
        base.append(n)
    return tuple(base), tuple(key)


def _key_src(key) -> str:
    parts = []
    for k in key:
        if isinstance(k, slice):
            parts.append(":".join("" if v is None else str(v)
                                  for v in (k.start, k.stop, k.step)))
        elif k is None:
            parts.append("None")
        elif k is Ellipsis:
            parts.append("...")
        else:
            parts.append(str(k))
    return ", ".join(parts) + ("," if len(parts) == 1 else "")


def make_operand(r, name, shape, dt, prof=None, layout=None) -> Operand:
    """An operand of logical shape and dtype in a random (or the given) layout."""
    dt = np.dtype(dt)
    shape = tuple(shape)
    nd = len(shape)
    if layout is None:
        choices = ["contig"] * 4 + ["T", "slice", "bcast"]
        if dt.kind == "c":
            choices += ["conj", "conj"]
        layout = "contig" if nd == 0 else str(r.choice(choices))
    steps = []
    if layout == "T" and nd >= 2:
        # base dims permuted so that permute_dims(base, perm) has the wanted shape
        perm = [int(p) for p in r.permutation(nd)]
        base_shape = [0] * nd
        for i, p in enumerate(perm):
            base_shape[p] = shape[i]
        base = values(r, base_shape, dt, prof)
        steps.append(f"{name} = {{m}}.permute_dims({name}, {tuple(perm)})")
    elif layout == "slice" and nd >= 1:
        base_shape, key = _sliced(r, shape)
        base = values(r, base_shape, dt, prof)
        steps.append(f"{name} = {name}[{_key_src(key)}]")
    elif layout == "bcast" and nd >= 1:
        bshape = [1 if (s <= 1 or r.random() < 0.5) else s for s in shape]
        drop = int(r.integers(0, nd + 1)) if r.random() < 0.3 else 0
        bshape = bshape[drop:]
        base = values(r, bshape, dt, prof)
        steps.append(f"{name} = {{m}}.broadcast_to({name}, {tuple(shape)})")
    elif layout == "conj" and dt.kind == "c":
        base = np.conj(values(r, shape, dt, prof))
        steps.append(f"{name} = {{m}}.conj({name})")
    else:
        layout = "contig"
        base = values(r, shape, dt, prof)
    if layout in ("T", "slice", "bcast") and dt.kind == "c" and r.random() < 0.3:
        base = np.conj(base)
        steps.append(f"{name} = {{m}}.conj({name})")
        layout += "+conj"
    return Operand(name, np.asarray(base, dtype=dt), steps, layout)


# ------------------------------------------------------------------------- literals
def lit(v) -> str:
    """Python source of a plain value (floats with nan/inf, complex, slices, dtypes)."""
    if v is None or isinstance(v, (bool, str)):
        return repr(v)
    if isinstance(v, np.dtype):
        return dname(v)
    if isinstance(v, (float, np.floating)):
        v = float(v)
        if v != v:
            return "float('nan')"
        if math.isinf(v):
            return "float('inf')" if v > 0 else "-float('inf')"
        return repr(v)
    if isinstance(v, (complex, np.complexfloating)):
        return f"complex({lit(v.real)}, {lit(v.imag)})"
    if isinstance(v, (int, np.integer)):
        return repr(int(v))
    if isinstance(v, tuple):
        return "(" + ", ".join(lit(e) for e in v) + ("," if len(v) == 1 else "") + ")"
    if isinstance(v, list):
        return "[" + ", ".join(lit(e) for e in v) + "]"
    if isinstance(v, slice):
        return f"slice({lit(v.start)}, {lit(v.stop)}, {lit(v.step)})"
    if v is Ellipsis:
        return "..."
    raise TypeError(f"no literal for {type(v).__name__}")


def array_lit(a: np.ndarray) -> str:
    return f"np.array({lit(a.reshape(-1).tolist())}, dtype=np.{a.dtype.name})" \
           f".reshape({lit(a.shape)})"


# --------------------------------------------------------------------------- the case
@dataclass
class Case:
    family: str
    name: str                 # the function as the user calls it
    ops: list                 # Operands x0, x1, ...
    src: str                  # source with {m}; sets r
    src_np: str | None = None  # NumPy's spelling, where it differs
    std: bool = True          # the function is in the standard (array-api-strict may run)
    tol: str = "exact"
    scale: float = 1.0        # atol = TOLERANCES[tol][1] * eps * scale
    zeros: bool = True        # compare the signs of zeros
    mask: str | None = None   # source of a bool array (of the result's shape) not compared
    expect_raise: str | None = None  # a condition (NumPy source): hipfer must raise
    may_raise: str | None = None     # a condition: hipfer may raise (unspecified input)
    strict_decides: bool = True      # array-api-strict's dtype overrides NumPy's
    promotes: list | None = None     # operands promoted together (None: all but indices)
    may_raise_nonstd: str | None = None  # may_raise where array-api-strict does not run
    anything: str | None = None      # a condition: unspecified, any result or error agrees
    ref_views: bool = False   # the reference gets NumPy's views (copy=False semantics)
    check: object = None      # custom check(h, e, env) -> None | reason
    nonfinite: bool = False   # an input holds inf or NaN (set when the case runs)
    wild: bool = False        # intermediate results may overflow (inf / NaN either way)
    notes: list = field(default_factory=list)  # divergence ids that apply


class G:
    """The random source of one case, with the helpers every family uses."""

    def __init__(self, rng):
        self.r = rng
        self.ops: list = []

    def p(self, prob) -> bool:
        return self.r.random() < prob

    def pick(self, seq):
        return seq[int(self.r.integers(0, len(seq)))]

    def int(self, lo, hi) -> int:
        return int(self.r.integers(lo, hi, endpoint=True))

    def dtype(self, kinds="biufc"):
        return self.pick([t for t in DTYPES if t.kind in kinds])

    def shape(self, nd=None, lo=0, hi=5, min_nd=0, max_nd=4):
        if nd is None:
            nd = self.pick([0, 1, 1, 2, 2, 2, 3, 3, 4])
            nd = min(max(nd, min_nd), max_nd)
        out = []
        for _ in range(nd):
            if lo == 0 and self.p(0.06):
                out.append(0)
            elif self.p(0.2):
                out.append(1)
            else:
                out.append(self.int(max(lo, 1), hi))
        return tuple(out)

    def bshape(self, shape):
        """A shape that broadcasts with shape (now and then one that does not)."""
        if self.p(0.03) and shape:
            s = list(shape)
            i = self.int(0, len(s) - 1)
            s[i] = s[i] + 2
            return tuple(s)
        s = list(shape[self.int(0, len(shape)):] if self.p(0.3) else shape)
        s = [1 if self.p(0.25) else d for d in s]
        if self.p(0.1) and len(s) < 4:
            s = [self.int(1, 3)] + s
        return tuple(s)

    def arr(self, shape, dt, prof=None, layout=None) -> str:
        name = f"x{len(self.ops)}"
        self.ops.append(make_operand(self.r, name, shape, dt, prof, layout))
        return name

    def scalar(self, dt, kind=None):
        """A Python scalar: mostly of dt's kind, in range; sometimes neither."""
        dt = np.dtype(dt)
        k = kind or (dt.kind if self.p(0.7) else self.pick("bifc"))
        if k == "b":
            return bool(self.p(0.5))
        if k in "iu":
            if self.p(0.05):
                return self.pick([2 ** 63, -2 ** 63 - 1, 300, -129, 70000, 2 ** 40])
            return self.int(0 if k == "u" else -5, 7)
        v = float(values(self.r, (), np.float64, None))
        if k == "c":
            return complex(v, float(values(self.r, (), np.float64, None)))
        return v

    def axis(self, nd, none=True, tuple_ok=True, bad=0.03):
        if none and self.p(0.3):
            return None
        if nd == 0 or self.p(bad):
            return self.pick([nd, -nd - 1, 5]) if nd or self.p(0.5) else 0
        if tuple_ok and self.p(0.25):
            k = self.int(0, nd)
            ax = [int(a) for a in self.r.choice(nd, size=k, replace=False)]
            ax = [a - nd if self.p(0.3) else a for a in ax]
            if self.p(0.03) and ax:
                ax.append(ax[0])
            return tuple(ax)
        a = self.int(0, nd - 1)
        return a - nd if self.p(0.3) else a


def _case(g, family, name, src, **kw) -> Case:
    return Case(family, name, g.ops, src, **kw)


def _kw(**kw) -> str:
    return "".join(f", {k}={v if isinstance(v, str) and v.startswith('{m}') else lit(v)}"
                   for k, v in kw.items() if v is not _OMIT)


_OMIT = object()


def _eps(dt) -> float:
    dt = np.dtype(dt)
    return float(np.finfo(dt).eps) if dt.kind in "fc" else 0.0


def _mag(*arrays) -> float:
    """The largest finite magnitude among the arrays (1 at least)."""
    m = 1.0
    for a in arrays:
        a = np.asarray(a)
        if a.dtype.kind in "fc" and a.size:
            f = np.abs(a[np.isfinite(a)]).astype(np.float64)
            if f.size:
                m = max(m, float(f.max()))
        elif a.dtype.kind in "iu" and a.size:
            m = max(m, float(np.abs(a.astype(np.float64)).max()))
    return m


# ============================================================================ families
_UN = {n: op.row for n, op in hf._elementwise._UNARY.items()}
_BIN = {n: op.row for n, op in hf._elementwise._BINARY.items()}
_BIN.update({n: op.row for n, op in hf._elementwise._SWAPPED.items()})
_NP_NAME = {"clamp_min": "ref.clamp_min", "clamp_max": "ref.clamp_max", "expm1": "ref.expm1",
            "xlogy": "ref.xlogy", "rsqrt": "ref.rsqrt", "sign": "ref.sign",
            "subtract": "ref.subtract"}
_FLOAT_ONLY = {n for n, row in _BIN.items() if "i" not in row.kinds and "f" in row.kinds}


def _strict_has(name) -> bool:
    if xs is None:
        return False
    mod = xs
    for part in name.split("."):
        mod = getattr(mod, part, None)
        if mod is None:
            return False
    return True


def gen_unary(g: G) -> Case:
    name = g.pick(sorted(_UN) + ["conj", "real", "imag"])
    row = _UN.get(name)
    kinds = row.kinds + ("biu" if row and row.family == "analytic" else "") if row else "biufc"
    dt = g.dtype(kinds if g.p(0.8) else "biufc")
    x = g.arr(g.shape(), dt)
    src = f"r = {{m}}.{name}({x})"
    np_fn = "np." + name if name not in _NP_NAME else _NP_NAME[name]
    arg = x
    notes = []
    if row and row.family == "analytic" and dt.kind in "biu":
        arg = f"ref.f64({x})"
        notes.append("int-float-fn")
    if name == "conj" and dt.kind != "c":
        np_fn, arg = "", x  # divergence conj-real: x itself (NumPy: conj(bool) is int8)
        notes.append("conj-real")
    tol = "analytic" if row and row.family == "analytic" else "ulp"
    if name == "abs" and dt.kind == "c":
        pass  # |z| is a hypot: correctly rounded at best, so "ulp"
    elif name in ("sign", "round", "abs", "negative", "positive", "conj", "real", "imag",
                "floor", "ceil", "trunc", "isnan", "isinf", "isfinite", "signbit",
                "logical_not", "bitwise_invert"):
        tol = "exact"
    mask = f"ref.nonfinite_complex({x})" if name == "expm1" and dt.kind == "c" else None
    if mask:
        notes.append("expm1-inf")
    if name == "sign" and dt.kind == "c":
        notes.append("sign-nan")
        tol = "ulp"
    # the sign of a zero out of a libm function is not fixed for complex results
    zeros = dt.kind != "c" or tol == "exact"
    case = _case(g, "unary", name, src, src_np=f"r = {np_fn}({arg})", std=_strict_has(name),
                 tol=tol, zeros=zeros, notes=notes, mask=mask)
    if row:
        _outside(case, row.kinds + ("biu" if row.family == "analytic" else ""), x)
    return case


def _operand_or_scalar(g, shape, dt, prof=None):
    """An array name, or (p=0.15) a Python scalar literal; returns (src, is_scalar)."""
    if g.p(0.15):
        return lit(g.scalar(dt)), True
    return g.arr(shape, dt, prof), False


def _binary_dtypes(g, kinds):
    d1 = g.dtype(kinds if g.p(0.85) else "biufc")
    d2 = d1 if g.p(0.55) else g.dtype(kinds if g.p(0.7) else "biufc")
    return d1, d2


def gen_binary(g: G) -> Case:
    name = g.pick(sorted(_BIN) + ["where", "clip"] * 3)
    if name == "where":
        return _gen_where(g)
    if name == "clip":
        return _gen_clip(g)
    row = _BIN[name]
    kinds = row.kinds
    if name in _FLOAT_ONLY:
        kinds += "biu"
    d1, d2 = _binary_dtypes(g, kinds)
    s1 = g.shape()
    s2 = g.bshape(s1) if g.p(0.8) else g.shape()
    if g.p(0.5):
        s1, s2 = s2, s1
    shift = name in ("bitwise_left_shift", "bitwise_right_shift")
    prof2 = "small" if (shift or name == "pow") and g.p(0.8) else None
    a, sa = _operand_or_scalar(g, s1, d1)
    b, sb = _operand_or_scalar(g, s2, d2, prof2) if not sa else (g.arr(s2, d2, prof2), False)
    return _binary_case(g, "binary", name, a, b)


def _binary_case(g, family, name, a, b, sym=None, inplace=False):
    """name(a, b) -- or the operator a sym b, or a sym= b -- and its NumPy reference."""
    notes = []
    np_fn = _NP_NAME.get(name, "np." + name)
    ra, rb = a, b  # the reference's operands
    mask = None
    if name in ("pow", "bitwise_left_shift", "bitwise_right_shift"):
        # negative integer exponents / shifts: not compared (int-pow-neg, shift-neg)
        rb, mask = f"ref.nonneg({a}, {b})", f"ref.negative_int({a}, {b})"
        notes.append("int-pow-neg" if name == "pow" else "shift-neg")
    if name in _FLOAT_ONLY:
        notes.append("int-float-fn")
    if name == "floor_divide":
        notes.append("floordiv-inf")
    if sym is None:
        src = f"r = {{m}}.{name}({a}, {b})"
        args = f"*ref.floats({ra}, {rb})" if name in _FLOAT_ONLY else f"{ra}, {rb}"
        src_np = f"r = ref.floor_divide({args})" if name == "floor_divide" else f"r = {np_fn}({args})"
    elif inplace:
        src = f"{a} {sym}= {b}\nr = {a}"
        src_np = (f"np.copyto({a}, ref.floor_divide({a}, {rb}), casting='same_kind')\nr = {a}"
                  if name == "floor_divide" else f"{a} {sym}= {rb}\nr = {a}")
    else:
        src = f"r = {a} {sym} {b}"
        src_np = f"r = ref.subtract({ra}, {rb})" if name == "subtract" else \
            f"r = ref.floor_divide({ra}, {rb})" if name == "floor_divide" else f"r = {ra} {sym} {rb}"
    tol = "analytic" if _BIN[name].family == "analytic" else "ulp"
    if _BIN[name].result == "bool" or name in ("maximum", "minimum", "clamp_min", "clamp_max",
                                                "copysign", "nextafter"):
        tol = "exact"
    # the standard leaves the sign of max(-0.0, +0.0) and friends unspecified
    zeros = name not in ("atan2", "maximum", "minimum", "clamp_min", "clamp_max")
    case = _case(g, family, name, src, src_np=src_np, std=_strict_has(name), tol=tol,
                 mask=mask, notes=notes, zeros=zeros)
    _outside(case, _BIN[name].kinds + ("biu" if name in _FLOAT_ONLY else ""), a, b)
    return case


def _outside(case, kinds, *args):
    """Operands of a kind the function's op-table row excludes: outside the standard
    (divergence outside-standard), hipfer may refuse them. Complex operands of a
    real-only function and bool ones of a numeric one always; others only where
    array-api-strict does not answer (float16, functions beyond the standard)."""
    missing = "".join(k for k in "bc" if k not in kinds)
    if missing:
        case.may_raise = f"ref.kind_in({lit(missing)}, {', '.join(args)})"
    rest = "".join(k for k in "biufc" if k not in kinds)
    if rest:
        case.may_raise_nonstd = f"ref.kind_in({lit(rest)}, {', '.join(args)})"


def _gen_where(g: G) -> Case:
    s = g.shape()
    d1, d2 = _binary_dtypes(g, "biufc")
    cdt = np.dtype(np.bool_) if g.p(0.95) else g.dtype()
    c = g.arr(g.bshape(s), cdt)
    a, sa = _operand_or_scalar(g, g.bshape(s), d1)
    b, _ = _operand_or_scalar(g, s, d2) if not sa else (g.arr(s, d2), False)
    return _case(g, "binary", "where", f"r = {{m}}.where({c}, {a}, {b})",
                 may_raise="True" if cdt != np.bool_ else None, promotes=[
                     n for n in (a, b) if n.startswith("x")])


def _gen_clip(g: G) -> Case:
    dt = g.dtype("iuf" if g.p(0.9) else "biufc")
    s = g.shape()
    x = g.arr(s, dt)
    bounds = {}
    for k in ("min", "max"):
        c = g.r.random()
        if c < 0.3:
            continue
        if c < 0.6:
            bounds[k] = lit(g.scalar(dt))
        else:
            bd = dt if g.p(0.5) else g.dtype("iuf")
            bounds[k] = g.arr(g.bshape(s) if g.p(0.5) else (), bd)
    kw = "".join(f", {k}={v}" for k, v in bounds.items())
    # a bool bound is none of the standard's int | float | array, and a bool or complex x
    # is not real-valued: hipfer may refuse them (NumPy clips bools)
    return _case(g, "binary", "clip", f"r = {{m}}.clip({x}{kw})",
                 src_np=f"r = ref.clip({x}{kw})", notes=["clip-dtype"], zeros=False,
                 may_raise="True" if dt.kind in "bc" or any(v in ("True", "False")
                                                           for v in bounds.values()) else None)


# -------------------------------------------------------------------------- operators
_OP_FNS = {"+": "add", "-": "subtract", "*": "multiply", "/": "divide", "//": "floor_divide",
           "%": "remainder", "**": "pow", "&": "bitwise_and", "|": "bitwise_or",
           "^": "bitwise_xor", "<<": "bitwise_left_shift", ">>": "bitwise_right_shift",
           "<": "less", "<=": "less_equal", ">": "greater", ">=": "greater_equal",
           "==": "equal", "!=": "not_equal"}
_CMP = {"<", "<=", ">", ">=", "==", "!="}


def gen_operators(g: G) -> Case:
    c = g.r.random()
    if c < 0.12:
        form = g.pick(["-", "+", "~", "abs"])
        fn = {"-": "negative", "+": "positive", "~": "bitwise_invert", "abs": "abs"}[form]
        s = g.shape()
        dt = g.dtype()
        x = g.arr(s, dt)
        src = f"r = abs({x})" if form == "abs" else f"r = {form}{x}"
        # |z| is a hypot, correctly rounded at best (the GPU's is; glibc's is 1 ulp off)
        return _case(g, "operators", fn, src, tol="ulp" if fn == "abs" and dt.kind == "c"
                     else "exact")
    if c < 0.2:
        return _gen_matmul(g, "operators", op=True)
    sym = g.pick(list(_OP_FNS))
    fn = _OP_FNS[sym]
    row = _BIN[fn]
    kinds = row.kinds + ("biu" if fn in _FLOAT_ONLY else "")
    d1, d2 = _binary_dtypes(g, kinds)
    s1 = g.shape()
    s2 = g.bshape(s1)
    prof2 = "small" if sym in ("**", "<<", ">>") and g.p(0.8) else None
    inplace = sym not in _CMP and g.p(0.3)
    x = g.arr(s1, d1, layout=None if not inplace else g.pick(["contig", "T", "slice"]))
    if g.p(0.25):
        y = lit(g.scalar(d1))
        if not inplace and g.p(0.5):  # the reflected form: scalar OP tensor
            return _binary_case(g, "operators", fn, y, x, sym)
    else:
        y = g.arr(s2, d2, prof2)
    case = _binary_case(g, "operators", fn, x, y, sym, inplace)
    if inplace:
        case.notes.append("inplace-promote")
        case.expect_raise = f"ref.inplace_promotes({x}, {y})"
    return case


# ------------------------------------------------------------------------- reductions
_REDUCTIONS = ["sum", "prod", "mean", "var", "std", "max", "min", "all", "any"]


def gen_reduction(g: G) -> Case:
    name = g.pick(_REDUCTIONS)
    dt = g.dtype("fc" if name in ("mean", "var", "std") and g.p(0.7) else "biufc")
    s = g.shape(hi=6)
    x = g.arr(s, dt)
    kw = {"axis": g.axis(len(s)), "keepdims": g.p(0.3) or _OMIT}
    if name in ("sum", "prod") and g.p(0.3):
        kw["dtype"] = dname(g.dtype())
    bad = _bad_casts(g, x, kw.get("dtype", _OMIT))
    if name in ("var", "std") and g.p(0.5):
        n = max(math.prod(s), 1)
        kw["correction"] = g.pick([0, 1, 0.5, 2, n, n + 1])
    args = _kw(**kw)
    src = f"r = {{m}}.{name}({x}{args})"
    notes = []
    src_np = None
    if not s and _zero_d_ok(kw["axis"]):
        args = _kw(**dict(kw, axis=None))  # divergence 0-d-axis: as over every axis
        notes.append("0-d-axis")
    if name in ("sum", "prod", "mean", "var", "std"):
        src_np = f"r = ref.via32(np.{name}, {x}{args})"
        if dt == F16:
            notes.append("f16-acc")
        if name in ("mean", "var", "std") and dt.kind in "biu":
            src_np = f"r = np.{name}(ref.f64({x}){args})"
            notes.append("int-float-fn")
    base = g.ops[0].base
    n = max(base.size, 1)
    m = _mag(base)
    scale = {"sum": n * m, "mean": m, "var": m * m, "std": m}.get(name, 1.0)
    tol = "acc" if name in ("sum", "prod", "mean", "var", "std") else "exact"
    wild = False
    if name == "prod":
        tol, scale = "acc", 0.0
        # partial products that overflow: their order decides inf, NaN (inf * 0) or 0
        wide = np.float32 if dt in (F16, np.dtype(np.float32), np.dtype(np.complex64)) \
            else np.float64
        wild = n * math.log2(max(m, 1.0)) >= math.log2(float(np.finfo(wide).max))
    if src_np is None and "0-d-axis" in notes:
        src_np = f"r = np.{name}({x}{args})"
    if name in ("max", "min") and src_np is None:
        src_np = f"r = ref.arg_extreme(np.{name}, {x}{args})"
    if bad:
        tol = "none"
        notes.append("float-int-cast")
    return _case(g, "reduction", name, src, src_np=src_np, tol=tol, scale=scale,
                 zeros=tol == "exact", notes=notes, wild=wild)


def _zero_d_ok(axis) -> bool:
    """Axes hipfer takes on a 0-d x, as over no axis: 0 and -1, alone or in a tuple."""
    axes = axis if isinstance(axis, tuple) else (axis,)
    return axis is not None and axis != () and all(a in (0, -1) for a in axes) \
        and len(set(axes)) == len(axes)


def _zero_d_axis(case, shape, axis):
    """argmax/argmin/count_nonzero of a 0-d x with axis 0 or -1: as over every axis."""
    if not shape and _zero_d_ok(axis):
        case.src_np = _sub(case.src, "np").replace(f"axis={lit(axis)}", "axis=None")
        case.notes.append("0-d-axis")


# ----------------------------------------------------------------- searching, sorting
def gen_search(g: G) -> Case:
    name = g.pick(["argmax", "argmin", "argsort", "sort", "searchsorted", "nonzero",
                   "count_nonzero", "isin"])
    if name == "searchsorted":
        return _gen_searchsorted(g)
    dt = g.dtype("biuf" if g.p(0.9) else "biufc")
    s = g.shape(hi=6)
    prof = "ties" if g.p(0.3) else None
    x = g.arr(s, dt, prof)
    nd = len(s)
    if name in ("argmax", "argmin"):
        axis = g.axis(nd, tuple_ok=False)
        kw = _kw(axis=axis, keepdims=g.p(0.3) or _OMIT)
        case = _case(g, "search", name, f"r = {{m}}.{name}({x}{kw})",
                     src_np=f"r = ref.arg_extreme(np.{name}, {x}{kw})")
        _zero_d_axis(case, s, axis)
        return case
    if name in ("argsort", "sort"):
        axis = g.axis(nd, none=False, tuple_ok=False) if g.p(0.7) else _OMIT
        desc = g.p(0.4) or _OMIT
        stable = g.pick([True, False]) if g.p(0.4) else _OMIT
        kw = _kw(axis=axis, descending=desc, stable=stable)
        notes = ["descending"] if desc is True else []
        case = _case(g, "search", name, f"r = {{m}}.{name}({x}{kw})",
                     src_np=f"r = ref.{name}({x}{kw})", notes=notes,
                     may_raise="True" if not nd else None)
        if name == "sort":
            case.zeros = False  # ties of -0.0 and 0.0 may come in either order
        elif stable is False:
            case.check = _argsort_unstable(x, axis if axis is not _OMIT else -1, desc is True)
        return case
    if name == "nonzero":
        return _case(g, "search", name, f"r = {{m}}.nonzero({x})")
    if name == "isin":
        y = g.arr(g.shape(hi=4), dt if g.p(0.8) else g.dtype("biuf"), prof)
        kw = _kw(invert=g.p(0.3) or _OMIT)
        return _case(g, "search", name, f"r = {{m}}.isin({x}, {y}{kw})")
    axis = g.axis(nd)
    kw = _kw(axis=axis, keepdims=g.p(0.3) or _OMIT)
    # NumPy < 2.3 answers a Python int over every axis, 2.3+ a NumPy integer
    case = _case(g, "search", name, f"r = {{m}}.count_nonzero({x}{kw})",
                 src_np=f"r = np.asarray(np.count_nonzero({x}{kw}))")
    _zero_d_axis(case, s, axis)
    return case


def _argsort_unstable(x, axis, descending):
    """An unstable argsort: a permutation that sorts x (ties in any order)."""
    def check(h, e, env):
        xv = env["ref_in"][x]
        if h.shape != e.shape or h.dtype != e.dtype:
            return f"shape/dtype {h.shape} {h.dtype} != {e.shape} {e.dtype}"
        if xv.ndim == 0:
            return None if np.array_equal(h, e) else "0-d argsort"
        if not np.array_equal(np.sort(h, axis=axis), np.sort(e, axis=axis)):
            return "not a permutation"
        got = np.take_along_axis(xv, h, axis=axis)
        want = np.take_along_axis(xv, e, axis=axis)
        if not np.array_equal(got, want, equal_nan=True):
            return "does not sort"
        return None
    return check


def _gen_searchsorted(g: G) -> Case:
    dt = g.dtype("iuf" if g.p(0.9) else "biufc")
    n = g.int(0, 8)
    prof = "ties" if g.p(0.5) else None
    base = values(g.r, (n,), dt, prof)
    use_sorter = g.p(0.3)
    sorted_ = np.sort(base) if not use_sorter else base
    x1 = g.arr((n,), dt, layout="contig")
    g.ops[-1].base = sorted_ if g.p(0.97) else base
    kw = {"side": g.pick(["left", "right"]) if g.p(0.6) else _OMIT}
    if use_sorter:
        srt = g.arr((n,), np.int64, layout="contig")
        g.ops[-1].base = np.argsort(base, stable=True).astype(np.int64)
        g.ops[-1].index = True
        kw["sorter"] = srt
    scalar = g.p(0.1)
    x2 = lit(g.scalar(dt)) if scalar else g.arr(g.shape(hi=4), dt if g.p(0.8) else
                                                g.dtype("iuf"), prof)
    args = "".join(f", {k}={v if k == 'sorter' else lit(v)}" for k, v in kw.items()
                   if v is not _OMIT)
    # a scalar x2 takes x1's dtype, as a weak scalar (divergence scalar-x2)
    ref_x2 = f"ref.weak({x1}, {x2})" if scalar else x2
    return _case(g, "search", "searchsorted", f"r = {{m}}.searchsorted({x1}, {x2}{args})",
                 src_np=f"r = np.searchsorted({x1}, {ref_x2}{args})",
                 notes=["scalar-x2"] if scalar else [],
                 may_raise=f"ref.kind_in('c', {x1}) or ref.kind_in('c', {x2})")


# ----------------------------------------------------------------------- manipulation
def _reshape_target(g, shape):
    n = math.prod(shape)
    if g.p(0.05):
        return (n + 1,)
    dims = []
    rest = n
    for _ in range(g.int(0, 3)):
        divs = [d for d in range(1, 7) if rest % d == 0] if rest else [0, 1, 2]
        d = g.pick(divs)
        dims.append(d)
        rest = rest // d if d else rest
    dims.append(rest if n else g.pick([0, 3]))
    if n == 0 and 0 not in dims:
        dims.append(0)
    g.r.shuffle(dims)
    if g.p(0.2) and n:
        dims[g.int(0, len(dims) - 1)] = -1
    return tuple(int(d) for d in dims)


def gen_manipulation(g: G) -> Case:
    name = g.pick(["reshape", "permute_dims", "expand_dims", "squeeze", "flip", "roll",
                   "concat", "stack", "tile", "repeat", "broadcast_to", "moveaxis",
                   "unstack", "broadcast_arrays", "matrix_transpose"])
    dt = g.dtype()
    s = g.shape()
    nd = len(s)
    fam = "manipulation"
    if name in ("concat", "stack"):
        k = g.int(1, 4)
        axis = g.int(-nd - 1, nd) if name == "stack" else (
            None if g.p(0.15) or nd == 0 else g.int(-nd, nd - 1))
        names = []
        for _ in range(k):
            si = list(s)
            if name == "concat" and axis is not None and nd:
                si[axis] = g.int(0, 4)
            if g.p(0.03) and si:
                si[0] += 1
            names.append(g.arr(tuple(si), dt if g.p(0.7) else g.dtype()))
        kw = _kw(axis=axis) if axis != 0 or g.p(0.5) else ""
        lst = ", ".join(names)
        return _case(g, fam, name, f"r = {{m}}.{name}([{lst}]{kw})",
                     src_np=f"r = np.{name}(ref.common([{lst}]){kw})",
                     notes=["n-ary-promotion"] if k > 2 else [])
    if name == "broadcast_arrays":
        a = g.arr(s, dt)
        b = g.arr(g.bshape(s), g.dtype())
        return _case(g, fam, name, f"r = {{m}}.broadcast_arrays({a}, {b})", promotes=[])
    if name == "squeeze":
        ones = [i for i, d in enumerate(s) if d == 1]
        if ones and g.p(0.9):
            ax = [i for i in ones if g.p(0.6)] or ones[:1]
            axis = ax[0] if len(ax) == 1 and g.p(0.5) else tuple(ax)
        else:
            axis = g.axis(nd, none=False)
        x = g.arr(s, dt)
        return _case(g, fam, name, f"r = {{m}}.squeeze({x}, axis={lit(axis)})",
                     may_raise="True" if not nd else None)
    copy = None
    x = g.arr(s, dt)
    if name == "reshape":
        copy = g.pick([None, None, True, False])
        kw = _kw(copy=copy) if copy is not None else ""
        case = _case(g, fam, name, f"r = {{m}}.reshape({x}, {lit(_reshape_target(g, s))}{kw})")
        case.ref_views = copy is False
        return case
    if name == "permute_dims":
        axes = tuple(int(a) for a in g.r.permutation(nd))
        if g.p(0.05):
            axes = axes + (0,) if g.p(0.5) else axes[:-1]
        return _case(g, fam, name, f"r = {{m}}.permute_dims({x}, {lit(axes)})")
    if name == "expand_dims":
        if g.p(0.7):
            axis = g.int(-nd - 1, nd)
        else:
            k = g.int(1, 2)
            axis = tuple(int(a) for a in g.r.choice(nd + k, size=k, replace=False))
        return _case(g, fam, name, f"r = {{m}}.expand_dims({x}, axis={lit(axis)})")
    if name == "flip":
        kw = _kw(axis=g.axis(nd)) if g.p(0.8) else ""
        return _case(g, fam, name, f"r = {{m}}.flip({x}{kw})")
    if name == "roll":
        axis = g.axis(nd)
        if isinstance(axis, tuple):
            shift = tuple(g.int(-7, 7) for _ in axis)
        else:
            shift = g.int(-7, 7)
        return _case(g, fam, name, f"r = {{m}}.roll({x}, {lit(shift)}{_kw(axis=axis)})")
    if name == "tile":
        reps = tuple(g.int(0, 3) if g.p(0.1) else g.int(1, 3) for _ in range(g.int(0, nd + 1)))
        return _case(g, fam, name, f"r = {{m}}.tile({x}, {lit(reps)})")
    if name == "repeat":
        axis = g.axis(nd, tuple_ok=False, bad=0.02)
        if g.p(0.5):
            reps = lit(g.int(-1 if g.p(0.03) else 0, 3))
        else:
            length = math.prod(s) if axis is None else (s[axis] if isinstance(axis, int)
                                                        and -nd <= axis < nd else 1)
            length = length if g.p(0.8) else 1
            reps = g.arr((length,), g.pick([np.int64, np.int32, np.uint8]), "small")
            g.ops[-1].base = np.abs(g.ops[-1].base) if g.p(0.97) else g.ops[-1].base
            g.ops[-1].index = True
        return _case(g, fam, name, f"r = {{m}}.repeat({x}, {reps}{_kw(axis=axis)})",
                     may_raise="True" if not nd and axis is not None else None)
    if name == "broadcast_to":
        t = list(s)
        t = [g.int(1, 3) if d == 1 and g.p(0.5) else d for d in t]
        if g.p(0.4):
            t = [g.int(0, 3) for _ in range(g.int(1, 2))] + t
        if g.p(0.03):
            t = t[1:] + [7]
        return _case(g, fam, name, f"r = {{m}}.broadcast_to({x}, {lit(tuple(t))})")
    if name == "moveaxis":
        if nd and g.p(0.7):
            src_, dst = g.int(-nd, nd - 1), g.int(-nd, nd - 1)
        else:
            k = g.int(0, nd)
            src_ = tuple(int(a) for a in g.r.choice(nd, size=k, replace=False))
            dst = tuple(int(a) for a in g.r.choice(nd, size=k, replace=False))
        return _case(g, fam, name, f"r = {{m}}.moveaxis({x}, {lit(src_)}, {lit(dst)})")
    if name == "unstack":
        kw = _kw(axis=g.int(-nd, nd - 1) if nd else 0) if g.p(0.7) else ""
        return _case(g, fam, name, f"r = {{m}}.unstack({x}{kw})")
    return _case(g, fam, name, f"r = {{m}}.matrix_transpose({x})")


# -------------------------------------------------------------------------- indexing
def _basic_key(g, shape):
    key = []
    dims = list(shape)
    used_ellipsis = False
    i = 0
    while i < len(dims) and g.p(0.8):
        c = g.r.random()
        n = dims[i]
        if c < 0.3:
            if n == 0 or g.p(0.03):
                key.append(g.pick([n, -n - 1, 3]))
            else:
                key.append(g.int(-n, n - 1))
            i += 1
        elif c < 0.8:
            step = g.pick([None, None, 1, 2, 3, -1, -2, -3] + ([0] if g.p(0.02) else []))
            start = g.pick([None, g.int(-n - 2, n + 2)])
            stop = g.pick([None, g.int(-n - 2, n + 2)])
            key.append(slice(start, stop, step))
            i += 1
        elif c < 0.9:
            key.append(None)
        elif not used_ellipsis:
            key.append(Ellipsis)
            used_ellipsis = True
            i = max(i, len(dims) - g.int(0, len(dims) - i))
    return tuple(key)


def _index_array(g, n, shape, dt=None):
    dt = dt or g.pick([np.int64, np.int64, np.int32, np.int8, np.uint8, np.int16, np.uint64])
    name = g.arr(shape, dt, layout=g.pick(["contig", "contig", "T", "slice", "bcast"]))
    op = g.ops[-1]
    lo = 0 if np.dtype(dt).kind == "u" else -n
    hi = n - 1
    if hi < lo or g.p(0.02):
        lo, hi = (n, n + 2) if n or g.p(0.5) else (0, 0)
    info = np.iinfo(dt)
    lo, hi = max(lo, int(info.min)), min(hi, int(info.max))
    op.base = g.r.integers(lo, max(hi, lo), size=op.base.shape, endpoint=True).astype(dt)
    op.index = True
    return name


def gen_indexing(g: G) -> Case:
    kind = g.pick(["basic", "basic", "int", "int", "bool", "take", "take_along_axis",
                   "setitem", "setitem"])
    dt = g.dtype()
    s = g.shape(hi=5)
    nd = len(s)
    if kind == "take":
        axis = g.int(-nd, nd - 1) if nd and (nd > 1 or g.p(0.7)) else None
        x = g.arr(s, dt)
        n = s[axis] if axis is not None else math.prod(s)
        ix = _index_array(g, n, (g.int(0, 6),))
        # an empty result: NumPy checks the indices only where the taken axis is empty
        return _case(g, "indexing", "take", f"r = {{m}}.take({x}, {ix}{_kw(axis=axis)})",
                     may_raise=f"({x}.size == 0 and {ix}.size > 0) or {x}.ndim != 1",
                     notes=["take-empty"])
    if kind == "take_along_axis":
        nd = max(nd, 1)
        s = s or (3,)
        x = g.arr(s, dt)
        axis = g.int(-nd, nd - 1)
        ishape = list(g.bshape(s))
        ishape = [1] * (nd - len(ishape)) + ishape
        ishape[axis] = g.int(0, 5)
        ix = _index_array(g, s[axis], tuple(ishape), np.int64)
        return _case(g, "indexing", "take_along_axis",
                     f"r = {{m}}.take_along_axis({x}, {ix}, axis={axis})")
    if kind == "setitem":
        x = g.arr(s, dt, layout=g.pick(["contig", "T", "slice"]) if nd else "contig")
        sub = g.pick(["basic", "int", "bool"])
        key, target = _key_and_shape(g, s, sub)
        if target is None:
            vshape = g.shape(max_nd=2)
        else:
            vshape = g.bshape(target) if g.p(0.9) else target
        vdt = dt if g.p(0.8) else g.dtype()
        v = lit(g.scalar(dt)) if g.p(0.3) else g.arr(vshape, vdt)
        # a value that does not broadcast to the selection raises (NumPy lets some
        # through where the selection is empty)
        return _case(g, "indexing", "__setitem__", f"{x}[{key}] = {v}\nr = {x}",
                     src_np=f"{x}[{key}] = ref.value_for({x}[{key}], {v})\nr = {x}",
                     expect_raise=f"ref.not_broadcastable({x}[{key}], {v})",
                     may_raise=f"ref.kind_in('c', {v}) and not ref.kind_in('c', {x})")
    x = g.arr(s, dt)
    key, _ = _key_and_shape(g, s, kind)
    return _case(g, "indexing", "__getitem__", f"r = {x}[{key}]",
                 std=kind == "basic")


def _key_and_shape(g, s, kind):
    """(key source, the selected shape or None when unknown)."""
    nd = len(s)
    if kind == "basic" or nd == 0:
        key = _basic_key(g, s)
        src = _key_src(key) if key else "..."
        try:
            shape = np.empty(s, np.int8)[key].shape
        except (IndexError, ValueError, TypeError):
            shape = None
        return src, shape
    if kind == "int":
        k = g.int(1, nd)
        ishape = g.shape(max_nd=2, hi=4)
        parts = [_index_array(g, s[i], g.bshape(ishape) if g.p(0.8) else ishape)
                 for i in range(k)]
        if g.p(0.3) and k < nd:
            parts.append(":")
        if g.p(0.2):
            parts.insert(0, "...") if k == nd else parts.append("...")
        return ", ".join(parts), None
    k = g.int(1, nd)
    m = g.arr(s[:k], np.bool_)
    return (m + (", ..." if g.p(0.3) else "")), None


# -------------------------------------------------------------------------- creation
def gen_creation(g: G) -> Case:
    name = g.pick(["asarray", "asarray", "zeros", "ones", "empty", "full", "arange",
                   "arange", "linspace", "eye", "tril", "triu", "zeros_like", "ones_like",
                   "full_like", "empty_like", "meshgrid", "fftfreq"])
    fam = "creation"
    s = g.shape()
    dt = g.dtype()
    dkw = dname(dt) if g.p(0.6) else _OMIT
    if name == "asarray":
        c = g.r.random()
        if c < 0.4:
            obj = values(g.r, s, dt, None)
            kind = dt.kind
            obj = obj.tolist()
            if g.p(0.1) and s:  # a ragged list
                obj = [obj, 1] if isinstance(obj, list) else obj
            return _case(g, fam, name, f"r = {{m}}.asarray({lit(obj)}{_kw(dtype=dkw)})",
                         notes=[kind])
        x = g.arr(s, dt)
        copy = g.pick([None, True, False])
        case = _case(g, fam, name, f"r = {{m}}.asarray({x}{_kw(dtype=dkw, copy=copy)})")
        case.ref_views = copy is False
        return case
    if name in ("zeros", "ones", "empty"):
        return _case(g, fam, name, f"r = {{m}}.{name}({lit(s)}{_kw(dtype=dkw)})",
                     tol="none" if name == "empty" else "exact")
    if name == "full":
        fill = g.scalar(dt)
        return _case(g, fam, name, f"r = {{m}}.full({lit(s)}, {lit(fill)}{_kw(dtype=dkw)})",
                     anything=_fill_outside(fill, dt if dkw is not _OMIT else None))
    if name in ("zeros_like", "ones_like", "empty_like", "full_like"):
        x = g.arr(s, dt)
        dkw = dname(g.dtype()) if g.p(0.4) else _OMIT
        fv = g.scalar(dt)
        fill = (", " + lit(fv)) if name == "full_like" else ""
        to = np.dtype(dkw[4:]) if dkw is not _OMIT else dt
        return _case(g, fam, name, f"r = {{m}}.{name}({x}{fill}{_kw(dtype=dkw)})",
                     tol="none" if name == "empty_like" else "exact",
                     anything=_fill_outside(fv, to) if name == "full_like" else None)
    if name == "arange":
        if g.p(0.5):
            a, b, st = g.int(-10, 10), g.int(-10, 20), g.pick([1, 2, 3, -1, -2, 1])
        else:
            a = round(float(g.r.uniform(-5, 5)), g.int(0, 2))
            b = round(float(g.r.uniform(-5, 10)), g.int(0, 2))
            st = g.pick([0.5, 0.25, 1.0, -0.5, 0.3, 1])
        if g.p(0.02):
            st = 0
        args = lit(a) if g.p(0.15) else f"{lit(a)}, {lit(b)}" + (
            f", {lit(st)}" if g.p(0.7) else "")
        adt = g.dtype("iuf") if g.p(0.3) else None
        dkw = dname(adt) if adt is not None else _OMIT
        scale = max(abs(a), abs(b), 1) * 4
        case = _case(g, fam, name, f"r = {{m}}.arange({args}{_kw(dtype=dkw)})", tol="acc",
                     scale=scale, zeros=False)
        if adt is not None and adt.kind in "iu":
            lo, hi = np.iinfo(adt).min, np.iinfo(adt).max
            call = f"np.arange({args})"
            try:
                vals = eval(call)
            except (ZeroDivisionError, ValueError):  # a zero step: both raise
                vals = np.zeros(0, np.int64)
            if vals.dtype.kind == "f":  # divergence arange-float-int: values unspecified
                case.may_raise, case.tol = "True", "none"
                case.src_np = f"r = {call}.astype(np.{adt.name})"
                case.notes.append("arange-float-int")
            elif vals.size and not (lo <= vals.min() and vals.max() <= hi):
                case.may_raise = "True"  # divergence arange-wrap: the values wrap
                case.src_np = f"r = {call}.astype(np.{adt.name})"
                case.notes.append("arange-wrap")
        return case
    if name == "linspace":
        a = float(g.r.uniform(-10, 10)) if g.p(0.7) else g.int(-10, 10)
        b = float(g.r.uniform(-10, 10)) if g.p(0.7) else g.int(-10, 10)
        if g.p(0.1):
            a, b = complex(a, 1.0), complex(b, -2.0)
        num = g.int(0, 9)
        kw = _kw(dtype=dname(g.dtype("fc")) if g.p(0.3) else _OMIT)
        if g.p(0.3):
            kw += ", endpoint=False"
        cplx = isinstance(a, complex) and "float" in kw  # complex bounds, a real dtype
        return _case(g, fam, name, f"r = {{m}}.linspace({lit(a)}, {lit(b)}, {num}{kw})",
                     tol="analytic", zeros=False, may_raise="True" if cplx else None)
    if name == "eye":
        n = g.int(0, 5)
        m = f", {g.int(0, 5)}" if g.p(0.5) else ""
        kw = _kw(k=g.int(-4, 4) if g.p(0.5) else _OMIT, dtype=dkw)
        return _case(g, fam, name, f"r = {{m}}.eye({n}{m}{kw})")
    if name in ("tril", "triu"):
        s = g.shape(min_nd=2 if g.p(0.95) else 0)
        x = g.arr(s, dt)
        kw = _kw(k=g.int(-4, 4) if g.p(0.6) else _OMIT)
        # fewer than 2 axes: the standard's x is (..., M, N) (NumPy broadcasts a 1-d x)
        return _case(g, fam, name, f"r = {{m}}.{name}({x}{kw})",
                     may_raise="True" if len(s) < 2 else None)
    if name == "meshgrid":
        names = [g.arr((g.int(0, 4),), dt) for _ in range(g.int(0, 3))]
        kw = _kw(indexing=g.pick(["xy", "ij"])) if g.p(0.6) else ""
        args = (", ".join(names) + kw) if names else kw.lstrip(", ")
        return _case(g, fam, name, f"r = {{m}}.meshgrid({args})")
    n = g.int(1, 9) if g.p(0.97) else 0
    fn = g.pick(["fftfreq", "rfftfreq"])
    kw = _kw(d=g.pick([1.0, 0.5, 2.5])) if g.p(0.5) else ""
    return _case(g, fam, "fft." + fn, f"r = {{m}}.fft.{fn}({n}{kw})", tol="ulp",
                 zeros=False)


def _fill_outside(fill, dt):
    """A fill value of a kind dt does not hold (complex into real, float into integer,
    an int out of range): unspecified, hipfer may refuse it (divergence fill-kind)."""
    if dt is None:
        return None
    order = {bool: "b", int: "iu", float: "f", complex: "c"}
    kind = order[type(fill)]
    rank = "biufc"
    if max(rank.index(k) for k in kind) > rank.index(dt.kind) and not (
            kind == "iu" and dt.kind in "iu"):
        return "True"
    return None


# ---------------------------------------------------------------------- dtype functions
_CATEGORY = {"b": "bool", "i": "int", "u": "int", "f": "float", "c": "float"}
_KIND_NAMES = ["bool", "signed integer", "unsigned integer", "integral", "real floating",
               "complex floating", "numeric"]


def gen_dtypes(g: G) -> Case:
    name = g.pick(["astype", "astype", "astype", "can_cast", "result_type", "result_type",
                   "finfo", "iinfo", "isdtype"])
    fam = "dtypes"
    if name == "astype":
        dt, to = g.dtype(), g.dtype()
        x = g.arr(g.shape(), dt)
        copy = g.pick([None, True, False])
        kw = _kw(copy=copy) if copy is not None else ""
        case = _case(g, fam, name, f"r = {{m}}.astype({x}, {dname(to)}{kw})",
                     src_np=f"r = ref.astype({x}, {dname(to)}{kw})", tol="exact")
        if dt.kind in "fc" and to.kind in "biu":
            case.mask = f"ref.bad_cast({x}, {dname(to)})"
            case.notes.append("float-int-cast")
        if dt.kind == "c" and to.kind != "c":
            case.may_raise = "True"  # the standard: not permitted (array-api-strict raises)
            case.notes.append("outside-standard")
        if dt.kind in "fc" and to.kind in "fc" and np.finfo(to).bits < np.finfo(dt).bits:
            case.tol = "ulp"  # the rounding of a narrowing cast; zeros and NaN exactly
        case.ref_views = copy is False
        return case
    if name == "can_cast":
        frm, to = g.dtype(), g.dtype()
        a = dname(frm) if g.p(0.7) else g.arr(g.shape(max_nd=1), frm)
        case = _case(g, fam, name, f"r = {{m}}.can_cast({a}, {dname(to)})")
        if _CATEGORY[frm.kind] != _CATEGORY[to.kind]:
            case.strict_decides = False
            case.notes.append("can-cast-kinds")
        return case
    if name == "result_type":
        parts = []
        for _ in range(g.int(1, 3)):
            c = g.r.random()
            if c < 0.45:
                parts.append(dname(g.dtype()))
            elif c < 0.75:
                parts.append(g.arr(g.shape(max_nd=1), g.dtype()))
            else:
                parts.append(lit(g.scalar(np.int64, kind=g.pick("bifc"))))
        args = ", ".join(parts)
        named = [np.dtype(p[4:]) for p in parts if p.startswith("{m}.")]
        named += [op.base.dtype for op in g.ops]
        u64 = np.dtype(np.uint64) in named and any(t.kind == "i" for t in named)
        return _case(g, fam, name, f"r = {{m}}.result_type({args})",
                     may_raise="True" if u64 else None,
                     src_np=f"r = ref.result_type({args})" if len(parts) > 2 else None)
    if name in ("finfo", "iinfo"):
        dt = g.dtype("fc" if name == "finfo" and g.p(0.9) else "iu" if g.p(0.9) else
                     "biufc")
        if g.p(0.7):
            return _case(g, fam, name, f"r = {{m}}.{name}({dname(dt)})")
        a = g.arr(g.shape(max_nd=1), dt)  # NumPy's finfo takes no arrays: their dtype
        return _case(g, fam, name, f"r = {{m}}.{name}({a})",
                     src_np=f"r = np.{name}({a}.dtype)")
    kind = g.pick(_KIND_NAMES) if g.p(0.8) else tuple(g.pick(_KIND_NAMES)
                                                      for _ in range(g.int(1, 3)))
    return _case(g, fam, name, f"r = {{m}}.isdtype({dname(g.dtype())}, {lit(kind)})")


# ------------------------------------------------------------------------------- sets
def gen_sets(g: G) -> Case:
    name = g.pick(["unique_values", "unique_counts", "unique_inverse", "unique_all"])
    dt = g.dtype("biuf" if g.p(0.85) else "biufc")
    x = g.arr(g.shape(hi=6), dt, "ties" if g.p(0.7) else None)
    return _case(g, "sets", name, f"r = {{m}}.{name}({x})", zeros=False,
                 notes=["unique-order"], check=_unique_check(name, x))


def _unique_rows(res, name, xv):
    """The unique elements as sorted (value key, count, first index) rows, and a
    problem with the inverse (values[inverse] must give x back) or None."""
    fields = {"unique_values": ("values",), "unique_counts": ("values", "counts"),
              "unique_inverse": ("values", "inverse"),
              "unique_all": ("values", "indices", "inverse", "counts")}[name]
    parts = dict(zip(fields, res if isinstance(res, list) else [res]))
    vals = np.asarray(parts["values"])

    def key(v):
        if isinstance(v, complex) or np.iscomplexobj(v):
            v = complex(v)
            if math.isnan(v.real) or math.isnan(v.imag):
                return (True, 0.0, 0.0)  # each NaN is its own value: equal keys here
            return (False, v.real + 0.0, v.imag + 0.0)
        v = v.item() if hasattr(v, "item") else v
        return (isinstance(v, float) and math.isnan(v), v + 0 if v == v else 0)
    rows = []
    for i, v in enumerate(vals.reshape(-1)):
        rows.append((key(v), int(parts["counts"][i]) if "counts" in parts else 0,
                     int(parts["indices"][i]) if "indices" in parts else 0))
    why = None
    if "inverse" in parts:
        inv = np.asarray(parts["inverse"])
        if inv.shape != xv.shape:
            why = f"inverse shape {inv.shape}, x {xv.shape}"
        elif vals.size and not _same_exact(vals.reshape(-1)[inv.reshape(-1)].reshape(xv.shape)
                                           , xv, zeros=False):
            why = "values[inverse] is not x"
    return sorted(rows), vals, parts, why


def _unique_check(name, x):
    """unique_*: the order of the values is unspecified (NumPy >= 2.3 does not sort):
    compare the sets of (value, count, first index), the dtypes, and the inverse."""
    def check(h, e, env):
        xv = env["ref_in"][x]
        hr, hv, hp, hwhy = _unique_rows(h, name, xv)
        er, ev, ep, _ = _unique_rows(e, name, xv)
        for k in hp:
            if np.asarray(hp[k]).dtype != np.asarray(ep[k]).dtype:
                return f"{k} dtype {np.asarray(hp[k]).dtype} != {np.asarray(ep[k]).dtype}"
        if hwhy:
            return hwhy
        if len(hr) != len(er):
            return f"{len(hr)} unique values != expected {len(er)}"
        if hr != er:
            i = next(i for i, (a, b) in enumerate(zip(hr, er)) if a != b)
            return f"unique row {i}: {hr[i]} != expected {er[i]}"
        return None
    return check


# ------------------------------------------------------------------------ cumulative
def gen_cumulative(g: G) -> Case:
    name = g.pick(["cumulative_sum", "cumulative_prod", "diff", "diff"])
    dt = g.dtype()
    s = g.shape(hi=6)
    nd = len(s)
    prof = "small" if name == "cumulative_prod" else None
    x = g.arr(s, dt, prof)
    if name == "diff":
        axis = g.int(-nd, nd - 1) if nd and g.p(0.9) else g.pick([0, -1, 2])
        kw = {"axis": axis if g.p(0.6) else _OMIT, "n": g.int(0, 3) if g.p(0.6) else _OMIT}
        extra = ""
        for k in ("prepend", "append"):
            if nd and g.p(0.25) and isinstance(axis, int) and -nd <= axis < nd:
                ps = list(s)
                ps[axis] = g.int(0, 2)
                extra += f", {k}={g.arr(tuple(ps), dt if g.p(0.8) else g.dtype())}"
        src = f"r = {{m}}.diff({x}{_kw(**kw)}{extra})"
        if extra.count("=") == 2 and kw["n"] != 0:  # x, prepend, append: n-ary promotion
            names = [op.name for op in g.ops]
            rx, rp, ra = (f"ref.common([{', '.join(names)}])[{i}]" for i in range(3))
            src_np = f"r = np.diff({rx}{_kw(**kw)}, prepend={rp}, append={ra})"
        else:
            src_np = None
        # n=0 gives x in NumPy before the axis is looked at (hipfer checks it first)
        return _case(g, "cumulative", name, src, tol="ulp" if dt.kind in "fc" else "exact",
                     zeros=False, may_raise="True" if not nd or kw["n"] == 0 else None,
                     src_np=src_np,
                     notes=["0-d-input"] if not nd else [])
    axis = g.int(-nd, nd - 1) if nd and (nd > 1 or g.p(0.5)) else (0 if g.p(0.3) else None)
    dkw = dname(g.dtype()) if g.p(0.25) else _OMIT
    kw = _kw(axis=axis if axis is not None else _OMIT, dtype=dkw,
             include_initial=g.p(0.3) or _OMIT)
    bad = _bad_casts(g, x, dkw)
    notes = ["f16-acc"] if dt == F16 else []
    m = _mag(g.ops[0].base)
    scale = max(math.prod(s), 1) * m if name == "cumulative_sum" else 0.0
    # running products that overflow: where they hit inf decides inf * 0 = NaN or 0
    wild = name == "cumulative_prod" and max(math.prod(s), 1) * math.log2(max(m, 1.0)) >= 127
    case = _case(g, "cumulative", name, f"r = {{m}}.{name}({x}{kw})",
                 src_np=f"r = ref.via32(np.{name}, {x}{kw})", tol="none" if bad else "acc",
                 scale=scale, zeros=False, notes=notes + (["float-int-cast"] if bad else []),
                 wild=wild)
    if not nd:
        case.may_raise = "True"
        case.notes.append("0-d-input")
    return case


# ---------------------------------------------------------------------------- linalg
def _matrix(g, batch, m, n, dt, kind="general"):
    """A matrix operand: 'general' random, 'wellcond' diagonally dominant square,
    'pd' Hermitian positive definite."""
    shape = tuple(batch) + (m, n)
    name = g.arr(shape, dt, "finite" if kind != "general" or g.p(0.7) else None)
    op = g.ops[-1]
    if kind in ("wellcond", "pd") and m == n and m:
        a = values(g.r, shape, np.dtype(dt), "unit")
        if kind == "pd":
            a = a @ np.conj(np.swapaxes(a, -1, -2))
        a = a + (n + 1) * np.eye(n, dtype=a.dtype)
        # the operand's layout: recomputed on the base (transposes keep it Hermitian
        # for pd only when the layout is contiguous)
        op.base, op.steps, op.layout = a.astype(dt), [], "contig"
        if g.p(0.3):
            op.base = np.ascontiguousarray(np.swapaxes(op.base, -1, -2))
            nd = len(shape)
            perm = tuple(range(nd - 2)) + (nd - 1, nd - 2)
            op.steps = [f"{name} = {{m}}.permute_dims({name}, {perm})"]
            op.layout = "T"
    return name


def _gen_matmul(g, fam, op=False) -> Case:
    dt = g.dtype("iufc" if g.p(0.9) else "biufc")
    d2 = dt if g.p(0.85) else g.dtype("iufc")
    m, k, n = g.int(0, 5), g.int(0, 5), g.int(0, 5)
    batch = g.shape(max_nd=2, hi=3)
    b2 = g.bshape(batch) if batch and g.p(0.8) else batch
    a_shape = (k,) if g.p(0.15) else tuple(batch) + (m, k)
    b_shape = (k if g.p(0.97) else k + 1,) if g.p(0.15) else tuple(b2) + (k, n)
    a = g.arr(a_shape, dt, "finite" if g.p(0.8) else None)
    b = g.arr(b_shape, d2, "finite" if g.p(0.8) else None)
    src = f"r = {a} @ {b}" if op else f"r = {{m}}.matmul({a}, {b})"
    scale = (k + 1) * _mag(g.ops[0].base) * _mag(g.ops[1].base)
    return _case(g, fam, "matmul", src, tol="acc", scale=scale, zeros=False)


def _bad_casts(g, x, dkw) -> bool:
    """A float / complex operand cast to an integer dtype (a dtype= keyword) that holds
    NaN, inf or values out of its range: C leaves those casts undefined (divergence
    float-int-cast), so what is computed from them is not compared."""
    if dkw is _OMIT:
        return False
    to = np.dtype(dkw[4:])
    op = next(o for o in g.ops if o.name == x)
    v = _np_value(op)
    return v.dtype.kind in "fc" and to.kind in "iu" and bool(Ref.bad_cast(v, to).any())


def _np_value(op: Operand) -> np.ndarray:
    """The operand's logical value, built by NumPy from its base and steps."""
    env = {"np": np, f"b_{op.name}": op.base}
    exec(compile(_sub("\n".join(op.lines()), "np"), "<operand>", "exec"), env)
    return np.asarray(env[op.name])


_SVD_BASED = ("linalg.svdvals", "linalg.pinv", "linalg.matrix_rank", "linalg.eigvalsh")


def gen_linalg(g: G) -> Case:
    """A linalg case. SVD and eigensolvers of inf / NaN are never run on the reference
    side: OpenBLAS's gesdd may not return (hipfer refuses them first, divergence
    svd-nonfinite)."""
    case = _gen_linalg(g)
    svd = case.name in _SVD_BASED or (case.name == "linalg.matrix_norm" and any(
        f"ord={o}" in case.src for o in ("'nuc'", "2", "-2")))
    if svd and not all(np.isfinite(_np_value(op)).all() for op in case.ops):
        case.std, case.src_np = False, "r = ref.refuse_nonfinite()"
        case.notes.append("svd-nonfinite")
    return case


def _gen_linalg(g: G) -> Case:
    name = g.pick(["matmul", "matmul", "tensordot", "vecdot", "matrix_norm", "vector_norm",
                   "det", "inv", "solve", "qr", "svdvals", "cholesky", "trace", "outer",
                   "cross", "slogdet", "matrix_power", "eigvalsh", "pinv", "matrix_rank"])
    fam = "linalg"
    if name == "matmul":
        return _gen_matmul(g, fam)
    dt = g.dtype("fc" if g.p(0.85) else "biufc")
    batch = g.shape(max_nd=2, hi=3)
    n = g.int(0, 5)
    mag_scale = 1.0
    if name == "tensordot":
        s1 = g.shape(max_nd=3)
        k = g.int(0, len(s1))
        contracted = s1[len(s1) - k:]
        s2 = tuple(contracted) + g.shape(max_nd=2)
        a, b = g.arr(s1, dt, "finite"), g.arr(s2, dt if g.p(0.85) else g.dtype("iufc"),
                                              "finite")
        if g.p(0.3) and k:
            axes = (tuple(range(len(s1) - k, len(s1))), tuple(range(k)))
        else:
            axes = k
        scale = (math.prod(contracted) + 1) * _mag(g.ops[0].base) * _mag(g.ops[1].base)
        return _case(g, fam, "tensordot", f"r = {{m}}.tensordot({a}, {b}, axes={lit(axes)})",
                     tol="acc", scale=scale, zeros=False)
    if name == "vecdot":
        s = g.shape(min_nd=1, max_nd=3)
        a = g.arr(s, dt, "finite")
        b = g.arr(g.bshape(s), dt if g.p(0.85) else g.dtype("iufc"), "finite")
        axis = g.int(-len(s), -1) if g.p(0.3) else -1
        scale = (max(s) + 1) * _mag(g.ops[0].base) * _mag(g.ops[1].base)
        return _case(g, fam, "vecdot", f"r = {{m}}.vecdot({a}, {b}{_kw(axis=axis)})",
                     tol="acc", scale=scale, zeros=False)
    if name == "outer":
        a, b = g.arr((g.int(0, 4),), dt), g.arr((g.int(0, 4),), dt)
        # complex products of inf / huge parts: the order of the operations decides
        # between inf and NaN, as in an accumulation ("acc" over non-finite inputs)
        scale = _mag(g.ops[0].base) * _mag(g.ops[1].base)
        return _case(g, fam, "linalg.outer", f"r = {{m}}.linalg.outer({a}, {b})", tol="acc",
                     scale=scale, zeros=False)
    if name == "cross":
        s = tuple(g.shape(max_nd=2, hi=3)) + (3 if g.p(0.95) else 2,)
        a, b = g.arr(s, dt, "finite"), g.arr(g.bshape(s), dt, "finite")
        scale = 4 * _mag(g.ops[0].base) * _mag(g.ops[1].base)
        return _case(g, fam, "linalg.cross", f"r = {{m}}.linalg.cross({a}, {b})", tol="acc",
                     scale=scale, zeros=False)
    if name == "matrix_norm":
        x = _matrix(g, batch, g.int(0, 5), g.int(0, 5), dt)
        ordv = g.pick(["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf])
        kw = _kw(ord=ordv, keepdims=g.p(0.3) or _OMIT)
        tol = "linalg" if ordv in ("nuc", 2, -2) else "acc"
        scale = 8 * _mag(g.ops[0].base) * 6
        return _case(g, fam, "linalg.matrix_norm", f"r = {{m}}.linalg.matrix_norm({x}{kw})",
                     tol=tol, scale=scale, zeros=False)
    if name == "vector_norm":
        s = g.shape()
        x = g.arr(s, dt)
        ordv = g.pick([2, 1, math.inf, -math.inf, 0, 3, 0.5, -1])
        axis = g.axis(len(s), bad=0.01)
        keep = g.p(0.3) or _OMIT
        kw = _kw(axis=axis, ord=ordv, keepdims=keep)
        scale = max(math.prod(s), 1) * _mag(g.ops[0].base)
        case = _case(g, fam, "linalg.vector_norm", f"r = {{m}}.linalg.vector_norm({x}{kw})",
                     tol="acc", scale=scale, zeros=False)
        if not s and _zero_d_ok(axis):  # divergence 0-d-axis
            case.src_np = f"r = np.linalg.vector_norm({x}{_kw(ord=ordv, keepdims=keep)})"
            case.notes.append("0-d-axis")
        return case
    if name == "trace":
        x = _matrix(g, batch, g.int(0, 5), g.int(0, 5), dt)
        kw = _kw(offset=g.int(-3, 3) if g.p(0.5) else _OMIT,
                 dtype=dname(g.dtype()) if g.p(0.2) else _OMIT)
        scale = 6 * _mag(g.ops[0].base)
        return _case(g, fam, "linalg.trace", f"r = {{m}}.linalg.trace({x}{kw})", tol="acc",
                     scale=scale, zeros=False)
    singular = g.p(0.05)
    kind = "pd" if name in ("cholesky", "eigvalsh") else "wellcond"
    if name in ("qr", "svdvals", "pinv", "matrix_rank"):
        kind = "general"
    m = n if kind != "general" else g.int(0, 5)
    x = _matrix(g, batch, m, n, dt, kind)
    if singular and n and g.ops[-1].base.size and g.ops[-1].base.ndim:
        op = g.ops[-1]
        op.base = op.base.copy()
        op.base[..., 0] = 0
    mag_scale = _mag(g.ops[-1].base)
    fn = f"{{m}}.linalg.{name}"
    f16 = "True" if dt == F16 else None  # divergence f16-linalg
    if name == "solve":
        rhs = tuple(batch) + (n, g.int(1, 3)) if g.p(0.7) else (n,)
        b = g.arr(rhs, dt, "finite")
        return _case(g, fam, "linalg.solve", f"r = {fn}({x}, {b})", tol="linalg",
                     scale=mag_scale * n, zeros=False)
    if name == "qr":
        mode = g.pick(["reduced", "complete"]) if g.p(0.5) else _OMIT
        case = _case(g, fam, "linalg.qr", f"r = {fn}({x}{_kw(mode=mode)})", tol="linalg",
                     scale=mag_scale, zeros=False)
        case.check = _qr_check(x, mode if mode is not _OMIT else "reduced")
        return case
    if name == "matrix_power":
        p = g.int(-2, 4)
        return _case(g, fam, "linalg.matrix_power", f"r = {fn}({x}, {p})", tol="linalg",
                     scale=mag_scale ** max(abs(p), 1) * (n + 1) ** 4, zeros=False)
    if name == "cholesky":
        kw = _kw(upper=g.p(0.4) or _OMIT)
        return _case(g, fam, "linalg.cholesky", f"r = {fn}({x}{kw})", tol="linalg",
                     scale=mag_scale, zeros=False)
    if name == "pinv":
        return _case(g, fam, "linalg.pinv", f"r = {fn}({x})", tol="linalg",
                     scale=1.0, zeros=False, check=_pinv_check(x),
                     src_np=_sub(f"r = {fn}(ref.f64({x}))", "np"),
                     may_raise=f16 or f"not np.isfinite({x}).all()")
    tol = "exact" if name == "matrix_rank" else "linalg"
    scale = {"det": (mag_scale * (n + 2)) ** n, "slogdet": n + 1}.get(name, mag_scale * (n + 1))
    # the rank of empty matrices is 0 (NumPy < 2.3 raises there, 2.3+ gives 0)
    src_np = f"r = ref.matrix_rank({x})" if name == "matrix_rank" else None
    return _case(g, fam, "linalg." + name, f"r = {fn}({x})", tol=tol, scale=scale,
                 zeros=False, may_raise=f16, src_np=src_np)


def _qr_check(x, mode):
    """Q and R are unique up to signs: check shapes and dtypes against the reference,
    then Q R == x, Q^H Q == I and R upper triangular."""
    def check(h, e, env):
        (q, r_), (eq, er) = h, e
        if (q.shape, r_.shape, q.dtype, r_.dtype) != (eq.shape, er.shape, eq.dtype, er.dtype):
            return f"Q, R {q.shape} {r_.shape} {q.dtype} != {eq.shape} {er.shape} {eq.dtype}"
        a = env["ref_in"][x]
        if not a.size:
            return None
        eps = _eps(q.dtype) * 2048 * max(a.shape[-2:])
        scale = max(_mag(a), 1.0)
        if scale * max(a.shape[-2:]) > float(np.finfo(q.dtype).max) * _eps(q.dtype):
            return None  # huge entries: the products overflow (shapes checked)
        with np.errstate(all="ignore"):
            if np.abs(q @ r_ - a).max() > eps * scale:
                return "Q @ R != x"
            k = q.shape[-1]
            if np.abs(np.conj(np.swapaxes(q, -1, -2)) @ q - np.eye(k)).max() > eps:
                return "Q is not orthonormal"
            if np.abs(np.tril(r_, -1)).max(initial=0) > eps * scale:
                return "R is not upper triangular"
        return None
    return check


def _pinv_check(x):
    """pinv: x @ p @ x == x and p @ x @ p == p (the Penrose conditions that matter)."""
    def check(h, e, env):
        if h.shape != e.shape or h.dtype != e.dtype:
            return f"shape/dtype {h.shape} {h.dtype} != {e.shape} {e.dtype}"
        a = env["ref_in"][x]
        if not a.size:
            return None
        eps = _eps(h.dtype) * 4096 * max(a.shape[-2:])
        big = _mag(a) > math.sqrt(float(np.finfo(h.dtype).max) * _eps(h.dtype))
        with np.errstate(all="ignore"):
            lim = eps * max(_mag(a), 1)
            # (huge entries overflow the products; an ill-conditioned x fails NumPy's too)
            if not big and np.abs(a @ h @ a - a).max() > lim \
                    and not np.abs(a @ e @ a - a).max() > lim:
                return "x @ pinv(x) @ x != x"
        if np.abs(h - e).max() > eps * max(_mag(e), 1) * 100:
            return "pinv differs"
        return None
    return check


# ------------------------------------------------------------------------------- fft
def gen_fft(g: G) -> Case:
    name = g.pick(["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fftn", "ifftn",
                   "rfftn", "irfftn", "fftshift", "ifftshift"])
    real_in = name in ("rfft", "ihfft", "rfftn")
    dt = g.dtype(("f" if real_in else "fc") if g.p(0.85) else "biufc")
    s = g.shape(min_nd=1 if g.p(0.95) else 0, hi=6)
    nd = len(s)
    x = g.arr(s, dt, "finite" if g.p(0.85) else None)
    fn = f"{{m}}.fft.{name}"
    if name in ("fftshift", "ifftshift"):
        kw = _kw(axes=g.axis(nd)) if g.p(0.6) else ""
        # a 0-d x: x itself (NumPy's fftshift fails unpacking its shape)
        return _case(g, "fft", "fft." + name, f"r = {fn}({x}{kw})",
                     src_np=f"r = {x}" if not nd and "axes=" not in kw.replace(
                         "axes=None", "") else None)
    norm = g.pick(["backward", "ortho", "forward"]) if g.p(0.5) else _OMIT
    expect = None
    if name.endswith("n"):
        axes = None
        if g.p(0.6) and nd:
            k = g.int(1, nd)
            axes = tuple(int(a) for a in g.r.choice(nd, size=k, replace=False))
        sz = _OMIT
        if g.p(0.4):
            k = len(axes) if axes is not None else nd
            sz = tuple(g.int(1, 6) for _ in range(k))
        kw = _kw(s=sz, axes=axes if axes is not None else _OMIT, norm=norm)
        if sz is not _OMIT and axes is None:
            expect = "True"  # the standard: with s, axes must be given too (NumPy: the last)
    else:
        kw = _kw(n=g.int(1, 8) if g.p(0.4) else _OMIT,
                 axis=g.int(-nd, nd - 1) if nd and g.p(0.4) else _OMIT, norm=norm)
    base = g.ops[0].base
    n = max(base.size, 2)
    scale = _mag(base) * n
    arg = f"{x}.astype(np.float32)" if dt == F16 else x  # divergence f16-fft: in float32
    src_np = _sub(f"r = ref.fft({fn}, {arg}{kw})", "np")
    if name in ("fftn", "ifftn") and (not nd or "axes=()" in kw):
        # no axis to transform: the input as a complex copy (divergence fft-no-axes)
        src_np = f"r = np.asarray({x}, dtype=np.result_type({x}.dtype, np.complex64))"
    return _case(g, "fft", "fft." + name, f"r = {fn}({x}{kw})", tol="fft", scale=scale,
                 zeros=False, expect_raise=expect, src_np=src_np,
                 notes=["f16-fft"] if dt == F16 else [])


FAMILIES = {
    "unary": (gen_unary, 12), "binary": (gen_binary, 14), "operators": (gen_operators, 12),
    "reduction": (gen_reduction, 10), "search": (gen_search, 8),
    "manipulation": (gen_manipulation, 9), "indexing": (gen_indexing, 9),
    "creation": (gen_creation, 6), "dtypes": (gen_dtypes, 5), "sets": (gen_sets, 3),
    "cumulative": (gen_cumulative, 4), "linalg": (gen_linalg, 6), "fft": (gen_fft, 5),
}


# ============================================================================== running
_REF = Ref()


class Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise Timeout("case timed out")


@dataclass
class Side:
    ok: bool
    value: object = None
    exc: BaseException | None = None
    tb: str = ""


def _normalize(v, side):
    """A comparable form: ('arr', ndarray, device) | ('seq', [..]) | ('dtype', dt) |
    ('py', value) | ('info', {..})."""
    if isinstance(v, hf.Tensor):
        return ("arr", np.asarray(v.to_device("cpu")).copy(), v.device)
    if xs is not None and isinstance(v, _XsArray):
        return ("arr", np.asarray(v._array).copy(), None)
    if isinstance(v, (np.ndarray, np.generic)) and not isinstance(v, np.dtype):
        return ("arr", np.asarray(v).copy(), "numpy")
    if isinstance(v, (tuple, list)):
        return ("seq", [_normalize(e, side) for e in v])
    if isinstance(v, np.dtype) or (isinstance(v, type) and issubclass(v, np.generic)):
        return ("dtype", np.dtype(v))
    if xs is not None and type(v).__name__ == "DType":
        return ("dtype", np.dtype(v._np_dtype))
    if isinstance(v, (bool, int, float, complex)):
        return ("py", v)
    if hasattr(v, "bits") and hasattr(v, "max"):
        d = {k: getattr(v, k) for k in ("bits", "eps", "max", "min", "smallest_normal")
             if hasattr(v, k)}
        dt = getattr(v, "dtype", None)
        d["dtype"] = np.dtype(dt._np_dtype) if hasattr(dt, "_np_dtype") else np.dtype(dt)
        return ("info", {k: (float(x) if k != "dtype" and k != "bits" else x)
                         for k, x in d.items()})
    return ("other", repr(v))


def _exec(src, env):
    exec(compile(src, "<case>", "exec"), env)
    return env["r"]


def _run_side(code, env) -> Side:
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return Side(True, _exec(code, env))
    except Timeout:
        raise
    except Exception as e:  # noqa: BLE001 - every exception is an outcome
        return Side(False, exc=e, tb=traceback.format_exc(limit=-4))


def _sub(src, m):
    return src.replace("{m}", m)


def _build(case, m, bases):
    env = {"hf": hf, "np": np, "xs": xs, "ref": _REF}
    env.update(bases)
    for op in case.ops:
        src = _sub("\n".join(op.lines()), m)
        if m == "np":  # NumPy's conj copies: a conjugated view keeps the strides
            src = src.replace("np.conj(", "ref.conj_view(")
        exec(compile(src, "<operand>", "exec"), env)
    return env


def _same_exact(a, b, zeros=True) -> bool:
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind not in "fc":
        return np.array_equal(a, b)
    for pa, pb in ((a.real, b.real), (a.imag, b.imag)) if a.dtype.kind == "c" else ((a, b),):
        if not np.array_equal(pa, pb, equal_nan=True):
            return False
        if zeros and not np.array_equal(np.signbit(pa[pa == 0]), np.signbit(pb[pb == 0])):
            return False
    return True


def compare_arrays(h, e, case, mask=None) -> str | None:
    if h.dtype != e.dtype:
        return f"dtype {h.dtype} != expected {e.dtype}"
    if h.shape != e.shape:
        return f"shape {h.shape} != expected {e.shape}"
    if case.tol == "none" or h.size == 0:
        return None
    if mask is not None:
        keep = ~np.broadcast_to(np.asarray(mask, bool), h.shape)
        h, e = h[keep], e[keep]
    if h.dtype.kind not in "fc":
        if not np.array_equal(h, e):
            bad = np.flatnonzero(h != e)[:3]
            return f"values differ at {bad.tolist()}: {h.flat[bad[0]]!r} != {e.flat[bad[0]]!r}"
        return None
    rt, at = TOLERANCES[case.tol]
    eps = _eps(h.dtype)
    rtol, atol = rt * eps, at * eps * case.scale
    if case.tol not in ("exact", "ulp"):  # results that underflow: a few subnormals apart
        atol += 4 * float(np.finfo(h.dtype).smallest_subnormal)
    parts = ((h.real, e.real, "real "), (h.imag, e.imag, "imag ")) if h.dtype.kind == "c" \
        else ((h, e, ""),)
    big = float(np.finfo(h.dtype).max)
    # accumulations over inf / NaN or overflowing magnitudes: the order of the additions
    # decides between inf and NaN (inf + -inf), and whether a partial sum overflows
    loose = case.tol in ("acc", "fft", "linalg") and case.nonfinite
    wild = case.tol in ("acc", "fft", "linalg") and (case.wild or
                                                     not case.scale * (1 + rtol) < big)
    # and in a transform, a factorization or a complex sum (a mean's complex division
    # too) NaN meets the other part or the other elements by the algorithm's own route
    # (NaN * 0 twiddles): which outputs turn NaN is the library's, not a bug
    mixing = wild or case.tol in ("fft", "linalg") or h.dtype.kind == "c"
    for ph, pe, what in parts:
        if loose or wild:
            fh, fe = np.isfinite(ph), np.isfinite(pe)
            skip = (~fh | ~fe) if mixing else (~fh & ~fe)
            ph, pe = ph[~skip], pe[~skip]
        nh, ne = np.isnan(ph), np.isnan(pe)
        if not np.array_equal(nh, ne):
            i = int(np.flatnonzero(nh != ne)[0])
            return f"{what}NaN at {i}: {ph.flat[i]!r} vs expected {pe.flat[i]!r}"
        ok = ~ne
        ph, pe = ph[ok].astype(np.float64), pe[ok].astype(np.float64)
        ih, ie = np.isinf(ph), np.isinf(pe)
        with np.errstate(all="ignore"):
            err = np.abs(ph - pe)
            lim = atol + rtol * np.abs(pe)
            close = (err <= lim) | (ph == pe)
            if case.tol != "exact":  # a value at the edge of the range may round to inf
                edge = (ie & ~ih & (np.abs(ph) >= big * (1 - 2 * rtol))) | \
                       (ih & ~ie & (np.abs(pe) >= big * (1 - 2 * rtol)))
                close |= edge
        if not close.all():
            i = int(np.flatnonzero(~close)[0])
            return f"{what}values differ at {i}: {ph[i]!r} vs expected {pe[i]!r}" \
                   f" (rtol {rtol:.3g}, atol {atol:.3g})"
        if case.zeros:
            z = (ph == 0) & (pe == 0)
            if not np.array_equal(np.signbit(ph[z]), np.signbit(pe[z])):
                i = int(np.flatnonzero(z & (np.signbit(ph) != np.signbit(pe)))[0])
                return f"{what}sign of zero at {i}: {ph[i]!r} vs expected {pe[i]!r}"
    return None


def compare(h, e, case, mask=None, device=None) -> str | None:
    """None where hipfer's normalized result h matches the expected e, else why not."""
    if h[0] != e[0]:
        if h[0] == "arr" and e[0] == "py":  # a Python scalar answer (can_cast, ...)
            return f"gives a Tensor where a Python {type(e[1]).__name__} is expected"
        return f"gives {h[0]} where {e[0]} is expected"
    kind = h[0]
    if kind == "arr":
        if device is not None and h[2] != device:
            return f"result on {h[2]}, not {device}" if h[2] != "numpy" else \
                "result is a NumPy array, not a Tensor"
        return compare_arrays(h[1], e[1], case, mask)
    if kind == "seq":
        if len(h[1]) != len(e[1]):
            return f"{len(h[1])} results != expected {len(e[1])}"
        for i, (a, b) in enumerate(zip(h[1], e[1])):
            why = compare(a, b, case, None, device)
            if why:
                return f"result {i}: {why}"
        return None
    if kind == "info":
        for k, v in e[1].items():
            if k not in h[1] or h[1][k] != v:
                return f"{k} {h[1].get(k)!r} != expected {v!r}"
        return None
    if h[1] != e[1] or type(h[1]) is not type(e[1]):
        return f"{h[1]!r} != expected {e[1]!r}"
    return None


def _message_problem(exc, case) -> str | None:
    """A hipfer message naming an internal descriptor, or another public function."""
    msg = str(exc)
    m = _DESC_RE.search(msg)
    if m:
        return f"message names internal {m.group(1)}: {msg[:160]}"
    called = case.name.split(".")[-1].strip("_")
    # a < b with a not a Tensor is b.__gt__(a) in Python: the mirrored name is right too
    mirror = {"less": "greater", "less_equal": "greater_equal", "greater": "less",
              "greater_equal": "less_equal"}
    aliases = {called, mirror.get(called, called), "in-place", "asarray", "astype",
               "broadcast_to", "broadcast_shapes", "result_type", "reshape", "permute_dims",
               "getitem", "setitem", "index", "indexing", "conj", "matmul", "promote_types"}
    m = _FN_RE.match(msg)  # a message that starts "name(): ..." says who raised it
    if m and m.group(1) in _PUBLIC and m.group(1) not in aliases:
        return f"message names {m.group(1)}() but {case.name} was called: {msg[:160]}"
    return None


@dataclass
class Outcome:
    family: str
    name: str
    kind: str            # agree | differ | hipfer-only error | reference-only error | crash
    why: str = ""
    index: int = -1


def _strict_applies(case, ref_in) -> bool:
    if xs is None or not case.std:
        return False
    if "{m}.float16" in case.src or "ref." in case.src:
        return False
    return all(v.dtype in STD_DTYPES for v in ref_in.values())


def run_case(case: Case, device=None, index=-1, timeout=20) -> tuple:
    """(Outcome, detail dict) of one case."""
    bases = {f"b_{op.name}": op.base for op in case.ops}
    old = signal.signal(signal.SIGALRM, _alarm) if timeout else None
    if timeout:
        signal.alarm(timeout)
    try:
        return _run_case(case, bases, device, index)
    except Timeout:
        return Outcome(case.family, case.name, "crash", "timed out", index), {}
    except Exception as e:  # noqa: BLE001 - the fuzzer's own bug: counted apart
        why = f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=-3)}"
        return Outcome(case.family, case.name, "fuzzer error", why, index), {}
    finally:
        if timeout:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)


def _run_case(case, bases, device, index):
    out = lambda kind, why="": (Outcome(case.family, case.name, kind, why, index),  # noqa
                                detail)
    detail = {}
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            henv = _build(case, "hf", bases)
    except Exception as e:  # noqa: BLE001
        return out("crash", f"building the operands: {type(e).__name__}: {e}")
    names = [op.name for op in case.ops]
    ref_in = {n: np.asarray(henv[n].to_device("cpu")).copy() for n in names}
    nenv = _build(case, "np", bases)
    for n in names:  # the layout itself: the host copy equals NumPy's view
        if not _same_exact(ref_in[n], np.asarray(nenv[n])):
            return out("differ", f"layout of {n} ({[op.layout for op in case.ops]}): "
                                 "the host copy differs from NumPy's view")
    detail["ref_in"] = ref_in
    case.nonfinite = any(v.dtype.kind in "fc" and not np.isfinite(v).all()
                         for v in ref_in.values())
    before = {n: ref_in[n].copy() for n in names}
    dev = device or hf.get_default_device()
    H = _run_side(_sub(case.src, "hf"), henv)
    # the reference sides: copies of the device data (or NumPy's views for copy=False)
    ns = {"hf": hf, "np": np, "xs": xs, "ref": _REF}
    renv = dict(ns, **({n: np.asarray(nenv[n]) for n in names} if case.ref_views else
                       {n: ref_in[n].copy() for n in names}))
    N = _run_side(_sub(case.src_np or case.src, "np"), renv)
    S = None
    if _strict_applies(case, ref_in):
        senv = dict(ns, **{n: xs.asarray(ref_in[n].copy()) for n in names})
        S = _run_side(_sub(case.src, "xs"), senv)
    detail.update(H=H, N=N, S=S)
    # inputs must stay as they were (in-place forms change x0 on purpose)
    target = case.src.split("[")[0].split(" ")[0] if "\nr = " in case.src else None
    for n in names:
        if n == target:
            continue
        now = np.asarray(henv[n].to_device("cpu"))
        if not _same_exact(now, before[n]):
            return out("differ", f"input {n} was changed")
    expect_raise = _predicate(case.expect_raise, renv)
    # what hipfer should give: NumPy's answer, or array-api-strict's where the two differ
    # in kind, dtype or shape (the standard decides) or NumPy has none; hipfer may raise
    # where either reference raises (outside the standard) or a divergence says so
    may_raise = (not N.ok) or (S is not None and not S.ok) or expect_raise \
        or _predicate(case.may_raise, renv) or _u64_signed(case, ref_in) \
        or (S is None and _predicate(case.may_raise_nonstd, renv)) \
        or _predicate(case.anything, renv)
    want = None if expect_raise else N if N.ok else None
    if S is not None and S.ok and case.strict_decides and not expect_raise:
        if want is None or _form(_normalize(S.value, "xs")) != _form(_normalize(N.value, "np")):
            want = S
    if not H.ok:
        e = H.exc
        if isinstance(e, Timeout) or not isinstance(e, USER_ERRORS):
            return out("crash", f"{type(e).__name__}: {e}\n{H.tb}")
        problem = _message_problem(e, case)
        if problem:
            return out("crash", problem)
        if may_raise:
            return out("agree")
        return out("hipfer-only error", f"{type(e).__name__}: {e}")
    try:
        h = _normalize(H.value, "hf")
    except Exception as e:  # noqa: BLE001
        return out("crash", f"result not readable: {type(e).__name__}: {e}")
    if _predicate(case.anything, renv):
        return out("agree")  # unspecified: a result or an error (crashes are caught above)
    if want is None:
        ref_exc = N.exc if not N.ok else "(expected to raise: " + str(case.expect_raise) + ")"
        return out("reference-only error", f"hipfer gives {_short(h)}; reference raised "
                                           f"{type(ref_exc).__name__}: {ref_exc}")
    e = _normalize(want.value, "ref")
    mask = None
    if case.mask:
        try:
            mask = eval(_sub(case.mask, "np"), dict(renv))
        except Exception:  # noqa: BLE001
            mask = None
    if case.check is not None:
        why = case.check(_plain(h), _plain(e), detail)
        if why is None:
            why = _devices(h, dev)
    else:
        why = compare(h, e, case, mask, dev)
    if why:
        src = "array-api-strict" if want is S else "NumPy"
        return out("differ", f"{why} [vs {src}]")
    return out("agree")


def _u64_signed(case, ref_in) -> bool:
    """uint64 and a signed integer among the operands promoted together: hipfer refuses
    them (divergence uint64-signed)."""
    names = case.promotes if case.promotes is not None else \
        [op.name for op in case.ops if not op.index]
    kinds = {ref_in[n].dtype for n in names}
    return np.dtype(np.uint64) in kinds and any(t.kind == "i" for t in kinds)


def _predicate(src, env) -> bool:
    """A divergence's condition (NumPy source over the reference inputs)."""
    if not src:
        return False
    try:
        return bool(eval(_sub(src, "np"), dict(env)))
    except Exception:  # noqa: BLE001 - a condition that does not apply
        return False


def _form(n):
    """The structure, dtypes and shapes of a normalized result (not its values)."""
    if n[0] == "arr":
        return ("arr", n[1].dtype, n[1].shape)
    if n[0] == "seq":
        return ("seq", tuple(_form(e) for e in n[1]))
    if n[0] == "py":
        return ("py", type(n[1]))
    return (n[0],)


def _plain(n):
    if n[0] == "arr":
        return n[1]
    if n[0] == "seq":
        return [_plain(e) for e in n[1]]
    return n[1]


def _devices(h, dev):
    if h[0] == "arr":
        return None if h[2] == dev else f"result on {h[2]}, not {dev}"
    if h[0] == "seq":
        for e in h[1]:
            why = _devices(e, dev)
            if why:
                return why
    return None


def _short(n) -> str:
    if n[0] == "arr":
        return f"{n[1].dtype}{list(n[1].shape)}"
    if n[0] == "seq":
        return "(" + ", ".join(_short(e) for e in n[1]) + ")"
    return repr(n[1])[:60]


# ============================================================================ the driver
def make_case(seed, index, only=None):
    """Case `index` of `seed` (families restricted to `only`)."""
    rng = np.random.default_rng([seed, index])
    fams = [f for f in FAMILIES if not only or f in only]
    weights = np.array([FAMILIES[f][1] for f in fams], float)
    fam = fams[int(rng.choice(len(fams), p=weights / weights.sum()))]
    return FAMILIES[fam][0](G(rng))


def snippet(case: Case, device="cpu") -> str:
    lines = ["import numpy as np", "import hipfer as hf", "",
             f"with hf.default_device({str(device)!r}):"]
    for op in case.ops:
        lines.append(f"    b_{op.name} = {array_lit(op.base)}")
        lines += ["    " + _sub(s, "hf") for s in op.lines()]
    lines += ["    " + s for s in _sub(case.src, "hf").splitlines()]
    lines.append("    print(r)")
    ref = case.src_np or case.src
    lines.append("# reference (on np.asarray(x.to_device('cpu')) of each operand; ref: "
                 "tools/fuzz.py Ref):")
    lines += ["#   " + s for s in _sub(ref, "np").splitlines()]
    if case.notes:
        lines.append(f"# divergences applied: {', '.join(case.notes)}")
    return "\n".join(lines)


def run(cases=1000, seed=1, device=None, only=None, fn=None, start=0, progress=False,
        per_fn=3, timeout=20):
    """Run cases [start, start + cases); returns (table, findings): table family ->
    {outcome: count}, findings [(Outcome, snippet)] (at most per_fn per function and kind)."""
    table: dict = {}
    findings = []
    seen: dict = {}
    dev = hf.as_device(device) if device is not None else hf.get_default_device()
    fn_re = re.compile(fn) if fn else None
    t0 = time.time()
    with hf.default_device(dev):
        for i in range(start, start + cases):
            try:
                case = make_case(seed, i, only)
            except Exception as e:  # noqa: BLE001 - a fuzzer bug: say so, go on
                print(f"  case {i}: the generator failed: {type(e).__name__}: {e}",
                      file=sys.stderr)
                continue
            if fn_re and not fn_re.search(case.name):
                continue
            res, _ = run_case(case, dev, i, timeout)
            row = table.setdefault(res.family, {})
            row[res.kind] = row.get(res.kind, 0) + 1
            if res.kind != "agree":
                key = (res.name, res.kind)
                seen[key] = seen.get(key, 0) + 1
                if seen[key] <= per_fn:
                    findings.append((res, snippet(case, dev)))
            if progress and (i - start + 1) % 2000 == 0:
                print(f"  {i - start + 1} cases, {time.time() - t0:.0f}s", file=sys.stderr,
                      flush=True)
    return table, findings, seen


KINDS = ["agree", "differ", "hipfer-only error", "reference-only error", "crash"]
EXTRA = ["fuzzer error"]  # a column only when it is not empty


def format_table(table) -> str:
    kinds = KINDS + [k for k in EXTRA if any(k in row for row in table.values())]
    head = f"{'family':<13}{'cases':>8}" + "".join(f"{k:>22}" for k in kinds)
    lines = [head, "-" * len(head)]
    tot = {k: 0 for k in kinds}
    for fam in FAMILIES:
        row = table.get(fam)
        if not row:
            continue
        n = sum(row.values())
        lines.append(f"{fam:<13}{n:>8}" + "".join(f"{row.get(k, 0):>22}" for k in kinds))
        for k in kinds:
            tot[k] += row.get(k, 0)
    lines.append("-" * len(head))
    lines.append(f"{'total':<13}{sum(tot.values()):>8}" + "".join(f"{tot[k]:>22}"
                                                                  for k in kinds))
    return "\n".join(lines)


def format_divergences() -> str:
    out = ["| id | where | NumPy | standard | hipfer / the fuzzer |", "|---|---|---|---|---|"]
    for row in DIVERGENCES:
        out.append("| " + " | ".join(row) + " |")
    return "\n".join(out)


def _worker(args):
    seed, start, n, device, only, fn, per_fn = args
    table, findings, seen = run(n, seed, device, only, fn, start, per_fn=per_fn)
    return table, [(o.__dict__, s) for o, s in findings], seen


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--device", default=None, help="cpu or gpu (default: hipfer's default)")
    ap.add_argument("--only", default=None, help="families, comma-separated: "
                    + ", ".join(FAMILIES))
    ap.add_argument("--fn", default=None, help="only functions matching this regex")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--per-fn", type=int, default=3, help="findings kept per function")
    ap.add_argument("--findings", default="fuzz_findings.md")
    ap.add_argument("--replay", type=int, default=None, help="run and show one case")
    ap.add_argument("--divergences", action="store_true")
    a = ap.parse_args(argv)
    if a.divergences:
        print(format_divergences())
        return 0
    only = set(a.only.split(",")) if a.only else None
    if only and only - set(FAMILIES):
        ap.error(f"unknown families: {sorted(only - set(FAMILIES))}")
    if a.replay is not None:
        case = make_case(a.seed, a.replay, only)
        dev = hf.as_device(a.device) if a.device else hf.get_default_device()
        with hf.default_device(dev):
            res, detail = run_case(case, dev, a.replay)
        print(snippet(case, dev))
        print(f"\n{res.family} {res.name}: {res.kind} {res.why}")
        for side in ("H", "N", "S"):
            s = detail.get(side)
            if s is not None:
                print(f"{side}: " + (_short(_normalize(s.value, side)) if s.ok else
                                     f"{type(s.exc).__name__}: {s.exc}"))
        return 0
    t0 = time.time()
    if a.jobs > 1:
        import multiprocessing as mp
        chunk = 500
        jobs = [(a.seed, s, min(chunk, a.start + a.cases - s), a.device, only, a.fn,
                 a.per_fn) for s in range(a.start, a.start + a.cases, chunk)]
        table, findings, seen = {}, [], {}
        with mp.get_context("fork").Pool(a.jobs) as pool:
            for k, (t, f, sn) in enumerate(pool.imap(_worker, jobs)):
                for fam, row in t.items():
                    dst = table.setdefault(fam, {})
                    for kind, c in row.items():
                        dst[kind] = dst.get(kind, 0) + c
                for od, s in f:
                    key = (od["name"], od["kind"])
                    if sum(1 for o, _ in findings if (o.name, o.kind) == key) < a.per_fn:
                        findings.append((Outcome(**od), s))
                for key, c in sn.items():
                    seen[key] = seen.get(key, 0) + c
                if (k + 1) % 20 == 0:
                    print(f"  {(k + 1) * chunk} cases, {time.time() - t0:.0f}s",
                          file=sys.stderr, flush=True)
    else:
        table, findings, seen = run(a.cases, a.seed, a.device, only, a.fn, a.start,
                                    progress=True, per_fn=a.per_fn)
    print(f"hipfer fuzz: seed {a.seed}, cases {a.start}..{a.start + a.cases - 1}, "
          f"{time.time() - t0:.0f}s")
    print(format_table(table))
    if seen:
        print("\nfindings by function and outcome:")
        for (name, kind), c in sorted(seen.items(), key=lambda kv: -kv[1]):
            print(f"  {c:>6}  {name:<28} {kind}")
    with open(a.findings, "w") as f:
        f.write(f"# hipfer fuzz findings (seed {a.seed})\n\n")
        for o, s in findings:
            f.write(f"## {o.name}: {o.kind} (case {o.index}, family {o.family})\n\n"
                    f"{o.why}\n\n```python\n{s}\n```\n"
                    f"replay: `python3 tools/fuzz.py --seed {a.seed} --replay {o.index}`\n\n")
    print(f"\n{len(findings)} findings written to {a.findings}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
