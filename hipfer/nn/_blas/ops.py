"""Fused ops, BLAS-like: shape and dtype rules (see hipfer.prims.fused_ops).

gemm_ex has no row: hipfer.nn.gemm_ex runs SemiringCore's BatchedGemm (hipBLAS/cuBLAS).
"""
from __future__ import annotations

import inspect
import math

from ...prims.fused_ops import FusedOpDef, floats, ndim, same


def _axpby(desc, dtypes, shapes):
    dt = floats(desc, dtypes)
    same(desc, shapes[0], shapes[1], "x and y")
    return ((shapes[1], dt),)


def _sum(desc, dtypes, shapes):
    return (((), floats(desc, dtypes)),)


def _dot(desc, dtypes, shapes):
    dt = floats(desc, dtypes)
    same(desc, shapes[0], shapes[1], "x and y")
    return (((), dt),)


def _column_sums(desc, dtypes, shapes):
    dt = floats(desc, dtypes)
    ndim(desc, shapes[0], 2, "x")
    same(desc, shapes[0][1:], shapes[1], "x's columns and out")
    return ((shapes[1], dt),)


def _accumulate_rows(desc, dtypes, shapes):
    dt = floats(desc, dtypes)
    ndim(desc, shapes[0], 2, "x")
    same(desc, shapes[0][:1], shapes[1], "x's rows and out")
    return ((shapes[1], dt),)


def _add_row_vector(desc, dtypes, shapes):
    dt = floats(desc, dtypes)
    ndim(desc, shapes[0], 2, "x")
    same(desc, shapes[0][1:], shapes[1], "x's columns and v")
    return ((shapes[0], dt),)


def _add_channel_vector(desc, dtypes, shapes):
    dt = floats(desc, dtypes)
    if len(shapes[0]) < 2:
        raise ValueError(f"{desc!r}: x must be (N, C, *spatial), got shape {shapes[0]}")
    same(desc, shapes[0][1:2], shapes[1], "x's channels and v")
    return ((shapes[0], dt),)


def _adam_step(desc, dtypes, shapes):
    dt = floats(desc, dtypes)
    for i, what in ((1, "param and grad"), (2, "param and m"), (3, "param and v")):
        same(desc, shapes[0], shapes[i], what)
    return ((shapes[0], dt),) * 3


def adam_scalars(lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, bias_correction1=1.0,
                 bias_correction2=1.0, weight_decay=0.0):
    """Validate adam_step's scalars (ValueError) and derive, in float64 as PyTorch does on
    the host, what the kernel multiplies by: (step = lr / bias_correction1, beta1,
    1 - beta1, beta2, 1 - beta2, sqrt(bias_correction2), eps, weight_decay)."""
    checks = (("lr", lr, 0.0 <= lr < math.inf, ">= 0"),
              ("beta1", beta1, 0.0 <= beta1 < 1.0, "in [0, 1)"),
              ("beta2", beta2, 0.0 <= beta2 < 1.0, "in [0, 1)"),
              ("eps", eps, 0.0 <= eps < math.inf, ">= 0"),
              ("bias_correction1", bias_correction1, 0.0 < bias_correction1 <= 1.0, "in (0, 1]"),
              ("bias_correction2", bias_correction2, 0.0 < bias_correction2 <= 1.0, "in (0, 1]"),
              ("weight_decay", weight_decay, 0.0 <= weight_decay < math.inf, ">= 0"))
    for name, value, ok, rule in checks:
        if not ok:
            raise ValueError(f"adam_step: {name}={value!r} must be finite and {rule}")
    return (lr / bias_correction1, beta1, 1.0 - beta1, beta2, 1.0 - beta2,
            math.sqrt(bias_correction2), eps, weight_decay)


def _defaults(f) -> dict:
    return {k: p.default for k, p in inspect.signature(f).parameters.items()}


AXPBY = FusedOpDef(
    "axpby", 2, _axpby, lambda desc: ((1,), (1,)), {"alpha": 1.0, "beta": 1.0},
    "out = alpha * x + beta * y (in place on y when out is y); beta == 0 never "
    "reads y")
SUM = FusedOpDef(
    "sum", 1, _sum, lambda desc: ((1,),), {},
    "0-d sum of every element of x, in a fixed order")
DOT = FusedOpDef(
    "dot", 2, _dot, lambda desc: ((1,), (1,)), {},
    "0-d sum of x * y over every element (same shapes), in a fixed order")
COLUMN_SUMS = FusedOpDef(
    "column_sums", 2, _column_sums, lambda desc: ((1, 1), (1,)), {"beta": 0.0},
    "x (m, n), out (n,): out[j] = sum_i x[i, j] + beta * out[j], in place on "
    "out; beta == 0 never reads out")
ACCUMULATE_ROWS = FusedOpDef(
    "accumulate_rows", 2, _accumulate_rows, lambda desc: ((1, 1), (1,)),
    {"beta": 1.0},
    "x (m, n), out (m,): out[i] = beta * out[i] + sum_j x[i, j], in place on "
    "out; beta == 0 never reads out")
ADD_ROW_VECTOR = FusedOpDef(
    "add_row_vector", 2, _add_row_vector, lambda desc: ((1, 1), (1,)), {},
    "x (m, n) + v (n,) on every row (out may be x)")
ADD_CHANNEL_VECTOR = FusedOpDef(
    "add_channel_vector", 2, _add_channel_vector, lambda desc: ((1, 1), (1,)), {},
    "x (N, C, *spatial) + v[c] on channel c (out may be x)")
ADAM_STEP = FusedOpDef(
    "adam_step", 4, _adam_step, lambda desc: ((1,),) * 4, _defaults(adam_scalars),
    "(param, grad, m, v) -> (param, m, v), in place: one Adam step in PyTorch's "
    "expression order (see adam_scalars)")

#: every row of this topic (the op table loads it; MAKERS cover exactly these)
OPS = (AXPBY, SUM, DOT, COLUMN_SUMS, ACCUMULATE_ROWS, ADD_ROW_VECTOR, ADD_CHANNEL_VECTOR,
       ADAM_STEP)
