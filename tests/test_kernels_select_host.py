"""The radix select of kernels/select.cuh without a GPU: the kernels' own source compiled
for the CPU with tests/data/host_gpu.h (every thread a fiber; warps of 32 and 64 lanes;
threads and blocks in random orders; shared memory poisoned), launched exactly as
hipfer.kernels.select.launches lists them, against numpy.sort; select_tally and
select_split (split_launches) against a stable sort of the classes around the answers.

Skipped when no C++ compiler (or nm, c++filt: the shared memory to poison) is installed.
"""
from __future__ import annotations

import zlib

import numpy as np
import pytest

from hipfer.kernels import ctype
from hipfer.kernels import select as S

from _host_kernels import HAVE_TOOLS, I64 as _I64, INT as _INT, PTR as _PTR, build, symbol

pytestmark = pytest.mark.skipif(not HAVE_TOOLS, reason="no host C++ compiler, nm or c++filt")
DTYPES = [np.dtype(t) for t in ("bool", "int8", "uint8", "int16", "uint16", "int32",
                                "uint32", "int64", "uint64", "float16", "float32", "float64")]


def _kernels():
    """expression -> (C++ parameters, argtypes)"""
    out = {S.PICK: ("unsigned* counts, unsigned long long* prefix, long long* rank, long long m, "
                    "int shift", (_PTR, _PTR, _PTR, _I64, _INT))}
    for dt in DTYPES:
        t = ctype(dt)
        out[S.count_expr(dt)] = (f"const {t}* x, long long n, long long tiles, "
                                 "long long tile_size, int q, const unsigned long long* prefix, "
                                 "int shift, unsigned* counts",
                                 (_PTR, _I64, _I64, _I64, _INT, _PTR, _INT, _PTR))
        out[S.store_expr(dt)] = (f"{t}* out, const unsigned long long* prefix, long long m",
                                 (_PTR, _PTR, _I64))
        geo = "long long n, long long tiles, long long tile_size"
        out[S.tally_expr(dt)] = (f"const {t}* x, {geo}, const unsigned long long* keys, int q, "
                                 "unsigned* counts", (_PTR, _I64, _I64, _I64, _PTR, _INT, _PTR))
        out[S.split_expr(dt)] = (f"const {t}* x, {t}* values, long long* indices, {geo}, "
                                 "const unsigned long long* keys, int q, const unsigned* counts",
                                 (_PTR, _PTR, _PTR, _I64, _I64, _I64, _PTR, _INT, _PTR))
    return out


KERNELS = _kernels()


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    return build(tmp_path_factory.mktemp("select_host"), S.FILE, KERNELS)


def _run(lib, steps, warp, seed):
    for expr, blocks, threads, args in steps:
        args = [a.ctypes.data if isinstance(a, np.ndarray) else int(a) for a in args]
        msg = getattr(lib, symbol(expr))(blocks, threads, warp, seed, *args)
        assert msg is None, f"{expr}: {msg.decode()}"


