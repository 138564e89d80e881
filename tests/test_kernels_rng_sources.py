"""CPU-only checks of kernels/rng.cuh against hipfer/prims/counter_rng.py (nothing is
compiled): the C++ constants, the order of SplitMix64's steps and the uniform scalings
are read from the source text and replayed with NumPy against the reference."""
import inspect
import re

import numpy as np
import pytest

from hipfer.kernels import KERNEL_DIR, module_source
from hipfer.kernels import rng as krng
from hipfer.prims import counter_rng as ref

SRC = (KERNEL_DIR / "rng.cuh").read_text()


def _cxx_const(name: str) -> int:
    m = re.search(rf"constexpr\s+u64\s+{name}\s*=\s*(0x[0-9A-Fa-f]+)ull\s*;", SRC)
    assert m, f"{name} not found in rng.cuh"
    return int(m.group(1), 16)


def _body(src: str, start: str) -> str:
    """Text from `start` up to the matching closing brace (C++) or the next blank line."""
    i = src.index(start)
    j = src.index("}", i)
    return src[i:j]


def _cxx_mix_steps():
    """rng_mix's statements as ('xorshift', n) / ('mul', constant)."""
    consts = {n: _cxx_const(n) for n in ("RNG_M1", "RNG_M2")}
    steps = []
    for line in _body(SRC, "u64 rng_mix(u64 z)").splitlines():
        line = line.strip()
        if m := re.fullmatch(r"z \^= z >> (\d+);", line):
            steps.append(("xorshift", int(m.group(1))))
        elif m := re.fullmatch(r"z \*= (\w+);", line):
            steps.append(("mul", consts[m.group(1)]))
    return steps


def _py_mix_steps():
    consts = {"_M1": int(ref._M1), "_M2": int(ref._M2)}
    steps = []
    for line in inspect.getsource(ref.mix).splitlines():
        line = line.strip()
        if m := re.fullmatch(r"z \^= z >> np\.uint64\((\d+)\)", line):
            steps.append(("xorshift", int(m.group(1))))
        elif m := re.fullmatch(r"z \*= (\w+)", line):
            steps.append(("mul", consts[m.group(1)]))
    return steps


def _replay(steps, z):
    z = z.astype(np.uint64, copy=True)
    with np.errstate(over="ignore"):
        for op, v in steps:
            if op == "xorshift":
                z ^= z >> np.uint64(v)
            else:
                z *= np.uint64(v)
    return z


def test_constants_match_reference():
    assert _cxx_const("RNG_GOLDEN") == int(ref.GOLDEN)
    assert _cxx_const("RNG_M1") == int(ref._M1)
    assert _cxx_const("RNG_M2") == int(ref._M2)


def test_mix_steps_match_reference(rng):
    steps = _cxx_mix_steps()
    assert steps == _py_mix_steps()
    assert len(steps) == 5
    z = rng.integers(0, 2**64, size=1000, dtype=np.uint64, endpoint=False)
    np.testing.assert_array_equal(_replay(steps, z), ref.mix(z))


def test_bits_formula_matches_reference(rng):
    assert re.search(r"return rng_mix\(seed \+ \(counter \+ 1\) \* RNG_GOLDEN\);", SRC)
    seed = int(rng.integers(0, 2**63)) * 2 + 1
    k = rng.integers(0, 2**64, size=100, dtype=np.uint64, endpoint=False)
    golden = np.uint64(_cxx_const("RNG_GOLDEN"))
    with np.errstate(over="ignore"):
        z = np.uint64(seed) + (k + np.uint64(1)) * golden
    np.testing.assert_array_equal(_replay(_cxx_mix_steps(), z), ref.bits(seed, k))


def _uniform_scaling(fn: str):
    """(shift, scale) of rng_uniform16/32/64 from a line like
    `return (f32)(b >> 40) * 0x1p-24f;`."""
    m = re.search(rf"{fn}\(u64 b\) \{{ return \((f32|f64)\)\(b >> (\d+)\) \* (0x1p-\d+)f?; \}}",
                  SRC)
    assert m, f"{fn} not found"
    return int(m.group(2)), float.fromhex(m.group(3))


