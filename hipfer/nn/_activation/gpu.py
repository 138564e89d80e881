"""Fused activation ops on the GPU (fused_activation.cuh)."""
from __future__ import annotations

import math
from math import prod

import cupy
import numpy as np

from ...backends.cupy._engine import BLOCK, get_kernels, grid_for
from ...prims.fused_ops import makers
from . import kernels as K, ops
from .ops import dropout_counters, dropout_scale

# Blocks of the mean BCE's first pass: a function of n alone (not of the device's size),
# so the summation order is too.
MEAN_BLOCKS = 1024
# The elementwise kernels' grid, in waves of resident blocks (grid-stride loops cover the
# rest). H200, 2^26 float32 (tools/probe_act_grid.py): 64 waves against engine's 32 took
# relu 0.144 -> 0.138 ms, silu 0.156 -> 0.149, dropout 0.173 -> 0.163, bce 0.206 -> 0.201;
# one thread per vector was better for relu and dropout, worse for silu and bce.
WAVES = 64


def _kernels(*exprs):
    """The kernels of these name expressions, compiled with the rest of their group
    (kernels.py instances()): one compile per group and process."""
    for _, file, group in K.instances():
        if exprs[0] in group:
            ks = get_kernels(file, tuple(group))
            return tuple(ks[group.index(e)] for e in exprs)
    raise KeyError(exprs[0])


class _Launch:
    """One kernel of fused_activation.cuh over n elements, in its aligned variant when
    every pointer allows a chunk of V elements as one access, else the unaligned one.
    expr(aligned) -> name expression; the kernel takes (*arrays, n, *scalars)."""

    def __init__(self, n: int, dt, expr, grid: int = 0):
        self.n, self.n64, self.v = n, np.int64(n), K.width(dt)
        if n:
            self.aligned, self.unaligned = _kernels(expr(True), expr(False))
            self.grid = (grid or grid_for(n, self.v, max_waves=WAVES),)

    def __call__(self, arrays, *scalars):
        if self.n:
            k = self.unaligned if any(a.data.ptr % (self.v * a.itemsize) for a in arrays) else self.aligned
            k(self.grid, (BLOCK,), (*arrays, self.n64, *scalars))


def _activation(desc, dtypes, shapes, outs):
    name, dt = desc.get("name"), outs[0][1]
    launch = _Launch(prod(shapes[0]), dt, lambda a: K.activation_expr(name, dt, a))

    def run(inputs, out):
        launch((inputs[0], out))
    return run


def _activation_backward(desc, dtypes, shapes, outs):
    name, dt = desc.get("name"), outs[0][1]
    launch = _Launch(prod(shapes[0]), dt, lambda a: K.activation_backward_expr(name, dt, a))

    def run(inputs, out):
        launch((*inputs, out))
    return run


def _dropout(desc, dtypes, shapes, outs):
    dt = outs[0][1]
    launch = _Launch(prod(shapes[0]), dt, lambda a: K.dropout_expr(dt, a))

    def run(inputs, out, p, seed, offset=0):
        scale = dt.type(dropout_scale(p))
        seed, offset = dropout_counters(seed, offset)
        # uniform32 takes only the values k * 2^-24, so u < p iff u < ceil(p * 2^24) * 2^-24,
        # a float32 exactly (p * 2^24 is exact in double): the kernel compares in float
        thr = np.float32(math.ceil(float(p) * 2.0 ** 24) * 2.0 ** -24)
        launch((inputs[0], *out), np.uint64(seed), np.uint64(offset), thr, scale)
    return run


def _dropout_backward(desc, dtypes, shapes, outs):
    dt = outs[0][1]
    launch = _Launch(prod(shapes[0]), dt, lambda a: K.dropout_backward_expr(dt, a))

    def run(inputs, out, p):
        launch((*inputs, out), dt.type(dropout_scale(p)))
    return run


def _bce(desc, dtypes, shapes, outs):
    dt, n = outs[0][1], prod(shapes[0])
    if desc.get("reduction", "none") == "none":
        launch = _Launch(n, dt, lambda a: K.bce_expr(dt, a))

        def run(inputs, out):
            launch((*inputs, out))
        return run

    blocks = max(1, min(MEAN_BLOCKS, -(-n // (BLOCK * K.width(dt)))))
    partial = _Launch(n, dt, lambda a: K.bce_mean_partial_expr(dt, a), grid=blocks)
    final, = _kernels(K.bce_mean_final_expr(dt))

    def run(inputs, out):
        if not n:
            out.fill(np.nan)  # the mean of nothing, as NumPy's
            return
        part = cupy.empty(blocks, dt)
        partial((*inputs, part))
        final((1,), (BLOCK,), (part, np.int64(blocks), out, np.int64(n)))
    return run


def _bce_backward(desc, dtypes, shapes, outs):
    dt = outs[0][1]
    mean = desc.get("reduction", "none") == "mean"
    launch = _Launch(prod(shapes[1]), dt, lambda a: K.bce_backward_expr(dt, a, mean))

    def run(inputs, out):
        launch((*inputs, out))
    return run


MAKERS = makers(ops.OPS, {
    ops.ACTIVATION: _activation, ops.ACTIVATION_BACKWARD: _activation_backward,
    ops.DROPOUT: _dropout, ops.DROPOUT_BACKWARD: _dropout_backward, ops.BCE_WITH_LOGITS: _bce,
    ops.BCE_WITH_LOGITS_BACKWARD: _bce_backward})
