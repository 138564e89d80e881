"""Fused ops, BLAS-like: shape and dtype rules (see hipfer.prims.fused_ops)."""
from __future__ import annotations

from . import FusedOpDef, floats, same


def _axpby(desc, dtypes, shapes):
    dt = floats(desc, dtypes)
    same(desc, shapes[0], shapes[1], "x and y")
    return ((shapes[1], dt),)


OPS = (
    FusedOpDef("axpby", 2, _axpby, lambda desc: ((1,), (1,)), {"alpha": 1.0, "beta": 1.0},
               "out = alpha * x + beta * y (in place on y when out is y); beta == 0 never "
               "reads y"),
)
