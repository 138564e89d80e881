"""Fused batchnorm ops on NumPy (the reference; see hipfer.prims.fused_ops.batchnorm)."""
from __future__ import annotations

MAKERS: dict = {}
