"""The radix select of ``select.cuh``: its plan and launches (pure Python, no CuPy).

Rows of n contiguous values answer q queries each (the rank of a value in the sorted
row) in key_bits / 8 passes; a pass is select_count over every row's tiles, then
select_pick over the rows x q queries. A partition around the answers is two more reads:
select_tally counts each tile's values per class, select_split places them. Tiles are
at least MIN_TILE values, and a row has enough of them that the grid has about
TARGET_BLOCKS blocks. The workspace holds the counts (256 uint32 per query, zeroed) and
the prefixes (uint64, zeroed); the ranks (int64, one per query) are the caller's, and the
passes consume them.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import ctype, dtypes_of_kinds
from .sort import key_dtype

FILE = "select.cuh"
SELECT_DTYPES = dtypes_of_kinds("biuf")
#: HF_SELECT_BLOCK, HF_SELECT_DIGITS and HF_SELECT_MAX_Q of select.cuh
BLOCK = 256
DIGITS = 256
MAX_Q = 8
MIN_TILE = 4 * BLOCK
TARGET_BLOCKS = 2048
PICK = "hf::select_pick"


def count_expr(dt) -> str:
    return f"hf::select_count<{ctype(dt)}>"


def store_expr(dt) -> str:
    return f"hf::select_store<{ctype(dt)}>"


def tally_expr(dt) -> str:
    return f"hf::select_tally<{ctype(dt)}>"


def split_expr(dt) -> str:
    return f"hf::select_split<{ctype(dt)}>"


class Plan(NamedTuple):
    rows: int
    n: int
    q: int
    passes: int
    tiles: int  # per row
    tile_size: int

    @property
    def queries(self) -> int:
        return self.rows * self.q

    @property
    def nbytes(self) -> int:
        """The workspace: counts, prefixes."""
        return (4 * DIGITS + 8) * self.queries

    @property
    def tally(self) -> int:
        """The uint32 counts of a partition: 2q + 1 classes a tile."""
        return self.rows * self.tiles * (2 * self.q + 1)


def plan(dt, rows: int, n: int, q: int) -> Plan:
    """The select of q ranks in each of rows rows of n >= 1 values of dtype dt."""
    if not 1 <= q <= MAX_Q:
        raise ValueError(f"the radix select answers 1 to {MAX_Q} queries a row, got {q}")
    passes = key_dtype(dt).itemsize
    tiles = max(1, min(-(-TARGET_BLOCKS // max(rows, 1)), -(-n // MIN_TILE)))
    tile_size = -(-n // tiles)
    return Plan(rows, n, q, passes, -(-n // tile_size), tile_size)


def worth_it(dt, rows: int, n: int, q: int) -> bool:
    """Whether the select beats a sort: few queries, and rows long enough that the
    counts (1 KiB a query) are no bigger than the data."""
    return 1 <= q <= MAX_Q and n * np.dtype(dt).itemsize >= 4 * DIGITS * q


def launches(p: Plan, dt, x, ranks, ws: int, out):
    """The kernels that put the q answers of each row into out (rows x q values of dt)
    as (expression, blocks, threads, arguments): x the rows (C order), ranks the rows x q
    int64 ranks in [0, n) (consumed), ws the zeroed workspace (p.nbytes bytes), all device
    addresses or arrays; out may be None (no store: a partition needs only the keys).
    Also returns the address of the answers' keys (rows x q uint64, ascending where the
    ranks are)."""
    counts, prefix = ws, ws + 4 * DIGITS * p.queries
    m, q = np.int64(p.queries), np.int32(p.q)
    picks = -(-p.queries // BLOCK)
    steps = []
    for k in range(p.passes):
        shift = np.int32(8 * (p.passes - 1 - k))
        steps.append((count_expr(dt), p.rows * p.tiles, BLOCK,
                      (x, np.int64(p.n), np.int64(p.tiles), np.int64(p.tile_size), q, prefix,
                       shift, counts)))
        steps.append((PICK, picks, BLOCK, (counts, prefix, ranks, m, shift)))
    if out is not None:
        steps.append((store_expr(dt), picks, BLOCK, (out, prefix, m)))
    return steps, prefix


def split_launches(p: Plan, dt, x, keys, counts, values, indices):
    """The kernels that partition the rows of x around the answers' keys (launches' second
    result; the ranks ascending): counts is p.tally uint32 of scratch, values (dt) and
    indices (int64) the rows x n outputs, either None."""
    geo = (np.int64(p.n), np.int64(p.tiles), np.int64(p.tile_size))
    q, blocks = np.int32(p.q), p.rows * p.tiles
    return [(tally_expr(dt), blocks, BLOCK, (x,) + geo + (keys, q, counts)),
            (split_expr(dt), blocks, BLOCK, (x, values, indices) + geo + (keys, q, counts))]


def instances():
    return [("select", FILE, [count_expr(t) for t in SELECT_DTYPES]
             + [PICK] + [store_expr(t) for t in SELECT_DTYPES]
             + [tally_expr(t) for t in SELECT_DTYPES] + [split_expr(t) for t in SELECT_DTYPES])]
