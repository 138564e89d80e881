"""The array API 2025.12 elementwise functions, end to end on every backend: the
specification's special cases (tables below), result dtypes, broadcasting, Python scalar
operands, views, 0-d and empty operands, and clip.

Where the standard leaves a choice (floor_divide at infinite operands), hipfer takes the
standard's preferred answer, not NumPy's; the rows say which.
"""
from __future__ import annotations

import inspect
import math

import numpy as np
import pytest

import hipfer as hf
from hipfer import _dtypes
from hipfer._elementwise import _BINARY, _SWAPPED, _UNARY

from test_tensor import host, rand

nan, inf = math.nan, math.inf
PI, PI_2, PI_4 = math.pi, math.pi / 2, math.pi / 4
REAL = [np.float32, np.float64]
COMPLEX = [np.complex64, np.complex128]


# ------------------------------------------------------------------ comparing
def _same_real(got, want, dt):
    """Equal within a few ulps, NaN where NaN, and the sign of every zero and infinity."""
    got = np.asarray(got, np.float64)
    want = np.asarray(want, np.float64)
    eps = np.finfo(dt).eps
    ok = np.where(np.isnan(want), np.isnan(got),
                  np.isclose(got, want, rtol=4 * eps, atol=0) | (got == want))
    exact = (want == 0) | np.isinf(want)
    ok &= ~exact | (np.signbit(got) == np.signbit(want))
    return ok


def assert_cases(got, want, dt, label):
    got, want = np.asarray(got), np.asarray(want)
    if np.dtype(dt).kind == "c":
        real = np.finfo(dt).dtype
        ok = _same_real(got.real, want.real, real) & _same_real(got.imag, want.imag, real)
    elif got.dtype.kind in "biu":
        ok = got == want
    else:
        ok = _same_real(got, want, dt)
    if not ok.all():
        bad = np.flatnonzero(~ok)
        pytest.fail(f"{label}[{np.dtype(dt)}]: case(s) {bad.tolist()} give {got[bad].tolist()}, "
                    f"the standard says {want[bad].tolist()}")


# --------------------------------------------------------- real special cases
# name -> [(x, expected)] for real floating-point x (the standard's bullets, in order)
UNARY_REAL = {
    "abs": [(nan, nan), (-0.0, 0.0), (0.0, 0.0), (-inf, inf), (inf, inf), (-2.5, 2.5)],
    "acos": [(nan, nan), (1.5, nan), (-1.5, nan), (1.0, 0.0)],
    "acosh": [(nan, nan), (0.5, nan), (1.0, 0.0), (inf, inf)],
    "asin": [(nan, nan), (1.5, nan), (-1.5, nan), (0.0, 0.0), (-0.0, -0.0)],
    "asinh": [(nan, nan), (0.0, 0.0), (-0.0, -0.0), (inf, inf), (-inf, -inf)],
    "atan": [(nan, nan), (0.0, 0.0), (-0.0, -0.0), (inf, PI_2), (-inf, -PI_2)],
    "atanh": [(nan, nan), (-1.5, nan), (1.5, nan), (-1.0, -inf), (1.0, inf), (0.0, 0.0), (-0.0, -0.0)],
    "ceil": [(nan, nan), (inf, inf), (-inf, -inf), (0.0, 0.0), (-0.0, -0.0), (-0.5, -0.0), (1.2, 2.0)],
    "cos": [(nan, nan), (0.0, 1.0), (-0.0, 1.0), (inf, nan), (-inf, nan)],
    "cosh": [(nan, nan), (0.0, 1.0), (-0.0, 1.0), (inf, inf), (-inf, inf)],
    "exp": [(nan, nan), (0.0, 1.0), (-0.0, 1.0), (inf, inf), (-inf, 0.0)],
    "expm1": [(nan, nan), (0.0, 0.0), (-0.0, -0.0), (inf, inf), (-inf, -1.0)],
    "floor": [(nan, nan), (inf, inf), (-inf, -inf), (0.0, 0.0), (-0.0, -0.0), (0.5, 0.0), (-1.2, -2.0)],
    "isfinite": [(nan, False), (inf, False), (-inf, False), (0.0, True), (-3.0, True)],
    "isinf": [(nan, False), (inf, True), (-inf, True), (1e30, False)],
    "isnan": [(nan, True), (inf, False), (0.0, False)],
    "log": [(nan, nan), (-1.0, nan), (0.0, -inf), (-0.0, -inf), (1.0, 0.0), (inf, inf)],
    "log1p": [(nan, nan), (-1.5, nan), (-1.0, -inf), (0.0, 0.0), (-0.0, -0.0), (inf, inf)],
    "log2": [(nan, nan), (-1.0, nan), (0.0, -inf), (-0.0, -inf), (1.0, 0.0), (inf, inf), (8.0, 3.0)],
    "log10": [(nan, nan), (-1.0, nan), (0.0, -inf), (-0.0, -inf), (1.0, 0.0), (inf, inf), (100.0, 2.0)],
    "negative": [(0.0, -0.0), (-0.0, 0.0), (inf, -inf), (nan, nan)],
    "positive": [(-0.0, -0.0), (inf, inf), (nan, nan)],
    "reciprocal": [(nan, nan), (0.0, inf), (-0.0, -inf), (inf, 0.0), (-inf, -0.0), (4.0, 0.25)],
    "round": [(nan, nan), (inf, inf), (-inf, -inf), (0.0, 0.0), (-0.0, -0.0),
              (0.5, 0.0), (1.5, 2.0), (2.5, 2.0), (-0.5, -0.0), (-2.5, -2.0), (2.6, 3.0)],
    "sign": [(nan, nan), (-0.0, 0.0), (0.0, 0.0), (-3.0, -1.0), (2.0, 1.0), (-inf, -1.0), (inf, 1.0)],
    "signbit": [(0.0, False), (-0.0, True), (inf, False), (-inf, True), (nan, False), (-nan, True),
                (2.0, False), (-2.0, True)],
    "sin": [(nan, nan), (0.0, 0.0), (-0.0, -0.0), (inf, nan), (-inf, nan)],
    "sinh": [(nan, nan), (0.0, 0.0), (-0.0, -0.0), (inf, inf), (-inf, -inf)],
    "sqrt": [(nan, nan), (-1.0, nan), (0.0, 0.0), (-0.0, -0.0), (inf, inf)],
    "square": [(nan, nan), (-0.0, 0.0), (-inf, inf), (-3.0, 9.0)],
    "tan": [(nan, nan), (0.0, 0.0), (-0.0, -0.0), (inf, nan), (-inf, nan)],
    "tanh": [(nan, nan), (0.0, 0.0), (-0.0, -0.0), (inf, 1.0), (-inf, -1.0)],
    "trunc": [(nan, nan), (inf, inf), (-inf, -inf), (0.0, 0.0), (-0.0, -0.0), (-0.5, -0.0), (-1.7, -1.0)],
}  # (logical_not takes bool only: see test_bool_unary)

