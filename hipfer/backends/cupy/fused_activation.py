"""Fused activation ops on the GPU (hipfer/kernels/fused_activation.cuh)."""
from __future__ import annotations

MAKERS: dict = {}
