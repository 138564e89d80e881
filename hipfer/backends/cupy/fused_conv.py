"""Fused conv ops on the GPU (hipfer/kernels/fused_conv.cuh)."""
from __future__ import annotations

MAKERS: dict = {}