# name -> [(x1, x2, expected)]
BINARY_REAL = {
    "add": [(nan, 1.0, nan), (1.0, nan, nan), (inf, -inf, nan), (-inf, inf, nan), (inf, inf, inf),
            (-inf, -inf, -inf), (inf, 2.0, inf), (-inf, 2.0, -inf), (-0.0, -0.0, -0.0),
            (-0.0, 0.0, 0.0), (0.0, -0.0, 0.0), (0.0, 0.0, 0.0), (3.0, -3.0, 0.0), (-0.0, 2.0, 2.0)],
    "atan2": [(nan, 1.0, nan), (1.0, nan, nan), (1.0, 0.0, PI_2), (1.0, -0.0, PI_2),
              (0.0, 1.0, 0.0), (0.0, 0.0, 0.0), (0.0, -0.0, PI), (0.0, -1.0, PI),
              (-0.0, 1.0, -0.0), (-0.0, 0.0, -0.0), (-0.0, -0.0, -PI), (-0.0, -1.0, -PI),
              (-1.0, 0.0, -PI_2), (-1.0, -0.0, -PI_2), (1.0, inf, 0.0), (1.0, -inf, PI),
              (-1.0, inf, -0.0), (-1.0, -inf, -PI), (inf, 1.0, PI_2), (-inf, 1.0, -PI_2),
              (inf, inf, PI_4), (inf, -inf, 3 * PI_4), (-inf, inf, -PI_4), (-inf, -inf, -3 * PI_4)],
    "copysign": [(nan, 1.0, nan), (3.0, -1.0, -3.0), (3.0, -0.0, -3.0), (-3.0, 0.0, 3.0),
                 (-3.0, 2.0, 3.0), (-inf, 1.0, inf), (0.0, -2.0, -0.0), (2.0, -nan, -2.0), (-2.0, nan, 2.0)],
    "divide": [(nan, 1.0, nan), (1.0, nan, nan), (inf, -inf, nan), (0.0, -0.0, nan), (0.0, 2.0, 0.0),
               (-0.0, 2.0, -0.0), (0.0, -2.0, -0.0), (-0.0, -2.0, 0.0), (2.0, 0.0, inf),
               (2.0, -0.0, -inf), (-2.0, 0.0, -inf), (-2.0, -0.0, inf), (inf, 2.0, inf),
               (inf, -2.0, -inf), (-inf, 2.0, -inf), (-inf, -2.0, inf), (2.0, inf, 0.0),
               (2.0, -inf, -0.0), (-2.0, inf, -0.0), (-2.0, -inf, 0.0)],
    "equal": [(nan, nan, False), (nan, 1.0, False), (0.0, -0.0, True), (inf, inf, True), (1.0, 2.0, False)],
    "not_equal": [(nan, nan, True), (0.0, -0.0, False), (inf, -inf, True), (1.0, 1.0, False)],
    "greater": [(nan, 1.0, False), (1.0, nan, False), (0.0, -0.0, False), (inf, 1.0, True)],
    "greater_equal": [(nan, nan, False), (0.0, -0.0, True), (-inf, 1.0, False)],
    "less": [(nan, 1.0, False), (-0.0, 0.0, False), (-inf, 1.0, True)],
    "less_equal": [(nan, nan, False), (-0.0, 0.0, True), (inf, 1.0, False)],
    "hypot": [(inf, nan, inf), (nan, -inf, inf), (nan, 1.0, nan), (1.0, nan, nan), (0.0, -0.0, 0.0),
              (-0.0, -0.0, 0.0), (3.0, -4.0, 5.0), (-inf, 2.0, inf)],
    "logaddexp": [(nan, 1.0, nan), (1.0, nan, nan), (inf, 2.0, inf), (2.0, inf, inf), (inf, inf, inf),
                  (-inf, -inf, -inf), (-inf, 0.0, 0.0), (0.0, 0.0, math.log(2.0))],
    "maximum": [(nan, 1.0, nan), (1.0, nan, nan), (nan, nan, nan), (-inf, 2.0, 2.0), (inf, 2.0, inf)],
    "minimum": [(nan, 1.0, nan), (1.0, nan, nan), (-inf, 2.0, -inf), (inf, 2.0, 2.0)],
    "multiply": [(nan, 1.0, nan), (1.0, nan, nan), (inf, 0.0, nan), (-0.0, inf, nan),
                 (inf, inf, inf), (inf, -inf, -inf), (-inf, -2.0, inf), (0.0, -2.0, -0.0),
                 (-0.0, -0.0, 0.0), (-0.0, 3.0, -0.0)],
    "nextafter": [(nan, 1.0, nan), (1.0, nan, nan), (-0.0, 0.0, 0.0), (0.0, -0.0, -0.0), (2.0, 2.0, 2.0)],
    "pow": [(nan, 0.0, 1.0), (nan, -0.0, 1.0), (2.0, 0.0, 1.0), (nan, 1.0, nan), (2.0, nan, nan),
            (2.0, inf, inf), (-2.0, inf, inf), (2.0, -inf, 0.0), (1.0, inf, 1.0), (-1.0, -inf, 1.0),
            (0.5, inf, 0.0), (0.5, -inf, inf), (-0.5, -inf, inf), (inf, 2.0, inf), (inf, -2.0, 0.0),
            (-inf, 3.0, -inf), (-inf, 2.0, inf), (-inf, 0.5, inf), (-inf, -3.0, -0.0),
            (-inf, -2.0, 0.0), (0.0, 2.0, 0.0), (0.0, -2.0, inf), (-0.0, 3.0, -0.0),
            (-0.0, 2.0, 0.0), (-0.0, -3.0, -inf), (-0.0, -2.0, inf), (-2.0, 0.5, nan), (-2.0, 3.0, -8.0)],
    "remainder": [(nan, 1.0, nan), (1.0, nan, nan), (inf, -inf, nan), (-inf, inf, nan),
                  (0.0, 0.0, nan), (-0.0, -0.0, nan), (0.0, 2.0, 0.0), (-0.0, 2.0, 0.0),
                  (0.0, -2.0, -0.0), (-0.0, -2.0, -0.0), (2.0, 0.0, nan), (2.0, -0.0, nan),
                  (-2.0, 0.0, nan), (inf, 2.0, nan), (-inf, -2.0, nan), (2.0, inf, 2.0),
                  (-2.0, inf, inf), (2.0, -inf, -inf), (-2.0, -inf, -2.0),
                  (5.0, 3.0, 2.0), (-5.0, 3.0, 1.0), (5.0, -3.0, -1.0), (-6.0, 3.0, 0.0), (6.0, -3.0, -0.0),
                  (inf, inf, nan), (-inf, -inf, nan), (0.0, -0.0, nan), (-0.0, 0.0, nan), (-2.0, -0.0, nan),
                  (inf, -2.0, nan), (-inf, 2.0, nan), (0.0, inf, 0.0), (-0.0, inf, 0.0),
                  (0.0, -inf, -0.0), (-0.0, -inf, -0.0)],
    "subtract": [(nan, 1.0, nan), (inf, inf, nan), (-inf, -inf, nan), (inf, -inf, inf),
                 (-0.0, 0.0, -0.0), (0.0, 0.0, 0.0), (-0.0, -0.0, 0.0), (2.0, 2.0, 0.0)],
    # floor(x1 / x2), as the standard prefers, at infinite operands too (NumPy pairs // with
    # %: NaN for inf // 2 and -1 for 2 // -inf)
    "floor_divide": [(nan, 1.0, nan), (1.0, nan, nan), (inf, inf, nan), (inf, -inf, nan),
                     (-inf, inf, nan), (-inf, -inf, nan),
                     (0.0, 0.0, nan), (0.0, -0.0, nan), (-0.0, 0.0, nan), (-0.0, -0.0, nan),
                     (0.0, 2.0, 0.0), (-0.0, 2.0, -0.0), (0.0, -2.0, -0.0), (-0.0, -2.0, 0.0),
                     (0.0, inf, 0.0), (-0.0, inf, -0.0), (0.0, -inf, -0.0), (-0.0, -inf, 0.0),
                     (2.0, 0.0, inf), (2.0, -0.0, -inf), (-2.0, 0.0, -inf), (-2.0, -0.0, inf),
                     (inf, 0.0, inf), (-inf, -0.0, inf),
                     (inf, 2.0, inf), (inf, -2.0, -inf), (-inf, 2.0, -inf), (-inf, -2.0, inf),
                     (2.0, inf, 0.0), (2.0, -inf, -0.0), (-2.0, inf, -0.0), (-2.0, -inf, 0.0),
                     (0.5, 2.0, 0.0), (-0.5, -2.0, 0.0), (0.5, -2.0, -1.0), (-0.5, 2.0, -1.0),
                     (7.0, 2.0, 3.0), (-7.0, 2.0, -4.0), (7.0, -2.0, -4.0), (-7.0, -2.0, 3.0)],
}


