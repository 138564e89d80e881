"""Name expressions and the work split of ``fused_batchnorm.cuh`` (pure Python, no CuPy)."""
from __future__ import annotations

from math import gcd

import numpy as np

from ...kernels import ctype

FILE = "fused_batchnorm.cuh"
FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
BLOCK = 256         # HF_BN_BLOCK
MIN_CHUNK = 4096    # values per task at least: 16 per thread
ONE_CHUNK = 16384   # a statistic of at most this many values (64 per thread) is one task:
                    # its block finishes it and normalises in the same launch
TASKS = 1024        # tasks (blocks) to aim for: a few per CU/SM on the largest GPUs ...
MERGE_TASKS = 256   # ... but fewer, longer ones for the passes that merge tiles (g > 1):
                    # a tile task's merge costs about what its loads do (H200: the
                    # statistics of 8192 x 1024 54 -> 24 us, of 65536 x 64 35 -> 20)
ROW = 32            # rows at least this long: one channel per task (bn_visit) ...
LINE = 128          # ... else tiles of g channels, g * s values of a row about this many bytes
HOLD = 8            # HF_BN_HOLD: rows of a tile a thread holds at a time (of one operand)
FEW = 32            # HF_BN_FEW: statistics of at most this many chunks: one thread's finish
SLOTS = 8           # HF_BN_SLOTS: values a team lane holds (gn_team_*)
TEAM_M = (1, 2, 4, 8)  # the gn_team_* instances: values per lane and statistic
ROWS_MIN = 64       # group norm backward on rows of at least this many values: gn_grad_rows
MAX_ROWS = BLOCK    # rows per gn_grad_rows task at most (one scratch slot each)

