"""Fused BLAS-like ops on the GPU (hipfer/kernels/fused_blas.cuh)."""
from __future__ import annotations

from math import prod

import numpy as np

from ...kernels import fused_blas as K
from ._engine import BLOCK, get_kernel, grid_for


def _axpby(desc, dtypes, shapes, outs):
    dt = outs[0][1]
    n = prod(shapes[0])
    kernel = get_kernel(K.FILE, K.axpby_expr(dt))

    def run(inputs, out, alpha=1.0, beta=1.0):
        if n:
            x, y = inputs
            kernel((grid_for(n),), (BLOCK,), (x, y, out, np.int64(n), dt.type(alpha), dt.type(beta)))
    return run


MAKERS = {"axpby": _axpby}