def _call(name, *xs):
    return host(getattr(hf, name)(*xs))


@pytest.mark.parametrize("dt", REAL, ids=str)
@pytest.mark.parametrize("name", sorted(UNARY_REAL))
def test_unary_special_cases(be, name, dt):
    xs, want = zip(*UNARY_REAL[name])
    got = _call(name, hf.asarray(np.array(xs, dt)))
    assert_cases(got, np.array(want), dt, name)


@pytest.mark.parametrize("dt", REAL, ids=str)
@pytest.mark.parametrize("name", sorted(BINARY_REAL))
def test_binary_special_cases(be, name, dt):
    a, b, want = zip(*BINARY_REAL[name])
    got = _call(name, hf.asarray(np.array(a, dt)), hf.asarray(np.array(b, dt)))
    assert_cases(got, np.array(want), dt, name)


# ------------------------------------------------------- complex special cases
# name -> [(z, expected)]; branch cuts: the side the sign of a zero picks
UNARY_COMPLEX = {
    "abs": [(complex(inf, nan), inf), (complex(nan, -inf), inf), (complex(nan, 1.0), nan),
            (complex(-0.0, 0.0), 0.0), (3 - 4j, 5.0)],
    "exp": [(complex(0.0, 0.0), 1 + 0j), (complex(-0.0, 0.0), 1 + 0j), (complex(1.0, inf), complex(nan, nan)),
            (complex(1.0, nan), complex(nan, nan)), (complex(inf, 0.0), complex(inf, 0.0)),
            (complex(-inf, 1.0), complex(0.0, 0.0)), (complex(inf, 1.0), complex(inf, inf)),
            (complex(nan, 0.0), complex(nan, 0.0)), (complex(nan, 1.0), complex(nan, nan))],
    "log": [(complex(-0.0, 0.0), complex(-inf, PI)), (complex(0.0, 0.0), complex(-inf, 0.0)),
            (complex(1.0, inf), complex(inf, PI_2)), (complex(1.0, nan), complex(nan, nan)),
            (complex(-inf, 1.0), complex(inf, PI)), (complex(inf, 1.0), complex(inf, 0.0)),
            (complex(-inf, inf), complex(inf, 3 * PI_4)), (complex(inf, inf), complex(inf, PI_4)),
            (complex(inf, nan), complex(inf, nan)), (complex(nan, inf), complex(inf, nan)),
            (complex(nan, nan), complex(nan, nan)),
            (complex(-1.0, 0.0), complex(0.0, PI)), (complex(-1.0, -0.0), complex(0.0, -PI))],
    "sqrt": [(complex(0.0, 0.0), complex(0.0, 0.0)), (complex(-0.0, 0.0), complex(0.0, 0.0)),
             (complex(1.0, inf), complex(inf, inf)), (complex(nan, inf), complex(inf, inf)),
             (complex(1.0, nan), complex(nan, nan)), (complex(-inf, 1.0), complex(0.0, inf)),
             (complex(inf, 1.0), complex(inf, 0.0)), (complex(inf, nan), complex(inf, nan)),
             (complex(nan, 1.0), complex(nan, nan)), (complex(nan, nan), complex(nan, nan)),
             (complex(-4.0, 0.0), complex(0.0, 2.0)), (complex(-4.0, -0.0), complex(0.0, -2.0))],
    "sign": [(complex(0.0, 0.0), 0j), (complex(-0.0, -0.0), 0j), (complex(nan, 1.0), complex(nan, nan)),
             (complex(1.0, nan), complex(nan, nan)), (complex(inf, nan), complex(nan, nan)),
             (3 + 4j, 0.6 + 0.8j), (complex(-2.0, 0.0), -1 + 0j)],
    "isnan": [(complex(nan, 0.0), True), (complex(0.0, nan), True), (complex(inf, 0.0), False)],
    "isinf": [(complex(inf, nan), True), (complex(nan, -inf), True), (complex(nan, 1.0), False),
              (complex(1.0, 2.0), False)],
    "isfinite": [(complex(1.0, 2.0), True), (complex(inf, 0.0), False), (complex(0.0, nan), False)],
    "round": [(complex(0.5, 1.5), complex(0.0, 2.0)), (complex(-2.5, 2.6), complex(-2.0, 3.0))],
    # branch cuts: continuous from the side the zero's sign names
    "asin": [(complex(2.0, 0.0), complex(PI_2, 1.3169578969248166)),
             (complex(2.0, -0.0), complex(PI_2, -1.3169578969248166)),
             (complex(0.0, 0.0), complex(0.0, 0.0)), (complex(-0.0, -0.0), complex(-0.0, -0.0))],
    "acos": [(complex(2.0, 0.0), complex(0.0, -1.3169578969248166)),
             (complex(2.0, -0.0), complex(0.0, 1.3169578969248166)), (complex(1.0, 0.0), complex(0.0, -0.0))],
    "atanh": [(complex(2.0, 0.0), complex(0.5493061443340549, PI_2)),
              (complex(2.0, -0.0), complex(0.5493061443340549, -PI_2)),
              (complex(1.0, 0.0), complex(inf, 0.0)), (complex(0.0, 0.0), complex(0.0, 0.0)),
              (complex(0.0, nan), complex(0.0, nan)), (complex(1.0, inf), complex(0.0, PI_2)),
              (complex(1.0, nan), complex(nan, nan)), (complex(inf, 1.0), complex(0.0, PI_2)),
              (complex(inf, inf), complex(0.0, PI_2)), (complex(inf, nan), complex(0.0, nan)),
              (complex(nan, 1.0), complex(nan, nan)), (complex(nan, nan), complex(nan, nan))],
    "acosh": [(complex(0.0, 0.0), complex(0.0, PI_2)), (complex(-0.0, -0.0), complex(0.0, -PI_2)),
              (complex(0.0, nan), complex(nan, PI_2)), (complex(1.0, inf), complex(inf, PI_2)),
              (complex(1.0, nan), complex(nan, nan)), (complex(inf, 1.0), complex(inf, 0.0)),
              (complex(-inf, 1.0), complex(inf, PI)), (complex(-inf, inf), complex(inf, 3 * PI_4)),
              (complex(inf, inf), complex(inf, PI_4)), (complex(-inf, nan), complex(inf, nan)),
              (complex(nan, 1.0), complex(nan, nan)), (complex(nan, inf), complex(inf, nan))],
    "asinh": [(complex(0.0, 2.0), complex(1.3169578969248166, PI_2)),
              (complex(-0.0, 2.0), complex(-1.3169578969248166, PI_2)), (complex(0.0, 0.0), 0j),
              (complex(1.0, inf), complex(inf, PI_2)), (complex(1.0, nan), complex(nan, nan)),
              (complex(inf, 1.0), complex(inf, 0.0)), (complex(inf, inf), complex(inf, PI_4)),
              (complex(inf, nan), complex(inf, nan)), (complex(nan, 0.0), complex(nan, 0.0)),
              (complex(nan, 1.0), complex(nan, nan))],
    "atan": [(complex(0.0, 2.0), complex(PI_2, 0.5493061443340549)),
             (complex(-0.0, 2.0), complex(-PI_2, 0.5493061443340549))],
    "tanh": [(complex(0.0, 0.0), 0j), (complex(1.0, inf), complex(nan, nan)), (complex(0.0, inf), complex(0.0, nan)),
             (complex(1.0, nan), complex(nan, nan)), (complex(0.0, nan), complex(0.0, nan)),
             (complex(inf, 1.0), complex(1.0, 0.0)), (complex(nan, 0.0), complex(nan, 0.0)),
             (complex(nan, 1.0), complex(nan, nan)), (complex(nan, nan), complex(nan, nan))],
    "cosh": [(complex(0.0, 0.0), 1 + 0j), (complex(1.0, inf), complex(nan, nan)), (complex(1.0, nan), complex(nan, nan)),
             (complex(inf, 0.0), complex(inf, 0.0)), (complex(inf, 1.0), complex(inf * math.cos(1.0), inf)),
             (complex(nan, 1.0), complex(nan, nan)), (complex(nan, nan), complex(nan, nan))],
    "sinh": [(complex(0.0, 0.0), 0j), (complex(1.0, inf), complex(nan, nan)), (complex(1.0, nan), complex(nan, nan)),
             (complex(inf, 0.0), complex(inf, 0.0)), (complex(inf, 1.0), complex(inf, inf)),
             (complex(nan, 0.0), complex(nan, 0.0)), (complex(nan, 1.0), complex(nan, nan))],
    "expm1": [(complex(0.0, 0.0), 0j), (complex(1.0, inf), complex(nan, nan)),
              (complex(1.0, nan), complex(nan, nan)), (complex(inf, 0.0), complex(inf, 0.0)),
              (complex(-inf, 0.0), complex(-1.0, 0.0)), (complex(-inf, 1.0), complex(-1.0, 0.0)),
              (complex(inf, 1.0), complex(inf, inf)), (complex(nan, 0.0), complex(nan, 0.0)),
              (complex(nan, 1.0), complex(nan, nan)), (complex(800.0, 0.0), complex(inf, 0.0)),
              # +-0 + 0j: +0 + 0j (NumPy: -0 + 0j at -0 + 0j); conj(expm1(z)) == expm1(conj(z))
              (complex(-0.0, 0.0), 0j), (complex(0.0, -0.0), complex(0.0, -0.0)),
              (complex(-0.0, -0.0), complex(0.0, -0.0)), (complex(nan, -0.0), complex(nan, -0.0)),
              (complex(inf, -0.0), complex(inf, -0.0)), (complex(1.0, -inf), complex(nan, nan)),
              (complex(-inf, 2.0), complex(-1.0, 0.0)), (complex(-inf, 4.0), complex(-1.0, -0.0)),
              (complex(inf, 2.0), complex(-inf, inf)), (complex(inf, 4.0), complex(-inf, -inf)),
              (complex(nan, nan), complex(nan, nan)), (complex(1e-20, 0.0), complex(1e-20, 0.0))],
    "log1p": [(complex(-1.0, 0.0), complex(-inf, 0.0)), (complex(0.0, 0.0), 0j), (complex(1.0, inf), complex(inf, PI_2)),
              (complex(1.0, nan), complex(nan, nan)), (complex(-inf, 1.0), complex(inf, PI)),
              (complex(inf, 1.0), complex(inf, 0.0)), (complex(-inf, inf), complex(inf, 3 * PI_4)),
              (complex(inf, inf), complex(inf, PI_4)), (complex(-inf, nan), complex(inf, nan)),
              (complex(nan, 1.0), complex(nan, nan)), (complex(nan, inf), complex(inf, nan))],
    "log2": [(complex(0.0, 0.0), complex(-inf, 0.0)), (complex(8.0, 0.0), complex(3.0, 0.0))],
    "log10": [(complex(0.0, 0.0), complex(-inf, 0.0)), (complex(100.0, 0.0), complex(2.0, 0.0))],
    "reciprocal": [(complex(2.0, 0.0), complex(0.5, -0.0))],
}

