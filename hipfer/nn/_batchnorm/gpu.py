"""Fused batchnorm ops on the GPU (fused_batchnorm.cuh).

Every statistic is a fixed-order reduction (no float atomics: results repeat bit for bit)
finished in the launch that reads the data: when a statistic takes several chunks (tasks),
each stores a partial and the last task of its group, found by a ticket counter, merges
them in chunk order. When every statistic is one chunk, the same launch also normalises
(or forms dx); else that is one more pass. Group norm's short statistics (k < 256 values)
go to team kernels that do each op in one pass. The work split (kernels.py
``tiling``) is planned from the shapes.

Launches per call: batch_norm (with or without running statistics) and
batch_norm_backward 1 when each channel is one chunk, else 2; batch_norm_eval(_backward) 1;
group_norm 1 (2 for statistics of several chunks); group_norm_backward on rows of
s >= 64 values 1 (2 for statistics of several chunks: dx), dgamma / dbeta from the
statistics pass; on shorter rows 2 (3 for statistics of several chunks): dx, and dgamma /
dbeta.
"""
from __future__ import annotations

import threading
from math import prod

import cupy
import numpy as np

from ...backends.cupy._engine import get_kernels, grid_for
from ...prims.fused_ops import makers
from . import kernels as K, ops
from .ops import check_count, check_eps, check_momentum

I64 = np.int64
_PER_THREAD_STREAM = 2  # cudaStreamPerThread / hipStreamPerThread


def _kernels(dt, topic: str = "bn") -> dict:
    """The kernels of one dtype and topic ("bn", "gn": K.exprs) by short name; a topic's
    kernels compile together, once."""
    ex = K.exprs(dt, topic)
    return dict(zip(ex, get_kernels(K.FILE, tuple(ex.values()))))


def _ncs(shape):
    """x (N, C, *spatial) as (n, c, s)."""
    return shape[0], shape[1], prod(shape[2:])


def _aligned(*arrays) -> np.bool_:
    """16-byte loads and stores are allowed (the kernels use them on packed rows only)."""
    return np.bool_(all(a.data.ptr % 16 == 0 for a in arrays))


_counters: dict = {}


def _counters_for(n: int):
    """At least n ticket counters (uint32) of the last-task finish (bn_last_done), one set per
    device and stream: kernels on one stream run one after another, and each leaves its
    counters at 0 (the last ticket wraps them), so they are zeroed once, when allocated, and
    never by a launch per call; calls on two streams have two sets. The per-thread default
    stream is one handle for distinct streams, so there the thread is part of the key."""
    ptr = cupy.cuda.get_current_stream().ptr
    key = (cupy.cuda.runtime.getDevice(), ptr,
           threading.get_ident() if ptr == _PER_THREAD_STREAM else 0)
    buf = _counters.get(key)
    if buf is None or buf.size < n:
        # a grown set replaces the old one, which stream order keeps valid for the
        # launches already queued (CuPy's pool reuses it on this stream only, after them)
        buf = _counters[key] = cupy.zeros(max(n, 1024, 0 if buf is None else 2 * buf.size),
                                          np.uint32)
    return buf


class _Split:
    """One work split of x viewed as (n, c, s), the kernels of a topic ("bn", "gn") for
    it, and its launches: ``split(kernel, ...)`` for the passes that merge (with
    ``split.arg``), ``split.each(kernel, ...)`` for a pass that only maps values after a
    chunked statistic (with ``split.each_arg``: K.tiling's merge=False split)."""

    def __init__(self, n, c, s, dt, topic):
        fields, self.tasks = K.tiling(n, c, s, dt.itemsize)
        self.arg, self.n_chunks = K.tiling_arg(fields), I64(fields["n_chunks"])
        self.one = fields["n_chunks"] == 1  # each statistic one task: finished by its block
        self.g, self.c = fields["g"], c
        self.groups = self.tasks // fields["n_chunks"]
        self.ks = _kernels(dt, topic + "_tile" if self.g > 1 else topic)
        each, self.each_tasks = K.tiling(n, c, s, dt.itemsize, merge=False)
        self.each_arg = self.arg if each == fields else K.tiling_arg(each)

    def kernel(self, name: str):
        """The finishing kernel called name for this split: its one-chunk instance when that
        applies."""
        return self.ks[name + "_one"] if self.one else self.ks[name]

    def workspace(self, nbytes: int):
        """(partials, counters) of the last-task finish, or (None, None) when it needs none."""
        if self.one:
            return None, None
        part = cupy.empty(self.c * int(self.n_chunks) * nbytes, dtype=np.uint8)
        return part, _counters_for(self.groups)

    def __call__(self, kernel, *args):
        kernel((self.tasks,), (K.BLOCK,), args)

    def each(self, kernel, *args):
        kernel((self.each_tasks,), (K.BLOCK,), args)


