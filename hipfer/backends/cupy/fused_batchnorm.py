"""Fused batchnorm ops on the GPU (hipfer/kernels/fused_batchnorm.cuh).

Every statistic is a fixed-order reduction in two launches: partials per (statistic,
chunk) from one pass over the data, then one block per statistic merging them in order
(no float atomics: results repeat bit for bit). Normalising or forming dx is one more
pass. The work split (kernels/fused_batchnorm.py ``tiling``) is planned from the shapes.
"""
from __future__ import annotations

from math import prod

import cupy
import numpy as np

from ...kernels import fused_batchnorm as K
from ...prims.fused_ops.batchnorm import check_count, check_eps, check_momentum
from ._engine import get_kernels, grid_for

I64 = np.int64


def _kernels(dt) -> dict:
    ex = K.exprs(dt)
    return dict(zip(ex, get_kernels(K.FILE, tuple(ex.values()))))


def _ncs(shape):
    """x (N, C, *spatial) as (n, c, s)."""
    return shape[0], shape[1], prod(shape[2:])


def _aligned(*arrays) -> np.bool_:
    """16-byte loads and stores are allowed (the kernels use them on packed rows only)."""
    return np.bool_(all(a.data.ptr % 16 == 0 for a in arrays))


def _workspace(n: int, nbytes: int):
    return cupy.empty(n * nbytes, dtype=np.uint8)


class _Split:
    """One work split of x viewed as (n, c, s) and its launch."""

    def __init__(self, n, c, s, dt, per_row=False):
        fields, self.tasks = K.tiling(n, c, s, dt.itemsize, per_row)
        self.arg, self.n_chunks = K.tiling_arg(fields), I64(fields["n_chunks"])

    def __call__(self, kernel, *args):
        kernel((self.tasks,), (K.BLOCK,), args)


def _finish(kernel, n_out: int, n_terms: int, *args):
    """A bn_finish kernel: n_out results of n_terms terms each."""
    kernel((K.finish_grid(n_out, n_terms, grid_for(n_out)),), (K.BLOCK,), args)


def _batch_norm(desc, dtypes, shapes, outs):
    dt = outs[0][1]
    n, c, s = _ncs(shapes[0])
    ks, split = _kernels(dt), (_Split(n, c, s, dt) if n * c * s else None)

    def run(inputs, out, eps=1e-5):
        eps = dt.type(check_eps(eps))
        x, gamma, beta = inputs
        y, mean, invstd, var = out
        if split is None:  # no values: NaN statistics (0 / 0), as NumPy
            for a in (mean, invstd, var):
                a.fill(np.nan)
            return
        vec = _aligned(x, y)
        part = _workspace(c * split.n_chunks, K.moments_bytes(dt))
        split(ks["stats"], x, part, split.arg, vec)
        _finish(ks["stats_finish"], c, split.n_chunks, part, split.n_chunks, I64(c), eps,
                mean, invstd, var)
        split(ks["apply"], x, y, split.arg, vec, mean, invstd, gamma, beta, I64(0), I64(1), eps)
    return run


def _batch_norm_backward(desc, dtypes, shapes, outs):
    dt = outs[0][1]
    n, c, s = _ncs(shapes[0])
    ks, split = _kernels(dt), (_Split(n, c, s, dt) if n * c * s else None)
    inv_count = dt.type(1 / (n * s)) if n * s else dt.type(0)

    def run(inputs, out):
        g, x, mean, invstd, gamma = inputs
        dx, dgamma, dbeta = out
        if split is None:  # sums of nothing
            dgamma.fill(0)
            dbeta.fill(0)
            return
        vec = _aligned(g, x, dx)
        part = _workspace(c * split.n_chunks, K.sums_bytes(dt))
        uv = cupy.empty(2 * c, dt)
        u, v = uv[:c], uv[c:]
        split(ks["grad_sums"], g, x, split.arg, vec, mean, invstd, gamma, I64(0), I64(1),
              dt.type(0), dx, part)
        _finish(ks["grad_finish_uv"], c, split.n_chunks, part, split.n_chunks, I64(c),
                dgamma, dbeta, gamma, inv_count, u, v)
        split(ks["dx"], g, x, split.arg, vec, mean, invstd, gamma, u, v, I64(0), I64(1), dx)
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
    ks, split = _kernels(dt), (_Split(n, c, s, dt) if n * c * s else None)

    def run(inputs, out, eps=1e-5):
        eps = dt.type(check_eps(eps))
        if split is not None:
            x, gamma, beta, running_mean, running_var = inputs
            split(ks["apply_var"], x, out, split.arg, _aligned(x, out), running_mean,
                  running_var, gamma, beta, I64(0), I64(1), eps)
    return run


