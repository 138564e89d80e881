"""Counter-based RNG prims: exact values against a plain-Python SplitMix64 written here
(independent of hipfer.prims.counter_rng), offset slicing, reproducibility, strided
outputs and statistics."""
import math

import numpy as np
import pytest

from hipfer.prims import descriptors as d

from _util import FLOATS, StridedOut, assert_same, run_prim

M64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15


def splitmix_bits(seed: int, k: int) -> int:
    """SplitMix64's output function applied to seed + (k + 1) * golden (mod 2^64)."""
    z = (seed + (k + 1) * GOLDEN) & M64
    z ^= z >> 30
    z = (z * 0xBF58476D1CE4E5B9) & M64
    z ^= z >> 27
    z = (z * 0x94D049BB133111EB) & M64
    z ^= z >> 31
    return z


def py_uniform(seed, k, dt):
    """The top 11 / 24 / 53 bits (float16 / float32 / float64) scaled into [0, 1)."""
    b = splitmix_bits(seed & M64, (k & M64))
    bits = {np.float16: 11, np.float32: 24}.get(np.dtype(dt).type, 53)
    return (b >> (64 - bits)) * 2.0 ** -bits


def py_integer(seed, k, low, high):
    """Lemire's unbiased map: redraw b = mix(b + golden) while the low word of b * span
    is below (2^64 - span) mod span, at most 63 times."""
    span = high - low
    b = splitmix_bits(seed & M64, k)
    if span < 1 << 64:
        thresh = ((1 << 64) - span) % span
        for _ in range(63):
            if (b * span) & M64 >= thresh:
                break
            b = splitmix_bits(b, 0)  # mix(b + golden)
    return low + ((b * span) >> 64)


def py_normal(seed, i, offset):
    p, second = divmod(i, 2)
    u1 = py_uniform(seed, offset + 2 * p, np.float64)
    u2 = py_uniform(seed, offset + 2 * p + 1, np.float64)
    r = math.sqrt(-2.0 * math.log1p(-u1))
    t = 2.0 * math.pi * u2
    return r * (math.sin(t) if second else math.cos(t))


def draw(be, desc, n, dt, seed, offset=0, shape=None):
    return run_prim(be, desc, [], spec=(shape or (n,), dt), seed=seed, offset=offset)


def test_splitmix_reference_vector():
    """The formula above is SplitMix64: its first output for state 0 is well known."""
    assert splitmix_bits(0, 0) == 0xE220A8397B1DCDAF


SEEDS = [0, 12345, M64, -1, (1 << 64) + 7]


@pytest.mark.parametrize("dt", FLOATS, ids=str)
def test_uniform_exact(be, dt):
    for seed in SEEDS:
        for offset in (0, 1000, 1 << 40):
            got = draw(be, d.Uniform(), 7, dt, seed, offset)
            expected = np.array([py_uniform(seed, offset + i, dt) for i in range(7)], dt)
            assert_same(got, expected)
    assert_same(draw(be, d.Uniform(), 3, dt, -1), draw(be, d.Uniform(), 3, dt, M64))
    assert_same(draw(be, d.Uniform(), 3, dt, 7), draw(be, d.Uniform(), 3, dt, (1 << 64) + 7))


INTEGER_CASES = [
    (np.int8, 0, 10), (np.int8, -128, 128), (np.uint8, 3, 250), (np.int16, -5, 5),
    (np.int32, -(1 << 31), 1 << 31), (np.uint32, 0, 1), (np.int64, -(1 << 63), 1 << 63),
    (np.int64, -10**12, 10**15), (np.uint64, 0, 1 << 64), (np.uint64, 1 << 63, (1 << 64) - 1),
]


@pytest.mark.parametrize("dt,low,high", INTEGER_CASES, ids=[f"{np.dtype(t)}[{lo},{hi})"
                                                             for t, lo, hi in INTEGER_CASES])
def test_integer_exact(be, dt, low, high):
    for seed in SEEDS[:3]:
        for offset in (0, 999):
            got = draw(be, d.Integer(low, high), 9, dt, seed, offset)
            expected = np.array([py_integer(seed, offset + i, low, high) for i in range(9)], dt)
            assert_same(got, expected)
            assert ((got >= low) & (got <= high - 1)).all()


