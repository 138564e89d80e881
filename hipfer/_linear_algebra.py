"""matmul: a two-operand contraction of the einsum engine (TTGT on BatchedGemm).

``(..., m, k) @ (..., k, n)`` is ``einsum('...mk,...kn->...mn')``: operands keep their
layout and lazy conjugation (the GEMM folds transposes and the flag into its op), batch
axes broadcast as stride-0 views, and a batch that only one operand has is folded into
that operand's rows, so ``(B, m, k) @ (k, n)`` is one (B*m, k) x (k, n) GEMM.
"""
from __future__ import annotations

import numpy as np

from ._einsum import contract
from ._tensor import Tensor


__all__ = ["matmul"]


def matmul(x1: Tensor, x2: Tensor, /) -> Tensor:
    """Matrix product x1 @ x2 (NumPy's matmul rules).

    1-d operands are vectors (a 1 is prepended to x1's shape / appended to x2's, then
    dropped); the batch axes (all but the last two) broadcast. 0-d operands are a ValueError
    (use multiply). The result has the promoted dtype; runs as a contraction (einsum's
    engine: GEMM on the GPU).
    """
    if not isinstance(x1, Tensor) or not isinstance(x2, Tensor):
        raise TypeError("matmul() expects two hipfer Tensors")
    if x1.ndim == 0 or x2.ndim == 0:
        raise ValueError("matmul() does not take 0-d operands; use multiply()")
    if x1.shape[-1] != x2.shape[0 if x2.ndim == 1 else -2]:
        raise ValueError(f"matmul: inner sizes differ ({x1.shape} @ {x2.shape})")
    try:
        np.broadcast_shapes(x1.shape[:-2], x2.shape[:-2])
    except ValueError:
        raise ValueError(f"matmul: batch shapes of {x1.shape} and {x2.shape} do not broadcast") from None
    m, k, n = 0, 1, 2  # einsum labels
    la = [Ellipsis, m, k] if x1.ndim > 1 else [k]
    lb = [Ellipsis, k, n] if x2.ndim > 1 else [k]
    out = [Ellipsis] + ([m] if x1.ndim > 1 else []) + ([n] if x2.ndim > 1 else [])
    return contract([x1, x2], [la, lb], out)