BINARY_COMPLEX = {
    "equal": [(complex(nan, 0.0), complex(nan, 0.0), False), (1 + 2j, 1 + 2j, True),
              (complex(0.0, -0.0), complex(-0.0, 0.0), True), (1 + 2j, 1 - 2j, False)],
    "not_equal": [(complex(nan, 0.0), complex(nan, 0.0), True), (1 + 2j, 1 + 2j, False)],
    "pow": [(complex(nan, nan), 0j, 1 + 0j), (2 + 3j, 0j, 1 + 0j), (1j, 2 + 0j, -1 + 0j)],
}


@pytest.mark.parametrize("dt", COMPLEX, ids=str)
@pytest.mark.parametrize("name", sorted(UNARY_COMPLEX))
def test_complex_unary_special_cases(be, name, dt):
    zs, want = zip(*UNARY_COMPLEX[name])
    got = _call(name, hf.asarray(np.array(zs, dt)))
    want = np.array(want)
    assert_cases(got, want, got.dtype if got.dtype.kind in "fc" else dt, name)


# expm1 where the standard leaves the sign of one part open: z -> (real part, imaginary part)
# with None for "either sign of this value"
EXPM1_OPEN_SIGN = [(complex(-inf, inf), (-1.0, None)), (complex(-inf, nan), (-1.0, None)),
                   (complex(inf, inf), (None, nan)), (complex(inf, nan), (None, nan))]


