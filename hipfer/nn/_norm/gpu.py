"""Fused norm ops on the GPU (fused_norm.cuh)."""
from __future__ import annotations

from math import prod

import cupy
import numpy as np

from ...backends.cupy._engine import device_props, function_handle, get_kernels
from ...prims.fused_ops import makers
from . import kernels as K, ops
from .ops import eps_value

I32, I64 = np.int32, np.int64


def _kernels(dt) -> dict:
    """The kernels of fused_norm.cuh for one dtype, by name expression; they compile
    together, once."""
    exprs = K.exprs(dt)
    return dict(zip(exprs, get_kernels(K.FILE, exprs)))


def _resident(kernel_for):
    """resident(block, smem, long) for K.geometry: blocks of kernel_for(block, long) an SM
    keeps, as the driver says (registers, shared memory); the thread count alone when it
    cannot say."""
    def resident(block: int, smem: int, long: bool) -> int:
        try:
            return int(cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
                function_handle(kernel_for(block, long)), block, smem))
        except (AttributeError, RuntimeError):  # pragma: no cover - a runtime without it
            return K.THREADS_PER_SM // block
    return resident


class _Rows:
    """One row kernel over operands of shape (..., cols), with its launch geometry (kept per
    device: the grid follows the SM count and the occupancy)."""

    def __init__(self, kernel: str, dt, shape):
        self.name, self.dt = kernel, dt
        self.kernels = _kernels(dt)
        self.rows, self.cols = prod(shape[:-1]), shape[-1]
        self.n_acc = K.N_ACC.get(kernel, 0)
        self._geo: dict = {}

    def geometry(self) -> K.Geometry:
        dev = cupy.cuda.runtime.getDevice()
        g = self._geo.get(dev)
        if g is None:
            g = self._geo[dev] = K.geometry(self.name, self.rows, self.cols, self.dt.itemsize,
                                            device_props(dev)["sm_count"],
                                            _resident(self.kernel_for))
        return g

    def kernel_for(self, block: int, long: bool = False):
        """The instantiation that launches blocks of `block` threads (long: K.LONG_ROWS')."""
        return self.kernels[K.expr(self.name, self.dt, block, long)]

    def vec(self, row_operands) -> np.int32:
        """16-byte loads and stores: every operand read or written by rows is 16-byte
        aligned and a row is whole vectors."""
        return I32(self.cols % K.vector_width(self.dt.itemsize) == 0 and
                   all(a.data.ptr % 16 == 0 for a in row_operands))

    def __call__(self, args, row_operands, *scalars):
        """Launch on args (the kernel's pointers) then the scalars after vec."""
        if not self.rows:
            return
        g = self.geometry()
        args = (*args, I64(self.rows), I64(self.cols), I32(g.tpr), self.vec(row_operands),
                *scalars)
        self.kernel_for(g.block, g.long)((g.grid,), (g.block,), args, shared_mem=g.smem)

    def backward(self, grad, b, per_row, gamma, dx, sums):
        """Launch a backward kernel on (grad, b, per_row, gamma, dx), then its column sums
        (dgamma [, dbeta]) into sums: a partial row per block summed in block order, or,
        for rows longer than a tile, a partial row per chunk of rows from
        fused_norm_column_products (grad * b, scaled by 1 / per_row for RMS norm)."""
        if not self.rows:
            for s in sums:
                s.fill(0)
            return
        g = self.geometry()
        width = self.n_acc * self.cols
        vec = self.vec((grad, b, gamma, dx))
        if g.tiles == 1:
            part = cupy.empty((g.grid, width), self.dt)
        else:
            p = K.products_geometry(self.rows, self.cols, self.dt.itemsize,
                                    device_props(cupy.cuda.runtime.getDevice())["sm_count"])
            part = cupy.empty((p.chunks, width), self.dt)
        self.kernel_for(g.block)((g.grid,), (g.block,), (grad, b, per_row, gamma, dx, part,
                                                         I64(self.rows), I64(self.cols),
                                                         I32(g.tpr), vec), shared_mem=g.smem)
        if g.tiles > 1:
            self.kernels[K.expr("norm_column_products", self.dt)](
                (p.col_blocks, p.chunks), (K.COL_LANES * K.ROW_LANES,),
                (grad, b, per_row, part, I64(self.rows), I64(self.cols), I64(p.chunk),
                 I32(self.n_acc), I32(self.n_acc == 1), vec))
        self.kernels[K.expr("norm_column_sums", self.dt)](
            (-(-width // K.COL_LANES),), (K.SUMS_BLOCK,),
            (part, I64(part.shape[0]), I64(width), I64(self.cols), sums[0], sums[-1]))


def _softmax_rows(desc, dtypes, shapes, outs):
    rows = _Rows(desc.op, outs[0][1], shapes[0])

    def run(inputs, out):
        rows((inputs[0], out), (inputs[0], out))
    return run


def _logsumexp_rows(desc, dtypes, shapes, outs):
    rows = _Rows(desc.op, outs[0][1], shapes[0])

    def run(inputs, out):
        rows((inputs[0], out), (inputs[0],))
    return run


def _softmax_rows_backward(desc, dtypes, shapes, outs):
    rows = _Rows(desc.op, outs[0][1], shapes[0])

    def run(inputs, out):
        rows((*inputs, out), (*inputs, out))
    return run


def _layer_norm(desc, dtypes, shapes, outs):
    dt = outs[0][1]
    rows = _Rows(desc.op, dt, shapes[0])

    def run(inputs, out, eps=1e-5):
        eps = dt.type(eps_value(desc, eps))
        rows((*inputs, *out), (*inputs, *out[:2]), eps)
    return run


def _layer_norm_backward(desc, dtypes, shapes, outs):
    rows = _Rows(desc.op, outs[0][1], shapes[0])

    def run(inputs, out):
        grad, xhat, std, gamma = inputs
        dx, dgamma, dbeta = out
        rows.backward(grad, xhat, std, gamma, dx, (dgamma, dbeta))
    return run


def _rms_norm(desc, dtypes, shapes, outs):
    dt = outs[0][1]
    rows = _Rows(desc.op, dt, shapes[0])

    def run(inputs, out, eps=1e-6):
        eps = dt.type(eps_value(desc, eps))
        rows((*inputs, *out), (*inputs, out[0]), eps)
    return run


def _rms_norm_backward(desc, dtypes, shapes, outs):
    rows = _Rows(desc.op, outs[0][1], shapes[0])

    def run(inputs, out):
        grad, x, rms, gamma = inputs
        dx, dgamma = out
        rows.backward(grad, x, rms, gamma, dx, (dgamma,))
    return run


MAKERS = makers(ops.OPS, {
    ops.SOFTMAX_ROWS: _softmax_rows, ops.SOFTMAX_ROWS_BACKWARD: _softmax_rows_backward,
    ops.LOGSUMEXP_ROWS: _logsumexp_rows, ops.LAYER_NORM: _layer_norm,
    ops.LAYER_NORM_BACKWARD: _layer_norm_backward, ops.RMS_NORM: _rms_norm,
    ops.RMS_NORM_BACKWARD: _rms_norm_backward})
