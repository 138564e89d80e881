"""Fused norm ops on the GPU (hipfer/kernels/fused_norm.cuh)."""
from __future__ import annotations

from math import prod

import cupy
import numpy as np

from ...kernels import fused_norm as K
from ...prims.fused_ops.norm import eps_value
from ._engine import BLOCK, device_props, get_kernels, grid_for


def _kernel(name: str, dt):
    """One kernel of fused_norm.cuh; all of a dtype's compile together, once."""
    return dict(zip(K.KERNELS, get_kernels(K.FILE, K.exprs(dt))))[name]


class _Rows:
    """One row kernel over operands of shape (..., cols), with its launch geometry (kept per
    device: the grid follows the SM count). n_cache: operands a team may keep in shared
    memory; n_acc: column sums (dgamma, dbeta) it produces."""

    def __init__(self, kernel: str, dt, shape, n_cache: int, n_acc: int = 0):
        self.kernel = _kernel(kernel, dt)
        self.dt, self.n_cache, self.n_acc = dt, n_cache, n_acc
        self.rows, self.cols = prod(shape[:-1]), shape[-1]
        self._geo: dict = {}
        if n_acc:
            self.column_sums = _kernel("norm_column_sums", dt)

    def geometry(self) -> K.Geometry:
        dev = cupy.cuda.runtime.getDevice()
        g = self._geo.get(dev)
        if g is None:
            g = self._geo[dev] = K.geometry(self.rows, self.cols, self.dt.itemsize, self.n_cache,
                                            self.n_acc, device_props(dev)["sm_count"])
        return g

    def __call__(self, arrays, *scalars):
        """Launch on arrays (pointers, in the kernel's order) then the scalars after cache."""
        if not self.rows:
            return
        g = self.geometry()
        self.kernel((g.grid,), (g.block,), (*arrays, np.int64(self.rows), np.int64(self.cols),
                                            np.int32(g.tpr), np.int32(g.cache), *scalars),
                    shared_mem=g.smem)

    def with_column_sums(self, arrays, sums):
        """Launch a backward kernel, then sum its per-block partial rows into sums (dgamma
        [, dbeta]) in block order."""
        if not self.rows:
            for s in sums:
                s.fill(0)
            return
        g = self.geometry()
        width = self.n_acc * self.cols
        part = cupy.empty((g.grid, width), self.dt)
        self(tuple(arrays) + (part,), np.int32(g.acc_shared))
        self.column_sums((grid_for(width),), (BLOCK,),
                         (part, np.int64(g.grid), np.int64(width), np.int64(self.cols),
                          sums[0], sums[-1]))


def _softmax_rows(desc, dtypes, shapes, outs):
    rows = _Rows("softmax_rows", outs[0][1], shapes[0], n_cache=1)

    def run(inputs, out):
        rows((inputs[0], out))
    return run


def _logsumexp_rows(desc, dtypes, shapes, outs):
    rows = _Rows("logsumexp_rows", outs[0][1], shapes[0], n_cache=1)

    def run(inputs, out):
        rows((inputs[0], out))
    return run


def _softmax_rows_backward(desc, dtypes, shapes, outs):
    rows = _Rows("softmax_rows_backward", outs[0][1], shapes[0], n_cache=2)

    def run(inputs, out):
        rows((*inputs, out))
    return run


def _layer_norm(desc, dtypes, shapes, outs):
    dt = outs[0][1]
    rows = _Rows("layer_norm", dt, shapes[0], n_cache=1)

    def run(inputs, out, eps=1e-5):
        eps = dt.type(eps_value(desc, eps))
        rows((*inputs, *out), eps)
    return run


def _layer_norm_backward(desc, dtypes, shapes, outs):
    rows = _Rows("layer_norm_backward", outs[0][1], shapes[0], n_cache=2, n_acc=2)

    def run(inputs, out):
        dx, dgamma, dbeta = out
        rows.with_column_sums((*inputs, dx), (dgamma, dbeta))
    return run


def _rms_norm(desc, dtypes, shapes, outs):
    dt = outs[0][1]
    rows = _Rows("rms_norm", dt, shapes[0], n_cache=1)

    def run(inputs, out, eps=1e-6):
        eps = dt.type(eps_value(desc, eps))
        rows((*inputs, *out), eps)
    return run


def _rms_norm_backward(desc, dtypes, shapes, outs):
    rows = _Rows("rms_norm_backward", outs[0][1], shapes[0], n_cache=2, n_acc=1)

    def run(inputs, out):
        dx, dgamma = out
        rows.with_column_sums((*inputs, dx), (dgamma,))
    return run


MAKERS = {
    "softmax_rows": _softmax_rows,
    "softmax_rows_backward": _softmax_rows_backward,
    "logsumexp_rows": _logsumexp_rows,
    "layer_norm": _layer_norm,
    "layer_norm_backward": _layer_norm_backward,
    "rms_norm": _rms_norm,
    "rms_norm_backward": _rms_norm_backward,
}