@pytest.mark.parametrize("fn,dtype", [("rng_uniform16", np.float16), ("rng_uniform32", np.float32),
                                      ("rng_uniform64", np.float64)])
def test_uniform_scaling_matches_reference(fn, dtype, rng):
    shift, scale = _uniform_scaling(fn)
    assert shift + int(-np.log2(scale)) == 64  # the top bits, scaled into [0, 1)
    seed, offset, n = 12345, 2**64 - 7, 64  # counters wrap modulo 2^64
    b = ref.bits(seed, ref.counters(offset, n))
    got = (b >> np.uint64(shift)).astype(dtype) * dtype(scale)
    np.testing.assert_array_equal(got, ref.uniform(seed, offset, n, dtype))


def test_normal_uses_two_pi_and_log1p():
    body = _body(SRC, "__global__ void rng_normal_kernel")
    m = re.search(r"f64 t = ([0-9.]+) \* u2;", body)
    assert m and float(m.group(1)) == 2.0 * np.pi
    assert "sqrt(-2.0 * log1p(-u1))" in body
    assert "r * cos(t)" in body and "r * sin(t)" in body


def test_integer_mulhi_reference_is_the_128_bit_high_word(rng):
    a = rng.integers(0, 2**64, size=200, dtype=np.uint64, endpoint=False)
    for span in (1, 3, 1000, 2**32 + 5, 2**63 + 12345, 2**64 - 1):
        want = [(int(x) * span) >> 64 for x in a]
        assert [int(x) for x in ref.mulhi64(a, span)] == want


@pytest.mark.parametrize("low,high,want", [
    (0, 10, (0, 10, 6)),               # 2^64 mod 10 = 6
    (-5, 5, (2**64 - 5, 10, 6)),
    (-2**63, 2**63, (2**63, 0, 0)),    # the whole int64 range: span 2^64 -> 0, no rejection
    (0, 2**64, (0, 0, 0)),             # the whole uint64 range
    (2**63, 2**64, (2**63, 2**63, 0)),
    (0, 3 << 62, (0, 3 << 62, 1 << 62)),
])
def test_integer_range_arguments(low, high, want):
    assert krng.integer_range(low, high) == want


def test_integer_kernel_replay_matches_reference(rng):
    """The kernel's loop (Lemire's rejection, then (T)(mulhi(b, span) + low)) on the
    arguments integer_range gives."""
    body = SRC[SRC.index("__global__ void rng_integer_kernel"):]
    body = body[:body.index("\n}\n")]
    assert "for (int j = 1; b * span < thresh && j < RNG_INT_TRIES; ++j) " \
           "b = rng_mix(b + RNG_GOLDEN);" in body
    assert "r = __umul64hi(b, span);" in body and "(T)(r + low)" in body
    assert re.search(r"constexpr int RNG_INT_TRIES = (\d+);", SRC).group(1) == str(ref.INT_TRIES)
    seed, offset, n = 99, 17, 500
    for low, high, dt in [(-3, 4, np.int8), (0, 2**64, np.uint64), (-2**63, 2**63, np.int64),
                          (10, 11, np.uint16), (-2**31, 2**31 - 1, np.int32),
                          (0, 3 << 62, np.uint64), (5, 2**63 + 9, np.uint64)]:
        lo, span, thresh = krng.integer_range(low, high)
        got = []
        for b in ref.bits(seed, ref.counters(offset, n)).tolist():  # the kernel's loop
            if span:
                j = 1
                while (b * span) & ((1 << 64) - 1) < thresh and j < ref.INT_TRIES:
                    b = int(ref.rehash(np.array([b], np.uint64))[0])
                    j += 1
                b = (b * span) >> 64
            got.append((b + lo) & ((1 << 64) - 1))
        got = np.array(got, np.uint64).astype(dt)
        np.testing.assert_array_equal(got, ref.integer(seed, offset, n, low, high, dt))
        assert got.min() >= low and got.max() < high


