"""The CPU backend and reference implementation: NumPy, every family.

Each module exports ``HANDLERS = {DescriptorType: handler}`` (``supports`` / ``make``,
see hipfer.prims.plan).
"""
from __future__ import annotations

import numpy as np

from ...prims.plan import Backend, assemble_families

MODULES = ("elementwise", "reduction", "semiring", "indexing", "rng", "sort", "search", "linalg", "fft",
           "fused")


class NumpyBackend(Backend):
    name = "numpy"
    wants_strides = False

    def __init__(self):
        super().__init__()
        self.families = assemble_families(__name__, MODULES)

    def empty(self, shape, dtype):
        return np.empty(shape, dtype=dtype)

    def asarray(self, obj, dtype=None):
        return np.asarray(obj, dtype=dtype)

    def to_host(self, arr) -> np.ndarray:
        return arr
