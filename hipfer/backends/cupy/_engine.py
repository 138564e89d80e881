"""The CuPy kernel engine: compile-once cache, launch geometry, N-d layout helpers and
the device error flag that turns out-of-range indices into Python IndexErrors.

Every kernel is a template in ``hipfer/kernels/*.cuh`` instantiated by a C++ name
expression; ``get_kernels(file, exprs)`` compiles them together once per process (CuPy
also caches the binary on disk) and returns launchable kernels: ``k(grid, block, args,
shared_mem=0, align=None)``, as ``cupy.RawKernel`` is called (align: see RawLaunch).
When the optional C extension ``hipfer._launch`` is built they are its ``Kernel``
objects, which pack the arguments in C and call the driver's launch directly (a warm tiny
elementwise call spent a third of its time in RawKernel's argument handling); else
RawLaunch objects around the RawKernels.
``HIPFER_FAST_LAUNCH=0`` turns the extension off.
"""
from __future__ import annotations

import ctypes
import os
import threading
from typing import Sequence, Tuple

import cupy
import numpy as np

from ...kernels import module_source

MAX_NDIM = 12  # HF_MAX_NDIM in common.cuh
OPTIONS = ("-std=c++17",)
BLOCK = 256

_lock = threading.Lock()
_kernels: dict = {}


# ------------------------------------------------------------ the launch path
def _driver_launch_address() -> int:
    """The address of the driver's launch function: hipModuleLaunchKernel on ROCm,
    cuLaunchKernel on CUDA (the same signature), from the library CuPy already loaded."""
    if cupy.cuda.runtime.is_hip:
        names, symbol = ("libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6",
                         "libamdhip64.so.5"), "hipModuleLaunchKernel"
    else:
        names, symbol = ("libcuda.so.1", "libcuda.so"), "cuLaunchKernel"
    for name in names:
        try:
            return ctypes.cast(getattr(ctypes.CDLL(name), symbol), ctypes.c_void_p).value
        except (OSError, AttributeError):
            continue
    raise OSError(f"no {symbol} in any of {names}")


def _start_fast_launch():
    """hipfer._launch initialised, or the reason it is not used (a string)."""
    if os.environ.get("HIPFER_FAST_LAUNCH", "1") == "0":
        return "off (HIPFER_FAST_LAUNCH=0)"
    try:
        from ... import _launch
    except ImportError as e:
        return f"off (the C extension hipfer._launch is not built: {e})"
    try:
        _launch.init(cupy._core.core._ndarray_base, cupy.cuda.get_current_stream,
                     _driver_launch_address())
    except (OSError, AttributeError, TypeError, ValueError) as e:  # pragma: no cover - odd installs
        return f"off ({e})"
    return _launch


_fast: list = []  # [the module, or why not] once asked for


def _fast_launch():
    """hipfer._launch, or why it is off (a string); decided on first use."""
    if not _fast:
        _fast.append(_start_fast_launch())
    return _fast[0]


def fast_launch_status() -> str:
    """'on', or 'off (why)': whether kernels launch through hipfer._launch."""
    fast = _fast_launch()
    return fast if isinstance(fast, str) else "on"


class RawLaunch:
    """hipfer._launch.Kernel's interface over a cupy.RawKernel, where the C extension is
    off: ``k(grid, block, args, shared_mem=0, align=None)`` launches unless a leading
    argument's pointer misses its align mask, and says whether it launched."""
    __slots__ = ("raw",)

    def __init__(self, raw):
        self.raw = raw

    def __call__(self, grid, block, args, shared_mem=0, align=None) -> bool:
        if align is not None:
            for a, m in zip(args, align):
                if a.data.ptr & m:
                    return False
        self.raw(grid, block, args, shared_mem=shared_mem)
        return True


def launchable(raw):
    """The kernel to launch for a cupy.RawKernel: hipfer._launch's Kernel on its function
    (loaded for the current device, as RawKernel does) when the extension is on, else
    RawLaunch(raw); both are called alike."""
    fast = _fast_launch()
    if isinstance(fast, str):
        return RawLaunch(raw)
    return fast.Kernel(raw.kernel.ptr, raw)


def function_handle(kernel) -> int:
    """The driver's function handle of a kernel from get_kernels (occupancy queries)."""
    return kernel.raw.kernel.ptr


def get_kernels(file: str, exprs: Sequence[str]) -> tuple:
    """Compile (once) the module kernels/<file> with these name expressions."""
    key = (file, tuple(exprs), cupy.cuda.runtime.getDevice())
    ks = _kernels.get(key)
    if ks is None:
        with _lock:
            ks = _kernels.get(key)
            if ks is None:
                mod = cupy.RawModule(code=module_source(file), options=OPTIONS,
                                     name_expressions=list(exprs))
                try:
                    ks = tuple(launchable(mod.get_function(e)) for e in exprs)
                except cupy.cuda.compiler.CompileException as e:  # pragma: no cover - GPU only
                    raise RuntimeError(f"compiling {file} for {list(exprs)} failed:\n{e}") from None
                _kernels[key] = ks
    return ks


def get_kernel(file: str, expr: str):
    return get_kernels(file, (expr,))[0]


# ----------------------------------------------------------------- device facts
_props: dict = {}


def device_props(index: int) -> dict:
    p = _props.get(index)
    if p is None:
        raw = cupy.cuda.runtime.getDeviceProperties(index)
        p = {"sm_count": int(raw["multiProcessorCount"]), "warp_size": int(raw["warpSize"]),
             "name": raw["name"].decode() if isinstance(raw["name"], bytes) else str(raw["name"])}
        _props[index] = p
    return p


