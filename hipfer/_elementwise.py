"""Elementwise functions of the namespace, built from the op table.

Each public function is one row of ``prims.optable`` (``UnaryOp`` / ``BinaryOp``) under
the row's ``api`` name, plus ``less`` / ``less_equal`` (``greater`` with the operands
swapped) and the functions written here (conj, real, imag, where, clip). The operands
are promoted to one dtype (NumPy's rules for now; Python scalars are "weak"), cast
where needed with PointwiseCast, and run as the op's family descriptor. The NumPy
backend's compiled warm path is put in front of these functions (and the operators)
when hipfer is imported (hipfer._warmpath.install), not here.
"""
from __future__ import annotations

import math

import numpy as np

from . import _dtypes, _elementwise_docs as _docs, _ops
from ._core import cast, fill, materialize, operands, scalar_operand
from ._naming import public
from ._tensor import Tensor
from .prims import descriptors as d
from .prims.optable import BinaryOp, UnaryOp

_UNARY_DESC = {"scalar": d.ScalarUnary, "analytic": d.AnalyticUnary}
_BINARY_DESC = {"scalar": d.ScalarBinary, "analytic": d.AnalyticBinary,
                "metadata": d.MetadataBinary}


def _numpy_float(dt) -> np.dtype:
    """NumPy's float for a bool or integer input of a float function: the smallest that
    holds every value (float16 for bool and 8-bit integers, float32 for 16-bit ones,
    float64 for wider ones)."""
    return np.dtype({1: np.float16, 2: np.float32}.get(np.dtype(dt).itemsize, np.float64))


def _unary(op: UnaryOp, name: str, kinds: str | None = None, numpy: bool = False,
           copy_kinds: str = ""):
    """hipfer.<name>, the op of op's row on the dtype kinds ``kinds`` (default: the row's).
    numpy: NumPy's dtype rules (the NumPy-named functions): bool and integer inputs of a
    float function compute in _numpy_float; otherwise in the default float dtype (analytic
    ops only). copy_kinds: kinds the function returns a copy of x for (NumPy's
    absolute(bool), fix(bool))."""
    row = op.row
    site = _ops.Site(_UNARY_DESC[row.family](op), keep_layout=True, fn=name)
    kinds = row.kinds if kinds is None else kinds
    if numpy:
        to_float = _numpy_float if "f" in kinds else None
    else:
        to_float = (lambda dt: _dtypes.default_float) if row.family == "analytic" else None

    def fn(x, /):
        if not isinstance(x, Tensor):
            raise TypeError(f"{fn.__name__}() expects a hipfer Tensor, got {type(x).__name__}")
        kind = x._data.dtype.kind
        if kind not in kinds:
            if kind in copy_kinds:
                return materialize(x)
            if to_float is not None and kind in "biu":
                x = cast(x, to_float(x.dtype))
            if x.dtype.kind not in kinds:
                raise TypeError(f"{fn.__name__}() does not support dtype {x.dtype}")
        return Tensor(site.run1(x))
    return fn


#: NumPy-named binary ops without bool loops, where bool is not taken as int8 (np.gcd)
_NO_BOOL = frozenset({BinaryOp.GCD, BinaryOp.LCM})


_COMPARISONS = frozenset({BinaryOp.GREATER, BinaryOp.GREATER_EQUAL, BinaryOp.EQUAL,
                          BinaryOp.NOT_EQUAL})


def _beyond_range(op: BinaryOp, a, b):
    """NumPy 2's answer to comparing an integer tensor with a Python int outside its
    dtype's range (uint8_tensor >= -3): the same bool for every element, where any other
    op raises OverflowError. None when that is not the case. a, b in the kernel's order
    (op is a > b, a >= b, ==, !=)."""
    t, v = (a, b) if type(b) is int else (b, a)
    if type(t) is not Tensor or type(v) is not int or t.dtype.kind not in "iu":
        return None
    lo, hi = _dtypes._int_bounds(t.dtype)
    if lo <= v <= hi:
        return None
    if op in (BinaryOp.EQUAL, BinaryOp.NOT_EQUAL):
        value = op is BinaryOp.NOT_EQUAL
    else:  # tensor > int holds everywhere when the int is below the range
        value = (v < lo) if t is a else (v > hi)
    return fill(t.shape, value, np.dtype(np.bool_), t.device)


