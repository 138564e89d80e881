"""Fused movement ops on NumPy (the reference; see hipfer.prims.fused_ops.movement)."""
from __future__ import annotations

MAKERS: dict = {}
