"""Fused logic ops on NumPy (the reference; see hipfer.prims.fused_ops.logic)."""
from __future__ import annotations

MAKERS: dict = {}
