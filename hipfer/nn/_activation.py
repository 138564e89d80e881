"""hipfer.nn, activation ops (FusedPrims; rules in hipfer.prims.fused_ops.activation)."""
from __future__ import annotations

__all__: list = []
