"""hipfer.fft: the array API fft extension (2025.12), on every backend.

Every transform is one FftPrims.Fft descriptor (C2C, R2C or C2R over a set of axes):
the backend's FFT library does it (pocketfft through NumPy on the CPU; cuFFT / hipFFT
through CuPy on the GPU). Precision is kept: float32 / complex64 operands give
complex64 / float32 results. hfft and ihfft are irfft / rfft of the conjugate with the
normalisation direction swapped; both conjugations are the O(1) lazy flag.

Input dtypes: the complex transforms (fft, ifft, fftn, ifftn, irfft, irfftn, hfft)
accept real operands too (float32 -> complex64, integers -> complex128); the real ones
(rfft, rfftn, ihfft) need real operands (integers compute in float64) and reject
complex ones with TypeError. Bad axes raise numpy.exceptions.AxisError (an IndexError
and a ValueError); bad sizes (n < 1) and norms ValueError.
"""
from __future__ import annotations

import operator as _operator

import numpy as _np

from . import _dtypes, _ops
from ._core import cast as _cast, fill as _fill
from ._creation import asarray as _asarray
from ._manipulation import roll as _roll
from ._tensor import Tensor
from .prims import descriptors as _d
from .prims.infer import complex_dtype as _complex_dtype, infer as _infer

__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
           "fftfreq", "rfftfreq", "fftshift", "ifftshift",
           # NumPy's 2-d forms (not in the standard): the n-d ones over two axes
           "fft2", "ifft2", "rfft2", "irfft2"]

_NORMS = ("backward", "ortho", "forward")
_SWAP = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


def _tensor(x, name: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}() expects a hipfer Tensor, got {type(x).__name__}")
    return x


def _norm(norm) -> str:
    if norm is None:  # NumPy's spelling of the default
        return "backward"
    if norm not in _NORMS:
        raise ValueError(f"norm must be 'backward', 'ortho' or 'forward', got {norm!r}")
    return norm


def _real_for(dt) -> _np.dtype:
    """The real dtype a transform computes in: float16 in float32 (there is no complex
    half; NumPy's transforms of float16 give complex64 / float32 too), integers and bool
    in float64."""
    return _dtypes.float32 if dt == _dtypes.float16 else _dtypes.float_for(dt)


def _as_complex(x: Tensor, name: str) -> Tensor:
    x = _tensor(x, name)
    return _cast(x, _complex_dtype(_real_for(x.dtype)))


def _as_real(x: Tensor, name: str) -> Tensor:
    x = _tensor(x, name)
    if x.dtype.kind == "c":
        raise TypeError(f"{name}() needs a real-valued tensor, got {x.dtype}")
    return _cast(x, _real_for(x.dtype))


def _axis(axis, ndim: int) -> int:
    axis = _operator.index(axis)
    if not -ndim <= axis < ndim:
        raise _np.exceptions.AxisError(axis, ndim)
    return axis % ndim


def _size(n, default: int, name: str) -> int:
    """The number of data points of one axis: n, or the default from the input's length
    (checked too: an empty axis, or irfft of one point, has none to transform)."""
    n = default if n is None else _operator.index(n)
    if n < 1:
        raise ValueError(f"{name}(): invalid number of data points ({n}): must be >= 1")
    return n


def _transform(kind, x: Tensor, axes, sizes, norm, inverse=False, name=None) -> Tensor:
    desc = _d.Fft(kind, tuple(axes), tuple(sizes), inverse, _norm(norm))
    if x.size == 0:  # zero-padded to the sizes asked for: the transform of zeros
        ((shape, dt),) = _infer(desc, (x.dtype,), (x.shape,))
        return _fill(shape, 0, dt, x.device)
    return Tensor(_ops.run(desc, [x], called=name))


# ----------------------------------------------------------------- one axis
def _one(kind, x: Tensor, n, axis, norm, inverse=False, halved=False, name="fft") -> Tensor:
    """A 1-d transform; halved: the default n is 2 * (M - 1) (C2R, hfft); name: the
    public function (its errors)."""
    if x.ndim == 0:
        raise ValueError(f"{name}(): the transform needs at least one axis, got a 0-d tensor")
    ax = _axis(axis, x.ndim)
    m = x.shape[ax]
    size = _size(n, 2 * (m - 1) if halved else m, name)
    return _transform(kind, x, (ax,), (size,), norm, inverse, name)


def fft(x: Tensor, /, *, n=None, axis: int = -1, norm: str = "backward") -> Tensor:
    """The 1-d discrete Fourier transform of x along axis (complex result).

    n: the length of the transform (x is cut or zero-padded to it).
    norm: "backward" (no scaling forward, 1/n inverse), "ortho" (1/sqrt(n) both ways) or
    "forward". float32 / complex64 stay single precision (NumPy computes in double).
    """
    return _one(_d.FftKind.C2C, _as_complex(x, "fft"), n, axis, norm, name="fft")


