"""FftPrims on NumPy: numpy.fft (pocketfft), which keeps single precision (NumPy >= 2)."""
from __future__ import annotations

import numpy as np

from ...prims import descriptors as d
from ._common import Handler, conj_loader


def _make(desc, dtypes, shapes, outs, strides, conj):
    load = conj_loader(dtypes, conj)
    fn = getattr(np.fft, desc.function_name)

    def run(inputs, out):
        if out.size == 0:
            return
        (x,) = load(inputs)
        np.copyto(out, fn(x, s=desc.sizes, axes=desc.axes, norm=desc.norm))
    return run


def _supports(desc, dtypes) -> bool:
    return dtypes is None or all(np.dtype(t).kind in "fc" for t in dtypes)


HANDLERS = {d.Fft: Handler(_make, _supports)}
