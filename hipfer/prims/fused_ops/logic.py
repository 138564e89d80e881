"""Fused ops, logic: shape and dtype rules (see hipfer.prims.fused_ops)."""
from __future__ import annotations

OPS = ()
