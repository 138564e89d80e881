"""Name expressions for ``rng.cuh`` (pure Python, no CuPy): the counter-based RNG of
hipfer.prims.counter_rng on the GPU."""
from __future__ import annotations

import numpy as np

from . import ctype, dtypes_of_kinds

FILE = "rng.cuh"
FLOAT_DTYPES = dtypes_of_kinds("f")
INT_DTYPES = dtypes_of_kinds("iu")

#: the low 64 bits: seeds, offsets and the integer range wrap modulo 2^64
MASK64 = (1 << 64) - 1


def uniform_expr(dt) -> str:
    return f"hf::rng_uniform_kernel<{ctype(dt)}>"


def normal_expr(dt) -> str:
    return f"hf::rng_normal_kernel<{ctype(dt)}>"


def integer_expr(dt) -> str:
    return f"hf::rng_integer_kernel<{ctype(dt)}>"


def log_gamma_expr() -> str:
    return f"hf::rng_log_gamma_kernel<{ctype(np.dtype(np.float64))}>"


def poisson_expr() -> str:
    return f"hf::rng_poisson_kernel<{ctype(np.dtype(np.int64))}>"


def binomial_expr() -> str:
    return f"hf::rng_binomial_kernel<{ctype(np.dtype(np.int64))}>"


def integer_range(low: int, high: int):
    """(low, span, thresh) as the kernel takes them: low and span mod 2^64 (span == 0
    meaning 2^64), thresh Lemire's rejection bound (2^64 - span) mod span (0: none)."""
    span = high - low
    thresh = 0 if span >= 1 << 64 else ((1 << 64) - span) % span
    return low & MASK64, span & MASK64, thresh


def instances():
    return [
        ("rng_uniform", FILE, [uniform_expr(t) for t in FLOAT_DTYPES]),
        ("rng_normal", FILE, [normal_expr(t) for t in FLOAT_DTYPES]),
        ("rng_integer", FILE, [integer_expr(t) for t in INT_DTYPES]),
        ("rng_samplers", FILE, [log_gamma_expr(), poisson_expr(), binomial_expr()]),
    ]
