"""hipfer.nn, logic ops (FusedPrims; rules in hipfer.prims.fused_ops.logic)."""
from __future__ import annotations

__all__: list = []
