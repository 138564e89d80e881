"""hipfer.nn, movement ops (FusedPrims; rules in hipfer.prims.fused_ops.movement)."""
from __future__ import annotations

__all__: list = []