def _batch_norm_eval_backward(desc, dtypes, shapes, outs):
    dt = outs[0][1]
    n, c, s = _ncs(shapes[0])
    ks, split = _kernels(dt), (_Split(n, c, s, dt) if n * c * s else None)

    def run(inputs, out, eps=1e-5):
        eps = dt.type(check_eps(eps))
        g, x, gamma, running_mean, running_var = inputs
        dx, dgamma, dbeta = out
        if split is None:
            dgamma.fill(0)
            dbeta.fill(0)
            return
        part = _workspace(c * split.n_chunks, K.sums_bytes(dt))
        split(ks["grad_sums_eval"], g, x, split.arg, _aligned(g, x, dx), running_mean,
              running_var, gamma, I64(0), I64(1), eps, dx, part)
        # (gamma, u, v are not read without UV)
        _finish(ks["grad_finish"], c, split.n_chunks, part, split.n_chunks, I64(c),
                dgamma, dbeta, gamma, dt.type(0), dgamma, dbeta)
    return run


def _group_norm(desc, dtypes, shapes, outs):
    dt = outs[0][1]
    n, c, s = _ncs(shapes[0])
    groups = desc.get("groups")
    stats, k = n * groups, c // groups * s
    ks = _kernels(dt)
    # statistics: x as (1, n * groups, k); normalising: x as (n, c, s)
    split_stats = _Split(1, stats, k, dt) if stats * k else None
    split = _Split(n, c, s, dt) if n * c * s else None

    def run(inputs, out, eps=1e-5):
        eps = dt.type(check_eps(eps))
        x, gamma, beta = inputs
        y, mean, rstd = out
        if split_stats is None:
            mean.fill(np.nan)
            rstd.fill(np.nan)
            return
        part = _workspace(stats * split_stats.n_chunks, K.moments_bytes(dt))
        var = cupy.empty(stats, dt)
        split_stats(ks["stats"], x, part, split_stats.arg, _aligned(x))
        _finish(ks["stats_finish"], stats, split_stats.n_chunks, part, split_stats.n_chunks,
                I64(stats), eps, mean, rstd, var)
        split(ks["apply"], x, y, split.arg, _aligned(x, y), mean, rstd, gamma, beta,
              I64(groups), I64(c // groups), eps)
    return run


def _group_norm_backward(desc, dtypes, shapes, outs):
    dt = outs[0][1]
    n, c, s = _ncs(shapes[0])
    groups = shapes[2][1]
    cg = c // groups
    ks = _kernels(dt)
    # sums per (channel, sample), then dx over a split of its own
    sums = _Split(n, c, s, dt, per_row=True) if n * c * s else None
    split = _Split(n, c, s, dt) if n * c * s else None
    inv_count = dt.type(1 / (cg * s)) if cg * s else dt.type(0)

    def run(inputs, out):
        g, x, mean, rstd, gamma = inputs
        dx, dgamma, dbeta = out
        if split is None:
            dgamma.fill(0)
            dbeta.fill(0)
            return
        vec = _aligned(g, x, dx)
        part = _workspace(c * n, K.sums_bytes(dt))
        uv = cupy.empty(2 * n * groups, dt)
        u, v = uv[:n * groups], uv[n * groups:]
        sums(ks["grad_sums"], g, x, sums.arg, vec, mean, rstd, gamma, I64(groups), I64(cg),
             dt.type(0), dx, part)
        _finish(ks["grad_finish"], c, n, part, sums.n_chunks, I64(c), dgamma, dbeta, gamma,
                dt.type(0), dgamma, dbeta)
        _finish(ks["gn_grad_finish"], n * groups, cg, part, I64(n), I64(c), I64(groups), gamma,
                inv_count, u, v)
        split(ks["dx"], g, x, split.arg, vec, mean, rstd, gamma, u, v, I64(groups), I64(cg), dx)
    return run


MAKERS = {
    "batch_norm": _batch_norm,
    "batch_norm_backward": _batch_norm_backward,
    "batch_norm_update_running": _update_running,
    "batch_norm_eval": _batch_norm_eval,
    "batch_norm_eval_backward": _batch_norm_eval_backward,
    "group_norm": _group_norm,
    "group_norm_backward": _group_norm_backward,
}
