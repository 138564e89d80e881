"""Fused logic ops on the GPU (fused_logic.cuh).

The launch geometry (a thread per column for the k-operand ops, a group of
kernels.group_log2(cols) lanes per row for the row ops) depends only on the
shapes, so results repeat bit for bit from call to call.
"""
from __future__ import annotations

from math import prod

import numpy as np

from ...backends.cupy._engine import BLOCK, error_flag, get_kernels, grid_for
from ...prims.fused_ops import makers
from . import kernels as K
from . import ops


def _kernel(exprs, expr: str):
    """One kernel of a group: all of a group's kernels of a dtype compile together, once."""
    return get_kernels(K.FILE, exprs)[exprs.index(expr)]


def _stacked(shapes):
    """(k, n): the operands and the elements of each."""
    return shapes[0][0], prod(shapes[0][1:])


def _logic(desc, dtypes, shapes, outs):
    norm, is_or = ops.logic_params(desc)
    dt = outs[0][1]
    k, n = _stacked(shapes)
    kernel = _kernel(K.logic_exprs(dt), K.logic_expr(desc.op, dt, norm, is_or))
    geo = ((grid_for(n),), (BLOCK,))
    tail = (np.int64(k), np.int64(n))
    lo = ops.log_tiny(dt)

    if desc.op == ops.LOGIC_POINTWISE_LRP.name:
        def run(inputs, out, eps=1e-6):
            ops.check_eps(desc.op, eps)
            if n:
                kernel(*geo, tuple(inputs) + (out,) + tail + (dt.type(eps), lo))
    else:
        def run(inputs, out):
            if n:
                kernel(*geo, tuple(inputs) + (out,) + tail)
    return run


def _aggregator(desc, dtypes, shapes, outs):
    dt = outs[0][1]
    k, n = _stacked(shapes)
    kernel = _kernel(K.logic_exprs(dt), K.aggregator_expr(desc.op, dt))
    geo = ((grid_for(n),), (BLOCK,))

    def run(inputs, out, p=1.0):
        ops.check_p(desc.op, p)
        if n:
            kernel(*geo, tuple(inputs) + (out, np.int64(k), np.int64(n), dt.type(p),
                                          np.int32(ops.p_mode(p))))
    return run


def _row_grid(rows: int, g: int) -> tuple:
    return (grid_for(rows, block=BLOCK >> g),)


def _tanh_gaussian(desc, dtypes, shapes, outs):
    dt = outs[0][1]
    rows, d = shapes[0]
    g = K.group_log2(d)
    kernel = _kernel(K.rl_exprs(dt), K.rl_expr(desc.op, dt))

    def run(inputs, outs):
        if rows:
            kernel(_row_grid(rows, g), (BLOCK,),
                   tuple(inputs) + tuple(outs) + (np.int64(rows), np.int64(d), np.int32(g)))
    return run


def _tanh_gaussian_backward(desc, dtypes, shapes, outs):
    dt = outs[0][1]
    rows, d = shapes[0]
    size = rows * d
    kernel = _kernel(K.rl_exprs(dt), K.rl_expr(desc.op, dt))

    def run(inputs, outs):
        if size:
            kernel((grid_for(size),), (BLOCK,),
                   tuple(inputs) + tuple(outs) + (np.int64(size), np.int64(d)))
    return run


def _policy_gradient(desc, dtypes, shapes, outs):
    dt = outs[0][1]
    rows, a = shapes[0]
    g = K.group_log2(a)
    kernel = _kernel(K.rl_exprs(dt), K.rl_expr(desc.op, dt))

    def run(inputs, out, entropy_coef=0.0):
        ops.check_entropy_coef(desc.op, entropy_coef)
        if not rows:
            return
        flag = error_flag()
        kernel(_row_grid(rows, g), (BLOCK,),
               tuple(inputs) + (out, np.int64(rows), np.int64(a), dt.type(entropy_coef),
                                np.int32(g), flag.buf))
        flag.check(lambda pos: ops.bad_action(desc.op, int(inputs[1][pos]), a))
    return run


def _td_target(desc, dtypes, shapes, outs):
    dt = outs[0][1]
    rows = shapes[0][0]
    a = shapes[2][1] if len(shapes[2]) == 2 else 1
    g = K.group_log2(a)
    kernel = _kernel(K.rl_exprs(dt), K.td_target_expr(dt, dtypes[1]))

    def run(inputs, out, gamma=0.99):
        ops.check_gamma(desc.op, gamma)
        if rows:
            kernel(_row_grid(rows, g), (BLOCK,),
                   tuple(inputs) + (out, np.int64(rows), np.int64(a), dt.type(gamma), np.int32(g)))
    return run


MAKERS = makers(ops.OPS, {
    ops.LOGIC_POINTWISE: _logic, ops.LOGIC_POINTWISE_BACKWARD: _logic,
    ops.LOGIC_POINTWISE_LRP: _logic, ops.AGGREGATOR: _aggregator,
    ops.AGGREGATOR_BACKWARD: _aggregator, ops.AGGREGATOR_LRP: _aggregator,
    ops.TANH_GAUSSIAN: _tanh_gaussian, ops.TANH_GAUSSIAN_BACKWARD: _tanh_gaussian_backward,
    ops.POLICY_GRADIENT: _policy_gradient, ops.POLICY_GRADIENT_BACKWARD: _policy_gradient,
    ops.TD_TARGET: _td_target})