def _batch_norm(desc, dtypes, shapes, outs):
    dt = outs[0][1]
    n, c, s = _ncs(shapes[0])
    split = _Split(n, c, s, dt, "bn") if n * c * s else None
    running = len(shapes) == 5  # batch_norm_running: + running_mean, running_var
    # (batch_norm_running's infer checked count >= 2)
    corr = dt.type(check_count(n * s) / (n * s - 1)) if running else dt.type(1)

    def launch(x, gamma, beta, y, mean, invstd, var, eps, rm, rv, keep, take):
        if split is None:  # no values: NaN statistics (0 / 0), as NumPy
            for a in (mean, invstd, var):
                a.fill(np.nan)
            return
        vec = _aligned(x, y)
        part, count = split.workspace(K.moments_bytes(dt))
        split(split.kernel("stats"), x, split.arg, vec, part, count, eps, mean, invstd, var, rm,
              rv, keep, take, corr, y, gamma, beta, I64(s), I64(1))
        if not split.one:
            split.each(split.ks["apply"], x, y, split.each_arg, vec, mean, invstd, gamma, beta,
                       I64(0), I64(1), eps)

    if running:
        def run(inputs, out, eps=1e-5, momentum=0.1):
            eps, m = dt.type(check_eps(eps)), check_momentum(momentum)
            x, gamma, beta, rm, rv = inputs
            launch(x, gamma, beta, *out, eps, rm, rv, dt.type(1 - m), dt.type(m))
    else:
        def run(inputs, out, eps=1e-5):
            eps = dt.type(check_eps(eps))
            x, gamma, beta = inputs
            launch(x, gamma, beta, *out, eps, None, None, dt.type(0), dt.type(0))
    return run


def _batch_norm_backward(desc, dtypes, shapes, outs):
    dt = outs[0][1]
    n, c, s = _ncs(shapes[0])
    split = _Split(n, c, s, dt, "bn") if n * c * s else None
    inv_count = dt.type(1 / (n * s)) if n * s else dt.type(0)

    def run(inputs, out):
        g, x, mean, invstd, gamma = inputs
        dx, dgamma, dbeta = out
        if split is None:  # sums of nothing
            dgamma.fill(0)
            dbeta.fill(0)
            return
        vec = _aligned(g, x, dx)
        part, count = split.workspace(K.sums_bytes(dt))
        uv = cupy.empty(2 * c, dt)
        u, v = uv[:c], uv[c:]
        split(split.kernel("grad_train"), g, x, split.arg, vec, mean, invstd, gamma, I64(0),
              I64(1), dt.type(0), dx, part, count, dgamma, dbeta, inv_count, u, v)
        if not split.one:
            split.each(split.ks["dx"], g, x, split.each_arg, vec, mean, invstd, gamma, u, v, I64(0),
                       I64(1), dx)
    return run


def _update_running(desc, dtypes, shapes, outs):
    dt = outs[0][1]
    c = shapes[0][0]
    kernel = _kernels(dt)["update_running"]

    def run(inputs, out, momentum=0.1, count=None):
        m, count = check_momentum(momentum), check_count(count)
        if c:
            rm, rv, mean, var = inputs
            kernel((grid_for(c),), (K.BLOCK,), (rm, rv, mean, var, out[0], out[1], I64(c),
                                                 dt.type(1 - m), dt.type(m),
                                                 dt.type(count / (count - 1))))
    return run


