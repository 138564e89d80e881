"""Fused recurrent ops on NumPy (the reference; see hipfer.prims.fused_ops.recurrent)."""
from __future__ import annotations

MAKERS: dict = {}
