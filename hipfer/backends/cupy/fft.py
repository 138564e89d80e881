"""FftPrims on the GPU: cupy.fft, i.e. the GPU stack's FFT library (cuFFT on CUDA,
hipFFT / rocFFT on ROCm). cupy.fft keeps single precision (complex64 in, complex64 out).

A conjugation-flagged input is resolved first (one pass of our cast kernel); the result
is copied into the given output by the same kernel (any layout).
"""
from __future__ import annotations

import cupy
import numpy as np

from ...prims import descriptors as d
from .linalg import Copier


class _Fft:
    def supports(self, desc, dtypes) -> bool:
        return dtypes is None or all(np.dtype(t).kind in "fc" for t in dtypes)

    def make(self, desc, dtypes, shapes, outs, strides, conj):
        fn = getattr(cupy.fft, desc.function_name)
        resolve = Copier(shapes[0], dtypes[0]) if conj[0] and dtypes[0].kind == "c" else None
        copy_out = Copier(*outs[0])
        s, axes, norm = tuple(desc.sizes), tuple(desc.axes), desc.norm

        def run(inputs, out):
            if out.size == 0:
                return
            x = inputs[0] if resolve is None else resolve.fresh(inputs[0], conj=True)
            copy_out(fn(x, s=s, axes=axes, norm=norm), out)
        return run


HANDLERS = {d.Fft: _Fft()}
