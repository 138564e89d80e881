"""The CuPy kernel engine: compile-once cache, launch geometry, N-d layout helpers and
the device error flag that turns out-of-range indices into Python IndexErrors.

Every kernel is a template in ``hipfer/kernels/*.cuh`` or an nn topic's
``hipfer/nn/_<topic>/fused_<topic>.cuh`` (``hipfer.kernels.source_path``), instantiated
by a C++ name expression; ``get_kernels(file, exprs)`` compiles them together once per
process and device and returns launchable kernels: ``k(grid, block, args, shared_mem=0,
align=None)``, as ``cupy.RawKernel`` is called (align: see RawLaunch).

Across processes: CuPy's disk cache does not serve modules compiled with name
expressions (loading one needs the lowered names, which CuPy did not store): not in 13.x
or 14.0-14.1 on CUDA, and in no version so far (14.2 included) on HIP; CuPy 14.2 stores
them on CUDA (compiler._compile_with_cache_cuda/_hip). Where CuPy keeps no cache, every
group was recompiled at every start: measured on one core of a 2-core Xeon VM, all 56
groups take about 415 s through hiprtc (HIP 5.2, gfx90a, its default -O3) and 350 s
through NVRTC 13 (sm_90 cubin, as CuPy asks for on an H100/H200); a group takes 0.2 to
27 s, median 6 s. A program pays that for each group it uses, at every start. So
get_kernels keeps its own cache there (hipfer/_kcache.py: private directory, entries
verified before use): it compiles with the options RawModule would pass
(``_rtc_options``) through ``cupy.cuda.compiler.compile_using_nvrtc`` (hiprtc on ROCm),
stores the binary with the lowered names, and later processes load it with
``cupy.cuda.function.Module``. The kernels are then ModuleKernels, which stand in for
RawKernels below. ``HIPFER_KERNEL_CACHE=on`` uses it where CuPy caches too, ``off``
never (RawModule, as before); ``HIPFER_KERNEL_CACHE_DIR`` moves it.

When the optional C extension ``hipfer._launch`` is built the kernels are its ``Kernel``
objects, which pack the arguments in C and call the driver's launch directly (a warm tiny
elementwise call spent a third of its time in RawKernel's argument handling); else
RawLaunch objects around the RawKernels (or ModuleKernels).
``HIPFER_FAST_LAUNCH=0`` turns the extension off.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import threading
from typing import Sequence, Tuple

import cupy
import numpy as np

from ... import _kcache
from ...kernels import module_source

MAX_NDIM = 12  # HF_MAX_NDIM in common.cuh
OPTIONS = ("-std=c++17",)


def contraction_off() -> tuple:
    """The option that keeps the compiler from fusing a multiply and an add into an FMA
    (NVRTC's --fmad=false, hiprtc's -ffp-contract=off), for every kernel: a fused
    expression (hipfer.fuse) is then bitwise equal to the same ops run one kernel each,
    and an op whose functor multiplies and adds (complex products) rounds as NumPy does."""
    return ("-ffp-contract=off",) if cupy.cuda.runtime.is_hip else ("--fmad=false",)


BLOCK = 256

_lock = threading.Lock()
_kernels: dict = {}


# ------------------------------------------------------------ the launch path
_HIP_LIBS = ("libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5")
_CUDA_LIBS = ("libcuda.so.1", "libcuda.so")


def _launch_library_names(is_hip: bool, hip_version: int = 0, mapped: Sequence[str] = ()):
    """The names to dlopen for the driver's launch function, best first: the libraries of
    that name already mapped into the process (``mapped``: CuPy's own, which its extension
    modules link against), then, on ROCm, the soname of the HIP runtime CuPy reports
    (HIP_VERSION = major * 10_000_000 + minor * 100_000 + patch), then the others.

    The launch must go through the runtime CuPy loaded: its function handles and streams
    mean nothing to a second libamdhip64 (another ROCm's, first on the library path),
    which dlopen would otherwise load beside it."""
    names = list(mapped)
    if is_hip:
        major = hip_version // 10_000_000 if hip_version > 0 else 0
        if major:
            names.append(f"libamdhip64.so.{major}")
        names += _HIP_LIBS
    else:
        names += _CUDA_LIBS
    return list(dict.fromkeys(names))  # first occurrence of each, in order


def _driver_launch_address() -> int:
    """The address of the driver's launch function: hipModuleLaunchKernel on ROCm,
    cuLaunchKernel on CUDA (the same signature), from the library CuPy already loaded."""
    if cupy.cuda.runtime.is_hip:
        try:
            version = cupy.cuda.runtime.runtimeGetVersion()
        except Exception:  # pragma: no cover - the mapped library still comes first
            version = 0
        mapped = _kcache.mapped_libraries(("libamdhip64.so",))
        names = _launch_library_names(True, version, mapped)
        symbol = "hipModuleLaunchKernel"
    else:
        names = _launch_library_names(False, 0, _kcache.mapped_libraries(("libcuda.so",)))
        symbol = "cuLaunchKernel"
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
    """hipfer._launch.Kernel's interface over a cupy.RawKernel (or a ModuleKernel), where
    the C extension is off: ``k(grid, block, args, shared_mem=0, align=None)`` launches
    unless a leading argument's pointer misses its align mask, and says whether it
    launched. Also what the extension hands a launch the driver refused to (it retries
    through CuPy), so every launch through CuPy goes through here.

    A None argument (a null pointer: absent operands, no error flag) goes to CuPy as 0:
    CuPy 13's RawKernel packs None as a NULL *parameter* pointer, so the kernel reads an
    undefined value there (seen on an H200 as misaligned and illegal addresses); an int
    0 is a zero int64 on every CuPy, the null pointer the kernel expects."""
    __slots__ = ("raw",)

    def __init__(self, raw):
        self.raw = raw

    @property
    def kernel(self):
        """The driver function (cupy.cuda.function.Function), as on a RawKernel."""
        return self.raw.kernel

    def __call__(self, grid, block, args, shared_mem=0, align=None) -> bool:
        if align is not None:
            for a, m in zip(args, align):
                if a.data.ptr & m:
                    return False
        self.raw(grid, block, tuple(0 if a is None else a for a in args),
                 shared_mem=shared_mem)
        return True


def launchable(raw):
    """The kernel to launch for a cupy.RawKernel or a ModuleKernel: hipfer._launch's
    Kernel on its function (loaded for the current device, as RawKernel does) when the
    extension is on, else RawLaunch(raw); both are called alike. The extension retries a
    refused launch through RawLaunch(raw) too (None arguments: see RawLaunch)."""
    fast = _fast_launch()
    if isinstance(fast, str):
        return RawLaunch(raw)
    return fast.Kernel(raw.kernel.ptr, RawLaunch(raw))


def function_handle(kernel) -> int:
    """The driver's function handle of a kernel from get_kernels (occupancy queries)."""
    return kernel.raw.kernel.ptr


class ModuleKernel:
    """A kernel of a module get_kernels loaded itself (hipfer's kernel cache), with what
    launchable, RawLaunch and hipfer._launch use of a cupy.RawKernel: ``.kernel`` (the
    cupy.cuda.function.Function) and ``k(grid, block, args, shared_mem=0)``. Loaded for
    one device; on another (hipfer._launch hands a refused launch to it) it launches
    that device's instance of the same kernel, as RawKernel does."""
    __slots__ = ("file", "exprs", "index", "device", "function")

    def __init__(self, file: str, exprs: Tuple[str, ...], index: int, device: int, function):
        self.file, self.exprs, self.index = file, exprs, index
        self.device, self.function = device, function

    @property
    def kernel(self):
        if cupy.cuda.runtime.getDevice() == self.device:
            return self.function
        return get_kernels(self.file, self.exprs)[self.index].raw.kernel

    def __call__(self, grid, block, args, shared_mem=0):
        self.kernel(grid, block, args, shared_mem=shared_mem)

    def __repr__(self):
        return f"ModuleKernel({self.file}, {self.exprs[self.index]!r}, device {self.device})"


# ------------------------------------------------------------ compiling, and the cache
def cupy_caches_modules() -> bool:
    """Whether CuPy's disk cache serves a RawModule with name expressions: from CuPy 14.2
    on CUDA, which stores the lowered names with the cubin (compiler._decode_cache_payload
    came with it); never on HIP (CuPy 14.2 still recompiles those on every start)."""
    return not cupy.cuda.runtime.is_hip and hasattr(cupy.cuda.compiler, "_decode_cache_payload")


def _own_cache() -> bool:
    m = _kcache.mode()
    return m == "on" or (m == "auto" and not cupy_caches_modules())


def kernel_cache_status() -> str:
    """Where compiled kernel groups are kept across processes: 'hipfer (DIR)', 'CuPy
    (DIR; ...)', or 'none (why)'."""
    m = _kcache.mode()
    if _own_cache():
        refused = [s.disabled for s in _stores.values() if s.disabled]
        if refused:
            return f"none (refused: {refused[0]})"
        return f"hipfer ({_kcache.default_dir()})"
    if not cupy_caches_modules():
        return f"none ({_kcache.ENV_MODE}=off)"
    # CuPy's directory, as 13.x and 14.x find it
    where = os.environ.get("CUPY_CACHE_DIR") or os.path.expanduser("~/.cupy/kernel_cache")
    why = f"{_kcache.ENV_MODE}=off" if m == "off" else f"{_kcache.ENV_MODE}=on for hipfer's"
    return f"CuPy ({where}; {why})"


_options: list = []  # [the options CuPy would pass for our RawModules], once computed


def _rtc_options() -> tuple:
    """What a cupy.RawModule(code, options=OPTIONS, name_expressions=...) passes to
    compile_using_nvrtc (NVRTC or hiprtc), which then adds the arch and
    --device-as-default-execution-space on CUDA: core.assemble_cupy_compiler_options,
    then what compiler._compile_with_cache_cuda / _hip append. Checked in 13.3 and 14.x;
    what differs between them is looked up, not assumed."""
    if not _options:
        from cupy._core import core
        from cupy import _environment
        opts = tuple(core.assemble_cupy_compiler_options(OPTIONS + contraction_off()))
        if cupy.cuda.runtime.is_hip:
            opts += ("-fcuda-flush-denormals-to-zero",)
            hipcc_dirs = getattr(_environment, "_get_hipcc_include_dirs", None)  # 14.1+
            if hipcc_dirs is not None:
                opts += tuple(f"-I{d}" for d in hipcc_dirs())
        else:
            opts += ("-ftz=true",)
            if os.environ.get("CUPY_CUDA_COMPILE_WITH_DEBUG") == "1":
                opts += ("--device-debug", "--generate-line-info")
            extra = getattr(cupy.cuda.compiler, "_get_extra_include_dir_opts", None)  # <= 14.0
            if extra is not None:
                opts += tuple(extra())
        _options.append(opts)
    return _options[0]


def _device_arch(dev: int) -> str:
    """The architecture a binary is built for: gcnArchName on ROCm (with its target
    features, 'gfx90a:sramecc+:xnack-'), sm_<compute capability> on CUDA."""
    if cupy.cuda.runtime.is_hip:
        name = cupy.cuda.runtime.getDeviceProperties(dev)["gcnArchName"]
        return name.decode() if isinstance(name, bytes) else str(name)
    return "sm_" + cupy.cuda.Device(dev).compute_capability


def _arch_option() -> list:
    """The arch option and output kind compile_using_nvrtc will choose on CUDA for the
    current device (('-arch=sm_90', 'cubin'); PTX with CUPY_COMPILE_WITH_PTX=1 or an arch
    newer than NVRTC knows); [] on HIP, where it adds none."""
    choose = getattr(cupy.cuda.compiler, "_get_arch_for_options_for_nvrtc", None)
    if cupy.cuda.runtime.is_hip or choose is None:
        return []
    return list(choose())


_compiler: list = []  # [what identifies the run-time compiler], once computed


def _compiler_id() -> list:
    """The run-time compiler's versions and the files it is loaded from (size and mtime:
    a library replaced in place changes the key too)."""
    if not _compiler:
        from cupy_backends.cuda.libs import nvrtc
        ver = list(nvrtc.getVersion())  # also loads NVRTC / hiprtc, for the maps below
        libs = _kcache.mapped_libraries(("libnvrtc", "libhiprtc", "libamdhip64",
                                         "libamd_comgr"))
        _compiler.append([ver, cupy.cuda.runtime.runtimeGetVersion(),
                          cupy.cuda.driver.get_build_version(), _kcache.file_fingerprint(libs)])
    return _compiler[0]


_stores: dict = {}  # (root, arch) -> _kcache.KernelStore


def _load_functions(binary: bytes, names: Sequence[str]) -> tuple:
    mod = cupy.cuda.function.Module()
    mod.load(bytes(binary))
    return tuple(mod.get_function(n) for n in names)  # each keeps mod loaded


def _compile_group(file: str, exprs: Tuple[str, ...], dev: int) -> tuple:
    """The Functions of kernels/<file>'s name expressions on device dev, from hipfer's
    cache when it holds them, else compiled as RawModule would (and then stored)."""
    source = module_source(file)
    options = _rtc_options()
    arch = _device_arch(dev)
    root = _kcache.default_dir()
    store = _stores.get((root, arch))
    if store is None:
        store = _stores[(root, arch)] = _kcache.KernelStore(root, arch)
    digest = _kcache.key_digest({
        "backend": "hiprtc" if cupy.cuda.runtime.is_hip else "nvrtc",
        "source": hashlib.sha256(source.encode()).hexdigest(), "options": list(options),
        "exprs": list(exprs), "arch": [arch, *_arch_option()], "compiler": _compiler_id(),
        "cupy": cupy.__version__})
    hit = store.load(digest, exprs)
    if hit is not None:
        try:
            return _load_functions(hit[1], hit[0])
        except cupy.cuda.driver.CUDADriverError:  # pragma: no cover - GPU only
            pass  # a whole entry the driver refuses: compile and replace it
    stem = file.rsplit(".", 1)[0]
    binary, mapping = cupy.cuda.compiler.compile_using_nvrtc(
        source, options, None, f"{stem}.cu", list(exprs))
    names = [mapping[e] for e in exprs]
    store.save(digest, exprs, names, binary)
    return _load_functions(binary, names)


def get_kernels(file: str, exprs: Sequence[str]) -> tuple:
    """Compile (once per process and device) the module kernels/<file> with these name
    expressions, or load it from the disk cache (see the module's docstring)."""
    exprs = tuple(exprs)
    dev = cupy.cuda.runtime.getDevice()
    key = (file, exprs, dev)
    ks = _kernels.get(key)
    if ks is None:
        with _lock:
            ks = _kernels.get(key)
            if ks is None:
                try:
                    if _own_cache():
                        ks = tuple(launchable(ModuleKernel(file, exprs, i, dev, f))
                                   for i, f in enumerate(_compile_group(file, exprs, dev)))
                    else:
                        mod = cupy.RawModule(code=module_source(file),
                                             options=OPTIONS + contraction_off(),
                                             name_expressions=list(exprs))
                        ks = tuple(launchable(mod.get_function(e)) for e in exprs)
                except cupy.cuda.compiler.CompileException as e:  # pragma: no cover - GPU only
                    raise RuntimeError(f"compiling {file} for {list(exprs)} failed:\n{e}"
                                       ) from None
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
    """Blocks for n elements at per_thread elements each; grid-stride loops cover the rest.
    At most 2^31 threads in all: HIP limits a launch's total threads to 32 bits."""
    dev = cupy.cuda.runtime.getDevice()
    cap = min(device_props(dev)["sm_count"] * max_waves, (1 << 31) // block)
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
