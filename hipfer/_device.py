"""Devices: ``cpu`` and ``gpu:N``, the process default and a context manager.

The default device is the GPU when CuPy sees a usable one, else the CPU.
``HIPFER_DEVICE`` (``cpu``, ``gpu``, ``gpu:N``) overrides it for the whole process and
``with hipfer.default_device("cpu"):`` for a block (per thread).
"""
from __future__ import annotations

import contextlib
import os
import threading
from dataclasses import dataclass


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


_local = threading.local()
_process_default = None


def _initial_default() -> Device:
    env = os.environ.get("HIPFER_DEVICE")
    if env:
        return as_device(env)
    from .prims.registry import gpu_status
    return Device("gpu", 0) if gpu_status().usable else CPU


def get_default_device() -> Device:
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
    from .prims.registry import get_backend
    get_backend(d)  # fail here, not at the first allocation
    stack = _local.__dict__.setdefault("stack", [])
    stack.append(d)
    try:
        yield d
    finally:
        stack.pop()
