"""hipfer.nn, lrp ops (FusedPrims; rules in hipfer.prims.fused_ops.lrp)."""
from __future__ import annotations

__all__: list = []
