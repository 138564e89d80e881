"""The radix sort of kernels/radix.cuh without a GPU: the kernels' own source compiled for
the CPU with tests/data/host_gpu.h (every thread a fiber; warps of 32 and of 64 lanes;
threads and blocks in random orders; shared memory poisoned), launched exactly as
hipfer.kernels.radix.launches lists them, against numpy.argsort(kind="stable") (and the
runs, the rows of scatter_add_rows, against np.bincount / np.searchsorted).

    python3 tests/test_kernels_radix_host.py     the full matrix (m up to 100003; minutes)

Skipped when no C++ compiler (or nm, c++filt: the shared memory to poison) is installed.
"""
from __future__ import annotations

import itertools
import sys
from pathlib import Path

import numpy as np
import pytest

from hipfer.kernels import radix as R

from _host_kernels import HAVE_TOOLS, I64 as _I64, INT as _INT, PTR as _PTR, build as _build, \
    symbol as _symbol

pytestmark = pytest.mark.skipif(not HAVE_TOOLS, reason="no host C++ compiler, nm or c++filt")
#: expression -> (C++ parameters, argtypes) of its emulated launch
_KERNELS = {
    R.COUNT: ("const long long* keys, long long m, long long bound, long long* err, "
              "unsigned* counts, long long tile_size, int digit_bits, unsigned* zero, "
              "long long zero_size", (_PTR, _I64, _I64, _PTR, _PTR, _I64, _INT, _PTR, _I64)),
    R.SCATTER_FIRST: ("const long long* keys_in, const unsigned* vals_in, "
                      "unsigned long long* keys_out, unsigned* vals_out, const unsigned* counts, "
                      "unsigned* next_counts, unsigned* runs, long long m, long long bound, "
                      "long long tile_size, int shift, int digit_bits",
                      (_PTR,) * 7 + (_I64, _I64, _I64, _INT, _INT)),
}
_KERNELS[R.SCATTER] = (_KERNELS[R.SCATTER_FIRST][0].replace("const long long* keys_in",
                                                            "const unsigned long long* keys_in"),
                       _KERNELS[R.SCATTER_FIRST][1])
GUARD = 4096  # bytes around the workspace that no kernel may touch
PATTERNS = ("random", "equal", "sorted", "reversed")


def build(directory: Path):
    return _build(directory, R.FILE, _KERNELS, opt="-O2")


def emulate(lib, keys: np.ndarray, bound: int, warp: int, seed: int = 0, **geometry):
    """(sorted keys, their first positions, the runs (bound x 2; None for bounds past
    2^20), the error flag) from the emulated kernels; geometry: min_chunks, max_tiles of
    radix.plan."""
    keys = np.ascontiguousarray(keys, np.int64)
    p = R.plan(len(keys), bound, bound <= 1 << 20, **geometry)
    ws = np.full(p.nbytes + 2 * GUARD, 0xA5, np.uint8)
    err = np.zeros(1, np.int64)
    base = ws.ctypes.data + GUARD
    steps, out_keys, out_vals, runs = R.launches(p, keys.ctypes.data, bound, err.ctypes.data,
                                                 base)
    for expr, blocks, threads, args in steps:
        args = [a if a is None else int(a) for a in args]
        msg = getattr(lib, _symbol(expr))(blocks, threads, warp, seed, *args)
        assert msg is None, f"{expr}: {msg.decode()}"
    assert (ws[:GUARD] == 0xA5).all() and (ws[GUARD + p.nbytes:] == 0xA5).all()
    body = ws[GUARD:GUARD + p.nbytes]
    k0, v0 = out_keys - base, out_vals - base
    got_runs = None if runs is None else \
        body[runs - base:runs - base + 8 * bound].view(np.uint32).reshape(bound, 2).copy()
    return (body[k0:k0 + 8 * p.m].view(np.uint64).copy(),
            body[v0:v0 + 4 * p.m].view(np.uint32).copy(), got_runs, int(err[0]))


def make_keys(pattern: str, m: int, bound: int, rng) -> np.ndarray:
    if pattern == "random":
        return rng.integers(0, bound, m)
    if pattern == "equal":
        return np.full(m, bound - 1 - int(rng.integers(0, bound)), np.int64)
    ramp = np.arange(m, dtype=np.int64) * bound // max(m, 1)
    return ramp if pattern == "sorted" else ramp[::-1].copy()


