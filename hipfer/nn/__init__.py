"""hipfer.nn: the fused device op set for model code, functional, on hipfer Tensors.

Each function is one FusedPrims op (``hipfer.prims.descriptors.Fused``): one pass over
memory on the GPU (the project's HIP kernels, hipfer/kernels/fused_*.cuh) and a NumPy
reference on the CPU. float32 and float64; index operands are int64. See docs/nn.md.
"""
from __future__ import annotations

from ._blas import *  # noqa: F401,F403
from ._activation import *  # noqa: F401,F403
from ._norm import *  # noqa: F401,F403
from ._batchnorm import *  # noqa: F401,F403
from ._movement import *  # noqa: F401,F403
from ._conv import *  # noqa: F401,F403
