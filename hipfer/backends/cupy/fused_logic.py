"""Fused logic ops on the GPU (hipfer/kernels/fused_logic.cuh)."""
from __future__ import annotations

MAKERS: dict = {}