#: hf::bn_tiling by value
TILING = np.dtype([(f, "<i8") for f in ("n", "c", "s", "g", "chunk", "n_chunks")])
#: hf::gn_rows_tiling by value
ROWS_TILING = np.dtype([(f, "<i8") for f in ("n", "groups", "cg", "s", "m", "pieces", "pc",
                                             "n_chunks")])


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _want(groups: int, values: int, tasks: int = TASKS) -> int:
    """Chunks for a group's values: one when few (one launch per op), else about `tasks`
    tasks in all, MIN_CHUNK values each at least."""
    if values <= ONE_CHUNK:
        return 1
    return max(1, min(_cdiv(tasks, groups), values // MIN_CHUNK))


def tiling(n: int, c: int, s: int, itemsize: int, merge: bool = True):
    """Cut x viewed as (n, c, s), n * c * s > 0, into tasks for bn_visit (see the .cuh):
    returns (the hf::bn_tiling fields as a dict, the number of tasks). merge: the split of
    the passes that merge statistics or sums (and of every pass when each statistic is one
    chunk); else of a pass that only maps values (bn_apply, bn_dx after a chunked
    statistic), which may cut tiles finer. The split depends on the shapes alone, so the
    order of every sum does too."""
    v = 16 // itemsize
    # one channel per task unless the channel has fewer values than a block has threads,
    # and always for one channel (g == 1 means chunks of values, not rows, in bn_visit)
    if c == 1 or s > BLOCK // 2 or (s >= ROW and n * s >= BLOCK):
        g, groups, values = 1, c, n * s
        want = _want(c, values)
        chunk = _cdiv(values, want)
        if s % v == 0:  # keep chunks packed (multiples of V)
            chunk = _cdiv(chunk, v) * v
        n_chunks = _cdiv(values, chunk)
    else:  # tiles of g >= 2 channels, chunks of rows
        g = tile_channels(c, s, itemsize)
        groups = _cdiv(c, g)
        want = _want(groups, n * g * s, MERGE_TASKS if merge else TASKS)
        chunk = _cdiv(n, want)
        if want > 1:  # whole steps of the block (lanes rows side by side, HOLD each)
            step = BLOCK // _cdiv(g * s, v) * HOLD
            chunk = _cdiv(chunk, step) * step
        n_chunks = _cdiv(n, chunk)
    fields = dict(n=n, c=c, s=s, g=g, chunk=chunk, n_chunks=n_chunks)
    return fields, groups * n_chunks


def tile_channels(c: int, s: int, itemsize: int) -> int:
    """g of a tile (2 <= c, s <= BLOCK / 2): rows of about LINE bytes, at least two channels,
    g * s a multiple of V (each tile's rows start on a 16-byte boundary of packed rows)
    unless the tile is every channel."""
    v = 16 // itemsize
    g = max(2, _cdiv(LINE // itemsize, s))
    unit = v // gcd(s, v)
    return min(c, _cdiv(g, unit) * unit)


def stats_view(n: int, c: int, s: int, groups: int):
    """Group norm's statistics: x as (1, n * groups, k = c / groups * s) (gn_visit)."""
    return 1, n * groups, c // groups * s


def uses_team(k: int) -> bool:
    """Group norm statistics of k values go to the gn_team_* kernels (k < BLOCK), else to
    the block kernels on the statistic view, whose tiling then has g == 1."""
    return k < BLOCK


def uses_rows(s: int, k: int) -> bool:
    """Group norm backward of rows of s values, statistics of k: gn_grad_rows (dgamma, dbeta
    from per-(channel, sample) partials of the statistics pass) when the rows are long, so
    those partials are small next to x; else gn_grad (or the teams) and grad_cols."""
    return s >= ROWS_MIN and not uses_team(k)


def rows_tiling(n: int, c: int, s: int, groups: int, itemsize: int):
    """gn_grad_rows's split (see the .cuh): (the hf::gn_rows_tiling fields as a dict, the
    number of tasks). Chunks per statistic as ``tiling``'s (_want), cut along rows: m whole
    rows a task, or, for fewer rows than chunks, each row in pieces of pc values (a multiple
    of V when rows are packed), so that a task's sums are whole (channel, sample, piece)
    partials."""
    cg, stats = c // groups, n * groups
    want = _want(stats, cg * s)
    m, pieces, pc = 1, 1, s
    if want <= cg:
        m = min(MAX_ROWS, _cdiv(cg, want))
        n_chunks = _cdiv(cg, m)
    else:
        v = 16 // itemsize
        pc = _cdiv(s, _cdiv(want, cg))
        if s % v == 0:
            pc = _cdiv(pc, v) * v
        pieces = _cdiv(s, pc)
        n_chunks = cg * pieces
    fields = dict(n=n, groups=groups, cg=cg, s=s, m=m, pieces=pieces, pc=pc, n_chunks=n_chunks)
    return fields, stats * n_chunks


def team(k: int):
    """(tm, M) of gn_team_*: tm lanes per statistic (a power of two <= 32), M values per lane
    (a power of two, M * tm >= k); 0 < k < BLOCK."""
    tm = 1
    while tm < min(k, 32):
        tm *= 2
    m = 1
    while m * tm < k:
        m *= 2
    assert m <= SLOTS
    return tm, m


def team_per_block(k: int) -> int:
    """Statistics a block of gn_team_* takes per pass (teams * U)."""
    tm, m = team(k)
    return BLOCK // tm * (SLOTS // m)


def tiling_arg(fields: dict, dtype=TILING) -> np.ndarray:
    """bn_tiling / bn_rows_tiling by value: a 0-d structured array, which every CuPy
    packs as a kernel argument (a np.void scalar fails on CuPy 13: _engine.struct_arg)."""
    a = np.zeros((), dtype)
    for k, val in fields.items():
        a[k] = val
    return a


def _b(flag: bool) -> str:
    return "true" if flag else "false"


def stats_expr(dt, gn: bool, one: bool, tile: bool) -> str:
    return f"hf::bn_stats<{ctype(dt)}, {_b(gn)}, {_b(one)}, {_b(tile)}>"


def apply_expr(dt, from_var: bool, gn: bool, tile: bool) -> str:
    return f"hf::bn_apply<{ctype(dt)}, {_b(from_var)}, {_b(gn)}, {_b(tile)}>"


GRAD_MODES = {"train": 0, "eval": 1, "cols": 2}  # hf::BN_TRAIN, BN_EVAL, GN_COLS


def grad_expr(dt, mode: str, one: bool, tile: bool) -> str:
    return f"hf::bn_grad<{ctype(dt)}, {GRAD_MODES[mode]}, {_b(one)}, {_b(tile)}>"


def gn_grad_expr(dt, one: bool) -> str:
    return f"hf::gn_grad<{ctype(dt)}, {_b(one)}>"


def gn_grad_rows_expr(dt, one: bool) -> str:
    return f"hf::gn_grad_rows<{ctype(dt)}, {_b(one)}>"


def dx_expr(dt, gn: bool, tile: bool) -> str:
    return f"hf::bn_dx<{ctype(dt)}, {_b(gn)}, {_b(tile)}>"


def update_running_expr(dt) -> str:
    return f"hf::bn_update_running<{ctype(dt)}>"


def team_expr(dt, backward: bool, m: int) -> str:
    return f"hf::gn_team_{'backward' if backward else 'forward'}<{ctype(dt)}, {m}>"


def exprs(dt, topic: str) -> dict:
    """The kernels of one dtype and topic ("bn": batch norm, "gn": group norm; + "_tile":
    their kernels that visit x on a split in tiles, g > 1) by a short name; the CuPy
    backend compiles a topic's kernels together, when first used. The kernels of a
    statistic's finish come twice: name (chunked) and name + "_one"."""
    gn, tile = topic.startswith("gn"), topic.endswith("_tile")
    ex = {"apply": apply_expr(dt, False, gn, tile), "dx": dx_expr(dt, gn, tile)}
    for one, sfx in ((False, ""), (True, "_one")):
        if gn:
            ex["grad_cols" + sfx] = grad_expr(dt, "cols", one, tile)
            if not tile:  # on the statistic view (g == 1)
                ex.update({"gn_stats" + sfx: stats_expr(dt, True, one, False),
                           "gn_grad" + sfx: gn_grad_expr(dt, one),
                           "gn_grad_rows" + sfx: gn_grad_rows_expr(dt, one)})
        else:
            ex.update({"stats" + sfx: stats_expr(dt, False, one, tile),
                       "grad_train" + sfx: grad_expr(dt, "train", one, tile),
                       "grad_eval" + sfx: grad_expr(dt, "eval", one, tile)})
    if not gn:
        ex["apply_var"] = apply_expr(dt, True, False, tile)
    if topic == "bn":
        ex["update_running"] = update_running_expr(dt)
    if topic == "gn":
        for m in TEAM_M:
            ex[f"gn_team_forward_{m}"] = team_expr(dt, False, m)
            ex[f"gn_team_backward_{m}"] = team_expr(dt, True, m)
    return ex


# topic -> instance group
TOPICS = {"bn": "fused_batchnorm", "bn_tile": "fused_batchnorm_tile", "gn": "fused_batchnorm_gn",
          "gn_tile": "fused_batchnorm_gn_tile"}


def instances():
    return [(group, FILE, [e for t in FLOATS for e in exprs(t, topic).values()])
            for topic, group in TOPICS.items()]


def moments_bytes(dt) -> int:
    """sizeof(hf::bn_moments<T>): mean, m2, an int64 count."""
    return 2 * np.dtype(dt).itemsize + 8


def sums_bytes(dt) -> int:
    """sizeof(hf::bn_sums<T>)."""
    return 2 * np.dtype(dt).itemsize
