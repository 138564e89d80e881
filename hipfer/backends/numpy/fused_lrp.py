"""Fused lrp ops on NumPy (the reference; see hipfer.prims.fused_ops.lrp)."""
from __future__ import annotations

MAKERS: dict = {}
