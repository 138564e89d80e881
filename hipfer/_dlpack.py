"""DLPack interchange: ``Tensor.__dlpack__`` / ``__dlpack_device__`` and ``from_dlpack``.

Zero-copy where the memory can be shared: NumPy arrays, PyTorch CPU tensors and other
CPU producers through NumPy; CuPy arrays and CUDA/ROCm producers through CuPy. The lazy
conjugation flag is resolved before export (a consumer cannot read the flag).
"""
from __future__ import annotations

from enum import IntEnum

import numpy as np

from ._data_type_functions import astype
from ._device import CPU, Device, as_device
from ._dtypes import as_dtype
from ._tensor import Tensor, _is_cupy
from .prims.registry import get_backend

__all__ = ["from_dlpack"]


class DLDeviceType(IntEnum):
    """DLPack device type codes (dlpack.h)."""
    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLROCM = 10
    kDLROCMHost = 11
    kDLCUDAManaged = 13


_HOST = (DLDeviceType.kDLCPU, DLDeviceType.kDLCUDAHost, DLDeviceType.kDLROCMHost)
_GPU = (DLDeviceType.kDLCUDA, DLDeviceType.kDLROCM, DLDeviceType.kDLCUDAManaged)


def dlpack_device(x: Tensor) -> tuple:
    """(device type, device id) of x's memory."""
    if _is_cupy(x._data):
        kind, idx = x._data.__dlpack_device__()
        return DLDeviceType(int(kind)), int(idx)
    return DLDeviceType.kDLCPU, 0


def export(x: Tensor, stream, max_version, dl_device, copy):
    """The DLPack capsule of x (resolving the conjugation flag first).

    Copies (copy=True, the flag, a move to the CPU) are made here, so the backend array
    is only asked for ``stream`` and ``max_version``: that works with NumPy 2 and with
    CuPy releases older than the copy/dl_device keywords.
    """
    if x._conj:
        if copy is False:
            raise BufferError("the tensor is lazily conjugated; exporting it needs a copy "
                              "(copy=False given)")
        x, copy = x.resolve_conj(), None  # a fresh array already
    if dl_device is not None and tuple(dl_device) != dlpack_device(x):
        if int(dl_device[0]) != DLDeviceType.kDLCPU:
            raise BufferError(f"cannot export a tensor on {x.device} to DLPack device "
                              f"{tuple(dl_device)}")
        if copy is False:
            raise BufferError(f"exporting a tensor on {x.device} to the CPU needs a copy "
                              "(copy=False given)")
        x, copy, stream = x.to_device(CPU), None, None
    if copy:
        x = astype(x, x.dtype, copy=True)
    data = x._data
    if max_version is not None:
        try:
            return data.__dlpack__(stream=stream, max_version=max_version)
        except TypeError:  # a producer without versioned capsules: the legacy one will do
            pass
    return data.__dlpack__(stream=stream)


def _source_device(x) -> Device:
    kind, idx = x.__dlpack_device__()
    kind = int(kind)
    if kind in _HOST:
        return CPU
    if kind in _GPU:
        return Device("gpu", int(idx))
    raise BufferError(f"from_dlpack(): unsupported DLPack device type {kind}")


def from_dlpack(x, /, *, device=None, copy=None) -> Tensor:
    """A Tensor sharing x's memory (any object with __dlpack__ / __dlpack_device__).

    device: where the result lives (default: where x is); another device means a copy.
    copy: True always copies, False never does (BufferError where it would have to),
    None copies only when it must.
    """
    if isinstance(x, Tensor):
        return _from_tensor(x, device, copy)
    if not hasattr(x, "__dlpack__") or not hasattr(x, "__dlpack_device__"):
        raise TypeError(f"from_dlpack() needs an object with __dlpack__ and "
                        f"__dlpack_device__, got {type(x).__name__}")
    src = _source_device(x)
    dev = src if device is None else as_device(device)
    if dev != src and copy is False:
        raise BufferError(f"from_dlpack(copy=False): the data is on {src}, {dev} was asked for")
    if dev.kind == "cpu":
        # np.from_dlpack never copies (its copy keyword needs NumPy >= 2.1): copy below
        data = np.from_dlpack(x) if src.kind == "cpu" else _gpu_to_host(x)
        if copy and src.kind == "cpu":
            data = data.copy()
    elif src == dev:
        import cupy
        get_backend(dev)  # a clear error when the GPU is not usable
        with cupy.cuda.Device(dev.index):
            data = cupy.from_dlpack(x)  # zero-copy; copy=True copies below
    else:
        return from_dlpack(x).to_device(dev)  # the move is the copy
    as_dtype(data.dtype)  # one of hipfer's dtypes?
    out = Tensor(data)
    if copy and dev.kind == "gpu":
        out = astype(out, out.dtype, copy=True)
    return out


def _gpu_to_host(x) -> np.ndarray:
    """A host copy of a GPU producer's data: ask the producer for CPU memory, else go
    through CuPy."""
    try:
        return np.from_dlpack(x, device="cpu", copy=True)
    except (BufferError, TypeError, ValueError, NotImplementedError, RuntimeError):
        import cupy
        return cupy.asnumpy(cupy.from_dlpack(x))


def _from_tensor(x: Tensor, device, copy) -> Tensor:
    dev = x.device if device is None else as_device(device)
    if dev != x.device:
        if copy is False:
            raise BufferError(f"from_dlpack(copy=False): the tensor is on {x.device}, "
                              f"{dev} was asked for")
        return x.to_device(dev)
    if copy:
        return astype(x, x.dtype, copy=True)
    return x