def _binary(op: BinaryOp, name: str, swap=False, numpy: bool = False):
    """hipfer.<name>, the op of op's row (swap: with the operands swapped). numpy: NumPy's
    dtype rules (the NumPy-named functions): bool operands of an integer op compute as
    int8, bool and integer operands of a float-only op in _numpy_float."""
    row = op.row
    site = _ops.Site(_BINARY_DESC[row.family](op), keep_layout=True, fn=name)
    kinds = row.kinds
    # the dtypes two tensors of one dtype run in as they are (no promotion, no cast)
    as_is = frozenset(t for t in _dtypes.ALL_DTYPES if t.kind in kinds)
    compares = op in _COMPARISONS

    def fn(x1, x2, /):
        a, b = (x2, x1) if swap else (x1, x2)
        ta, tb = type(a), type(b)
        if compares and (ta is int or tb is int):
            const = _beyond_range(op, a, b)
            if const is not None:
                return const
        if ta is Tensor:
            dt = a._data.dtype
            if tb is Tensor:  # warm path: two tensors of one dtype
                if b._data.dtype is dt and dt in as_is:
                    return Tensor(site.run2(a, b))
            elif (tb is float or tb is int or tb is complex or tb is bool) and dt in as_is:
                # a Python scalar that takes the tensor's dtype (weak): no promotion
                if _dtypes.scalar_type(dt, b) is dt:
                    return Tensor(site.run2(a, scalar_operand(b, dt, a)))
        elif tb is Tensor and (ta is float or ta is int or ta is complex or ta is bool):
            dt = b._data.dtype
            if dt in as_is and _dtypes.scalar_type(dt, a) is dt:
                return Tensor(site.run2(scalar_operand(a, dt, b), b))
        a, b, dt = operands(a, b, read_only=True)
        if numpy and dt.kind not in kinds:
            if dt.kind == "b" and "i" in kinds and op not in _NO_BOOL:
                dt = np.dtype(np.int8)  # NumPy's loops of bool power, mod, shifts, ...
            elif dt.kind in "biu" and "f" in kinds and "i" not in kinds:
                dt = _numpy_float(dt)
        if dt.kind not in kinds and dt.kind in "biu" and "f" in kinds and "i" not in kinds:
            dt = _dtypes.default_float  # true division / float-only ops of integers
        if dt.kind not in kinds:
            raise TypeError(f"{fn.__name__}() does not support dtype {dt}")
        return Tensor(site.run2(cast(a, dt), cast(b, dt)))
    return fn


# public name -> op: every row with a namespace name (prims.optable OpRow.api)
_UNARY = {op.row.api: op for op in UnaryOp if op.row.api}
_BINARY = {op.row.api: op for op in BinaryOp if op.row.api}
# a < b is b > a: the same kernel with the operands swapped
_SWAPPED = {"less": BinaryOp.GREATER, "less_equal": BinaryOp.GREATER_EQUAL}

__all__ = ["conj", "real", "imag", "where", "clip", "conjugate", "float_power", "divmod",
           "modf", "frexp", "ldexp", "sinc", "i0", "bitwise_count", "angle", "nan_to_num",
           "isposinf", "isneginf", "iscomplex", "isreal", "iscomplexobj", "isrealobj"]
for _name, _op in _UNARY.items():
    globals()[_name] = public(_name, _unary(_op, _name))
    __all__.append(_name)
for _name, _op in _BINARY.items():
    globals()[_name] = public(_name, _binary(_op, _name))
    __all__.append(_name)
for _name, _op in _SWAPPED.items():
    globals()[_name] = public(_name, _binary(_op, _name, swap=True))
    __all__.append(_name)
del _name, _op
for _name, _op in {**_UNARY, **_BINARY, **_SWAPPED}.items():  # docstrings from the op table
    globals()[_name].__doc__ = _docs.doc(_name, _op.row)
del _name, _op

