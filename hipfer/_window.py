"""NumPy's window functions (bartlett, blackman, hamming, hanning, kaiser): float64
tensors of length M made on ``device=`` (default: the default device) by NumPy's
formulas. M must be an integer (NumPy also takes a float M and uses it as is).
"""
from __future__ import annotations

import math
import operator

import numpy as np

from ._creation import arange, full, ones, zeros
from ._elementwise import abs as _abs, cos, exp, sqrt, where

__all__ = ["bartlett", "blackman", "hamming", "hanning", "kaiser"]


def _trivial(M, device, name: str):
    """(M as an int, the window when M <= 1 or None): empty below 1, [1.] at 1."""
    try:
        M = operator.index(M)
    except TypeError:
        raise TypeError(f"hipfer.{name}: M must be an integer, got {type(M).__name__}") from None
    if M < 1:
        return M, zeros((0,), dtype=np.float64, device=device)
    if M == 1:
        return M, ones((1,), dtype=np.float64, device=device)
    return M, None


def _symmetric(M: int, device):
    """NumPy's n = 1 - M, 3 - M, ..., M - 1 (float64); the formulas below keep NumPy's
    order of operations, so the results match it bit for bit on the CPU."""
    return arange(1 - M, M, 2, dtype=np.float64, device=device)


def bartlett(M, *, device=None):
    """The Bartlett (triangular) window of M points."""
    M, w = _trivial(M, device, "bartlett")
    if w is not None:
        return w
    n = _symmetric(M, device)
    return where(n <= 0, 1 + n / (M - 1), 1 - n / (M - 1))


def blackman(M, *, device=None):
    """The Blackman window of M points."""
    M, w = _trivial(M, device, "blackman")
    if w is not None:
        return w
    n = _symmetric(M, device)
    return 0.42 + 0.5 * cos(math.pi * n / (M - 1)) + 0.08 * cos(2.0 * math.pi * n / (M - 1))


def hamming(M, *, device=None):
    """The Hamming window of M points."""
    M, w = _trivial(M, device, "hamming")
    if w is not None:
        return w
    return 0.54 + 0.46 * cos(math.pi * _symmetric(M, device) / (M - 1))


def hanning(M, *, device=None):
    """The Hann window of M points."""
    M, w = _trivial(M, device, "hanning")
    if w is not None:
        return w
    return 0.5 + 0.5 * cos(math.pi * _symmetric(M, device) / (M - 1))


# Cephes' Chebyshev coefficients for I0 (the ones NumPy's i0 uses): exp(-x) I0(x) on
# [0, 8], and exp(-x) sqrt(x) I0(x) on (8, inf).
_I0A = (
    -4.41534164647933937950e-18, 3.33079451882223809783e-17, -2.43127984654795469359e-16,
    1.71539128555513303061e-15, -1.16853328779934516808e-14, 7.67618549860493561688e-14,
    -4.85644678311192946090e-13, 2.95505266312963983461e-12, -1.72682629144155570723e-11,
    9.67580903537323691224e-11, -5.18979560163526290666e-10, 2.65982372468238665035e-09,
    -1.30002500998624804212e-08, 6.04699502254191894932e-08, -2.67079385394061173391e-07,
    1.11738753912010371815e-06, -4.41673835845875056359e-06, 1.64484480707288970893e-05,
    -5.75419501008210370398e-05, 1.88502885095841655729e-04, -5.76375574538582365885e-04,
    1.63947561694133579842e-03, -4.32430999505057594430e-03, 1.05464603945949983183e-02,
    -2.37374148058994688156e-02, 4.93052842396707084878e-02, -9.49010970480476444210e-02,
    1.71620901522208775349e-01, -3.04682672343198398683e-01, 6.76795274409476084995e-01)
_I0B = (
    -7.23318048787475395456e-18, -4.83050448594418207126e-18, 4.46562142029675999901e-17,
    3.46122286769746109310e-17, -2.82762398051658348494e-16, -3.42548561967721913462e-16,
    1.77256013305652638360e-15, 3.81168066935262242075e-15, -9.55484669882830764870e-15,
    -4.15056934728722208663e-14, 1.54008621752140982691e-14, 3.85277838274214270114e-13,
    7.18012445138366623367e-13, -1.79417853150680611778e-12, -1.32158118404477131188e-11,
    -3.14991652796324136454e-11, 1.18891471078464383424e-11, 4.94060238822496958910e-10,
    3.39623202570838634515e-09, 2.26666899049817806459e-08, 2.04891858946906374183e-07,
    2.89137052083475648297e-06, 6.88975834691682398426e-05, 3.36911647825569408990e-03,
    8.04490411014108831608e-01)


def _chbevl(x, coefs):
    """Clenshaw's sum of a Chebyshev series at x (one multiply-add per coefficient)."""
    b0, b1, b2 = coefs[0], 0.0, 0.0
    for c in coefs[1:]:
        b2, b1 = b1, b0
        b0 = x * b1 - b2 + c
    return 0.5 * (b0 - b2)


def _i0(x):
    """I0 of a float64 tensor, as NumPy's i0 computes it (private: hipfer.i0 is another
    module's; this one serves kaiser)."""
    x = _abs(x)
    small = x <= 8.0
    xs = where(small, x, 8.0)   # each branch sees only its own domain
    xl = where(small, 16.0, x)
    return where(small, exp(xs) * _chbevl(xs / 2.0 - 2, _I0A),
                 exp(xl) * _chbevl(32.0 / xl - 2.0, _I0B) / sqrt(xl))


def kaiser(M, beta, *, device=None):
    """The Kaiser window of M points with shape parameter beta (a real number)."""
    M, w = _trivial(M, device, "kaiser")
    if w is not None:
        return w
    if isinstance(beta, complex):
        raise TypeError("hipfer.kaiser: beta must be real")
    beta = float(beta)
    alpha = (M - 1) / 2.0
    n = arange(0, M, dtype=np.float64, device=device)
    arg = beta * sqrt(1 - ((n - alpha) / alpha) ** 2.0)
    return _i0(arg) / _i0(full((), beta, dtype=np.float64, device=device))
