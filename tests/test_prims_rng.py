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


# ------------------------------------------------------------------ parametric samplers
# A scalar, early-exit transcription of rng.cuh's samplers (per element, with Python's
# math): checks both the vectorised emulation (all attempts at once) and the loop logic.
TRIES, TABLE, SMALL = 16, 48, 10.0


class PyChain:
    def __init__(self, seed, k):
        self.s = splitmix_bits(seed & M64, k)

    def next(self):
        """s += golden; the top 53 bits of mix(s) (mix(s) = splitmix_bits(s - golden, 0))."""
        self.s = (self.s + GOLDEN) & M64
        return (splitmix_bits((self.s - GOLDEN) & M64, 0) >> 11) * 2.0 ** -53


def py_logfact(k):
    z = k + 9.0
    r = 1.0 / z
    r2 = r * r
    series = r * (1 / 12 + r2 * (-1 / 360 + r2 * (1 / 1260 + r2 * -1 / 1680)))
    lg = (z - 0.5) * math.log(z) - z + 0.5 * math.log(2 * math.pi) + series
    for i in range(1, 9):
        lg -= math.log(k + i)
    return lg


def py_log_gamma(c, a):
    boost = c.next()
    small = a < 1.0
    d = (a + 1.0 if small else a) - 1.0 / 3.0
    cc = 1.0 / math.sqrt(9.0 * d)
    r = math.log(d)
    for _ in range(TRIES):
        u1, u2, u3 = c.next(), c.next(), c.next()
        z = math.sqrt(-2.0 * math.log1p(-u1)) * math.cos(2 * math.pi * u2)
        v = (1.0 + cc * z) ** 3
        if v > 0 and math.log1p(-u3) < 0.5 * z * z + d - d * v + d * math.log(v):
            r = math.log(d * v)
            break
    if small:
        r += -math.inf if a == 0 else math.log1p(-boost) / a
    return r


def py_poisson(c, lam):
    if lam < SMALL:
        u, p = c.next(), math.exp(-lam)
        cdf, k = p, 0.0
        while u >= cdf and k < TABLE - 1:
            k += 1.0
            p = p * (lam / k)
            cdf += p
        return k
    slam, loglam = math.sqrt(lam), math.log(lam)
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    invalpha = 1.1239 + 1.1328 / (b - 3.4)
    vr = 0.9277 - 3.6224 / (b - 2.0)
    for _ in range(TRIES):
        u, v = c.next() - 0.5, c.next()
        us = max(0.5 - abs(u), 1e-300)
        k = math.floor((2.0 * a / us + b) * u + lam + 0.43)
        if us >= 0.07 and v <= vr:
            return max(k, 0.0)
        if k < 0 or (us < 0.013 and v > us):
            continue
        if (math.log(max(v, 1e-300)) + math.log(invalpha) - math.log(a / (us * us) + b)
                <= -lam + k * loglam - py_logfact(k)):
            return k
    return math.floor(lam)


def py_binomial(c, n, p0):
    flip = p0 > 0.5
    p = 1.0 - p0 if flip else p0
    q = 1.0 - p
    k = 0.0
    if n * p < SMALL:
        r = p / q
        u, pr = c.next(), math.exp(n * math.log1p(-p))
        cdf, top = pr, min(n, TABLE - 1.0)
        while u >= cdf and k < top:
            k += 1.0
            pr = pr * (r * (n - k + 1.0) / k)
            cdf += pr
    else:
        spq = math.sqrt(n * p * q)
        b = 1.15 + 2.53 * spq
        a = -0.0873 + 0.0248 * b + 0.01 * p
        cc = n * p + 0.5
        vr = 0.92 - 4.2 / b
        alpha = (2.83 + 5.1 / b) * spq
        lpq = math.log(p / q)
        m = math.floor((n + 1.0) * p)
        h = py_logfact(m) + py_logfact(n - m)
        k = m
        for _ in range(TRIES):
            u, v = c.next() - 0.5, c.next()
            us = max(0.5 - abs(u), 1e-300)
            kk = math.floor((2.0 * a / us + b) * u + cc)
            if kk < 0 or kk > n:
                continue
            if us >= 0.07 and v <= vr:
                k = kk
                break
            lv = math.log(max(v, 1e-300) * alpha / (a / (us * us) + b))
            if lv <= h - py_logfact(kk) - py_logfact(n - kk) + (kk - m) * lpq:
                k = kk
                break
    return n - k if flip else k


