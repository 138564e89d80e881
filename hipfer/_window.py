"""NumPy's window functions (bartlett, blackman, hamming, hanning, kaiser): float64
tensors of length M made on ``device=`` (default: the default device) by NumPy's
formulas. M must be an integer (NumPy also takes a float M and uses it as is).
"""
from __future__ import annotations

import math
import operator

import numpy as np

from ._creation import arange, full, ones, zeros
from ._elementwise import cos, i0, sqrt, where

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
    return i0(arg) / i0(full((), beta, dtype=np.float64, device=device))