def _batch_norm_eval(desc, dtypes, shapes, outs):
    dt = outs[0][1]
    n, c, s = _ncs(shapes[0])
    split = _Split(n, c, s, dt, "bn") if n * c * s else None

    def run(inputs, out, eps=1e-5):
        eps = dt.type(check_eps(eps))
        if split is not None:
            x, gamma, beta, running_mean, running_var = inputs
            split.each(split.ks["apply_var"], x, out, split.each_arg, _aligned(x, out),
                       running_mean, running_var, gamma, beta, I64(0), I64(1), eps)
    return run


def _batch_norm_eval_backward(desc, dtypes, shapes, outs):
    dt = outs[0][1]
    n, c, s = _ncs(shapes[0])
    split = _Split(n, c, s, dt, "bn") if n * c * s else None

    def run(inputs, out, eps=1e-5):
        eps = dt.type(check_eps(eps))
        g, x, gamma, running_mean, running_var = inputs
        dx, dgamma, dbeta = out
        if split is None:
            dgamma.fill(0)
            dbeta.fill(0)
            return
        part, count = split.workspace(K.sums_bytes(dt))
        # (u, v are not written without UV)
        split(split.kernel("grad_eval"), g, x, split.arg, _aligned(g, x, dx), running_mean,
              running_var, gamma, I64(0), I64(1), eps, dx, part, count, dgamma, dbeta, dt.type(0),
              None, None)
    return run


class _Team:
    """A gn_team_* launch: statistics of k < BLOCK values, teams of lanes."""

    def __init__(self, ks, backward: bool, stats: int, k: int):
        self.tm, m = K.team(k)
        self.kernel = ks[f"gn_team_{'backward' if backward else 'forward'}_{m}"]
        # results do not depend on the grid (one team per statistic, fixed order)
        self.grid = grid_for(stats, K.team_per_block(k), 1, 8)

    def __call__(self, *args):
        self.kernel((self.grid,), (K.BLOCK,), args)


