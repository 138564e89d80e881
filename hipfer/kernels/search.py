"""Name expressions and launch choices for ``search.cuh`` (ArgReduce, SearchSorted),
pure Python."""
from __future__ import annotations

from . import ctype, dtypes_of_kinds

FILE = "search.cuh"
SEARCH_DTYPES = dtypes_of_kinds("biuf")
#: threads per search_arg_block block (HF_SEARCH_BLOCK in search.cuh)
BLOCK = 256
#: axes up to this long, or this many outputs and more, take one thread per output
SHORT_AXIS = 256
MANY_OUTPUTS = 1 << 14


def arg_exprs(is_max: bool, dt) -> tuple:
    """(lines, block) kernels of argmax (is_max) or argmin."""
    m = "true" if is_max else "false"
    return (f"hf::search_arg_lines<{m}, {ctype(dt)}>", f"hf::search_arg_block<{m}, {ctype(dt)}>")


def sorted_expr(dt, right: bool) -> str:
    return f"hf::search_sorted<{ctype(dt)}, {'true' if right else 'false'}>"


def one_thread_per_output(n_out: int, length: int) -> bool:
    return length <= SHORT_AXIS or n_out >= MANY_OUTPUTS


def instances():
    arg = [e for t in SEARCH_DTYPES for m in (True, False) for e in arg_exprs(m, t)]
    srt = [sorted_expr(t, r) for t in SEARCH_DTYPES for r in (False, True)]
    return [("search_arg", FILE, arg), ("search_sorted", FILE, srt)]
