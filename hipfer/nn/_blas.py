"""hipfer.nn, BLAS-like ops (FusedPrims; rules in hipfer.prims.fused_ops.blas)."""
from __future__ import annotations

from ._common import fused, tensor, writable

__all__ = ["axpby"]


def axpby(x, y, *, alpha=1.0, beta=1.0):
    """y <- alpha * x + beta * y, in place; returns y. beta == 0 never reads y, so a NaN
    or inf already in y does not leak into the result."""
    x, y = tensor(x, "axpby"), writable(y, "axpby", "y")
    return fused("axpby", [x, y], out=y, alpha=float(alpha), beta=float(beta))
