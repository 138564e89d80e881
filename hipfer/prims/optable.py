"""The elementwise op table: one row per op, shared by every backend.

A row names the op once: ``name`` is the NumPy-side reference (``numpy_impl`` in the
NumPy backend) and the HIP C++ functor ``hf::op_<name>`` in ``kernels/ops.cuh``;
``api`` is the namespace function built from the row (``hipfer.<api>``, the standard's
spelling: ``acosh`` for NumPy's ``arccosh``), or "" for an op the namespace reaches
another way (``conj``, ``real``, ``imag``). Adding an elementwise op is one row here plus
one device functor there (and, when NumPy has no function of that name, one line in
``backends/numpy/elementwise.py``): docs/architecture.md has the whole recipe.

Dtype kinds (NumPy's ``dtype.kind``): b bool, i signed int, u unsigned int,
f real float, c complex.

``result`` says how the output dtype follows from the (common) input dtype:
  same  -- the input dtype
  real  -- complex -> its real dtype, real -> unchanged (abs, real, imag)
  bool  -- bool (comparisons, isnan, signbit, ...)
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


@dataclass(frozen=True)
class OpRow:
    name: str      # NumPy name where it exists; C++ functor is hf::op_<name>
    arity: int
    kinds: str     # accepted input kinds
    result: str    # 'same' | 'real' | 'bool'
    family: str    # which prims family owns it: scalar | analytic | metadata | complex_real
    api: str       # the namespace function hipfer.<api> ("" for none of its own)


def _u(name, kinds, result="same", family="scalar", api=None):
    return OpRow(name, 1, kinds, result, family, name if api is None else api)


def _b(name, kinds, result="same", family="scalar", api=None):
    return OpRow(name, 2, kinds, result, family, name if api is None else api)


_NUM = "iufc"
_REAL = "iuf"
_FLT = "fc"


class UnaryOp(Enum):
    # ScalarPrims
    NEG = _u("negative", _NUM)
    CONJ = _u("conjugate", _NUM, api="")  # hipfer.conj: the lazy flag
    ABS = _u("absolute", _NUM, "real", api="abs")
    RECIPROCAL = _u("reciprocal", _FLT)
    REAL = _u("real", _NUM, "real", api="")  # hipfer.real: a view
    IMAG = _u("imag", _NUM, "real", api="")  # hipfer.imag: a view
    SQUARE = _u("square", _NUM)
    # AnalyticPrims
    SQRT = _u("sqrt", _FLT, family="analytic")
    RSQRT = _u("rsqrt", _FLT, family="analytic")
    EXP = _u("exp", _FLT, family="analytic")
    EXPM1 = _u("expm1", _FLT, family="analytic")
    LOG = _u("log", _FLT, family="analytic")
    LOG1P = _u("log1p", _FLT, family="analytic")
    SIN = _u("sin", _FLT, family="analytic")
    COS = _u("cos", _FLT, family="analytic")
    TAN = _u("tan", _FLT, family="analytic")
    TANH = _u("tanh", _FLT, family="analytic")
    ASIN = _u("arcsin", _FLT, family="analytic", api="asin")
    ACOS = _u("arccos", _FLT, family="analytic", api="acos")
    ATAN = _u("arctan", _FLT, family="analytic", api="atan")
    SINH = _u("sinh", _FLT, family="analytic")
    COSH = _u("cosh", _FLT, family="analytic")
    ASINH = _u("arcsinh", _FLT, family="analytic", api="asinh")
    ACOSH = _u("arccosh", _FLT, family="analytic", api="acosh")
    ATANH = _u("arctanh", _FLT, family="analytic", api="atanh")
    # the rest of the array API's elementwise functions (ScalarPrims unless noted)
    POSITIVE = _u("positive", _NUM)
    BITWISE_INVERT = _u("bitwise_invert", "biu")
    LOGICAL_NOT = _u("logical_not", "b")
    CEIL = _u("ceil", _REAL)
    FLOOR = _u("floor", _REAL)
    TRUNC = _u("trunc", _REAL)
    ROUND = _u("round", _NUM)          # half to even; complex: each part
    SIGN = _u("sign", _NUM)            # complex: x / |x|
    SIGNBIT = _u("signbit", "f", "bool")
    ISNAN = _u("isnan", "b" + _NUM, "bool")
    ISINF = _u("isinf", "b" + _NUM, "bool")
    ISFINITE = _u("isfinite", "b" + _NUM, "bool")
    LOG2 = _u("log2", _FLT, family="analytic")
    LOG10 = _u("log10", _FLT, family="analytic")
    # beyond the standard (NumPy's)
    CBRT = _u("cbrt", "f", family="analytic")  # real only, as NumPy's; integers as float64
    # NumPy's own (hipfer._elementwise.NUMPY_OPS makes hipfer.<numpy name> of them)
    EXP2 = _u("exp2", _FLT, family="analytic", api="")
    SINC = _u("sinc", _FLT, family="analytic", api="")        # sin(pi x) / (pi x), 1 at 0
    I0 = _u("i0", "f", family="analytic", api="")             # modified Bessel, order 0
    DEG2RAD = _u("deg2rad", "f", api="")
    RAD2DEG = _u("rad2deg", "f", api="")
    SPACING = _u("spacing", "f", api="")
    FREXP_MANTISSA = _u("frexp_mantissa", "f", api="")        # frexp's first output
    FREXP_EXPONENT = _u("frexp_exponent", "f", api="")        # its second, as a float
    BITWISE_COUNT = _u("bitwise_count", "biu", api="")        # set bits of |x|

    @property
    def row(self) -> OpRow:
        return self.value


class BinaryOp(Enum):
    # ScalarPrims
    ADD = _b("add", "b" + _NUM)
    SUB = _b("subtract", _NUM)
    MUL = _b("multiply", "b" + _NUM)
    DIV = _b("divide", _FLT)
    MAXIMUM = _b("maximum", "b" + _REAL)
    MINIMUM = _b("minimum", "b" + _REAL)
    CLAMP_MIN = _b("clamp_min", "b" + _REAL)
    CLAMP_MAX = _b("clamp_max", "b" + _REAL)
    GREATER = _b("greater", "b" + _REAL, "bool")
    GREATER_EQUAL = _b("greater_equal", "b" + _REAL, "bool")
    EQUAL = _b("equal", "b" + _NUM, "bool")
    NOT_EQUAL = _b("not_equal", "b" + _NUM, "bool")
    # AnalyticPrims
    POW = _b("power", "iu" + _FLT, family="analytic", api="pow")  # integers: exact, wrapping
    ATAN2 = _b("arctan2", "f", family="analytic", api="atan2")
    HYPOT = _b("hypot", "f", family="analytic")
    XLOGY = _b("xlogy", _FLT, family="analytic")
    # MetadataPrims only (integer / bool tensors; MetadataBinary also takes
    # EQUAL, NOT_EQUAL, ADD, SUB, MUL)
    BITWISE_AND = _b("bitwise_and", "biu", family="metadata")
    # the rest of the array API's elementwise functions (ScalarPrims unless noted)
    BITWISE_OR = _b("bitwise_or", "biu")
    BITWISE_XOR = _b("bitwise_xor", "biu")
    BITWISE_LEFT_SHIFT = _b("bitwise_left_shift", "iu")    # shift >= width: 0
    BITWISE_RIGHT_SHIFT = _b("bitwise_right_shift", "iu")  # shift >= width: 0 or -1
    LOGICAL_AND = _b("logical_and", "b")
    LOGICAL_OR = _b("logical_or", "b")
    LOGICAL_XOR = _b("logical_xor", "b")
    FLOOR_DIVIDE = _b("floor_divide", _REAL)  # NumPy's: integer x // 0 == 0
    REMAINDER = _b("remainder", _REAL)        # sign of the divisor; integer x % 0 == 0
    COPYSIGN = _b("copysign", "f")
    NEXTAFTER = _b("nextafter", "f")
    LOGADDEXP = _b("logaddexp", "f", family="analytic")
    # NumPy's own (hipfer._elementwise.NUMPY_OPS makes hipfer.<numpy name> of them)
    LOGADDEXP2 = _b("logaddexp2", "f", family="analytic", api="")
    FMOD = _b("fmod", _REAL, api="")            # sign of the dividend; integer x % 0 == 0
    FMAX = _b("fmax", "b" + _NUM, api="")       # NaN only where both are NaN
    FMIN = _b("fmin", "b" + _NUM, api="")
    HEAVISIDE = _b("heaviside", "f", api="")
    GCD = _b("gcd", "iu", api="")
    LCM = _b("lcm", "iu", api="")
    LDEXP = _b("ldexp", "f", api="")            # x2 holds integers (in x1's float dtype)
    DIVMOD_QUOTIENT = _b("divmod_quotient", _REAL, api="")  # NumPy's // (floor_divide:
    # the standard's at infinities), divmod's first output

    @property
    def row(self) -> OpRow:
        return self.value


class ReduceOp(Enum):
    """Reductions; ``kinds`` as in OpRow, ``identity`` is the empty-reduction value
    (None: an empty reduction is an error)."""
    SUM = ("sum", "b" + _NUM, 0)
    PROD = ("prod", "b" + _NUM, 1)
    MEAN = ("mean", _FLT, None)       # empty -> NaN (NumPy), handled by the backends
    MAX = ("max", "b" + _REAL, None)
    MIN = ("min", "b" + _REAL, None)
    VAR = ("var", _FLT, None)
    STD = ("std", _FLT, None)
    ALL = ("all", "b" + _NUM, True)
    ANY = ("any", "b" + _NUM, False)
    # NumPy's nan-functions, one pass: NaN elements are skipped (floating and complex
    # input; integers have no NaN and take the plain ones). nanmax / nanmin of an
    # all-NaN slice give NaN; nanmean / nanvar of a slice with too few non-NaN values too.
    NANSUM = ("nansum", _FLT, 0)
    NANPROD = ("nanprod", _FLT, 1)
    NANMEAN = ("nanmean", _FLT, None)
    NANMAX = ("nanmax", "f", None)
    NANMIN = ("nanmin", "f", None)
    NANVAR = ("nanvar", _FLT, None)
    NANSTD = ("nanstd", _FLT, None)

    @property
    def cname(self) -> str:
        return self.value[0]

    @property
    def kinds(self) -> str:
        return self.value[1]

    @property
    def identity(self):
        return self.value[2]
