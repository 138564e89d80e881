"""Devices: ``cpu`` and ``gpu:N``, GPU discovery, the process default and a context manager.

``gpu_status()`` asks CuPy once whether a GPU is usable (and if not, why); the default
device is the GPU when CuPy sees a usable one, else the CPU.
``HIPFER_DEVICE`` (``cpu``, ``gpu``, ``gpu:N``) overrides it for the whole process and
``with hipfer.default_device("cpu"):`` for a block (per thread).
"""
from __future__ import annotations

import contextlib
import os
import threading
from dataclasses import dataclass, field
from typing import Optional


@dataclass(frozen=True)
class Device:
    kind: str          # 'cpu' or 'gpu'
    index: int = 0

    def __post_init__(self):
        if self.kind not in ("cpu", "gpu"):
            raise ValueError(f"device kind must be 'cpu' or 'gpu', got {self.kind!r}")
        if self.kind == "cpu" and self.index != 0:
            raise ValueError("there is one cpu device: 'cpu'")
        if self.index < 0:
            raise ValueError(f"device index must be >= 0, got {self.index}")

    def __str__(self):
        return "cpu" if self.kind == "cpu" else f"gpu:{self.index}"

    def __repr__(self):
        return f"Device('{self}')"


CPU = Device("cpu")


def as_device(dev) -> Device:
    """Device from a Device, 'cpu', 'gpu', 'gpu:N', 'cuda:N' or 'rocm:N'."""
    if isinstance(dev, Device):
        return dev
    if isinstance(dev, str):
        s = dev.strip().lower()
        kind, _, idx = s.partition(":")
        if kind in ("cuda", "rocm", "hip"):
            kind = "gpu"
        if kind in ("cpu", "gpu"):
            try:
                return Device(kind, int(idx) if idx else 0)
            except ValueError as e:
                raise ValueError(f"bad device string {dev!r}: {e}") from None
    raise ValueError(f"unknown device {dev!r}: use 'cpu', 'gpu' or 'gpu:N'")


@dataclass(frozen=True)
class GpuStatus:
    usable: bool
    count: int
    stack: str            # 'rocm', 'cuda' or ''
    versions: dict = field(default_factory=dict)
    reason: str = ""      # why not usable


_status_lock = threading.RLock()
_status: Optional[GpuStatus] = None


def gpu_status(refresh: bool = False) -> GpuStatus:
    """Probe CuPy once: is a GPU usable, how many, which stack, and if not, why."""
    global _status
    with _status_lock:
        if _status is not None and not refresh:
            return _status
        if os.environ.get("HIPFER_DISABLE_GPU"):
            _status = GpuStatus(False, 0, "", {}, "HIPFER_DISABLE_GPU is set")
            return _status
        try:
            import cupy
        except Exception as e:  # ImportError, or a broken install raising anything
            _status = GpuStatus(False, 0, "", {},
                                f"CuPy is not importable ({type(e).__name__}: {e})")
            return _status
        try:
            rt = cupy.cuda.runtime
            stack = "rocm" if rt.is_hip else "cuda"
            versions = {"cupy": cupy.__version__, "runtime": rt.runtimeGetVersion()}
            try:
                versions["driver"] = rt.driverGetVersion()
            except Exception:
                pass
            n = rt.getDeviceCount()
        except Exception as e:
            _status = GpuStatus(False, 0, "", {"cupy": getattr(cupy, "__version__", "?")},
                                "CuPy is installed but no GPU is usable "
                                f"({type(e).__name__}: {e})")
            return _status
        if n == 0:
            _status = GpuStatus(False, 0, stack, versions, "CuPy sees no GPU device")
        else:
            _status = GpuStatus(True, n, stack, versions, "")
        return _status


def check_available(dev: Device) -> None:
    """Raise RuntimeError naming why dev cannot run anything (a GPU that is not there)."""
    if dev.kind == "cpu":
        return
    st = gpu_status()
    if not st.usable:
        raise RuntimeError(f"device {dev} is not available: {st.reason}")
    if dev.index >= st.count:
        raise RuntimeError(f"device {dev} is not available: CuPy sees {st.count} GPU(s)")


def devices() -> list:
    """Every device: the CPU, then each usable GPU."""
    st = gpu_status()
    return [CPU] + [Device("gpu", i) for i in range(st.count if st.usable else 0)]


_local = threading.local()
_process_default = None


def _initial_default() -> Device:
    env = os.environ.get("HIPFER_DEVICE")
    if env:
        return as_device(env)
    return Device("gpu", 0) if gpu_status().usable else CPU


def get_default_device() -> Device:
    """The device new tensors go to: the innermost `with
    default_device(...)` block's, else HIPFER_DEVICE's, else the GPU when one is usable, else
    the CPU.
    """
    stack = getattr(_local, "stack", None)
    if stack:
        return stack[-1]
    global _process_default
    if _process_default is None:
        _process_default = _initial_default()
    return _process_default


@contextlib.contextmanager
def default_device(dev):
    """Make ``dev`` the default device inside the ``with`` block (this thread only)."""
    d = as_device(dev)
    check_available(d)  # fail here, not at the first allocation
    stack = _local.__dict__.setdefault("stack", [])
    stack.append(d)
    try:
        yield d
    finally:
        stack.pop()
