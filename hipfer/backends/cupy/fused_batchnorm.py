"""Fused batchnorm ops on the GPU (hipfer/kernels/fused_batchnorm.cuh)."""
from __future__ import annotations

MAKERS: dict = {}
