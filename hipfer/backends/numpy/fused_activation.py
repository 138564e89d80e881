"""Fused activation ops on NumPy (the reference; see hipfer.prims.fused_ops.activation)."""
from __future__ import annotations

MAKERS: dict = {}
