"""Name expressions and launch geometry for ``scan.cuh`` (Cumulative), pure Python.

The geometry depends on the shapes only, so a given call accumulates in the same order
every time: short axes (or many lines) take one thread per line; long ones are cut into
tiles of TILE elements, one block each, whose carries come from a scan of the tile
totals (that scan itself fits one tile per line: at most TILE tiles, else more passes).
"""
from __future__ import annotations

from . import ctype, dtypes_of_kinds

FILE = "scan.cuh"
SCAN_DTYPES = dtypes_of_kinds("biufc")
OPS = {"sum": "hf::scan_add", "prod": "hf::scan_mul"}
#: threads per scan_tiles block (HF_SCAN_BLOCK in scan.cuh)
BLOCK = 256
#: elements per tile (16 per thread)
TILE = 16 * BLOCK
#: axes up to this long, or this many lines and more, scan one line per thread
SHORT_AXIS = 64
MANY_LINES = 1 << 14
#: scan_tiles modes (the enum in scan.cuh)
MODE_PLAIN, MODE_TOTALS, MODE_CARRY = 0, 1, 2


def lines_expr(op: str, dt) -> str:
    return f"hf::scan_lines<{OPS[op]}, {ctype(dt)}>"


def tiles_expr(op: str, dt) -> str:
    return f"hf::scan_tiles<{OPS[op]}, {ctype(dt)}>"


def one_thread_per_line(n_lines: int, length: int) -> bool:
    return length <= SHORT_AXIS or n_lines >= MANY_LINES


def n_tiles(length: int) -> int:
    return max(1, -(-length // TILE))


def instances():
    exprs = []
    for op in OPS:
        for t in SCAN_DTYPES:
            exprs += [lines_expr(op, t), tiles_expr(op, t)]
    return [("scan_cumulative", FILE, exprs)]
