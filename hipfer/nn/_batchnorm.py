"""hipfer.nn, batchnorm ops (FusedPrims; rules in hipfer.prims.fused_ops.batchnorm)."""
from __future__ import annotations

__all__: list = []
