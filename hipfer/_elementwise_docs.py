"""The docstrings of the elementwise functions made from the op table (hipfer._elementwise).

``doc(name, row)`` writes one from the op's row: what it computes (``SUMMARY``, one
phrase per namespace name, with the standard's special cases worth knowing), the dtypes it
takes and the result's dtype (``row.kinds``, ``row.result``, ``row.family``), and the
broadcasting rule of a binary op. tools/gen_stubs.py writes the same text into
hipfer/_elementwise.pyi. A new op without a SUMMARY entry still gets a docstring
(from its name), so adding an op stays one table row.
"""
from __future__ import annotations

import textwrap

from .prims.optable import OpRow

#: what each function computes; x / x1, x2 are the operands
SUMMARY = {
    "negative": "-x.",
    "abs": "|x|; complex: the modulus (a real dtype). abs(-0.0) is +0.0, abs(+-inf) is +inf.",
    "reciprocal": "1 / x.",
    "square": "x * x.",
    "sqrt": "The principal square root. sqrt(x < 0) is NaN, sqrt(-0.0) is -0.0, "
            "sqrt(+inf) is +inf.",
    "rsqrt": "1 / sqrt(x) (beyond the standard). rsqrt(+0.0) is +inf, rsqrt(x < 0) is NaN.",
    "exp": "e ** x. exp(-inf) is +0, exp(+inf) is +inf.",
    "expm1": "exp(x) - 1, accurate near 0. expm1(-inf) is -1.",
    "log": "The natural logarithm. log(0) is -inf, log(x < 0) is NaN, log(+inf) is +inf.",
    "log1p": "log(1 + x), accurate near 0. log1p(-1) is -inf, log1p(x < -1) is NaN.",
    "log2": "The base-2 logarithm. log2(0) is -inf, log2(x < 0) is NaN.",
    "log10": "The base-10 logarithm. log10(0) is -inf, log10(x < 0) is NaN.",
    "sin": "The sine (x in radians). sin(+-inf) is NaN.",
    "cos": "The cosine (x in radians). cos(+-inf) is NaN.",
    "tan": "The tangent (x in radians). tan(+-inf) is NaN.",
    "tanh": "The hyperbolic tangent. tanh(+-inf) is +-1.",
    "asin": "The inverse sine (NumPy's arcsin), in [-pi/2, pi/2]. |x| > 1 is NaN.",
    "acos": "The inverse cosine (NumPy's arccos), in [0, pi]. |x| > 1 is NaN.",
    "atan": "The inverse tangent (NumPy's arctan), in [-pi/2, pi/2].",
    "sinh": "The hyperbolic sine.",
    "cosh": "The hyperbolic cosine.",
    "asinh": "The inverse hyperbolic sine (NumPy's arcsinh).",
    "acosh": "The inverse hyperbolic cosine (NumPy's arccosh). x < 1 is NaN.",
    "atanh": "The inverse hyperbolic tangent (NumPy's arctanh). atanh(+-1) is +-inf, "
             "|x| > 1 is NaN.",
    "positive": "+x (a copy).",
    "bitwise_invert": "~x (NumPy's invert); bool: logical not.",
    "logical_not": "not x.",
    "ceil": "The smallest integer-valued number >= x; integers: x unchanged.",
    "floor": "The largest integer-valued number <= x; integers: x unchanged.",
    "trunc": "x rounded toward zero; integers: x unchanged.",
    "round": "x rounded to the nearest integer-valued number, halves to even; complex: each "
             "part.",
    "sign": "-1, 0 or 1 by the sign of x (NaN for NaN); complex: x / |x| (0 for 0).",
    "signbit": "Whether the sign bit of x is set (True for -0.0 and negative NaNs).",
    "isnan": "Whether x is NaN (complex: either part).",
    "isinf": "Whether x is +inf or -inf (complex: either part).",
    "isfinite": "Whether x is neither infinite nor NaN (complex: both parts).",
    "cbrt": "The real cube root (beyond the standard; NumPy's cbrt).",
    "add": "x1 + x2.",
    "subtract": "x1 - x2.",
    "multiply": "x1 * x2.",
    "divide": "x1 / x2 (true division). x / 0 is +-inf, 0 / 0 is NaN.",
    "maximum": "The larger of x1 and x2; NaN when either is NaN.",
    "minimum": "The smaller of x1 and x2; NaN when either is NaN.",
    "clamp_min": "max(x1, x2) with NaN in x2 ignored (beyond the standard: clip's lower bound).",
    "clamp_max": "min(x1, x2) with NaN in x2 ignored (beyond the standard: clip's upper bound).",
    "greater": "x1 > x2.",
    "greater_equal": "x1 >= x2.",
    "less": "x1 < x2.",
    "less_equal": "x1 <= x2.",
    "equal": "x1 == x2 (NaN is unequal to everything).",
    "not_equal": "x1 != x2 (NaN is unequal to everything).",
    "pow": "x1 ** x2 (NumPy's power); integers: exact, wrapping on overflow. pow(x, 0) is 1 "
           "even for NaN x.",
    "atan2": "The angle of the point (x2, x1) (NumPy's arctan2), in [-pi, pi], with the "
             "standard's signed-zero cases.",
    "hypot": "sqrt(x1**2 + x2**2) without overflow; hypot(+-inf, NaN) is +inf.",
    "xlogy": "x1 * log(x2), 0 where x1 == 0 (beyond the standard; SciPy's xlogy).",
    "bitwise_and": "x1 & x2.",
    "bitwise_or": "x1 | x2.",
    "bitwise_xor": "x1 ^ x2.",
    "bitwise_left_shift": "x1 << x2; a shift >= the bit width gives 0. Negative x2: an error "
                          "in the standard, undefined here.",
    "bitwise_right_shift": "x1 >> x2 (arithmetic for signed x1); a shift >= the bit width "
                           "gives 0 or -1.",
    "logical_and": "x1 and x2.",
    "logical_or": "x1 or x2.",
    "logical_xor": "x1 != x2 for bools.",
    "floor_divide": "floor(x1 / x2). Integers: x // 0 is 0 (NumPy's).",
    "remainder": "x1 - floor_divide(x1, x2) * x2, with the sign of x2 (NumPy's mod); "
                 "integers: x % 0 is 0.",
    "copysign": "|x1| with the sign of x2.",
    "nextafter": "The next float after x1 toward x2.",
    "logaddexp": "log(exp(x1) + exp(x2)) without overflow.",
    # NumPy's names (hipfer._elementwise.NUMPY_UNARY, NUMPY_BINARY)
    "absolute": "|x| (NumPy's name of abs); bool: x itself.",
    "arccos": "The inverse cosine (NumPy's name of acos), in [0, pi]. |x| > 1 is NaN.",
    "arccosh": "The inverse hyperbolic cosine (NumPy's name of acosh). x < 1 is NaN.",
    "arcsin": "The inverse sine (NumPy's name of asin), in [-pi/2, pi/2]. |x| > 1 is NaN.",
    "arcsinh": "The inverse hyperbolic sine (NumPy's name of asinh).",
    "arctan": "The inverse tangent (NumPy's name of atan), in [-pi/2, pi/2].",
    "arctanh": "The inverse hyperbolic tangent (NumPy's name of atanh). |x| > 1 is NaN.",
    "arctan2": "The angle of the point (x2, x1) (NumPy's name of atan2), in [-pi, pi].",
    "power": "x1 ** x2 (NumPy's name of pow); integers: exact, wrapping on overflow (a "
             "negative integer exponent gives the truncated 1 / x1**-x2 where NumPy raises).",
    "left_shift": "x1 << x2 (NumPy's name of bitwise_left_shift).",
    "right_shift": "x1 >> x2 (NumPy's name of bitwise_right_shift).",
    "mod": "x1 % x2 with the sign of x2 (NumPy's mod, remainder); integers: x % 0 is 0.",
    "fmod": "C's fmod: the remainder of x1 / x2 truncated, with the sign of x1; integers: "
            "x % 0 is 0.",
    "fmax": "The larger of x1 and x2; a NaN gives the other operand (NaN only where both "
            "are NaN).",
    "fmin": "The smaller of x1 and x2; a NaN gives the other operand (NaN only where both "
            "are NaN).",
    "fabs": "|x| for real x (complex is refused, as NumPy's fabs).",
    "exp2": "2 ** x.",
    "rint": "x rounded to the nearest integer-valued float, halves to even (integers become "
            "floats, as NumPy's rint).",
    "fix": "x rounded toward zero, keeping x's dtype (NumPy's fix).",
    "gcd": "The greatest common divisor of |x1| and |x2| (gcd(0, 0) is 0).",
    "lcm": "The least common multiple of |x1| and |x2| (0 where either is 0).",
    "heaviside": "The Heaviside step: 0 for x1 < 0, x2 at x1 == 0, 1 for x1 > 0, NaN for "
                 "NaN x1.",
    "spacing": "The distance from x to the next float of its dtype (away from zero; NumPy's "
               "float16 spacing goes toward +inf). +-inf and NaN give NaN.",
    "deg2rad": "x converted from degrees to radians.",
    "radians": "x converted from degrees to radians (the same function as deg2rad).",
    "rad2deg": "x converted from radians to degrees.",
    "degrees": "x converted from radians to degrees (the same function as rad2deg).",
    "logaddexp2": "log2(2**x1 + 2**x2) without overflow.",
}