def grid_for(n: int, per_thread: int = 1, block: int = BLOCK, max_waves: int = 32) -> int:
    """Blocks for n elements at per_thread elements each; grid-stride loops cover the rest."""
    dev = cupy.cuda.runtime.getDevice()
    cap = device_props(dev)["sm_count"] * max_waves
    need = -(-n // (block * per_thread))
    return max(1, min(need, cap))


# --------------------------------------------------------------- N-d geometry
SHAPE_DTYPE = np.dtype([("dim", "<i8", (MAX_NDIM,)), ("ndim", "<i4")], align=True)
STRIDES_DTYPE = np.dtype([("s", "<i8", (MAX_NDIM,))], align=True)


def struct_arg(dtype: np.dtype, fields) -> np.ndarray:
    """A C struct passed by value: a 0-d structured array (size 1) holding ``fields``
    (name -> value, or (name, value) pairs). Not its np.void scalar: CuPy 13's RawKernel
    packs only plain NumPy scalars and size-1 ndarrays ("Unsupported type" otherwise);
    CuPy 14 and hipfer._launch take size-1 ndarrays too."""
    a = np.zeros((), dtype)
    for name, v in (fields.items() if isinstance(fields, dict) else fields):
        a[name] = v
    return a


def shape_arg(shape: Sequence[int]) -> np.ndarray:
    """hf::Shape by value."""
    if len(shape) > MAX_NDIM:
        raise ValueError(f"rank {len(shape)} exceeds the kernels' {MAX_NDIM} (after merging axes)")
    a = np.zeros((), SHAPE_DTYPE)
    a["dim"][: len(shape)] = shape
    a["ndim"] = len(shape)
    return a  # 0-d, as struct_arg says


def strides_arg(strides: Sequence[int]) -> np.ndarray:
    """hf::Strides (in elements) by value."""
    a = np.zeros((), STRIDES_DTYPE)
    a["s"][: len(strides)] = strides
    return a


def elem_strides(byte_strides: Sequence[int], itemsize: int) -> Tuple[int, ...]:
    return tuple(s // itemsize for s in byte_strides)


def broadcast_strides(shape_in: Sequence[int], strides_in: Sequence[int],
                      shape_out: Sequence[int]) -> Tuple[int, ...]:
    """Element strides of an operand broadcast (NumPy rules) to shape_out: 0 on new or size-1 axes."""
    pad = len(shape_out) - len(shape_in)
    out = [0] * pad
    for n, s in zip(shape_in, strides_in):
        out.append(0 if n == 1 else s)
    return tuple(out)


def collapse(shape: Sequence[int], *strides: Sequence[int]):
    """Drop size-1 axes and merge neighbours that are contiguous for every operand.
    Returns (shape, [strides...]) with at least one axis (C order)."""
    dims = [(n, [s[i] for s in strides]) for i, n in enumerate(shape) if n != 1]
    if not dims:
        return (1,), [(0,) * 1 for _ in strides]
    out_n = [dims[0][0]]
    out_s = [list(dims[0][1])]
    for n, ss in dims[1:]:
        prev_n, prev_s = out_n[-1], out_s[-1]
        if all(ps == s * n for ps, s in zip(prev_s, ss)):
            out_n[-1] = prev_n * n
            out_s[-1] = list(ss)
        else:
            out_n.append(n)
            out_s.append(list(ss))
    return tuple(out_n), [tuple(s[k] for s in out_s) for k in range(len(strides))]


def is_c_contiguous(shape: Sequence[int], strides_elems: Sequence[int]) -> bool:
    expect = 1
    for n, s in zip(reversed(shape), reversed(strides_elems)):
        if n != 1 and s != expect:
            return False
        expect *= n
    return True


# ------------------------------------------------------------- the error flag
class ErrorFlag:
    """One int64 (per device and thread: error_flag) that kernels set (atomicCAS from 0)
    to 1 + the first bad flat position they met; ``check`` reads it back (a 8-byte sync)
    and raises.

    ``queue_read`` / ``wait_read`` split that read: the copy to pinned host memory and an
    event are queued where the checking kernels end, later launches may follow, and
    wait_read waits for the event alone (not for what was queued after it)."""

    def __init__(self):
        self.buf = cupy.zeros(1, dtype=np.int64)
        self._slot = None  # (pinned int64, its memory, event): made on first queue_read

    def check(self, make_error):
        self._raise(int(self.buf.get()[0]), make_error)

    def _raise(self, v: int, make_error):
        if v:
            self.buf.fill(0)
            raise make_error(v - 1)

    def queue_read(self):
        """Queue the flag's read-back on the current stream; returns the pending read."""
        if self._slot is None:
            mem = cupy.cuda.alloc_pinned_memory(8)
            self._slot = (np.frombuffer(mem, np.int64, 1), mem,
                          cupy.cuda.Event(block=False, disable_timing=True))
        host, _, event = self._slot
        stream = cupy.cuda.get_current_stream()
        cupy.cuda.runtime.memcpyAsync(host.ctypes.data, self.buf.data.ptr, 8,
                                      cupy.cuda.runtime.memcpyDeviceToHost, stream.ptr)
        event.record(stream)
        return host, event

    def wait_read(self, read, make_error):
        """Wait for the read queue_read returned; raise as check does."""
        host, event = read
        event.synchronize()
        self._raise(int(host[0]), make_error)


_flags: dict = {}


def error_flag() -> ErrorFlag:
    """The error flag of the current device and thread: a flag set by one thread's bad
    index never fails another thread's call (two threads' kernels may interleave on one
    stream)."""
    key = (cupy.cuda.runtime.getDevice(), threading.get_ident())
    f = _flags.get(key)
    if f is None:
        if len(_flags) >= 256:  # threads come and go (a running call holds its own flag)
            _flags.clear()
        f = _flags[key] = ErrorFlag()
    return f