@pytest.mark.parametrize("dt", COMPLEX, ids=str)
def test_complex_expm1_open_signs(be, dt):
    zs, want = zip(*EXPM1_OPEN_SIGN)
    got = _call("expm1", hf.asarray(np.array(zs, dt)))
    for g, (re, im) in zip(got.tolist(), want):
        assert g.real == re if re is not None else math.isinf(g.real), (g, re, im)
        assert g.imag == 0 if im is None else math.isnan(g.imag), (g, re, im)


@pytest.mark.parametrize("dt", COMPLEX, ids=str)
@pytest.mark.parametrize("name", sorted(BINARY_COMPLEX))
def test_complex_binary_special_cases(be, name, dt):
    a, b, want = zip(*BINARY_COMPLEX[name])
    got = _call(name, hf.asarray(np.array(a, dt)), hf.asarray(np.array(b, dt)))
    assert_cases(got, np.array(want), dt, name)


# ------------------------------------------------------------ integers, bool
I8 = np.iinfo(np.int8)
# (name, dtype, x1, x2, expected): exact results; what the standard leaves to the library
# (x // 0, x % 0, shifts past the width, negative exponents) is NumPy's (or documented).
INT_CASES = [
    ("floor_divide", np.int8, [7, -7, 7, -7, 5, 0, I8.min], [2, 2, -2, -2, 0, -3, -1],
     [3, -4, -4, 3, 0, 0, I8.min]),
    ("floor_divide", np.uint8, [7, 255, 3], [2, 0, 255], [3, 0, 0]),
    ("remainder", np.int8, [7, -7, 7, -7, 5, I8.min, -6], [2, 2, -2, -2, 0, -1, 3], [1, 1, -1, -1, 0, 0, 0]),
    ("remainder", np.int64, [-(2 ** 63), 2 ** 63 - 2, -(2 ** 63)], [7, -7, 2 ** 63 - 1], [6, -1, 2 ** 63 - 2]),
    ("bitwise_left_shift", np.int8, [1, 1, -1, 1, 3, 1], [3, 7, 3, 8, 100, -1], [8, I8.min, -8, 0, 0, 0]),
    ("bitwise_left_shift", np.uint16, [1, 1, 65535], [15, 16, 1], [32768, 0, 65534]),
    ("bitwise_right_shift", np.int8, [-8, -8, 8, -1, I8.min, 64], [1, 100, 100, 7, 7, 6], [-4, -1, 0, -1, -1, 1]),
    ("bitwise_right_shift", np.uint8, [255, 255, 128], [8, 7, 100], [0, 1, 0]),
    ("bitwise_and", np.int16, [-1, 12, -8], [5, 10, 7], [5, 8, 0]),
    ("bitwise_or", np.int16, [-8, 12], [7, 3], [-1, 15]),
    ("bitwise_xor", np.uint8, [255, 12], [15, 10], [240, 6]),
    ("pow", np.int64, [2, 3, 0, 0, -1, -1, 1, 2, -2, 7], [62, 40, 0, 5, -3, -2, -9, -1, 3, 0],
     [2 ** 62, (3 ** 40 + 2 ** 63) % 2 ** 64 - 2 ** 63, 1, 0, -1, 1, 1, 0, -8, 1]),
    ("pow", np.uint8, [2, 3, 0], [8, 5, 0], [0, 243, 1]),
    ("pow", np.int8, [2, -2, 3], [7, 7, 5], [I8.min, I8.min, -13]),
    ("maximum", np.int8, [I8.min, 3], [I8.max, -3], [I8.max, 3]),
    ("add", np.int8, [I8.max], [1], [I8.min]),
]
INT_UNARY = [
    ("abs", np.int8, [I8.min, -3, 3], [I8.min, 3, 3]),
    ("negative", np.int8, [I8.min, 5], [I8.min, -5]),
    ("negative", np.uint8, [1, 0], [255, 0]),
    ("sign", np.int32, [-7, 0, 9], [-1, 0, 1]),
    ("sign", np.uint8, [0, 200], [0, 1]),
    ("bitwise_invert", np.int8, [0, -1, I8.max], [-1, 0, I8.min]),
    ("bitwise_invert", np.uint8, [0, 255], [255, 0]),
    ("ceil", np.int16, [-3, 7], [-3, 7]),
    ("floor", np.uint32, [3], [3]),
    ("trunc", np.int64, [-(2 ** 62) - 1], [-(2 ** 62) - 1]),
    ("round", np.int64, [2 ** 62 + 1], [2 ** 62 + 1]),
    ("positive", np.int8, [-3], [-3]),
    ("isnan", np.int32, [5], [False]),
    ("isinf", np.uint8, [255], [False]),
    ("isfinite", np.int64, [-1], [True]),
    ("square", np.int8, [16, -12], [0, -112]),
]
T, F = True, False
BOOL_CASES = [
    ("logical_and", [T, T, F, F], [T, F, T, F], [T, F, F, F]),
    ("logical_or", [T, T, F, F], [T, F, T, F], [T, T, T, F]),
    ("logical_xor", [T, T, F, F], [T, F, T, F], [F, T, T, F]),
    ("bitwise_and", [T, T, F], [T, F, F], [T, F, F]),
    ("bitwise_or", [T, F, F], [F, T, F], [T, T, F]),
    ("bitwise_xor", [T, T, F], [T, F, F], [F, T, F]),
    ("equal", [T, T], [T, F], [T, F]),
    ("add", [T, T, F], [T, F, F], [T, T, F]),
    ("multiply", [T, T, F], [T, F, F], [T, F, F]),
    ("maximum", [T, F], [F, F], [T, F]),
]