def _plan(x, q, tiles):
    rows, n = x.shape
    p = S.plan(x.dtype, rows, n, q)
    if tiles:  # several tiles a row at small n
        size = -(-n // tiles)
        p = p._replace(tiles=-(-n // size), tile_size=size)
    return p


def emulate(lib, x: np.ndarray, ranks: np.ndarray, warp=32, seed=0, tiles=None, split=False):
    """(answers (rows x q, x's dtype), their keys) of the rows of x (2-d) at ranks; with
    split, (the partitioned values, their indices) around them instead."""
    p = _plan(x, ranks.shape[1], tiles)
    ws = np.zeros(p.nbytes // 8, np.uint64)
    out = np.empty(ranks.shape, x.dtype)
    r = np.ascontiguousarray(ranks, np.int64).copy()
    steps, prefix = S.launches(p, x.dtype, x, r, ws.ctypes.data, None if split else out)
    _run(lib, steps, warp, seed)
    if not split:
        return out, ws[(prefix - ws.ctypes.data) // 8:][:p.queries].reshape(ranks.shape)
    counts = np.full(p.tally, 0xA5A5A5A5, np.uint32)  # every entry written by the tally
    values, indices = np.empty_like(x), np.full(x.shape, -1, np.int64)
    _run(lib, S.split_launches(p, x.dtype, x, prefix, counts, values, indices), warp, seed + 1)
    return values, indices


def _data(dt, rows, n, rng, pattern):
    if dt.kind == "b":
        return rng.random((rows, n)) < 0.3
    if dt.kind == "f":
        x = rng.standard_normal((rows, n)).astype(dt) * 100
        if pattern == "special":
            specials = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0], dt)
            x.flat[rng.integers(0, x.size, x.size // 4)] = rng.choice(specials, x.size // 4)
    else:
        info = np.iinfo(dt)
        x = rng.integers(info.min, info.max, (rows, n), dtype=dt, endpoint=True)
    if pattern == "few":  # many ties: a few distinct values
        x = np.take(x.ravel()[:3], rng.integers(0, min(3, x.size), (rows, n)))
    return np.ascontiguousarray(x)


@pytest.mark.parametrize("warp", [32, 64])
@pytest.mark.parametrize("dt", DTYPES, ids=str)
@pytest.mark.parametrize("pattern", ["random", "few", "special"])
def test_select_matches_sort(lib, dt, pattern, warp):
    rng = np.random.default_rng(zlib.crc32(f"{dt}{pattern}{warp}".encode()))
    for rows, n, q, tiles in ((1, 1, 1, None), (3, 700, 3, 3), (2, 1500, 8, None), (5, 37, 2, 2)):
        x = _data(dt, rows, n, rng, pattern)
        ranks = rng.integers(0, n, (rows, q))
        ranks[:, 0] = n - 1  # the largest (NaN where a row has one)
        got, keys = emulate(lib, x, ranks, warp, seed=rows, tiles=tiles)
        want = np.take_along_axis(np.sort(x, axis=-1), ranks, axis=-1)
        np.testing.assert_array_equal(got, want)
        if dt.kind == "f":  # every NaN answers as one NaN; -0.0 as +0.0
            assert not np.signbit(got[(got == 0) | np.isnan(got)]).any()


@pytest.mark.parametrize("warp", [32, 64])
@pytest.mark.parametrize("dt", [np.dtype(t) for t in ("bool", "int8", "uint16", "uint64", "float16",
                                                      "float32", "float64")], ids=str)
def test_split(lib, dt, warp):
    """The split is the stable sort of the classes around the answers (index order within
    a class), so a valid partition at every rank, for one tile a row and several."""
    rng = np.random.default_rng(zlib.crc32(f"split{dt}{warp}".encode()))
    for pattern, (rows, n, q, tiles) in zip(("random", "few", "special", "random"),
                                            ((3, 300, 4, None), (2, 700, 8, 3),
                                             (4, 530, 2, 2), (1, 1, 1, None))):
        x = _data(dt, rows, n, rng, pattern)
        kth = np.unique(rng.integers(0, n, q))
        ranks = np.ascontiguousarray(np.broadcast_to(kth, (rows, len(kth))))
        values, indices = emulate(lib, x, ranks, warp, tiles=tiles, split=True)
        s = np.sort(x, axis=-1)
        kx = s[:, kth]  # the answers; each value's class: 2 * (answers below) + (equals one)
        below = np.zeros(x.shape, int)
        equal = np.zeros(x.shape, bool)
        for j in range(len(kth)):
            a = kx[:, j:j + 1]
            below += _lt(a, x)
            equal |= (a == x) | (np.isnan(a) & np.isnan(x)) if dt.kind == "f" else a == x
        want = np.argsort(2 * below + equal, axis=-1, kind="stable")
        np.testing.assert_array_equal(indices, want)
        np.testing.assert_array_equal(values, np.take_along_axis(x, want, axis=-1))
        for k in kth:  # in sort order (NaN last): before <= the answer <= after
            np.testing.assert_array_equal(values[:, k], s[:, k])
            pk = values[:, k:k + 1]
            assert _le(values[:, :k], pk).all() and _le(pk, values[:, k + 1:]).all()


def _lt(a, b):
    """a < b in sort order (NaN last, above everything)."""
    return (a < b) | (np.isnan(b) & ~np.isnan(a)) if a.dtype.kind == "f" else a < b


def _le(a, b):
    return (a <= b) | np.isnan(b) if a.dtype.kind == "f" else a <= b


def test_plan():
    p = S.plan(np.float32, 1, 64 * 2 ** 20, 2)
    assert p.passes == 4 and p.tiles == S.TARGET_BLOCKS and p.tiles * p.tile_size >= p.n
    assert S.plan(np.float64, 1, 10, 1).passes == 8 and S.plan(np.bool_, 1, 10, 1).passes == 1
    assert S.plan(np.float16, 10000, 5000, 3)[3:] == (2, 1, 5000)
    assert S.plan(np.int8, 1, 3000, 1).tiles == 3
    assert S.worth_it(np.float32, 1, 512, 2) and not S.worth_it(np.float32, 1, 511, 2)
    assert not S.worth_it(np.float32, 1, 10 ** 6, S.MAX_Q + 1)
    with pytest.raises(ValueError, match="queries"):
        S.plan(np.float32, 1, 10, 9)
