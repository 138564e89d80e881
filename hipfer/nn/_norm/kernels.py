"""Name expressions and launch geometry for ``fused_norm.cuh`` (pure Python, no CuPy)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from ...kernels import ctype

FILE = "fused_norm.cuh"
FLOATS = (np.dtype(np.float32), np.dtype(np.float64))

#: the row kernels, with the values of each row operand a thread keeps in registers per
#: tile for 4-byte dtypes (8-byte ones keep half as many: the same bytes). About 32
#: registers of row data a thread, so that a 1024-thread block fits the register file:
#: one kept operand -> 32; grad and y -> 16 each; grad, xhat and the dgamma, dbeta sums
#: -> 8 each (RMS norm: one sum less, kept the same).
VALUES = {"softmax_rows": 32, "logsumexp_rows": 32, "softmax_rows_backward": 16,
          "layer_norm": 32, "layer_norm_backward": 8, "rms_norm": 32, "rms_norm_backward": 8}
#: column sums (dgamma [, dbeta]) a backward row kernel produces
N_ACC = {"layer_norm_backward": 2, "rms_norm_backward": 1}
KERNELS = tuple(VALUES) + ("norm_column_products", "norm_column_sums")

MAX_BLOCK = 1024          # HF_NORM_MAX_BLOCK
#: the forward kernels are compiled for blocks of up to the largest of their FWD_BOUNDS
#: (HF_NORM_FWD_BOUNDS), and a launch takes the instantiation of the smallest bound that
#: holds its block. softmax also has one for blocks of up to 256, for which CUDA keeps 3
#: blocks an SM (<= 80 registers, 24 warps instead of 16). Measured on an H200 (one run
#: each): float64 softmax and logsumexp 13-17% faster at 1000 and 4096 columns, float32
#: within +-5%; layer_norm spilled under the bound and ran 6-10% slower, rms_norm within
#: +-3%, so those two keep the one instantiation. logsumexp's blocks are at most 256
#: threads (4 an SM on CUDA with float32: HF_NORM_LSE_BOUNDS)
FORWARD = ("softmax_rows", "logsumexp_rows", "layer_norm", "rms_norm")
FWD_BOUNDS = {"softmax_rows": (256, 512), "logsumexp_rows": (256,), "layer_norm": (512,),
              "rms_norm": (512,)}
#: forward kernels with a second instantiation that holds twice the values a thread, for
#: rows longer than one tile of MAX_TEAMS threads at VALUES and at most one at twice that
#: (float32: 16385 to 32768 columns). Such a row stays in registers, read once, instead
#: of two tiles, the first read twice; it costs registers (up to 128, one 512-thread
#: block an SM, as the 32-value instantiation at 96 already has)
LONG_ROWS = ("softmax_rows", "layer_norm", "rms_norm")
#: the largest team (threads per row; a team wider than 32 is the block) of each row
#: kernel: the forward ones are compiled for at most 512 threads, so that their rows stay
#: in registers unspilled; logsumexp for blocks of at most 256 (lse_team_size)
MAX_TEAMS = {k: max(FWD_BOUNDS[k]) if k in FORWARD else MAX_BLOCK for k in VALUES}
#: the tiles of a logsumexp row longer than a 32-thread team holds (lse_team_size)
LSE_TILES = 8
#: the grid of the forward row kernels, in waves of the resident blocks; 0: a block per
#: row group (the rows are independent, so the grid does not change a result). Measured on
#: an H200 (float32, 64 to 32768 columns), against a grid of one wave: a block per group
#: took layer_norm 0.228 -> 0.206 ms and rms_norm 0.153 -> 0.141 ms at 65536 x 1000
#: (softmax 1-4% faster), while logsumexp, which only reads, was best at two waves
FWD_GRID_WAVES = {"softmax_rows": 0, "layer_norm": 0, "rms_norm": 0, "logsumexp_rows": 2}
#: block size when teams are at most a warp (several rows per block)
SMALL_TEAMS_BLOCK = 256
#: threads an SM / CU keeps resident (NVIDIA 2048; AMD 2048-2560), when the occupancy
#: the compiled kernel allows is not known
THREADS_PER_SM = 2048
COL_LANES = 32            # HF_NORM_COL_LANES
ROW_LANES = 8             # HF_NORM_ROW_LANES: fused_norm_column_products has 32 * 8 threads
SUMS_BLOCK = 1024         # fused_norm_column_sums: 32 columns x 32 row lanes
MAX_GRID_Y = 65535
MAX_GRID_X = 2 ** 31 - 1


def values(kernel: str, itemsize: int) -> int:
    """Values of each row operand a thread of `kernel` holds per tile."""
    return VALUES[kernel] * 4 // itemsize


def vector_width(itemsize: int) -> int:
    """Values in one 16-byte load."""
    return 16 // itemsize


def expr(kernel: str, dt, block: int = MAX_BLOCK, long: bool = False) -> str:
    """The instantiation of kernel for dt that launches blocks of `block` threads (long:
    LONG_ROWS's, twice the values a thread, blocks of MAX_TEAMS)."""
    dt = np.dtype(dt)
    v = values(kernel, dt.itemsize) * (2 if long else 1) if kernel in VALUES else 0
    if long and (kernel not in LONG_ROWS or block > MAX_TEAMS[kernel]):
        raise ValueError(f"{kernel} has no long-row instantiation for blocks of {block} threads")
    if kernel in FORWARD:
        bounds = (MAX_TEAMS[kernel],) if long else FWD_BOUNDS[kernel]
        bound = min((b for b in bounds if b >= block), default=None)
        if bound is None:
            raise ValueError(f"{kernel} has no instantiation for blocks of {block} threads")
        return f"hf::fused_{kernel}<{ctype(dt)}, {v}, {bound}>"
    if kernel in VALUES:
        return f"hf::fused_{kernel}<{ctype(dt)}, {v}>"
    return f"hf::fused_{kernel}<{ctype(dt)}>"


def exprs(dt) -> list:
    """Every kernel of one dtype: the GPU backend compiles them as one module."""
    return ([expr(k, dt, b) for k in KERNELS for b in FWD_BOUNDS.get(k, (MAX_BLOCK,))] +
            [expr(k, dt, MAX_TEAMS[k], long=True) for k in LONG_ROWS])


def instances():
    return [("fused_norm", FILE, [e for t in FLOATS for e in exprs(t)])]


@dataclass(frozen=True)
class Geometry:
    tpr: int     # threads per row (a power of two)
    block: int
    grid: int
    tiles: int   # tiles of tpr * v columns a row takes (1: rows stay in registers)
    smem: int    # dynamic shared memory per block, bytes (the teams' column sums)
    long: bool = False  # the LONG_ROWS instantiation: v is twice values()
    v: int = 0   # values of a row operand a thread holds per tile


def team_size(cols: int, per_thread: int, max_block: int = MAX_BLOCK) -> int:
    """Threads per row: the fewest (a power of two, at most max_block) that hold a row of
    cols at per_thread values each. Fewer threads with full registers keep more rows in
    flight than more threads with idle ones (the registers are allocated either way)."""
    tpr = 1
    while tpr < max_block and tpr * per_thread < cols:
        tpr *= 2
    return tpr


def lse_team_size(cols: int, per_thread: int) -> int:
    """logsumexp's threads per row: the fewest (up to 32) that hold the row in one tile, as
    team_size; a longer row, the fewest (up to MAX_TEAMS) that hold it in LSE_TILES tiles.
    A team reduces once a row (a max, then a sum: two barriers when it spans warps) and
    each thread rescales its sum once a row, so more values a thread and fewer team steps
    a value pay, until a few long rows leave the device idle. H200, of the copy floor:
    float32 with one tile of the fewest threads 0.86, 0.81 and 0.53 at 4096, 8192 and
    32768 columns (16384, 8192, 2048 rows); with 16, 32 and 128 threads a row in 8 tiles
    0.94, 0.95 and 0.95. float64 at 1000 columns 0.62 -> 0.82 (8 threads)."""
    tpr = team_size(cols, per_thread, 32)
    if tpr * per_thread >= cols:
        return tpr
    return team_size(cols, per_thread * LSE_TILES, MAX_TEAMS["logsumexp_rows"])


def geometry(kernel: str, rows: int, cols: int, itemsize: int, sm_count: int,
             resident: Optional[Callable[[int, int], int]] = None) -> Geometry:
    """Launch geometry of a row kernel. resident(block, smem, long): blocks an SM keeps of
    the compiled kernel (the occupancy; THREADS_PER_SM // block when None). The grid is what
    the device keeps resident (FWD_GRID_WAVES for the forward kernels; fewer blocks when
    the rows run out), each block looping over its row groups. It depends on the shapes
    and the device alone, so the order of every sum (and the result) repeats from run to
    run."""
    v, top = values(kernel, itemsize), MAX_TEAMS[kernel]
    if cols >= 2 ** 31 - top * v:  # columns within a row are 32-bit in the kernels
        raise ValueError(f"{kernel}: rows of {cols} columns are too long for the GPU kernels "
                         f"(at most {2 ** 31 - top * v - 1})")
    long = kernel in LONG_ROWS and top * v < cols <= top * 2 * v
    if long:
        v *= 2
    tpr = lse_team_size(cols, v) if kernel == "logsumexp_rows" else team_size(cols, v, top)
    block = tpr if tpr > 32 else SMALL_TEAMS_BLOCK
    teams = block // tpr
    tiles = max(1, -(-cols // (tpr * v)))
    n_acc = N_ACC.get(kernel, 0)
    assert teams == 1 or tiles == 1 or not n_acc  # the column sums of sub-warp teams: whole rows
    # teams combine their column sums in shared memory: teams * cols <= block * v values
    smem = teams * n_acc * cols * itemsize if n_acc and teams > 1 else 0
    per_sm = resident(block, smem, long) if resident is not None else THREADS_PER_SM // block
    groups = -(-rows // teams)
    waves = FWD_GRID_WAVES.get(kernel, 1)
    wave = sm_count * max(1, per_sm)
    grid = max(1, min(groups, MAX_GRID_X) if waves == 0 else min(groups, waves * wave))
    return Geometry(tpr, block, grid, tiles, smem, long, v)


@dataclass(frozen=True)
class ProductsGeometry:
    """fused_norm_column_products: grid (col_blocks, chunks) over the rows, chunk rows each."""
    col_blocks: int
    chunks: int
    chunk: int


def products_geometry(rows: int, cols: int, itemsize: int, sm_count: int) -> ProductsGeometry:
    """Enough (column block, row chunk) blocks to fill the device; no chunk is empty."""
    col_blocks = max(1, -(-cols // (COL_LANES * vector_width(itemsize))))
    want = sm_count * (THREADS_PER_SM // (COL_LANES * ROW_LANES))
    chunks = max(1, min(-(-rows // ROW_LANES), -(-want // col_blocks), MAX_GRID_Y))
    chunk = max(1, -(-rows // chunks))
    return ProductsGeometry(col_blocks, max(1, -(-rows // chunk)), chunk)
