"""The GPU backend: CuPy arrays, the project's own HIP/CUDA RawKernels, hipBLAS/cuBLAS.

Each module exports ``HANDLERS = {DescriptorType: handler}`` (``supports`` / ``make``,
see hipfer.prims.plan); kernels come from hipfer/kernels.
"""
from __future__ import annotations

import cupy
import numpy as np

from ...prims.plan import Backend, assemble_families

_ndarray = cupy.ndarray  # cupy.empty is a Python wrapper around this constructor

MODULES = ("elementwise", "reduction", "semiring", "indexing", "rng", "sort", "linalg", "fft", "search",
           "fused")


class CupyBackend(Backend):
    name = "cupy"
    wants_strides = True
    caches_scalars = True

    def __init__(self, index: int = 0):
        super().__init__()
        self.index = index
        self.cuda_device = cupy.cuda.Device(index)
        self._only_device = None  # see only_device
        self.families = assemble_families(__name__, MODULES)

    def execute(self, plan, inputs, out, **params):
        if cupy.cuda.runtime.getDevice() != self.index:
            with self.cuda_device:
                plan.run(inputs, out, **params)
        else:
            plan.run(inputs, out, **params)
        return out

    @property
    def only_device(self) -> bool:
        """Whether this is the process's one GPU (then it is always the current device)."""
        if self._only_device is None:
            try:
                self._only_device = cupy.cuda.runtime.getDeviceCount() == 1
            except cupy.cuda.runtime.CUDARuntimeError:  # pragma: no cover - no usable driver
                self._only_device = False
        return self._only_device

    def runner(self, plan, perm=None):
        """Backend.runner with one device check per call instead of two (empty's and
        execute's) for the usual one-output, C-order case: a warm tiny op is host-bound."""
        general = super().runner(plan, perm)
        if len(plan.outs) != 1 or perm is not None:
            return general
        (shape, dt), = plan.outs
        # run_fresh: the plan's run for an out just allocated here (skips the out checks)
        run = getattr(plan.run, "run_fresh", plan.run)
        index, get_device = self.index, cupy.cuda.runtime.getDevice
        check = not self.only_device  # else the current device can only be this one
        if np.dtype(dt.type) == dt:
            dt = dt.type  # CuPy parses a scalar type faster than a dtype (0.1 us of 1.6)

        def fast(inputs):
            if check and get_device() != index:
                return general(inputs)
            out = _ndarray(shape, dt)
            run(inputs, out)
            return out
        fast.plan = plan
        return fast

    def empty(self, shape, dtype):
        if cupy.cuda.runtime.getDevice() == self.index:  # the usual case: no device switch
            return _ndarray(shape, dtype)
        with self.cuda_device:
            return _ndarray(shape, dtype)

    def synchronize(self) -> None:
        with self.cuda_device:
            cupy.cuda.get_current_stream().synchronize()

    def asarray(self, obj, dtype=None):
        with self.cuda_device:
            if isinstance(obj, np.ndarray) and obj.ndim == 0:
                # CuPy 14 drops the sign of a 0-d -0.0 on the way up (seen on the H200)
                return cupy.asarray(obj.reshape(1), dtype=dtype).reshape(())
            return cupy.asarray(obj, dtype=dtype)

    def to_host(self, arr) -> np.ndarray:
        return cupy.asnumpy(arr)