def check(lib, keys, bound, warp, seed=0, **geometry):
    got_keys, got_perm, got_runs, err = emulate(lib, keys, bound, warp, seed, **geometry)
    want = np.argsort(keys, kind="stable")
    np.testing.assert_array_equal(got_perm, want)
    np.testing.assert_array_equal(got_keys, keys[want].astype(np.uint64))
    if got_runs is not None:
        count = np.bincount(keys, minlength=bound)
        end = np.searchsorted(keys[want], np.arange(bound), side="right") * (count > 0)
        np.testing.assert_array_equal(got_runs, np.stack([count, end], 1))
    assert err == 0


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    return build(tmp_path_factory.mktemp("radix_host"))


@pytest.mark.parametrize("warp", [32, 64])
@pytest.mark.parametrize("bound", [1, 2, 255, 256, 257, 4096, 65536, 70000])
@pytest.mark.parametrize("m", [1, 2, 31, 64, 65, 1000])
def test_radix_sort(lib, m, bound, warp):
    """Tiles of one chunk, so that small m take several."""
    rng = np.random.default_rng(m * 7919 + bound)
    for i, pattern in enumerate(PATTERNS):
        check(lib, make_keys(pattern, m, bound, rng), bound, warp, seed=i, min_chunks=1)


@pytest.mark.parametrize("warp", [32, 64])
@pytest.mark.parametrize("m,bound,max_tiles", [(3000, 300, 2), (1500, 1 << 20, 1),
                                               (5000, 16, 3), (2 ** 12 + 5, 2 ** 40, 7),
                                               (5000, 4096, R.MAX_TILES)])
def test_radix_sort_long_tiles(lib, m, bound, max_tiles, warp):
    """Tiles of several chunks (a chunk's warps continue the one before), more passes."""
    rng = np.random.default_rng(m)
    p = R.plan(m, bound, max_tiles=max_tiles)
    assert p.tiles <= max_tiles and p.tile_size > R.BLOCK
    for i, pattern in enumerate(PATTERNS):
        check(lib, make_keys(pattern, m, bound, rng), bound, warp, seed=i, max_tiles=max_tiles)


@pytest.mark.parametrize("warp", [32, 64])
def test_radix_count_reports_out_of_range(lib, warp):
    """Keys outside [0, bound) are reported (1 + a bad position) and still sorted safely:
    the workspace's guards hold, every position comes out once."""
    keys = np.array([3, 0, 7, -1, 2, 9, 1] * 50, np.int64)
    _, perm, _, err = emulate(lib, keys, 7, warp)
    assert err - 1 in np.flatnonzero((keys < 0) | (keys >= 7))
    assert sorted(perm) == list(range(len(keys)))


def test_plan():
    assert R.plan(65536, 4096) == R.Plan(65536, 2, 6, 1024, 64, 0)
    assert R.plan(65536, 4096, min_chunks=1) == R.Plan(65536, 2, 6, 256, 256, 0)
    assert R.plan(65536, 65536).passes == 2 and R.plan(65536, 65537).passes == 3
    assert R.plan(5, 256, True) == R.Plan(5, 1, 8, 1024, 1, 256) and R.plan(5, 1).digit_bits == 1
    assert R.plan(5, 256, True).nbytes == 24 * 5 + 4 * 256 + 8 * 256
    big = R.plan(2 ** 31, 2 ** 31)
    assert big.passes == 4 and big.tiles <= R.MAX_TILES and big.tile_size % R.BLOCK == 0
    assert big.tiles * big.tile_size >= 2 ** 31
    with pytest.raises(ValueError, match="2\\^32"):
        R.plan(2 ** 32, 10)


def main():
    """The full matrix: warps of 32 and 64, the plan's tiles and tiles of one chunk."""
    lib = build(Path(__import__("tempfile").mkdtemp()))
    ms = (1, 2, 31, 64, 65, 1000, 65536, 100003)
    bounds = (1, 2, 255, 256, 257, 4096, 65536, 70000)
    for m, bound in itertools.product(ms, bounds):
        rng = np.random.default_rng(m * 7919 + bound)
        for i, pattern in enumerate(PATTERNS):
            keys = make_keys(pattern, m, bound, rng)
            for warp, min_chunks in itertools.product((32, 64), (R.MIN_CHUNKS, 1)):
                check(lib, keys, bound, warp, seed=i, min_chunks=min_chunks)
        print(f"m={m} bound={bound}: {len(PATTERNS)} patterns x warps 32, 64 x tiles of "
              f"{R.MIN_CHUNKS} and 1 chunks OK", flush=True)


if __name__ == "__main__":
    sys.exit(main())
