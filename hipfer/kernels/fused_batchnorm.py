"""Name expressions and the work split of ``fused_batchnorm.cuh`` (pure Python, no CuPy)."""
from __future__ import annotations

import numpy as np

from . import ctype

FILE = "fused_batchnorm.cuh"
FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
BLOCK = 256         # HF_BN_BLOCK
MIN_CHUNK = 4096    # values per task at least: 16 per thread
TASKS = 1024        # tasks (blocks) to aim for: a few per CU/SM on the largest GPUs
ROW = 32            # rows at least this long: one channel per task (bn_visit) ...
FEW = 32            # HF_BN_FEW: results of at most this many terms are merged by one thread
FINISH_BLOCKS = 65536

#: hf::bn_tiling by value
TILING = np.dtype([(f, "<i8") for f in ("n", "c", "s", "g", "chunk", "n_chunks")])


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def tiling(n: int, c: int, s: int, itemsize: int, per_row: bool = False):
    """Cut x viewed as (n, c, s), n * c * s > 0, into tasks for bn_visit (see the .cuh):
    returns (the hf::bn_tiling fields as a dict, the number of tasks). The split depends on
    the shapes alone, so the order of every sum does too. per_row: one chunk per row n
    (group norm's backward wants its sums per (channel, sample))."""
    v = 16 // itemsize
    # ... unless the channel has fewer values than a block has threads
    if s >= BLOCK or (s >= ROW and n * s >= BLOCK):  # one channel per task, chunks of its values
        g, groups, values = 1, c, n * s
        if per_row:
            chunk = s
        else:
            want = max(1, min(_cdiv(TASKS, c), values // MIN_CHUNK))
            chunk = _cdiv(values, want)
            if s % v == 0:  # keep chunks packed (multiples of V)
                chunk = _cdiv(chunk, v) * v
        n_chunks = _cdiv(values, chunk)
    else:  # g channels per task, chunks of rows
        g = min(c, BLOCK // s)
        groups = _cdiv(c, g)
        want = n if per_row else max(1, min(_cdiv(TASKS, groups), n * g * s // MIN_CHUNK))
        chunk = _cdiv(n, want)
        n_chunks = _cdiv(n, chunk)
    fields = dict(n=n, c=c, s=s, g=g, chunk=chunk, n_chunks=n_chunks)
    return fields, groups * n_chunks


def finish_grid(n_out: int, n_terms: int, threads_grid: int) -> int:
    """Blocks of a finish kernel (bn_finish): one thread per result when terms are few
    (threads_grid: the launch for that), else one block per result (looping past the cap)."""
    return threads_grid if n_terms <= FEW else min(n_out, FINISH_BLOCKS)


def tiling_arg(fields: dict) -> np.void:
    a = np.zeros((), TILING)
    for k, val in fields.items():
        a[k] = val
    return a[()]


def stats_expr(dt) -> str:
    return f"hf::bn_stats<{ctype(dt)}>"


def stats_finish_expr(dt) -> str:
    return f"hf::bn_stats_finish<{ctype(dt)}>"


def apply_expr(dt, from_var: bool) -> str:
    return f"hf::bn_apply<{ctype(dt)}, {'true' if from_var else 'false'}>"


def grad_sums_expr(dt, eval_: bool) -> str:
    return f"hf::bn_grad_sums<{ctype(dt)}, {'true' if eval_ else 'false'}>"


def grad_finish_expr(dt, uv: bool) -> str:
    return f"hf::bn_grad_finish<{ctype(dt)}, {'true' if uv else 'false'}>"


def gn_grad_finish_expr(dt) -> str:
    return f"hf::gn_grad_finish<{ctype(dt)}>"


def dx_expr(dt) -> str:
    return f"hf::bn_dx<{ctype(dt)}>"


def update_running_expr(dt) -> str:
    return f"hf::bn_update_running<{ctype(dt)}>"


def exprs(dt) -> dict:
    """Every kernel of one dtype by a short name (the CuPy backend compiles them together)."""
    return {"stats": stats_expr(dt), "stats_finish": stats_finish_expr(dt),
            "apply": apply_expr(dt, False), "apply_var": apply_expr(dt, True),
            "grad_sums": grad_sums_expr(dt, False), "grad_sums_eval": grad_sums_expr(dt, True),
            "grad_finish": grad_finish_expr(dt, False),
            "grad_finish_uv": grad_finish_expr(dt, True),
            "gn_grad_finish": gn_grad_finish_expr(dt), "dx": dx_expr(dt),
            "update_running": update_running_expr(dt)}


def instances():
    return [("fused_batchnorm", FILE, [e for t in FLOATS for e in exprs(t).values()])]


def moments_bytes(dt) -> int:
    """sizeof(hf::bn_moments<T>): mean, m2, an int64 count."""
    return 2 * np.dtype(dt).itemsize + 8


def sums_bytes(dt) -> int:
    """sizeof(hf::bn_sums<T>)."""
    return 2 * np.dtype(dt).itemsize