@pytest.mark.parametrize("dt", FLOATS, ids=str)
def test_normal_values(be, dt):
    for seed in SEEDS[:3]:
        for offset in (0, 10, 1 << 33):
            got = draw(be, d.Normal(), 9, dt, seed, offset)
            expected = np.array([py_normal(seed, i, offset) for i in range(9)], np.float64)
            np.testing.assert_allclose(got, expected.astype(dt),
                                       rtol={np.float16: 1e-3, np.float32: 1e-6}.get(dt.type, 1e-13),
                                       atol=1e-7)


@pytest.mark.parametrize("desc", [d.Uniform(), d.Normal(), d.Integer(-3, 1000)],
                         ids=lambda x: type(x).__name__)
def test_offset_slicing_and_layout(be, desc):
    dt = np.dtype(np.int32) if isinstance(desc, d.Integer) else np.dtype(np.float32)
    seed = 42
    long = draw(be, desc, 100, dt, seed)
    for offset in (0, 36, 64):  # even offsets: Normal pairs share counters
        assert_same(draw(be, desc, 10, dt, seed, offset), long[offset:offset + 10])
    if not isinstance(desc, d.Normal):
        assert_same(draw(be, desc, 5, dt, seed, 37), long[37:42])
    # element i of a shaped output (C order), whatever out's layout
    so = StridedOut(be, (4, 5), dt, "transposed")
    got = run_prim(be, desc, [], out=so.view, spec=((4, 5), dt), seed=seed, offset=20)
    assert_same(got, long[20:40].reshape(4, 5))
    so = StridedOut(be, (4, 5), dt, "step")
    got = run_prim(be, desc, [], out=so.view, spec=((4, 5), dt), seed=seed, offset=20)
    assert_same(got, long[20:40].reshape(4, 5))
    so.check_gaps()
    # reproducible, seed-dependent, empty and 0-d outputs
    assert_same(draw(be, desc, 100, dt, seed), long)
    assert not np.array_equal(draw(be, desc, 100, dt, seed + 1), long)
    assert draw(be, desc, 0, dt, seed).shape == (0,)
    assert_same(run_prim(be, desc, [], spec=((), dt), seed=seed, offset=4), long[4])


def test_integer_rejection_is_unbiased(be):
    """span = 3 * 2^62: a quarter of the 64-bit draws fall in the rejected zone, so a plain
    multiply-high map would give the top third of the range only 1/4 of the draws."""
    span = 3 << 62
    n = 30_000
    k = draw(be, d.Integer(0, span), n, np.uint64, 5)
    third = np.searchsorted([span // 3, 2 * (span // 3)], k, side="right")
    counts = np.bincount(third, minlength=3) / n
    assert np.all(np.abs(counts - 1 / 3) < 0.015), counts
    expected = np.array([py_integer(5, i, 0, span) for i in range(50)], np.uint64)
    assert_same(k[:50], expected)


def test_statistics(be):
    n = 200_000
    for dt in FLOATS:  # moments in float64: float16 sums would round
        u = draw(be, d.Uniform(), n, dt, 7).astype(np.float64)
        assert u.min() >= 0 and u.max() < 1
        assert abs(u.mean() - 0.5) < 0.005 and abs(u.var() - 1 / 12) < 0.002
        z = draw(be, d.Normal(), n, dt, 8).astype(np.float64)
        assert abs(z.mean()) < 0.01 and abs(z.std() - 1) < 0.01
        assert abs(np.mean(np.abs(z) < 1) - 0.6827) < 0.005
    k = draw(be, d.Integer(0, 10), n, np.int64, 9)
    counts = np.bincount(k, minlength=10)
    assert counts.size == 10 and np.all(np.abs(counts / n - 0.1) < 0.005)
    b = draw(be, d.Integer(0, 1 << 64), n, np.uint64, 10)
    assert abs(np.mean(b >= np.uint64(1 << 63)) - 0.5) < 0.01
