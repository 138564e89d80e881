"""Name expressions for ``fused_movement.cuh`` (pure Python, no CuPy)."""
from __future__ import annotations

import numpy as np

from ...kernels import ctype, radix

FILE = "fused_movement.cuh"
FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
#: the copy units of the byte-moving kernels: bytes -> C++ type
UNITS = {4: "unsigned int", 8: "unsigned long long", 16: "hf::mv_u128"}
#: the largest k fused_top_k_rows sorts in shared memory (a power of two; the slots
#: take TOP_K_SORT_MAX * 16 bytes for float64); larger k take the SortPrims Topk
TOP_K_SORT_MAX = 2048
#: fewer rows than TOP_K_TASKS are cut into segments of at least TOP_K_MIN_SEGMENT
#: columns, a block each, then a second pass ranks the segments' candidates: one block
#: per row left 116 of an H200's 132 SMs idle on 16 rows of 150000 (0.67 ms; torch.topk
#: 0.09 ms)
TOP_K_TASKS = 512
TOP_K_MIN_SEGMENT = 2048


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


CHECK_ROWS_EXPR = "hf::fused_check_rows"


#: scatter_add_rows' vector widths (elements) per dtype: 4, 8 or 16 bytes
SCATTER_VECS = {np.dtype(np.float32): (1, 2, 4), np.dtype(np.float64): (1, 2)}


def scatter_add_rows_expr(dt, vec: int) -> str:
    return f"hf::fused_scatter_add_rows<{ctype(dt)}, {vec}>"


def top_k_splits(rows: int, cols: int, sort_n: int) -> int:
    """Segments per row for fused_top_k_rows: few long rows are cut so that about
    TOP_K_TASKS blocks work, each segment at least TOP_K_MIN_SEGMENT columns and twice
    the sort slots (every segment holds k). A function of the shape alone (the result
    does not depend on it: a selection, exact)."""
    if rows >= TOP_K_TASKS:
        return 1
    return max(1, min(-(-TOP_K_TASKS // max(rows, 1)), cols // max(TOP_K_MIN_SEGMENT, 2 * sort_n)))


def top_k_rows_expr(dt) -> str:
    return f"hf::fused_top_k_rows<{ctype(dt)}>"


#: every instantiation; the GPU backend compiles them together once (with the radix sort
#: of radix.cuh, which fused_movement.cuh includes, for scatter_add_rows)
EXPRS = ([rope_expr(t) for t in FLOATS]
         + [f(u) for f in (permute_rows_expr, permute_tiled_expr, copy_2d_expr, gather_rows_expr)
            for u in UNITS]
         + [CHECK_ROWS_EXPR]
         + list(radix.EXPRS)
         + [scatter_add_rows_expr(t, v) for t in FLOATS for v in SCATTER_VECS[t]]
         + [top_k_rows_expr(t) for t in FLOATS])


def instances():
    return [("fused_movement", FILE, list(EXPRS))]