# ------------------------------------------------------------------ NumPy's names
# NumPy's name -> (op, the dtype kinds it takes: None for its row's, the kinds it returns a
# copy of x for). Each is made from the op's row like the functions above, with NumPy's
# dtype rules for bool and integer inputs (_unary / _binary numpy=True: np.arccos(int8)
# is float16, np.power(bool, bool) int8), and the warm path covers it as it covers those.
_U, _B = UnaryOp, BinaryOp
NUMPY_UNARY = {
    "absolute": (_U.ABS, None, "b"), "fabs": (_U.ABS, "f", ""),
    "arccos": (_U.ACOS, None, ""), "arccosh": (_U.ACOSH, None, ""),
    "arcsin": (_U.ASIN, None, ""), "arcsinh": (_U.ASINH, None, ""),
    "arctan": (_U.ATAN, None, ""), "arctanh": (_U.ATANH, None, ""),
    "exp2": (_U.EXP2, None, ""), "rint": (_U.ROUND, "fc", ""), "fix": (_U.TRUNC, None, "b"),
    "spacing": (_U.SPACING, None, ""), "deg2rad": (_U.DEG2RAD, None, ""),
    "rad2deg": (_U.RAD2DEG, None, ""),
}
NUMPY_BINARY = {
    "arctan2": _B.ATAN2, "power": _B.POW, "left_shift": _B.BITWISE_LEFT_SHIFT,
    "right_shift": _B.BITWISE_RIGHT_SHIFT, "mod": _B.REMAINDER, "fmod": _B.FMOD,
    "fmax": _B.FMAX, "fmin": _B.FMIN, "heaviside": _B.HEAVISIDE, "gcd": _B.GCD,
    "lcm": _B.LCM, "logaddexp2": _B.LOGADDEXP2,
}
#: NumPy's names that are the same function as another hipfer function (same semantics)
NUMPY_SAME = {"true_divide": "divide", "bitwise_not": "bitwise_invert",
              "invert": "bitwise_invert", "radians": "deg2rad", "degrees": "rad2deg"}



def _numpy_rule(kinds: str, copy_kinds: str = "", bool_as_int8: bool = True) -> str:
    """Which of _docs.NUMPY_RULES _unary / _binary (numpy=True) apply to kinds."""
    if "b" in copy_kinds:
        return "copy"
    if "b" in kinds:
        return ""
    if "i" in kinds:
        return "int8" if bool_as_int8 else ""
    return "float" if "f" in kinds else ""


for _name, (_op, _kinds, _copy) in NUMPY_UNARY.items():
    globals()[_name] = public(_name, _unary(_op, _name, _kinds, numpy=True, copy_kinds=_copy))
    globals()[_name].__doc__ = _docs.doc(_name, _op.row, _kinds, _numpy_rule(
        _op.row.kinds if _kinds is None else _kinds, _copy, bool_as_int8=False))
for _name, _op in NUMPY_BINARY.items():
    globals()[_name] = public(_name, _binary(_op, _name, numpy=True))
    globals()[_name].__doc__ = _docs.doc(_name, _op.row, numpy=_numpy_rule(
        _op.row.kinds, bool_as_int8=_op not in _NO_BOOL))
for _name, _same in NUMPY_SAME.items():
    globals()[_name] = globals()[_same]
__all__ += [*NUMPY_UNARY, *NUMPY_BINARY, *NUMPY_SAME]
del _name, _op, _kinds, _copy, _same

# the steps of the NumPy functions written below (not public)
_sinc = _unary(_U.SINC, "sinc", numpy=True)
_i0 = _unary(_U.I0, "i0", numpy=True)
_frexp_mantissa = _unary(_U.FREXP_MANTISSA, "frexp", numpy=True)
_frexp_exponent = _unary(_U.FREXP_EXPONENT, "frexp", numpy=True)
_bitwise_count = _unary(_U.BITWISE_COUNT, "bitwise_count")
_ldexp = _binary(_B.LDEXP, "ldexp", numpy=True)
_floor_divide = _binary(_B.DIVMOD_QUOTIENT, "divmod", numpy=True)
_remainder = _binary(_B.REMAINDER, "divmod", numpy=True)


