"""Name expressions for ``fused_movement.cuh`` (pure Python, no CuPy)."""
from __future__ import annotations

import numpy as np

from . import ctype

FILE = "fused_movement.cuh"
FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
#: the copy units of the byte-moving kernels: bytes -> C++ type
UNITS = {4: "unsigned int", 8: "unsigned long long", 16: "hf::mv_u128"}
#: the largest k fused_top_k_rows sorts in shared memory (a power of two; the slots
#: take TOP_K_SORT_MAX * 16 bytes for float64); larger k take the SortPrims Topk
TOP_K_SORT_MAX = 2048


def rope_expr(dt) -> str:
    return f"hf::fused_rope<{ctype(dt)}>"


def permute_rows_expr(unit: int) -> str:
    return f"hf::fused_permute_0213_rows<{UNITS[unit]}>"


def permute_tiled_expr(unit: int) -> str:
    return f"hf::fused_permute_0213_tiled<{UNITS[unit]}>"


def copy_2d_expr(unit: int) -> str:
    return f"hf::fused_copy_2d<{UNITS[unit]}>"


def gather_rows_expr(unit: int) -> str:
    return f"hf::fused_gather_rows<{UNITS[unit]}>"


CHECK_ROWS = "hf::fused_check_rows<long long>"


def scatter_add_rows_expr(dt) -> str:
    return f"hf::fused_scatter_add_rows<{ctype(dt)}>"


def top_k_rows_expr(dt) -> str:
    return f"hf::fused_top_k_rows<{ctype(dt)}>"


#: every instantiation; the GPU backend compiles them together once
EXPRS = ([rope_expr(t) for t in FLOATS]
         + [f(u) for f in (permute_rows_expr, permute_tiled_expr, copy_2d_expr, gather_rows_expr)
            for u in UNITS]
         + [CHECK_ROWS] + [scatter_add_rows_expr(t) for t in FLOATS]
         + [top_k_rows_expr(t) for t in FLOATS])


def instances():
    return [("fused_movement", FILE, list(EXPRS))]
