"""Kernel launches with less host time: cuLaunchKernel / hipModuleLaunchKernel called
directly with a packed argument buffer.

``cupy.RawKernel.__call__`` converts every argument to a C object on every call (about
8 µs for five arguments on an H200 host), which is most of a tiny op's time. A
``FastKernel`` learns the byte layout of a call's arguments once per *signature* (the
argument types, and the dtypes of NumPy scalars), keeps a packed buffer and the array of
pointers into it, and on a warm call only writes the pointer and scalar bytes into the
buffer and calls the driver. Arguments it does not know (anything but CuPy arrays and
NumPy scalars, structured ones included) go through the RawKernel as before, so the
results are the same either way; ``HIPFER_RAW_LAUNCH=1`` turns the fast path off.

The buffer of a signature is shared, so a lock guards it from the first write until the
driver has copied the arguments (the launch returns after that).
"""
from __future__ import annotations

import ctypes
import os
import struct
import threading
from typing import Sequence

import numpy as np

__all__ = ["FastKernel", "Layout", "layout_of", "enabled"]


def enabled() -> bool:
    return os.environ.get("HIPFER_RAW_LAUNCH", "") in ("", "0")


class Layout:
    """Where each argument of one signature lives in the packed buffer.

    slots: per argument, (offset, nbytes, is_pointer). The buffer is 8-byte aligned and
    every argument sits at a multiple of its own alignment, as a C struct would place it
    (the driver copies each argument by its kernel parameter's size from its pointer).
    """
    __slots__ = ("slots", "size", "buf", "view", "params", "lock")

    def __init__(self, kinds: Sequence[tuple]):
        slots, off = [], 0
        for nbytes, align, is_ptr in kinds:
            off = -(-off // align) * align
            slots.append((off, nbytes, is_ptr))
            off += nbytes
        self.slots = tuple(slots)
        self.size = max(8, -(-off // 8) * 8)
        self.buf = (ctypes.c_uint64 * (self.size // 8))()  # 8-byte aligned storage
        self.view = memoryview(self.buf).cast("B")
        base = ctypes.addressof(self.buf)
        self.params = (ctypes.c_void_p * max(1, len(slots)))(*[base + o for o, _, _ in slots])
        self.lock = threading.Lock()

    def fill(self, args) -> None:
        """Write the arguments' bytes (a pointer's address, a scalar's value)."""
        view = self.view
        for (off, nbytes, is_ptr), a in zip(self.slots, args):
            if is_ptr:
                struct.pack_into("<Q", view, off, a)
            else:
                view[off:off + nbytes] = a


def _kind(a, is_device_array):
    """(signature key, (nbytes, align, is_pointer)) of one argument, or None (unknown)."""
    if is_device_array(a):
        return "p", (8, 8, True)
    if isinstance(a, np.generic):
        dt = a.dtype
        return dt, (dt.itemsize, max(1, dt.alignment), False)
    return None


def layout_of(args, is_device_array) -> tuple:
    """(signature, Layout) for args, or (None, None) when an argument is not packable."""
    keys, kinds = [], []
    for a in args:
        k = _kind(a, is_device_array)
        if k is None:
            return None, None
        keys.append(k[0])
        kinds.append(k[1])
    return tuple(keys), Layout(kinds)


class FastKernel:
    """A cupy.RawKernel with a cheaper ``__call__(grid, block, args, shared_mem=0)``."""
    __slots__ = ("raw", "_ptrs", "_layouts", "_cupy", "_launch", "_ndarray")

    def __init__(self, raw, cupy_module):
        self.raw = raw
        self._cupy = cupy_module
        self._launch = cupy_module.cuda.driver.launchKernel
        self._ndarray = cupy_module.ndarray
        self._ptrs: dict = {}      # device id -> CUfunction / hipFunction_t
        self._layouts: dict = {}   # signature -> Layout

    def __getattr__(self, name):   # attributes of the RawKernel (attributes, name, ...)
        return getattr(self.raw, name)

    def _func(self, dev: int) -> int:
        p = self._ptrs.get(dev)
        if p is None:
            p = self._ptrs[dev] = getattr(self.raw, "kernel", self.raw).ptr  # loaded on this device
        return p

    def __call__(self, grid, block, args, shared_mem=0):
        nd = self._ndarray
        sig = tuple(["p" if type(a) is nd else (a.dtype if isinstance(a, np.generic) else None)
                     for a in args])
        lay = self._layouts.get(sig)
        if lay is None:
            if None in sig:
                return self.raw(grid, block, args, shared_mem=shared_mem)
            _, lay = layout_of(args, lambda a: type(a) is nd)
            if len(self._layouts) < 64:
                self._layouts[sig] = lay
        cp = self._cupy
        vals = [a.data.ptr if type(a) is nd else a.tobytes() for a in args]
        gx, gy, gz = (tuple(grid) + (1, 1))[:3] if not isinstance(grid, int) else (grid, 1, 1)
        bx, by, bz = (tuple(block) + (1, 1))[:3] if not isinstance(block, int) else (block, 1, 1)
        func = self._func(cp.cuda.runtime.getDevice())
        stream = cp.cuda.get_current_stream().ptr
        with lay.lock:
            lay.fill(vals)
            self._launch(func, gx, gy, gz, bx, by, bz, shared_mem, stream,
                         ctypes.addressof(lay.params), 0)
