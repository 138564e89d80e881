"""FusedPrims on the GPU: the HIP/CUDA kernels of hipfer/nn/_<topic>/fused_<topic>.cuh.

Each topic's ``hipfer/nn/_<topic>/gpu.py`` (hipfer.prims.fused_ops.TOPICS) exports
``MAKERS = {op name: make(desc, dtypes, shapes, outs) -> run(inputs, out, **runtime)}``.
"""
from __future__ import annotations

from ...prims import descriptors as d
from ...prims import fused_ops

HANDLERS = {d.Fused: fused_ops.Handler("gpu")}
