"""hipfer.nn, recurrent ops (FusedPrims; rules in hipfer.prims.fused_ops.recurrent)."""
from __future__ import annotations

__all__: list = []