def _group_norm(desc, dtypes, shapes, outs):
    dt = outs[0][1]
    n, c, s = _ncs(shapes[0])
    groups = desc.get("groups")
    _, stats, k = K.stats_view(n, c, s, groups)
    ks = _kernels(dt, "gn")
    team = split_stats = split = None
    if stats * k and K.uses_team(k):
        team = _Team(ks, False, stats, k)
    elif stats * k:
        split_stats = _Split(1, stats, k, dt, "gn")  # g == 1: one statistic per task
        assert split_stats.g == 1
        if not split_stats.one:  # normalising in a launch of its own: x as (n, c, s)
            split = _Split(n, c, s, dt, "gn")

    def run(inputs, out, eps=1e-5):
        eps = dt.type(check_eps(eps))
        x, gamma, beta = inputs
        y, mean, rstd = out
        if team is not None:
            team(x, y, gamma, beta, mean, rstd, I64(stats), I64(k), I64(s), I64(groups),
                 np.int32(team.tm), eps)
            return
        if split_stats is None:
            mean.fill(np.nan)
            rstd.fill(np.nan)
            return
        vec = _aligned(x, y)
        part, count = split_stats.workspace(K.moments_bytes(dt))
        split_stats(split_stats.kernel("gn_stats"), x, split_stats.arg, vec, part, count, eps, mean, rstd, None,
                    None, None, dt.type(0), dt.type(0), dt.type(1), y, gamma, beta, I64(s),
                    I64(groups))
        if split is not None:
            split.each(split.ks["apply"], x, y, split.each_arg, vec, mean, rstd, gamma, beta,
                       I64(groups), I64(c // groups), eps)
    return run


def _group_norm_backward(desc, dtypes, shapes, outs):
    dt = outs[0][1]
    n, c, s = _ncs(shapes[0])
    groups = shapes[2][1]
    cg = c // groups
    _, stats, k = K.stats_view(n, c, s, groups)
    ks = _kernels(dt, "gn")
    inv_count = dt.type(1 / k) if k else dt.type(0)
    rows = team = split_stats = split = cols = None
    if n * c * s and K.uses_rows(s, k):
        # long rows: dgamma, dbeta from per-(channel, sample) partials of the statistics
        # pass (5 arrays of traffic: g, x twice, dx), then dx in the same launch (one chunk
        # a statistic) or in a second
        fields, tasks = K.rows_tiling(n, c, s, groups, dt.itemsize)
        rows = (K.tiling_arg(fields, K.ROWS_TILING), tasks, fields["n_chunks"] == 1,
                c * n * fields["pieces"], stats * fields["n_chunks"])
        if not rows[2]:
            split = _Split(n, c, s, dt, "gn")
    elif n * c * s:
        # dgamma, dbeta: sums over (n, s) per channel, with the statistics per (sample, group)
        cols = _Split(n, c, s, dt, "gn")
        if K.uses_team(k):
            team = _Team(ks, True, stats, k)
        else:  # u, v per (sample, group) over the statistic view, then dx
            split_stats = _Split(1, stats, k, dt, "gn")
            assert split_stats.g == 1
            if not split_stats.one:
                split = _Split(n, c, s, dt, "gn")

    def run(inputs, out):
        g, x, mean, rstd, gamma = inputs
        dx, dgamma, dbeta = out
        if rows is None and cols is None:
            dgamma.fill(0)
            dbeta.fill(0)
            return
        vec = _aligned(g, x, dx)
        if team is None:
            uv = cupy.empty(2 * stats, dt)
            u, v = uv[:stats], uv[stats:]
        if rows is not None:
            arg, tasks, one, n_ch, n_part = rows
            nb = K.sums_bytes(dt)
            part_ch = cupy.empty(n_ch * nb, dtype=np.uint8)
            part = None if one else cupy.empty(n_part * nb, dtype=np.uint8)
            count = _counters_for(groups + (0 if one else stats))
            ks["gn_grad_rows_one" if one else "gn_grad_rows"](
                (tasks,), (K.BLOCK,), (g, x, arg, vec, mean, rstd, gamma, inv_count, part,
                                       part_ch, count, u, v, dx, dgamma, dbeta))
        elif team is not None:
            team(g, x, mean, rstd, gamma, dx, I64(stats), I64(k), I64(s), I64(groups),
                 np.int32(team.tm), inv_count)
        else:
            part, count = split_stats.workspace(K.sums_bytes(dt))
            split_stats(split_stats.kernel("gn_grad"), g, x, split_stats.arg, I64(s),
                        I64(groups), vec, mean, rstd, gamma, inv_count, part, count, u, v, dx)
        if split is not None:
            split.each(split.ks["dx"], g, x, split.each_arg, vec, mean, rstd, gamma, u, v,
                       I64(groups), I64(cg), dx)
        if cols is not None:
            part, count = cols.workspace(K.sums_bytes(dt))
            cols(cols.kernel("grad_cols"), g, x, cols.arg, _aligned(g, x), mean, rstd,
                 gamma, I64(groups), I64(cg), dt.type(0), None, part, count, dgamma, dbeta,
                 dt.type(0), None, None)
    return run


MAKERS = makers(ops.OPS, {
    ops.BATCH_NORM: _batch_norm, ops.BATCH_NORM_RUNNING: _batch_norm,
    ops.BATCH_NORM_BACKWARD: _batch_norm_backward, ops.BATCH_NORM_UPDATE_RUNNING: _update_running,
    ops.BATCH_NORM_EVAL: _batch_norm_eval, ops.BATCH_NORM_EVAL_BACKWARD: _batch_norm_eval_backward,
    ops.GROUP_NORM: _group_norm, ops.GROUP_NORM_BACKWARD: _group_norm_backward})
