"""The counter-based random numbers, in NumPy: the reference for ``kernels/rng.cuh``.

Every number is a pure function of (seed, counter), so CPU and GPU produce the same
stream, and any slice of it can be made without the ones before:

    bits(seed, k)   = mix(seed + (k + 1) * 0x9E3779B97F4A7C15)         (mod 2^64)
    mix(z)          = SplitMix64's output function
    uniform32(s, k) = (bits >> 40) * 2^-24        uniform64(s, k) = (bits >> 11) * 2^-53
    uniform16(s, k) = (bits >> 53) * 2^-11        (exact in float16, so never 1.0)
    integer(s, k)   = low + mulhi64(b, span), span = high - low, by Lemire's unbiased
                      rejection: b starts as bits(s, k); while the low word of b * span
                      is below (2^64 - span) mod span, b = mix(b + golden) (at most
                      INT_TRIES draws, the last one kept: the bias is then < 2^-64)
    normal: outputs 2p and 2p+1 share counters (offset + 2p, offset + 2p + 1):
            r = sqrt(-2 log(1 - u1)), t = 2 pi u2 -> r cos t, r sin t   (u* uniform64,
            computed in float64, then rounded to the output dtype)
Uniform and integer streams are bit-identical across backends; normal agrees to the
last few ulps (log/cos/sin of each platform's math library).
"""
from __future__ import annotations

import numpy as np

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def mix(z: np.ndarray) -> np.ndarray:
    z = z.astype(np.uint64, copy=True)
    with np.errstate(over="ignore"):
        z ^= z >> np.uint64(30)
        z *= _M1
        z ^= z >> np.uint64(27)
        z *= _M2
        z ^= z >> np.uint64(31)
    return z


def bits(seed: int, counters: np.ndarray) -> np.ndarray:
    s = np.uint64(seed & 0xFFFFFFFFFFFFFFFF)
    with np.errstate(over="ignore"):
        return mix(s + (counters.astype(np.uint64) + np.uint64(1)) * GOLDEN)


def counters(offset: int, n: int) -> np.ndarray:
    return np.uint64(offset & 0xFFFFFFFFFFFFFFFF) + np.arange(n, dtype=np.uint64)


def uniform(seed: int, offset: int, n: int, dtype) -> np.ndarray:
    b = bits(seed, counters(offset, n))
    if np.dtype(dtype) == np.float16:
        return ((b >> np.uint64(53)).astype(np.float16) * np.float16(2.0 ** -11))
    if np.dtype(dtype) == np.float32:
        return ((b >> np.uint64(40)).astype(np.float32) * np.float32(2.0 ** -24))
    return (b >> np.uint64(11)).astype(np.float64) * (2.0 ** -53)


def mulhi64(a: np.ndarray, b: int) -> np.ndarray:
    """High 64 bits of the 128-bit product a * b (a uint64 array, 0 <= b < 2^64)."""
    m32 = np.uint64(0xFFFFFFFF)
    s32 = np.uint64(32)
    a = a.astype(np.uint64)
    b = np.uint64(b)
    a_lo, a_hi = a & m32, a >> s32
    b_lo, b_hi = b & m32, b >> s32
    with np.errstate(over="ignore"):
        lo_lo = a_lo * b_lo
        hi_lo = a_hi * b_lo
        lo_hi = a_lo * b_hi
        hi_hi = a_hi * b_hi
        cross = (lo_lo >> s32) + (hi_lo & m32) + lo_hi
        return hi_hi + (hi_lo >> s32) + (cross >> s32)


#: draws per integer before the last one is kept (rejection probability < 1/2 each)
INT_TRIES = 64


def integer_threshold(span: int) -> int:
    """Lemire's rejection bound (2^64 - span) mod span (0 for span = 2^64: no rejection)."""
    return 0 if span == 1 << 64 else ((1 << 64) - span) % span


def rehash(b: np.ndarray) -> np.ndarray:
    """The next draw of an element's private retry stream."""
    with np.errstate(over="ignore"):
        return mix(b + GOLDEN)


def integer(seed: int, offset: int, n: int, low: int, high: int, dtype) -> np.ndarray:
    span = high - low  # 1 .. 2^64
    b = bits(seed, counters(offset, n))
    if span == 1 << 64:
        r = b
    else:
        thresh = np.uint64(integer_threshold(span))
        sp = np.uint64(span)
        r = mulhi64(b, span)
        with np.errstate(over="ignore"):
            redo = np.flatnonzero(b * sp < thresh)
        for _ in range(INT_TRIES - 1):
            if not redo.size:
                break
            b[redo] = rehash(b[redo])
            r[redo] = mulhi64(b[redo], span)
            with np.errstate(over="ignore"):
                redo = redo[b[redo] * sp < thresh]
    with np.errstate(over="ignore"):
        return (r + np.uint64(low & 0xFFFFFFFFFFFFFFFF)).astype(dtype)


def normal(seed: int, offset: int, n: int, dtype) -> np.ndarray:
    npairs = (n + 1) // 2
    u = uniform(seed, offset, 2 * npairs, np.float64)
    u1, u2 = u[0::2], u[1::2]
    r = np.sqrt(-2.0 * np.log1p(-u1))
    t = 2.0 * np.pi * u2
    out = np.empty(2 * npairs, dtype=np.float64)
    out[0::2] = r * np.cos(t)
    out[1::2] = r * np.sin(t)
    return out[:n].astype(dtype)