_KINDS = {"b": "bool", "i": "signed integer", "u": "unsigned integer", "f": "real floating",
          "c": "complex floating"}


def _kinds(kinds: str) -> str:
    return ", ".join(_KINDS[k] for k in kinds)


def signature(name: str, row: OpRow) -> str:
    return f"{name}(x, /)" if row.arity == 1 else f"{name}(x1, x2, /)"


#: how a NumPy-named function takes bool and integer inputs it has no loop of (doc's numpy=)
NUMPY_RULES = {
    "float": " (as NumPy: bool and integer ones compute in the smallest float that holds "
             "them: float16 for bool and 8-bit integers, float32 for 16-bit ones, float64 "
             "for the rest)",
    "int8": " (bool ones as int8, as NumPy)",
    "copy": " (bool: a copy of x, as NumPy)",
    "": "",
}


def _dtype_rule(row: OpRow, kinds: str, numpy: str | None) -> str:
    takes = f"Takes {_kinds(kinds)} tensors"
    if numpy is not None:
        takes += NUMPY_RULES[numpy]
    elif "f" in kinds and "i" not in kinds and (row.arity == 2 or row.family == "analytic"):
        takes += " (bool and integer ones compute in the default float dtype)"
    operand = "x's dtype" if row.arity == 1 else "the operands' promoted dtype"
    result = {"same": operand, "real": f"the real dtype of {operand} (float64 for complex128)",
              "bool": "bool"}[row.result]
    return f"{takes}; the result has {result}."


