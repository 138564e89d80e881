"""Name expressions and launch geometry for ``fused_norm.cuh`` (pure Python, no CuPy)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import ctype

FILE = "fused_norm.cuh"
FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
KERNELS = ("softmax_rows", "logsumexp_rows", "softmax_rows_backward", "layer_norm",
           "layer_norm_backward", "rms_norm", "rms_norm_backward", "norm_column_sums")

#: dynamic shared memory a block may take: CUDA allows 48 KiB less the static shared memory
#: (the reductions' few hundred bytes) without an opt-in; AMD workgroups have 64 KiB of LDS
SMEM_BUDGET = 46 * 1024
#: columns each thread of a team takes (about): enough loads in flight, few threads idle
COLS_PER_THREAD = 8
MAX_BLOCK = 1024
#: block size when teams are at most a warp (several rows per block)
SMALL_TEAMS_BLOCK = 256
#: threads an SM / CU keeps resident (NVIDIA 2048; AMD 2048-2560): the grid fills it once
THREADS_PER_SM = 2048


def expr(kernel: str, dt) -> str:
    return f"hf::fused_{kernel}<{ctype(dt)}>"


def exprs(dt) -> list:
    """Every kernel of one dtype: the GPU backend compiles them as one module."""
    return [expr(k, dt) for k in KERNELS]


def instances():
    return [("fused_norm", FILE, [e for t in FLOATS for e in exprs(t)])]


@dataclass(frozen=True)
class Geometry:
    tpr: int          # threads per row (a power of two)
    block: int
    grid: int
    cache: bool       # the rows' operands are kept in shared memory between passes
    acc_shared: bool  # the column accumulators live in shared memory
    smem: int         # dynamic shared memory per block, bytes


def team_size(cols: int) -> int:
    """Threads per row: the power of two giving each about COLS_PER_THREAD columns."""
    tpr = 1
    while tpr < MAX_BLOCK and tpr * COLS_PER_THREAD < cols:
        tpr *= 2
    return tpr


def geometry(rows: int, cols: int, itemsize: int, n_cache: int, n_acc: int,
             sm_count: int) -> Geometry:
    """Launch geometry of a fused_norm row kernel that can cache n_cache operands per row and
    keeps n_acc column accumulators per team. It depends on shapes and the SM count only,
    so the order of every sum (and the result) repeats from run to run."""
    tpr = team_size(cols)
    block = tpr if tpr > 32 else SMALL_TEAMS_BLOCK
    teams = block // tpr
    groups = -(-rows // teams)
    grid = max(1, min(groups, sm_count * (THREADS_PER_SM // block)))
    row_bytes = teams * cols * itemsize
    # Several teams per block combine their accumulators in shared memory, so they must fit
    # there; they do: cols <= 8 * tpr gives teams * cols <= 2048.
    acc_shared = n_acc > 0 and (teams > 1 or n_acc * row_bytes <= SMEM_BUDGET)
    assert teams == 1 or n_acc * row_bytes <= SMEM_BUDGET
    left = SMEM_BUDGET - (n_acc * row_bytes if acc_shared else 0)
    cache = n_cache > 0 and n_cache * row_bytes <= left
    smem = row_bytes * (n_cache * cache + n_acc * acc_shared)
    return Geometry(tpr, block, grid, cache, acc_shared, smem)