# ------------------------------------------------------------- conjugation family
def conj(x: Tensor, /) -> Tensor:
    """Complex conjugate in O(1) (flips the lazy flag; nothing is copied)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"conj() expects a hipfer Tensor, got {type(x).__name__}")
    return x.conj()


def real(x: Tensor, /) -> Tensor:
    """Real part: a view for complex tensors (the flag does not change it)."""
    if x.dtype.kind != "c":
        return x
    return Tensor(x._data.real)


def imag(x: Tensor, /) -> Tensor:
    """Imaginary part: a view, negated (one pass) when x reads conjugated; zeros for real x."""
    if x.dtype.kind != "c":
        return fill(x.shape, 0, x.dtype, x.device)
    im = Tensor(x._data.imag)
    return negative(im) if x._conj else im  # noqa: F821 - made from the op table above


def where(condition: Tensor, x1, x2, /) -> Tensor:
    """x1 where condition is True, else x2, elementwise.

    condition: a bool Tensor. x1, x2: Tensors or Python scalars (weak). The three shapes
    broadcast; the result has the promoted dtype of x1 and x2 (the array API's rules).
    """
    if not isinstance(condition, Tensor) or condition.dtype != np.bool_:
        raise TypeError("where() needs a bool Tensor condition")
    a, b, dt = operands(x1, x2, read_only=True)
    desc = d.MetadataWhere() if dt.kind in "biu" else d.MaskWhere()
    return Tensor(_ops.run(desc, [condition, cast(a, dt), cast(b, dt)], called="where"))


# ------------------------------------------------------------------------- clip
def _clip_bound(x: Tensor, bound, name: str) -> Tensor:
    """A clip bound as a Tensor of x's dtype (the standard fixes the result dtype to x's).
    A Python int bound of an integer x is first clamped to the dtype's range, so it
    clips as the exact value would; a float bound of an integer x is refused."""
    dt = x.dtype
    if isinstance(bound, Tensor):
        if bound.dtype.kind not in "biuf":
            raise TypeError(f"clip() {name} must be real-valued, got dtype {bound.dtype}")
        if dt.kind in "iu" and bound.dtype.kind == "f":
            # as for a float scalar: the cast would wrap (uint8 x, -1.5 -> 255)
            raise TypeError(f"clip() {name} has dtype {bound.dtype} but x has dtype {dt}")
        if dt.kind in "iu" and bound.dtype.kind in "iu" and bound.dtype != dt:
            # another integer dtype: clamp the bound to the range both dtypes hold first,
            # so that it clips as its exact value would instead of wrapping in the cast
            info, own = np.iinfo(dt), np.iinfo(bound.dtype)
            bound = clip(bound, max(int(info.min), int(own.min)), min(int(info.max),
                                                                      int(own.max)))
        return cast(bound, dt)
    if isinstance(bound, bool) or not isinstance(bound, (int, float, np.integer, np.floating)):
        raise TypeError(f"clip() {name} must be an int, a float, a Tensor or None, "
                        f"got {type(bound).__name__}")
    if dt.kind in "iu":
        if isinstance(bound, (float, np.floating)):
            raise TypeError(f"clip() {name}={bound!r} is a float but x has dtype {dt}")
        info = np.iinfo(dt)
        bound = min(max(int(bound), int(info.min)), int(info.max))
    return fill((), bound, dt, x.device)


def clip(x: Tensor, /, min=None, max=None) -> Tensor:
    """Clamp x to [min, max]: minimum(maximum(x, min), max) in x's dtype, broadcasting x
    against the bounds. NaN in x or in a bound gives NaN (the standard's special cases);
    min > max gives max (NumPy's)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"clip() expects a hipfer Tensor, got {type(x).__name__}")
    if x.dtype.kind not in "iuf":
        raise TypeError(f"clip() needs a real-valued x, got dtype {x.dtype}")
    out = x
    if min is not None:
        out = Tensor(_ops.run(d.ScalarBinary(BinaryOp.MAXIMUM), [out, _clip_bound(x, min, "min")],
                              called="clip"))
    if max is not None:
        out = Tensor(_ops.run(d.ScalarBinary(BinaryOp.MINIMUM), [out, _clip_bound(x, max, "max")],
                              called="clip"))
    return materialize(x) if out is x else out


# ------------------------------------------------------------ NumPy's compositions
def _tensor_arg(x, name: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}() expects a hipfer Tensor, got {type(x).__name__}")
    return x


def _real_float(x: Tensor, name: str) -> Tensor:
    """x as NumPy's real float ufuncs take it: bool and integers in _numpy_float, complex
    refused."""
    _tensor_arg(x, name)
    if x.dtype.kind == "c":
        raise TypeError(f"{name}() does not support complex dtype {x.dtype}")
    return cast(x, _numpy_float(x.dtype)) if x.dtype.kind in "biu" else x


def conjugate(x: Tensor, /) -> Tensor:
    """NumPy's conjugate: conj(x) (O(1) for complex x: the lazy flag); bool becomes int8,
    as NumPy's loops have it."""
    _tensor_arg(x, "conjugate")
    return cast(x, np.int8) if x.dtype.kind == "b" else conj(x)


def float_power(x1, x2, /) -> Tensor:
    """x1 ** x2 computed in float64, or complex128 when an operand is complex (NumPy's
    float_power). One of x1, x2 may be a Python scalar (it stays weak, so it reaches the
    float64 computation unrounded) or host data."""
    a, b, dt = operands(x1, x2, read_only=True)  # host data moved to the device once
    wide = np.dtype(np.complex128 if dt.kind == "c" else np.float64)
    a, b = (v if type(v) in (bool, int, float, complex) else cast(t, wide)
            for v, t in ((x1, a), (x2, b)))
    return power(a, b)  # noqa: F821 - made from the op table above


def divmod(x1, x2, /) -> tuple:
    """(x1 // x2, x1 % x2) as NumPy's divmod (floor division, the divisor's sign; integer
    x // 0 and x % 0 are 0 where NumPy warns; NumPy's quotient at infinities, where
    hipfer.floor_divide has the standard's). Two passes."""
    return _floor_divide(x1, x2), _remainder(x1, x2)


def modf(x: Tensor, /) -> tuple:
    """(fractional part, integral part) of x, both with x's sign (NumPy's modf):
    modf(+-inf) is (+-0, +-inf). Bool and integers compute in _numpy_float."""
    x = _real_float(x, "modf")
    whole = trunc(x)  # noqa: F821 - made from the op table above
    frac = where(isinf(x), 0, subtract(x, whole))  # noqa: F821
    return copysign(frac, x), whole  # noqa: F821


def frexp(x: Tensor, /) -> tuple:
    """(mantissa, exponent) with x == mantissa * 2**exponent, |mantissa| in [0.5, 1) and
    an int32 exponent (NumPy's frexp; 0, inf and NaN give (x, 0))."""
    x = _real_float(x, "frexp")
    return _frexp_mantissa(x), cast(_frexp_exponent(x), np.int32)


def ldexp(x1, x2, /) -> Tensor:
    """x1 * 2**x2 for an integer (or bool) x2 (NumPy's ldexp): the result has x1's float
    dtype (_numpy_float for integer x1; float64 for a Python scalar x1)."""
    if isinstance(x2, Tensor):
        if x2.dtype.kind not in "biu" or x2.dtype == np.uint64:  # NumPy's loops: int64 at most
            raise TypeError(f"ldexp() needs an integer x2 (not uint64), got dtype {x2.dtype}")
    elif isinstance(x2, bool) or not isinstance(x2, (int, np.integer)):
        raise TypeError(f"ldexp() needs an integer x2, got {type(x2).__name__}")
    if isinstance(x1, Tensor):
        x1 = _real_float(x1, "ldexp")
    elif isinstance(x1, (int, float)) and not isinstance(x1, bool) and isinstance(x2, Tensor):
        x1 = fill((), x1, np.float64, x2.device)
    else:
        raise TypeError(f"ldexp() needs a real Tensor or a Python number x1, got "
                        f"{type(x1).__name__}")
    dt = x1.dtype
    if isinstance(x2, Tensor):  # huge counts become +-inf in dt: the kernel clamps them
        return _ldexp(x1, cast(x2, dt))
    return _ldexp(x1, float(min(max(int(x2), -100000), 100000)))


def sinc(x: Tensor, /) -> Tensor:
    """sin(pi x) / (pi x), 1 at 0 (NumPy's sinc); bool and integers compute in float64
    (np.sinc is not a ufunc: its float promotion is float64's)."""
    _tensor_arg(x, "sinc")
    return _sinc(cast(x, np.float64) if x.dtype.kind in "biu" else x)


def i0(x: Tensor, /) -> Tensor:
    """The modified Bessel function of the first kind, order 0 (NumPy's i0, its Chebyshev
    series, summed in float64 and rounded once); bool and integers in float64, complex
    refused, as NumPy's."""
    _tensor_arg(x, "i0")
    if x.dtype.kind == "c":
        raise TypeError(f"i0() does not support complex dtype {x.dtype}")
    return _i0(cast(x, np.float64) if x.dtype.kind in "biu" else x)


def bitwise_count(x: Tensor, /) -> Tensor:
    """The number of 1 bits in |x|, as uint8 (NumPy's bitwise_count); bool and integers
    only."""
    _tensor_arg(x, "bitwise_count")
    if x.dtype.kind not in "biu":
        raise TypeError(f"bitwise_count() does not support dtype {x.dtype}")
    return cast(_bitwise_count(x), np.uint8)


def angle(z: Tensor, deg: bool = False) -> Tensor:
    """The argument of z, in radians (degrees with deg=True): atan2(imag, real) (NumPy's
    angle; real z gives 0 or pi; integers compute in _numpy_float, bool in float64)."""
    _tensor_arg(z, "angle")
    if z.dtype.kind == "c":
        a = atan2(imag(z), real(z))  # noqa: F821 - made from the op table above
    else:
        # NumPy's arctan2(0, z): the weak 0 makes bool z int64 (so float64), integers
        # their _numpy_float
        if z.dtype.kind in "biu":
            z = cast(z, np.float64 if z.dtype.kind == "b" else _numpy_float(z.dtype))
        a = arctan2(0, z)  # noqa: F821
    return multiply(a, 180 / np.pi) if deg else a  # noqa: F821


def _finite(x: Tensor, nan, posinf, neginf) -> Tensor:
    """Real float x with NaN, +inf, -inf replaced (nan_to_num's step on one part)."""
    info = np.finfo(x.dtype)
    hi = float(info.max) if posinf is None else float(posinf)
    lo = float(info.min) if neginf is None else float(neginf)
    out = where(isnan(x), float(nan), x)  # noqa: F821 - made from the op table above
    out = where(equal(x, math.inf), hi, out)  # noqa: F821
    return where(equal(x, -math.inf), lo, out)  # noqa: F821


def nan_to_num(x: Tensor, copy: bool = True, nan=0.0, posinf=None, neginf=None) -> Tensor:
    """x with NaN replaced by nan, +inf by posinf and -inf by neginf (default: the
    dtype's largest and smallest finite values), each part of complex x on its own
    (NumPy's nan_to_num). copy=False writes the result into x and returns x. Bool and
    integer x come back unchanged (a copy unless copy=False)."""
    _tensor_arg(x, "nan_to_num")
    if x.dtype.kind in "biu":
        return materialize(x) if copy else x
    if x.dtype.kind == "c":
        re = _finite(real(x), nan, posinf, neginf)
        im = _finite(imag(x), nan, posinf, neginf)
        out = _complex_of(re, im, x.dtype)
    else:
        out = _finite(x, nan, posinf, neginf)
    if copy:
        return out
    x[...] = out
    return x


def _complex_of(re: Tensor, im: Tensor, dt) -> Tensor:
    """re + im j of dtype dt, exact for every value (re + im * 1j is not: inf * 1j is
    nan + inf j)."""
    out = cast(re, dt)
    out.imag[...] = im
    return out


def isposinf(x: Tensor, /) -> Tensor:
    """Whether x is +inf (NumPy's isposinf; complex refused, as NumPy's)."""
    return _isinf_signed(x, math.inf, "isposinf")


def isneginf(x: Tensor, /) -> Tensor:
    """Whether x is -inf (NumPy's isneginf; complex refused, as NumPy's)."""
    return _isinf_signed(x, -math.inf, "isneginf")


def _isinf_signed(x: Tensor, value: float, name: str) -> Tensor:
    _tensor_arg(x, name)
    if x.dtype.kind == "c":
        raise TypeError(f"{name}() is not supported for complex values because it would be "
                        "ambiguous")
    if x.dtype.kind in "biu":
        return isinf(x)  # noqa: F821 - all False
    return equal(x, value)  # noqa: F821 - the weak scalar takes x's dtype: one pass


def iscomplex(x: Tensor, /) -> Tensor:
    """Whether each element has a nonzero imaginary part (NumPy's iscomplex: by value,
    all False for a real dtype)."""
    _tensor_arg(x, "iscomplex")
    if x.dtype.kind == "c":
        return not_equal(imag(x), 0)  # noqa: F821 - made from the op table above
    return fill(x.shape, False, np.bool_, x.device)


def isreal(x: Tensor, /) -> Tensor:
    """Whether each element has a zero imaginary part (NumPy's isreal: by value, all True
    for a real dtype)."""
    _tensor_arg(x, "isreal")
    if x.dtype.kind == "c":
        return equal(imag(x), 0)  # noqa: F821 - made from the op table above
    return fill(x.shape, True, np.bool_, x.device)


def _dtype_of(x) -> np.dtype:
    """x's dtype: a Tensor's or any array's, else NumPy's for the (host) value."""
    dt = getattr(x, "dtype", None)
    return np.dtype(dt) if dt is not None else np.asarray(x).dtype


def iscomplexobj(x) -> bool:
    """Whether x has a complex dtype (NumPy's iscomplexobj: by dtype, not by value)."""
    return _dtype_of(x).kind == "c"


def isrealobj(x) -> bool:
    """Whether x has no complex dtype (NumPy's isrealobj: by dtype, not by value)."""
    return _dtype_of(x).kind != "c"