def doc(name: str, row: OpRow, kinds: str | None = None, numpy: str | None = None) -> str:
    """The docstring of hipfer.<name>, the op of row; kinds: the dtype kinds the function
    takes when not the row's; numpy: a NumPy-named function's rule for the bool and
    integer inputs it has no loop of (a NUMPY_RULES key; hipfer._elementwise.NUMPY_UNARY)."""
    kinds = row.kinds if kinds is None else kinds
    what = SUMMARY.get(name, f"{name.replace('_', ' ').capitalize()} of the operands.")
    lines = [signature(name, row), "", f"Elementwise: {what}", ""]
    if row.arity == 1:
        lines.append("x: a Tensor. " + _dtype_rule(row, kinds, numpy) + " The result has x's shape.")
    else:
        lines.append("x1, x2: Tensors, or one of them a Python scalar (weak: it takes the "
                     "tensor's dtype where it fits). The shapes broadcast; the dtypes "
                     "promote as NumPy's do. " + _dtype_rule(row, kinds, numpy))
    swapped = (" with the operands swapped" if row.api not in (name, "") and numpy is None
               else "")
    lines += ["", f"The op table's row {row.name!r}{swapped} (hipfer.prims.optable): NumPy "
                  f"computes it on the CPU, hipfer's kernel hf::op_{row.name} on the GPU."]
    return "\n".join(textwrap.fill(p, 88) if p else p for p in lines)