def ifft(x: Tensor, /, *, n=None, axis: int = -1, norm: str = "backward") -> Tensor:
    """The inverse of fft along axis (complex result).

    n: the length of the transform (x is cut or zero-padded to it).
    norm: "backward" (no scaling forward, 1/n inverse), "ortho" (1/sqrt(n) both ways) or
    "forward". float32 / complex64 stay single precision (NumPy computes in double).
    """
    return _one(_d.FftKind.C2C, _as_complex(x, "ifft"), n, axis, norm, inverse=True, name="ifft")


def rfft(x: Tensor, /, *, n=None, axis: int = -1, norm: str = "backward") -> Tensor:
    """fft of a real x along axis: the n // 2 + 1 non-negative frequencies.

    n: the length of the transform (x is cut or zero-padded to it).
    norm: "backward" (no scaling forward, 1/n inverse), "ortho" (1/sqrt(n) both ways) or
    "forward". float32 / complex64 stay single precision (NumPy computes in double).
    """
    return _one(_d.FftKind.R2C, _as_real(x, "rfft"), n, axis, norm, name="rfft")


def irfft(x: Tensor, /, *, n=None, axis: int = -1, norm: str = "backward") -> Tensor:
    """The inverse of rfft: a real result of length n (default 2 * (M - 1)).

    n: the length of the transform (x is cut or zero-padded to it).
    norm: "backward" (no scaling forward, 1/n inverse), "ortho" (1/sqrt(n) both ways) or
    "forward". float32 / complex64 stay single precision (NumPy computes in double).
    """
    return _one(_d.FftKind.C2R, _as_complex(x, "irfft"), n, axis, norm, halved=True,
                name="irfft")


def hfft(x: Tensor, /, *, n=None, axis: int = -1, norm: str = "backward") -> Tensor:
    """FFT of a Hermitian-symmetric signal given by its first half: irfft(conj(x)) with
    the normalisation direction swapped."""
    x = _as_complex(x, "hfft").conj()
    return _one(_d.FftKind.C2R, x, n, axis, _SWAP[_norm(norm)], halved=True, name="hfft")


def ihfft(x: Tensor, /, *, n=None, axis: int = -1, norm: str = "backward") -> Tensor:
    """Inverse of hfft: conj(rfft(x)) with the normalisation direction swapped."""
    x = _as_real(x, "ihfft")
    return _one(_d.FftKind.R2C, x, n, axis, _SWAP[_norm(norm)], name="ihfft").conj()


# ---------------------------------------------------------------- many axes
def _many(kind, x: Tensor, s, axes, norm, inverse=False, halved=False, name="fftn") -> Tensor:
    """An n-d transform; halved: the last axis's default size is 2 * (M - 1) (C2R)."""
    if axes is None:
        if s is not None:
            raise ValueError(f"{name}(): s is given, so axes must be given too")
        axes = tuple(range(x.ndim))
    axes = tuple(_axis(a, x.ndim) for a in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"{name}(): axes {axes} repeat an axis")
    if s is not None and len(s) != len(axes):
        raise ValueError(f"{name}(): s {tuple(s)} and axes {axes} differ in length")
    if not axes:
        if kind is not _d.FftKind.C2C:
            raise ValueError(f"{name}(): needs at least one axis to transform")
        return Tensor(_ops.run(_d.MakeContiguous(), [x]))  # no axis: the identity, as a copy
    s = (None,) * len(axes) if s is None else tuple(None if n == -1 else n for n in s)
    full = [x.shape[a] for a in axes]
    if halved:
        full[-1] = 2 * (full[-1] - 1)
    sizes = [_size(n, m, name) for n, m in zip(s, full)]
    return _transform(kind, x, axes, sizes, norm, inverse, name)


def fftn(x: Tensor, /, *, s=None, axes=None, norm: str = "backward") -> Tensor:
    """The n-d discrete Fourier transform over axes (default: every axis).

    s: the lengths along axes (x is cut or zero-padded to them).
    norm: "backward" (no scaling forward, 1/n inverse), "ortho" (1/sqrt(n) both ways) or
    "forward". float32 / complex64 stay single precision (NumPy computes in double).
    """
    return _many(_d.FftKind.C2C, _as_complex(x, "fftn"), s, axes, norm, name="fftn")


def ifftn(x: Tensor, /, *, s=None, axes=None, norm: str = "backward") -> Tensor:
    """The inverse of fftn over axes.

    s: the lengths along axes (x is cut or zero-padded to them).
    norm: "backward" (no scaling forward, 1/n inverse), "ortho" (1/sqrt(n) both ways) or
    "forward". float32 / complex64 stay single precision (NumPy computes in double).
    """
    return _many(_d.FftKind.C2C, _as_complex(x, "ifftn"), s, axes, norm, inverse=True, name="ifftn")


