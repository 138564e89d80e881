"""FftPrims: Fft, C2C / R2C / C2R transforms by the backend's FFT library."""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Tuple

from .. import rules as r
from ._base import Descriptor

__all__ = ["FftKind", "Fft"]


class FftKind(Enum):
    C2C = "c2c"   # complex -> complex (forward, or inverse when Fft.inverse)
    R2C = "r2c"   # real -> complex, the last axis halved to n//2 + 1 (rfftn)
    C2R = "c2r"   # complex -> real, the inverse of R2C (irfftn)


@dataclass(frozen=True)
class Fft(Descriptor, family="fft"):
    """N-d discrete Fourier transform over ``axes`` (distinct, non-negative), by the
    backend's FFT library (pocketfft through NumPy; cuFFT / hipFFT through CuPy).
    ``sizes`` are the logical lengths n per axis: the input is zero-padded or trimmed to
    them (for C2R, to n//2 + 1 on the last axis, whose output has length n). ``norm``
    is NumPy's: 'backward' scales the inverse by 1/prod(n), 'forward' the forward one,
    'ortho' both by 1/sqrt(prod(n)). The output keeps the input's precision."""
    kind: FftKind
    axes: Tuple[int, ...]
    sizes: Tuple[int, ...]
    inverse: bool = False
    norm: str = "backward"

    @property
    def function_name(self) -> str:
        """The N-d transform of NumPy's and CuPy's fft modules that computes this one."""
        if self.kind is FftKind.R2C:
            return "rfftn"
        if self.kind is FftKind.C2R:
            return "irfftn"
        return "ifftn" if self.inverse else "fftn"

    def infer(self, dtypes, shapes):
        r.expect(self, dtypes, shapes, 1)
        dt, shape = dtypes[0], shapes[0]
        kind = self.kind
        if not isinstance(kind, FftKind):
            raise ValueError(f"Fft: kind must be an FftKind, got {kind!r}")
        if self.norm not in ("backward", "ortho", "forward"):
            raise ValueError(f"Fft: norm must be 'backward', 'ortho' or 'forward', got "
                             f"{self.norm!r}")
        r.check_kind(self, kind.name, dt, "f" if kind is FftKind.R2C else "c")
        if kind is not FftKind.C2C and self.inverse:
            raise ValueError("Fft: inverse applies to C2C only (R2C is forward, C2R inverse)")
        axes, sizes = tuple(self.axes), tuple(self.sizes)
        _check_axes(axes, sizes, len(shape))
        out = list(shape)
        for a, n in zip(axes, sizes):
            out[a] = int(n)
        if kind is FftKind.R2C:
            out[axes[-1]] = sizes[-1] // 2 + 1
        out_dt = {FftKind.C2C: dt, FftKind.R2C: r.complex_dtype(dt),
                  FftKind.C2R: r.real_dtype(dt)}[kind]
        return ((tuple(out), out_dt),)

    def probe_shapes(self, n_inputs):
        return ((2,) * (max(self.axes, default=-1) + 1),)


def _check_axes(axes, sizes, ndim):
    """One size >= 1 per axis, the axes distinct and in range."""
    if not axes or len(axes) != len(sizes):
        raise ValueError(f"Fft: needs one size per axis and at least one axis, got axes {axes}, "
                         f"sizes {sizes}")
    if len(set(axes)) != len(axes) or any(not 0 <= a < ndim for a in axes):
        raise ValueError(f"Fft: axes {axes} must be distinct and in [0, {ndim})")
    if any(int(n) < 1 for n in sizes):
        raise ValueError(f"Fft: invalid number of data points {sizes}: each must be >= 1")
