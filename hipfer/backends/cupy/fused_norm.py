"""Fused norm ops on the GPU (hipfer/kernels/fused_norm.cuh)."""
from __future__ import annotations

MAKERS: dict = {}