def rfftn(x: Tensor, /, *, s=None, axes=None, norm: str = "backward") -> Tensor:
    """fftn of a real x; the last of axes keeps n // 2 + 1 frequencies.

    s: the lengths along axes (x is cut or zero-padded to them).
    norm: "backward" (no scaling forward, 1/n inverse), "ortho" (1/sqrt(n) both ways) or
    "forward". float32 / complex64 stay single precision (NumPy computes in double).
    """
    return _many(_d.FftKind.R2C, _as_real(x, "rfftn"), s, axes, norm, name="rfftn")


def irfftn(x: Tensor, /, *, s=None, axes=None, norm: str = "backward") -> Tensor:
    """The inverse of rfftn: a real result (last axis 2 * (M - 1) by default).

    s: the lengths along axes (x is cut or zero-padded to them).
    norm: "backward" (no scaling forward, 1/n inverse), "ortho" (1/sqrt(n) both ways) or
    "forward". float32 / complex64 stay single precision (NumPy computes in double).
    """
    return _many(_d.FftKind.C2R, _as_complex(x, "irfftn"), s, axes, norm, halved=True, name="irfftn")


# NumPy's 2-d transforms: the n-d ones with axes (-2, -1) by default, s and axes positional
def fft2(x: Tensor, /, s=None, axes=(-2, -1), norm=None) -> Tensor:
    """numpy.fft.fft2: fftn over axes (default the last two)."""
    return _many(_d.FftKind.C2C, _as_complex(x, "fft2"), s, axes, norm, name="fft2")


def ifft2(x: Tensor, /, s=None, axes=(-2, -1), norm=None) -> Tensor:
    """numpy.fft.ifft2: ifftn over axes (default the last two)."""
    return _many(_d.FftKind.C2C, _as_complex(x, "ifft2"), s, axes, norm, inverse=True,
                 name="ifft2")


def rfft2(x: Tensor, /, s=None, axes=(-2, -1), norm=None) -> Tensor:
    """numpy.fft.rfft2: rfftn over axes (default the last two)."""
    return _many(_d.FftKind.R2C, _as_real(x, "rfft2"), s, axes, norm, name="rfft2")


def irfft2(x: Tensor, /, s=None, axes=(-2, -1), norm=None) -> Tensor:
    """numpy.fft.irfft2: irfftn over axes (default the last two)."""
    return _many(_d.FftKind.C2R, _as_complex(x, "irfft2"), s, axes, norm, halved=True,
                 name="irfft2")


# ------------------------------------------------------ frequencies, shifts
def _freq_dtype(dtype):
    dt = _dtypes.default_float if dtype is None else _dtypes.as_dtype(dtype)
    if dt.kind != "f":
        raise TypeError(f"the frequencies need a real floating dtype, got {dt}")
    return dt


def _freq_count(n) -> int:
    n = _operator.index(n)
    if n < 1:
        raise ValueError(f"the window length n must be >= 1, got {n}")
    return n


def fftfreq(n: int, /, *, d: float = 1.0, dtype=None, device=None) -> Tensor:
    """[0, 1, ..., -(n//2), ..., -1] / (d * n): n small host-computed values, copied to device."""
    n, dt = _freq_count(n), _freq_dtype(dtype)
    k = _np.concatenate([_np.arange(0, (n - 1) // 2 + 1), _np.arange(-(n // 2), 0)])
    return _asarray((k * (1.0 / (n * d))).astype(dt), device=device)


def rfftfreq(n: int, /, *, d: float = 1.0, dtype=None, device=None) -> Tensor:
    """[0, 1, ..., n//2] / (d * n)."""
    n, dt = _freq_count(n), _freq_dtype(dtype)
    return _asarray((_np.arange(0, n // 2 + 1) * (1.0 / (n * d))).astype(dt), device=device)


def _shift(x: Tensor, axes, sign: int, name: str) -> Tensor:
    x = _tensor(x, name)
    if axes is None:
        axes = tuple(range(x.ndim))
    elif isinstance(axes, (int, _np.integer)):
        axes = (axes,)
    # a repeated axis shifts again, as NumPy's (roll adds the shifts of repeated axes up)
    axes = tuple(_axis(a, x.ndim) for a in axes)
    if not axes:
        return x
    return _roll(x, tuple(sign * (x.shape[a] // 2) for a in axes), axis=axes)


def fftshift(x: Tensor, /, *, axes=None) -> Tensor:
    """The zero frequency moved to the middle: roll by n // 2 along each axis."""
    return _shift(x, axes, 1, "fftshift")


def ifftshift(x: Tensor, /, *, axes=None) -> Tensor:
    """Inverse of fftshift: roll by -(n // 2)."""
    return _shift(x, axes, -1, "ifftshift")

del annotations  # the __future__ feature, not an API name
