"""BackendRegistry: device -> backend, optional contraction libraries.

The NumPy backend always exists. The CuPy backend is imported only when a GPU device is
asked for, so hipfer imports and runs on the CPU where CuPy is missing or has no driver;
``gpu_status()`` (GPU discovery, in hipfer._device, below this module) says why no GPU
is usable.
"""
from __future__ import annotations

import ctypes
import os
import threading
from dataclasses import dataclass, field
from typing import Optional

from .._device import (GpuStatus, as_device, check_available, get_default_device,  # noqa: F401
                       gpu_status)
from .._device import devices  # noqa: F401  (BackendRegistry.devices, hipfer.prims.devices)
from . import libprobe

_lock = threading.RLock()
_backends: dict = {}


def get_backend(device=None):
    """The backend that runs operations on ``device`` (default: the default device)."""
    dev = get_default_device() if device is None else as_device(device)
    be = _backends.get(dev)
    if be is not None:
        return be
    with _lock:
        be = _backends.get(dev)
        if be is not None:
            return be
        check_available(dev)
        if dev.kind == "cpu":
            from ..backends.numpy import NumpyBackend
            be = NumpyBackend()
        else:
            from ..backends.cupy import CupyBackend
            be = CupyBackend(dev.index)
        _backends[dev] = be
        return be


# ---------------------------------------------------------------- contraction libraries
@dataclass(frozen=True)
class ContractionLibrary:
    kind: str        # 'hiptensor' or 'cutensor'
    path: str
    version: int     # as the library reports it (0 when it has no version call)
    handle: object = field(repr=False, compare=False, default=None)
    # per visible GPU: whether the library runs there (libprobe.DeviceSupport); () when
    # the loader could not see the GPUs (or, for cuTENSOR, does not check them)
    devices: tuple = field(compare=False, default=())

    @property
    def version_str(self) -> str:
        return libprobe.version_str(self.kind, self.version)

    def device(self, index: int):
        """The DeviceSupport of GPU index, or None when the loader did not check it."""
        return next((d for d in self.devices if d.index == index), None)


_REQUIRED = {
    # the C API that hipfer binds (hipfer/backends/cupy/tensorlib.py): hipTENSOR exports it
    # from 2.2 on (1.x, 2.0 and 2.1 only under C++-mangled names); cuTENSOR 1.x lacks the
    # plan API. No {p}Destroy: tensorlib keeps its handles for the life of the process and
    # never calls it (and hipTENSOR's header and library have disagreed on its argument)
    "hiptensor": ("hiptensorCreate", "hiptensorCreateTensorDescriptor",
                  "hiptensorCreateContraction", "hiptensorCreatePlan", "hiptensorContract"),
    "cutensor": ("cutensorCreate", "cutensorCreateTensorDescriptor",
                 "cutensorCreateContraction", "cutensorCreatePlan", "cutensorContract"),
}
_VERSION_FN = {"hiptensor": "hiptensorGetVersion", "cutensor": "cutensorGetVersion"}
_loaded: dict = {}


def _check_abi(spec, p: str) -> None:
    """Refuse, without loading it, a library that exports its API only as C++ names."""
    syms = libprobe.dynamic_symbols(p, spec.prefix)
    if syms is None or all(s in syms for s in _REQUIRED[spec.kind]):
        return  # not an ELF we can read (the loader will say), or the C API is there
    mangled = libprobe.mangled_api(syms, spec.prefix)
    if mangled:
        raise ValueError(f"{p!r} is {spec.name} < {spec.c_api_since} (C++ ABI), not supported: "
                         f"it exports its API only as C++-mangled names such as "
                         f"{mangled[0]}; hipfer binds the C API of {spec.name} "
                         f"{spec.c_api_since} and later")


def _not_a_library(kind: str, p: str, missing) -> ValueError:
    return ValueError(f"{p!r} is not a {kind} library: it lacks {', '.join(missing)} "
                      f"(hipfer binds the 2.x API)")


def _load(kind: str, path) -> ContractionLibrary:
    p = os.fspath(path)
    if not os.path.exists(p):
        raise FileNotFoundError(f"{kind} library not found: {p!r} does not exist")
    spec = libprobe.SPECS[kind]
    required, version_fn = _REQUIRED[kind], _VERSION_FN[kind]
    verdicts, device = (), None
    if spec.probe:
        _check_abi(spec, p)
        facts = libprobe.device_facts()
        res = libprobe.probe(spec, p, required, version_fn, facts)
        if res.error:
            raise OSError(f"could not load {p!r} as the {kind} library: {res.error}")
        if res.missing:
            raise _not_a_library(kind, p, res.missing)
        verdicts = libprobe.check_devices(spec, res.version, facts)
        device = libprobe.loading_device(verdicts)
    try:
        lib = libprobe.open_in_process(p, device)
    except OSError as e:
        raise OSError(f"could not load {p!r} as the {kind} library: {e}") from None
    missing = [s for s in required if not hasattr(lib, s)]
    if missing:
        raise _not_a_library(kind, p, missing)
    version = 0
    fn = getattr(lib, version_fn, None)
    if fn is not None:
        fn.restype = ctypes.c_size_t
        fn.argtypes = []
        version = int(fn())
    info = ContractionLibrary(kind, p, version, lib, verdicts)
    with _lock:
        _loaded[kind] = info
    return info


def load_hiptensor(path) -> ContractionLibrary:
    """Open hipTENSOR (libhiptensor.so, 2.2 or later) from ``path`` for
    SemiringFastPath.Contract on ROCm. The library is first loaded in a child process
    (its static initializer exits the process on a GPU it does not support): a
    LibraryProbeError (an OSError) says when that child died. GPUs the library does not
    support are recorded in ``.devices``; contractions on them run through GEMM."""
    return _load("hiptensor", path)


def load_cutensor(path) -> ContractionLibrary:
    """Open cuTENSOR (libcutensor.so.2) from ``path`` for SemiringFastPath.Contract on CUDA."""
    return _load("cutensor", path)


def contraction_library(kind: Optional[str] = None) -> Optional[ContractionLibrary]:
    """The loaded library of that kind (or any loaded one), else None."""
    if kind is not None:
        return _loaded.get(kind)
    return next(iter(_loaded.values()), None)


class BackendRegistry:
    """Namespace object for the registry functions (``BackendRegistry.get(device)``)."""
    get = staticmethod(get_backend)
    devices = staticmethod(devices)
    gpu_status = staticmethod(gpu_status)
    load_hiptensor = staticmethod(load_hiptensor)
    load_cutensor = staticmethod(load_cutensor)
    contraction_library = staticmethod(contraction_library)
