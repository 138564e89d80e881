"""hipfer.nn, norm ops (FusedPrims; rules in hipfer.prims.fused_ops.norm)."""
from __future__ import annotations

__all__: list = []
