"""Fused conv ops on NumPy (the reference; see hipfer.prims.fused_ops.conv)."""
from __future__ import annotations

MAKERS: dict = {}
