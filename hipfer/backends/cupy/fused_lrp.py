"""Fused lrp ops on the GPU (hipfer/kernels/fused_lrp.cuh)."""
from __future__ import annotations

MAKERS: dict = {}
