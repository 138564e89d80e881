"""matmul on SemiringCore.BatchedGemm (hipBLAS/cuBLAS on the GPU).

Operands keep their layout and lazy conjugation: the backend folds transposes and the
conjugation flag into the GEMM call. Batch axes are broadcast; an operand is copied only
when its batch axes cannot be flattened into one stride.
"""
from __future__ import annotations

import numpy as np

from . import _dtypes, _ops
from ._tensor import Tensor
from .prims import descriptors as d


__all__ = ["matmul"]


def _as_batch3(x: Tensor, batch: tuple) -> Tensor:
    """x (..., r, c) as (B, r, c) for the broadcast batch shape; B = 1 if x has no batch."""
    r, c = x.shape[-2:]
    if int(np.prod(x.shape[:-2], dtype=np.int64)) == 1:
        return x.reshape((1, r, c))
    if x.shape[:-2] != batch:
        from ._manipulation import broadcast_to
        x = broadcast_to(x, batch + (r, c))
    return x.reshape((int(np.prod(batch, dtype=np.int64)), r, c))


def matmul(x1: Tensor, x2: Tensor, /) -> Tensor:
    if not isinstance(x1, Tensor) or not isinstance(x2, Tensor):
        raise TypeError("matmul() expects two hipfer Tensors")
    if x1.ndim == 0 or x2.ndim == 0:
        raise ValueError("matmul() does not take 0-d operands; use multiply()")
    dt = _dtypes.result_type(x1.dtype, x2.dtype)
    from ._elementwise import _astype
    a, b = _astype(x1, dt), _astype(x2, dt)
    a2 = a.reshape((1,) + a.shape) if a.ndim == 1 else a
    b2 = b.reshape(b.shape + (1,)) if b.ndim == 1 else b
    if a2.shape[-1] != b2.shape[-2]:
        raise ValueError(f"matmul: inner sizes differ ({x1.shape} @ {x2.shape})")
    try:
        batch = tuple(np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2]))
    except ValueError:
        raise ValueError(f"matmul: batch shapes of {x1.shape} and {x2.shape} do not broadcast") from None
    out = Tensor(_ops.run(d.BatchedGemm(), [_as_batch3(a2, batch), _as_batch3(b2, batch)]))
    shape = batch + (a2.shape[-2], b2.shape[-1])
    if x1.ndim == 1:
        shape = shape[:-2] + shape[-1:]
    if x2.ndim == 1:
        shape = shape[:-1]
    return out.reshape(shape)
