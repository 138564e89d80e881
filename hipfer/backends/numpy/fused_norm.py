"""Fused norm ops on NumPy (the reference; see hipfer.prims.fused_ops.norm)."""
from __future__ import annotations

MAKERS: dict = {}
