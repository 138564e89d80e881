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
    #: a Python scalar's 0-d operand is cached here too: making it anew (a Generate plan,
    #: an allocation, a fill) took `x * 2.0` on 10 float32 from 3.0 to 4.6 us a call on
    #: this project's 2-core CI machine; the cached arrays are read-only
    caches_scalars = True

    def __init__(self):
        super().__init__()
        self.families = assemble_families(__name__, MODULES)

    def empty(self, shape, dtype):
        return np.empty(shape, dtype=dtype)

    def runner(self, plan, perm=None):
        """Backend.runner for the common case (one C-order output) without its two method
        calls per warm call: np.empty, then the plan's run."""
        if len(plan.outs) != 1 or perm is not None:
            return super().runner(plan, perm)
        (shape, dt), = plan.outs
        run_plan, empty = plan.run, np.empty

        def run(inputs):
            out = empty(shape, dt)
            run_plan(inputs, out)
            return out
        run.plan = plan
        return run

    def asarray(self, obj, dtype=None):
        return np.asarray(obj, dtype=dtype)

    def to_host(self, arr) -> np.ndarray:
        return arr