@pytest.mark.parametrize("case", INT_CASES, ids=lambda c: f"{c[0]}-{np.dtype(c[1])}")
def test_integer_binary(be, case):
    name, dt, a, b, want = case
    got = _call(name, hf.asarray(np.array(a, dt)), hf.asarray(np.array(b, dt)))
    assert got.dtype == np.dtype(dt)
    np.testing.assert_array_equal(got, np.array(want).astype(dt))


@pytest.mark.parametrize("case", INT_UNARY, ids=lambda c: f"{c[0]}-{np.dtype(c[1])}")
def test_integer_unary(be, case):
    name, dt, x, want = case
    got = _call(name, hf.asarray(np.array(x, dt)))
    want = np.array(want)
    assert got.dtype == (np.dtype(np.bool_) if want.dtype == np.bool_ else np.dtype(dt))
    np.testing.assert_array_equal(got, want.astype(got.dtype))


@pytest.mark.parametrize("case", BOOL_CASES, ids=lambda c: c[0])
def test_bool_binary(be, case):
    name, a, b, want = case
    got = _call(name, hf.asarray(np.array(a)), hf.asarray(np.array(b)))
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, want)


def test_bool_unary(be):
    x = hf.asarray(np.array([True, False]))
    np.testing.assert_array_equal(_call("logical_not", x), [False, True])
    np.testing.assert_array_equal(_call("bitwise_invert", x), [False, True])
    np.testing.assert_array_equal(_call("isnan", x), [False, False])
    np.testing.assert_array_equal(_call("isfinite", x), [True, True])


