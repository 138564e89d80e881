"""Fused recurrent ops on the GPU (hipfer/kernels/fused_recurrent.cuh)."""
from __future__ import annotations

MAKERS: dict = {}
