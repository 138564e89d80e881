"""The stable radix sort of ``radix.cuh``: its plan and launches (pure Python, no CuPy).

A sort of m keys below `bound` takes ceil(bits / 8) passes of equal digits (bits: the
width of bound - 1, at least 1), so a key range of n <= 256 sorts in one pass and
n <= 65536 in two, where a general 32-bit sort (CuPy's argsort) takes four. Tiles are
MIN_CHUNKS chunks of BLOCK elements until there would be more than MAX_TILES of them;
then they grow, since every block of a pass reads the whole table (tiles x digits
counts). Everything lives in one workspace: keys (2 x m uint64, each pass's output in
turn), positions (2 x m uint32), a table per pass (uint32) and, when asked for, the
runs: (count, end) of each key value's run in the output (2 x bound uint32).
Positions and counts are 32-bit, so m < 2^32.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

FILE = "radix.cuh"
#: HF_RADIX_BLOCK of radix.cuh
BLOCK = 256
MAX_DIGIT_BITS = 8
#: tiles of at least MIN_CHUNKS chunks and at most MAX_TILES of them. On an H200, 65536
#: keys sorted in 27 us in tiles of 1024, 38-40 in tiles of 256 (a table 4x the size)
#: and 34-36 in tiles of 2048; 2^20 keys in 123 us in 256 tiles, 205 in 64
#: (cupy.argsort: 100-135 and 172 us)
MIN_CHUNKS = 4
MAX_TILES = 256

COUNT = "hf::radix_count<long long>"
#: the first pass reads the int64 keys themselves, the later ones its uint64 output
SCATTER_FIRST = "hf::radix_scatter<long long>"
SCATTER = "hf::radix_scatter<unsigned long long>"
EXPRS = (COUNT, SCATTER_FIRST, SCATTER)


class Plan(NamedTuple):
    m: int
    passes: int
    digit_bits: int
    tile_size: int
    tiles: int
    runs: int  # key values whose runs are recorded (0: none)

    @property
    def table(self) -> int:
        """Counts in one pass's table."""
        return self.tiles << self.digit_bits

    @property
    def nbytes(self) -> int:
        """The workspace: keys, positions, tables, runs."""
        return 24 * self.m + 4 * self.passes * self.table + 8 * self.runs


def plan(m: int, bound: int, runs: bool = False, min_chunks: int = MIN_CHUNKS,
         max_tiles: int = MAX_TILES) -> Plan:
    """The sort of m >= 1 keys in [0, bound); runs: record each key value's run in the
    output; min_chunks, max_tiles: see MIN_CHUNKS."""
    if m >= 2 ** 32:
        raise ValueError(f"the radix sort takes fewer than 2^32 keys, got {m}")
    bits = max(1, (bound - 1).bit_length())
    passes = -(-bits // MAX_DIGIT_BITS)
    tile_size = BLOCK * max(min_chunks, -(-m // (BLOCK * max_tiles)))
    return Plan(m, passes, -(-bits // passes), tile_size, -(-m // tile_size),
                bound if runs else 0)


def launches(p: Plan, keys, bound: int, err, ws: int):
    """The kernels that sort keys (m int64 values in [0, bound), a device address or array),
    in order, as (expression, blocks, threads, arguments); the workspace is the address ws
    (p.nbytes bytes). err: the device error flag (keys out of range are reported there),
    or None. Also returns the addresses of the sorted keys (uint64), of their first
    positions (uint32: a stable argsort) and of the runs (or None): runs[2k] keys equal
    to k end at runs[2k + 1] in the sorted order."""
    m, tiles, last = np.int64(p.m), p.tiles, p.passes - 1
    tile, db = np.int64(p.tile_size), np.int32(p.digit_bits)
    out_keys = (ws, ws + 8 * p.m)
    out_vals = (ws + 16 * p.m, ws + 20 * p.m)
    tables = [ws + 24 * p.m + 4 * p.table * k for k in range(p.passes)] + [None]
    runs = ws + 24 * p.m + 4 * p.table * p.passes if p.runs else None
    zero = (p.passes - 1) * p.table + 2 * p.runs  # the later tables and the runs, in a row
    steps = [(COUNT, tiles, BLOCK, (keys, m, np.int64(bound), err, tables[0], tile, db,
                                    tables[1] if p.passes > 1 else runs, np.int64(zero)))]
    keys_in, vals_in = keys, None
    for k in range(p.passes):
        steps.append((SCATTER if k else SCATTER_FIRST, tiles, BLOCK,
                      (keys_in, vals_in, out_keys[k % 2], out_vals[k % 2], tables[k],
                       tables[k + 1], runs if k == last else None, m, np.int64(bound), tile,
                       np.int32(k * p.digit_bits), db)))
        keys_in, vals_in = out_keys[k % 2], out_vals[k % 2]
    return steps, keys_in, vals_in, runs