# --------------------------------------------------------------- result dtypes
DTYPES = [np.bool_, np.int8, np.uint8, np.int32, np.uint64, np.int64, np.float32, np.float64,
          np.complex64, np.complex128]


def _expected_dtype(row, dt):
    """The result dtype hipfer promises for input dtype dt, or None for a TypeError."""
    dt = np.dtype(dt)
    if dt.kind not in row.kinds:
        float_only = "i" not in row.kinds and "f" in row.kinds
        if row.family == "analytic" and row.arity == 1 and dt.kind in "biu":
            dt = _dtypes.default_float
        elif row.arity == 2 and float_only and dt.kind in "biu":
            dt = _dtypes.default_float
        else:
            return None
    if row.result == "bool":
        return np.dtype(np.bool_)
    if row.result == "real" and dt.kind == "c":
        return np.dtype(np.float32) if dt == np.complex64 else np.dtype(np.float64)
    return dt


@pytest.mark.parametrize("name", sorted(_UNARY))
def test_unary_result_dtypes(be, rng, name):
    row = _UNARY[name].row
    for dt in DTYPES:
        x = hf.asarray(rand(rng, (2, 3), dt))
        want = _expected_dtype(row, dt)
        if want is None:
            with pytest.raises(TypeError, match=name):
                getattr(hf, name)(x)
        else:
            assert getattr(hf, name)(x).dtype == want, (name, dt)


@pytest.mark.parametrize("name", sorted(set(_BINARY) | set(_SWAPPED)))
def test_binary_result_dtypes(be, rng, name):
    row = {**_BINARY, **_SWAPPED}[name].row
    for dt in DTYPES:
        x = hf.asarray(rand(rng, (2, 3), dt))
        want = _expected_dtype(row, dt)
        if want is None:
            with pytest.raises(TypeError, match=name):
                getattr(hf, name)(x, x)
        else:
            assert getattr(hf, name)(x, x).dtype == want, (name, dt)


def test_signatures_are_positional_only():
    for name in list(_UNARY) + list(_BINARY) + list(_SWAPPED) + ["clip"]:
        params = list(inspect.signature(getattr(hf, name)).parameters.values())
        n = 1 if name == "clip" else _UNARY.get(name, _BINARY.get(name, _SWAPPED.get(name))).row.arity
        assert all(p.kind is p.POSITIONAL_ONLY for p in params[:n]), name
    assert [p.name for p in inspect.signature(hf.clip).parameters.values()] == ["x", "min", "max"]
    with pytest.raises(TypeError):
        hf.add(x1=hf.asarray([1.0]), x2=hf.asarray([2.0]))


# ------------------------------------------------- broadcasting, scalars, views
_NP = {"abs": "absolute", "acos": "arccos", "acosh": "arccosh", "asin": "arcsin", "asinh": "arcsinh",
       "atan": "arctan", "atan2": "arctan2", "atanh": "arctanh", "pow": "power",
       "bitwise_invert": "invert", "bitwise_left_shift": "left_shift",
       "bitwise_right_shift": "right_shift"}
_OWN = {"rsqrt", "clamp_min", "clamp_max", "xlogy"}  # not NumPy's: covered by the prims tests


def _np_fn(name):
    return getattr(np, _NP.get(name, name))


def _operand_dtype(row):
    """A dtype the function takes: float64, else an integer, else bool."""
    return np.float64 if "f" in row.kinds else (np.int16 if "i" in row.kinds else np.bool_)


def _close(got, ref):
    assert got.dtype == ref.dtype, (got.dtype, ref.dtype)
    if ref.dtype.kind in "fc":
        np.testing.assert_allclose(got, ref, rtol=1e-13, atol=0, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, ref)


def _positive_exponents(name, b):
    return np.abs(b) % 9 if name == "pow" and b.dtype.kind in "iu" else b


