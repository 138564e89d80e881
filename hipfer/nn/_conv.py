"""hipfer.nn, conv ops (FusedPrims; rules in hipfer.prims.fused_ops.conv)."""
from __future__ import annotations

__all__: list = []