def test_instances_name_existing_kernels():
    src = module_source(krng.FILE)
    groups = krng.instances()
    assert [g for g, _, _ in groups] == ["rng_uniform", "rng_normal", "rng_integer",
                                         "rng_samplers"]
    for _, file, exprs in groups:
        assert file == "rng.cuh"
        for e in exprs:
            name = e.split("<")[0].split("::")[-1]
            assert f"__global__ void {name}(" in src
    assert len(groups[2][2]) == 8 and len(groups[0][2]) == 3


def _fn_body(src: str, start: str) -> str:
    """A C++ function's text from `start` to its matching closing brace."""
    i = src.index(start)
    j, depth = src.index("{", i), 0
    for k in range(j, len(src)):
        depth += {"{": 1, "}": -1}.get(src[k], 0)
        if depth == 0:
            return src[i:k + 1]
    raise AssertionError(f"{start}: no closing brace")


def test_sampler_constants_match_reference():
    """The samplers' attempt bound, inversion table, regime switch and Stirling series
    are the reference's (counter_rng.TRIES / TABLE / SMALL / _STIRLING)."""
    def const(kind, name):
        m = re.search(rf"constexpr {kind} {name} = ([0-9.e-]+);", SRC)
        assert m, name
        return float(m.group(1))
    assert const("int", "RNG_TRIES") == ref.TRIES
    assert const("int", "RNG_TABLE") == ref.TABLE
    assert const("f64", "RNG_SMALL") == ref.SMALL
    body = _fn_body(SRC, "f64 rng_log_factorial(f64 k)")
    nums = [float(x) for x in re.findall(r"-?\d+\.\d+(?:e-?\d+)?", body)]
    for c in ref._STIRLING:
        assert c in nums or -c in nums, c
    assert ref._HALF_LOG_2PI in nums and abs(ref._HALF_LOG_2PI - 0.5 * np.log(2 * np.pi)) < 1e-15
    # the private stream: s += golden, then the uniform64 of mix(s)
    assert "s += RNG_GOLDEN; return rng_uniform64(rng_mix(s));" in SRC
    assert SRC.count("RngChain c{rng_bits(seed, offset + (u64)i)};") == 3


def test_sampler_chain_replay(rng):
    seed, offset, n = 5, 2**64 - 3, 6
    s = ref.bits(seed, ref.counters(offset, n)).astype(object)
    want = []
    for _ in range(4):
        s = [(x + int(ref.GOLDEN)) % 2**64 for x in s]
        want.append([(int(ref.mix(np.array([x], np.uint64))[0]) >> 11) * 2.0 ** -53 for x in s])
    np.testing.assert_array_equal(ref.chain(seed, offset, n, 4), np.array(want).T)


@pytest.mark.parametrize("fn", ["rng_log_gamma", "rng_poisson", "rng_binomial"])
def test_sampler_formulas_are_the_reference(fn):
    """Key lines of each kernel sampler appear in its NumPy emulation (same constants and
    expressions, up to NumPy spelling)."""
    body = _fn_body(SRC, f"__device__ __forceinline__ f64 {fn}(")
    py = inspect.getsource(getattr(ref, fn.removeprefix("rng_")))
    norm = lambda t: re.sub(r"\s+", "", t).replace("np.", "").replace("fabs", "abs")
    consts = set(re.findall(r"\d+\.\d+", body))
    assert consts and consts <= set(re.findall(r"\d+\.\d+", py)), consts - set(
        re.findall(r"\d+\.\d+", py))
    for expr in {"rng_log_gamma": ["1.0 + cc * z", "0.5 * z * z + d - d * v + d * log(v)"],
                 "rng_poisson": ["p * (lam / k)", "floor((2.0 * a / us + b) * u + lam + 0.43)"],
                 "rng_binomial": ["pr * (r * (n - k + 1.0) / k)", "floor((n + 1.0) * p)"]}[fn]:
        assert norm(expr) in norm(body)
