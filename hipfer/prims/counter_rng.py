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


# ---------------------------------------------------------------- parametric samplers
# Element i owns a private SplitMix64 stream seeded by bits(seed, offset + i) (draw j:
# uniform64(mix(s + j * golden))); the kernels (rng.cuh: rng_log_gamma, rng_poisson,
# rng_binomial) loop over it with early exits, these emulations compute every attempt for
# every element and keep the first accepted one: the same numbers.
TRIES = 16       # rejection attempts per element
TABLE = 48       # inversion steps for small means
SMALL = 10.0     # means below this: inversion

_STIRLING = (0.08333333333333333, -0.002777777777777778, 0.0007936507936507937,
             -0.0005952380952380953)
_HALF_LOG_2PI = 0.9189385332046728


def chain(seed: int, offset: int, n: int, m: int) -> np.ndarray:
    """(n, m) float64: the first m draws of each of n elements' private streams."""
    s = bits(seed, counters(offset, n))
    out = np.empty((n, m), np.float64)
    with np.errstate(over="ignore"):
        for j in range(m):
            s = s + GOLDEN
            out[:, j] = (mix(s) >> np.uint64(11)).astype(np.float64) * (2.0 ** -53)
    return out


def log_factorial(k: np.ndarray) -> np.ndarray:
    """log(k!) for float64 k >= 0 (the kernels' rng_log_factorial)."""
    z = k + 9.0
    r = 1.0 / z
    r2 = r * r
    series = r * (_STIRLING[0] + r2 * (_STIRLING[1] + r2 * (_STIRLING[2] + r2 * _STIRLING[3])))
    lg = (z - 0.5) * np.log(z) - z + _HALF_LOG_2PI + series
    for i in range(1, 9):
        lg = lg - np.log(k + float(i))
    return lg


def _first(ok: np.ndarray, values: np.ndarray, fallback: np.ndarray) -> np.ndarray:
    """Per row: values at the first True of ok (attempts on axis 1), else fallback."""
    idx = np.argmax(ok, axis=1)
    got = np.take_along_axis(values, idx[:, None], axis=1)[:, 0]
    return np.where(ok.any(axis=1), got, fallback)


def log_gamma(seed: int, offset: int, a: np.ndarray) -> np.ndarray:
    """log of standard gamma variates of shapes a (flat float64 >= 0): Marsaglia-Tsang,
    boosted by u^(1/a) for a < 1."""
    a = np.asarray(a, np.float64).ravel()
    n = a.size
    c = chain(seed, offset, n, 1 + 3 * TRIES)
    with np.errstate(all="ignore"):
        small = a < 1.0
        d = np.where(small, a + 1.0, a) - 1.0 / 3.0
        cc = 1.0 / np.sqrt(9.0 * d)
        u1, u2, u3 = c[:, 1::3], c[:, 2::3], c[:, 3::3]
        z = np.sqrt(-2.0 * np.log1p(-u1)) * np.cos(6.283185307179586 * u2)
        v = 1.0 + cc[:, None] * z
        v = v * v * v
        dd = d[:, None]
        ok = (v > 0.0) & (np.log1p(-u3) < 0.5 * z * z + dd - dd * v + dd * np.log(v))
        r = _first(ok, np.log(dd * v), np.log(d))
        boost = np.where(a == 0.0, -np.inf, np.log1p(-c[:, 0]) / a)
        return np.where(small, r + boost, r)


def poisson(seed: int, offset: int, lam: np.ndarray) -> np.ndarray:
    """Poisson counts (float64) of means lam (flat float64 >= 0)."""
    lam = np.asarray(lam, np.float64).ravel()
    n = lam.size
    c = chain(seed, offset, n, 2 * TRIES)
    with np.errstate(all="ignore"):
        # inversion: the kernel's while loop, as a count of the steps it takes
        u, p = c[:, 0], np.exp(-lam)
        cdf, x_small, k = p, np.zeros(n), 0.0
        for _ in range(TABLE - 1):
            go = u >= cdf
            x_small = x_small + go
            k += 1.0
            p = p * (lam / k)
            cdf = cdf + p
        # PTRS
        slam, loglam = np.sqrt(lam), np.log(lam)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        invalpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2.0)
        uu, vv = c[:, 0::2] - 0.5, c[:, 1::2]
        us = np.maximum(0.5 - np.abs(uu), 1e-300)
        lam2, b2, a2 = lam[:, None], b[:, None], a[:, None]
        kk = np.floor((2.0 * a2 / us + b2) * uu + lam2 + 0.43)
        quick = (us >= 0.07) & (vv <= vr[:, None])
        skip = (kk < 0.0) | ((us < 0.013) & (vv > us))
        slow = (np.log(np.maximum(vv, 1e-300)) + np.log(invalpha)[:, None]
                - np.log(a2 / (us * us) + b2)
                <= -lam2 + kk * loglam[:, None] - log_factorial(np.maximum(kk, 0.0)))
        x_large = _first(quick | (~skip & slow), np.maximum(kk, 0.0), np.floor(lam))
        return np.where(lam < SMALL, x_small, x_large)


def binomial(seed: int, offset: int, n_: np.ndarray, p0: np.ndarray) -> np.ndarray:
    """Binomial counts (float64) for flat float64 n >= 0 and p in [0, 1]."""
    nf = np.asarray(n_, np.float64).ravel()
    p0 = np.asarray(p0, np.float64).ravel()
    n = nf.size
    c = chain(seed, offset, n, 2 * TRIES)
    with np.errstate(all="ignore"):
        flip = p0 > 0.5
        p = np.where(flip, 1.0 - p0, p0)
        q = 1.0 - p
        # inversion
        r = p / q
        u, pr = c[:, 0], np.exp(nf * np.log1p(-p))
        cdf, x_small, k = pr, np.zeros(n), 0.0
        top = np.minimum(nf, float(TABLE - 1))
        for _ in range(TABLE - 1):
            go = (u >= cdf) & (k < top)
            x_small = x_small + go
            k += 1.0
            pr = pr * (r * (nf - k + 1.0) / k)
            cdf = cdf + pr
        # BTRS
        spq = np.sqrt(nf * p * q)
        b = 1.15 + 2.53 * spq
        a = -0.0873 + 0.0248 * b + 0.01 * p
        cc = nf * p + 0.5
        vr = 0.92 - 4.2 / b
        alpha = (2.83 + 5.1 / b) * spq
        lpq = np.log(p / q)
        m = np.floor((nf + 1.0) * p)
        h = log_factorial(m) + log_factorial(nf - m)
        uu, vv = c[:, 0::2] - 0.5, c[:, 1::2]
        us = np.maximum(0.5 - np.abs(uu), 1e-300)
        n2, a2, b2, m2 = nf[:, None], a[:, None], b[:, None], m[:, None]
        kk = np.floor((2.0 * a2 / us + b2) * uu + cc[:, None])
        inside = (kk >= 0.0) & (kk <= n2)
        kc = np.clip(kk, 0.0, n2)
        quick = (us >= 0.07) & (vv <= vr[:, None])
        lv = np.log(np.maximum(vv, 1e-300) * alpha[:, None] / (a2 / (us * us) + b2))
        slow = lv <= (h[:, None] - log_factorial(kc) - log_factorial(n2 - kc)
                      + (kc - m2) * lpq[:, None])
        x_large = _first(inside & (quick | slow), kc, m)
        x = np.where(nf * p < SMALL, x_small, x_large)
        return np.where(flip, nf - x, x)