def _params(be, *arrays):
    return [be.asarray(np.asarray(a, np.float64)) for a in arrays]


SAMPLERS = [
    (d.LogGamma(), lambda c, a: py_log_gamma(c, a), [[0.0, 1e-3, 0.3, 0.999, 1.0, 2.5, 40.0, 1e6]]),
    (d.Poisson(), lambda c, lam: py_poisson(c, lam),
     [[0.0, 0.1, 3.0, 9.99, 10.0, 10.5, 77.0, 1e4, 1e9]]),
    (d.Binomial(), lambda c, n, p: py_binomial(c, n, p),
     [[0, 1, 7, 30, 100, 1000, 10**6, 500, 40], [0.5, 0.3, 1.0, 0.9, 0.2, 0.999, 1e-6, 0.0, 0.5]]),
]


@pytest.mark.parametrize("desc,ref,params", SAMPLERS, ids=lambda x: type(x).__name__
                         if isinstance(x, d.Descriptor) else "")
def test_samplers_match_scalar_transcription(be, desc, ref, params):
    n = len(params[0])
    reps = 12  # each parameter value 12 times: many counters, early and late acceptances
    cols = [np.repeat(np.asarray(p, np.float64), reps) for p in params]
    for seed, offset in ((0, 0), (99, 2**64 - 40)):
        got = run_prim(be, desc, _params(be, *cols), seed=seed, offset=offset)
        want = [ref(PyChain(seed, (offset + i) & M64), *(float(c[i]) for c in cols))
                for i in range(n * reps)]
        if isinstance(desc, d.LogGamma):
            assert got.dtype == np.float64
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-300)
        else:
            assert got.dtype == np.int64
            assert_same(got, np.array(want, np.int64))


@pytest.mark.parametrize("desc,ref,params", SAMPLERS, ids=lambda x: type(x).__name__
                         if isinstance(x, d.Descriptor) else "")
def test_samplers_layouts_and_offsets(be, desc, ref, params):
    """Element i (C order) uses counter offset + i whatever the layouts of the output and
    of the (broadcast) parameters."""
    vals = [np.asarray(p, np.float64)[:4] for p in params]
    full = [np.broadcast_to(v, (5, 4)).copy() for v in vals]
    long = run_prim(be, desc, [be.asarray(f.ravel()) for f in full], seed=3, offset=0)
    # broadcast parameters, offset slicing, a transposed output, strided parameters
    bcast = [be.xp.broadcast_to(be.asarray(v), (5, 4)) for v in vals]
    assert_same(run_prim(be, desc, bcast, seed=3, offset=0), long.reshape(5, 4))
    assert_same(run_prim(be, desc, [be.asarray(f.ravel()[7:]) for f in full], seed=3,
                         offset=7), long[7:])
    so = StridedOut(be, (5, 4), long.dtype, "transposed")
    assert_same(run_prim(be, desc, bcast, out=so.view, seed=3, offset=0), long.reshape(5, 4))
    strided = [be.asarray(np.repeat(f, 2, axis=1))[:, ::2] for f in full]
    assert_same(run_prim(be, desc, strided, seed=3, offset=0), long.reshape(5, 4))
    assert run_prim(be, desc, [be.asarray(np.zeros((0, 3))) for _ in vals], seed=3).shape == (0, 3)


def test_sampler_parameters_must_be_float64(be):
    with pytest.raises(TypeError, match="float64"):
        run_prim(be, d.Poisson(), [be.asarray(np.ones(3, np.float32))], seed=1)


def test_samplers_across_emulation_blocks(be):
    """The NumPy emulation runs blocks of 2^15 elements: element i still uses counter
    offset + i across a block boundary (and the GPU's grid-stride loop agrees)."""
    n = (1 << 15) + 100
    a = np.full(n, 2.5)
    long = run_prim(be, d.LogGamma(), [be.asarray(a)], seed=8, offset=5)
    start = (1 << 15) - 10
    piece = run_prim(be, d.LogGamma(), [be.asarray(a[:30])], seed=8, offset=5 + start)
    assert_same(piece, long[start:start + 30])
