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
    assert [g for g, _, _ in groups] == ["rng_uniform", "rng_normal", "rng_integer"]
    for _, file, exprs in groups:
        assert file == "rng.cuh"
        for e in exprs:
            name = e.split("<")[0].split("::")[-1]
            assert f"__global__ void {name}(" in src
    assert len(groups[2][2]) == 8 and len(groups[0][2]) == 3
