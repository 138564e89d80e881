"""Fused movement ops on the GPU (hipfer/kernels/fused_movement.cuh)."""
from __future__ import annotations

MAKERS: dict = {}