@pytest.mark.parametrize("name", sorted((set(_BINARY) | set(_SWAPPED)) - _OWN))
def test_broadcasting_and_views(be, rng, name):
    """Non-contiguous (reversed, strided, transposed) operands broadcasting together."""
    row = {**_BINARY, **_SWAPPED}[name].row
    dt = _operand_dtype(row)
    an = rand(rng, (3, 1, 8), dt)
    bn = _positive_exponents(name, rand(rng, (4, 5), dt))
    got = _call(name, hf.asarray(an)[:, :, ::-2], hf.asarray(bn).T[::-1])
    with np.errstate(all="ignore"):
        ref = _np_fn(name)(an[:, :, ::-2], bn.T[::-1])
    assert got.shape == (3, 5, 4)
    _close(got, ref)


_SCALAR = {np.float64: -1.5, np.int16: 3, np.bool_: True}


@pytest.mark.parametrize("name", sorted((set(_BINARY) | set(_SWAPPED)) - _OWN))
def test_python_scalar_operands(be, rng, name):
    """A Python scalar on either side takes the tensor's dtype (it is 'weak')."""
    row = {**_BINARY, **_SWAPPED}[name].row
    dt = _operand_dtype(row)
    a = _positive_exponents(name, rand(rng, (2, 5), dt))
    s = _SCALAR[dt]
    ns = np.asarray(s, dt)
    with np.errstate(all="ignore"):
        _close(_call(name, hf.asarray(a), s), np.asarray(_np_fn(name)(a, ns)))
        if not (name == "pow" and dt is np.int16):  # a negative exponent, by then
            _close(_call(name, s, hf.asarray(a)), np.asarray(_np_fn(name)(ns, a)))


_VIEWS = [lambda v: v[::-1, ::2], lambda v: v.T, lambda v: v[1:2, :0], lambda v: v[2, 3]]


@pytest.mark.parametrize("name", sorted(set(_UNARY) - _OWN))
def test_unary_views_0d_and_empty(be, rng, name):
    row = _UNARY[name].row
    dt = np.complex128 if "c" in row.kinds else _operand_dtype(row)
    x = rand(rng, (4, 6), dt)
    t = hf.asarray(x)
    for view in _VIEWS:
        got = _call(name, view(t))
        with np.errstate(all="ignore"):
            ref = np.asarray(_np_fn(name)(view(x)))
        assert got.shape == ref.shape
        _close(got, ref)


# ------------------------------------------------------------------------ clip
def test_clip(be, rng):
    a = rand(rng, (4, 5), np.float64)
    a[0, 0], a[1, 1] = nan, -0.0
    x = hf.asarray(a)
    _close(host(hf.clip(x, -0.5, 0.5)), np.clip(a, -0.5, 0.5))
    _close(host(hf.clip(x, min=0)), np.clip(a, 0, None))
    _close(host(hf.clip(x, max=0.25)), np.clip(a, None, 0.25))
    none = hf.clip(x)
    _close(host(none), a)
    assert none is not x
    # array bounds broadcast with x (and may grow its shape); NaN bounds give NaN
    lo = np.array([-1.0, nan, 0.0, 0.2, -inf])
    hi = rand(rng, (3, 1, 1), np.float64) + 2
    got = host(hf.clip(x, hf.asarray(lo), hf.asarray(hi)))
    assert got.shape == (3, 4, 5)
    _close(got, np.minimum(np.maximum(a, lo), hi))
    assert np.isnan(got[:, :, 1]).all()
    # x's dtype wins; min > max gives max (NumPy's)
    f32 = hf.asarray(a.astype(np.float32))
    assert hf.clip(f32, hf.asarray(lo), 1.0).dtype == np.float32
    _close(host(hf.clip(hf.asarray(np.array([0.0, 5.0])), 3.0, 1.0)), np.array([1.0, 1.0]))


def test_clip_integers(be, rng):
    a = rand(rng, (6,), np.int8)
    x = hf.asarray(a)
    got = host(hf.clip(x, -10, 10))
    assert got.dtype == np.int8
    _close(got, np.clip(a, -10, 10).astype(np.int8))
    # bounds past the dtype's range clip as their exact values would
    _close(host(hf.clip(x, -1000, 1000)), a)
    _close(host(hf.clip(x, min=1000)), np.full(6, 127, np.int8))
    u = hf.asarray(np.array([0, 7, 200], np.uint8))
    _close(host(hf.clip(u, -5, hf.asarray(np.array([100], np.uint8)))), np.array([0, 7, 100], np.uint8))
    with pytest.raises(TypeError, match="float"):
        hf.clip(x, 0.5)


def test_clip_errors(be):
    with pytest.raises(TypeError, match="real-valued"):
        hf.clip(hf.asarray(np.array([1 + 1j])), 0.0)
    with pytest.raises(TypeError, match="Tensor"):
        hf.clip(np.array([1.0]), 0.0)
    with pytest.raises(TypeError, match="min"):
        hf.clip(hf.asarray(np.array([1.0])), "a")
    with pytest.raises(TypeError, match="max"):
        hf.clip(hf.asarray(np.array([1.0])), max=True)
    with pytest.raises(ValueError):
        hf.clip(hf.asarray(np.zeros(3)), hf.asarray(np.zeros(4)))


def test_operators(be, rng):
    """The Tensor operators reach these functions."""
    a = rand(rng, (3, 4), np.int16)
    x = hf.asarray(a)
    _close(host(x // 3), a // 3)
    _close(host(x % -3), a % -3)
    _close(host(7 // x[x != 0]), 7 // a[a != 0])
    _close(host(x << 2), a << 2)
    _close(host(x >> 1), a >> 1)
    _close(host(~x), ~a)
    _close(host(x | 5), a | 5)
    _close(host(x ^ x.T.T), a ^ a)
    _close(host(+x), a)
    f = rand(rng, (3, 4), np.float32)
    _close(host(hf.asarray(f) % 0.5), np.remainder(f, np.float32(0.5)))
