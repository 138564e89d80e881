"""Every kernel group through the run-time compilers CuPy itself uses: NVRTC (CuPy-CUDA)
and hiprtc (CuPy-ROCm), with the same source text and name expressions as at run time
and the options CuPy passes for a RawModule; each name expression's lowered name must be
a kernel symbol of the binary produced (what hipModuleGetFunction / cuModuleGetFunction
then look up).

The offline hipcc/nvcc check (test_kernel_compile.py) is not enough: NVRTC and hiprtc
lack some builtins and headers the offline compilers have (NVRTC has no
__builtin_huge_val, for one). Neither needs a GPU. NVRTC comes from the
``nvidia-cuda-nvrtc`` wheel (a test extra), hiprtc from Debian's libamdhip64
(installed by .ci/run with hipcc; gfx90a); HIPFER_REQUIRE_HIPCC=1 turns a missing hiprtc into
a failure.
"""
import ctypes
import glob
import importlib.util
import os
import re
import shutil
import struct

import pytest

from hipfer.kernels import all_instances, module_source

STD = ["-std=c++17"]  # hipfer.backends.cupy._engine.OPTIONS


def _cupy_include_dir() -> str:
    """CuPy's header directory (cupy/_core/include), found without importing CuPy; a
    stand-in path where CuPy is not installed (no source here includes its headers, the
    options just keep their shape)."""
    try:
        spec = importlib.util.find_spec("cupy")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.origin:
        return "/nonexistent/cupy/_core/include"
    return os.path.join(os.path.dirname(spec.origin), "_core", "include")


def _rocm_path() -> str:
    """ROCm's root as CuPy finds it (cupy._environment._get_rocm_path): $ROCM_HOME, else
    the directory above hipcc's bin/ (/usr on Debian), else /opt/rocm."""
    home = os.environ.get("ROCM_HOME", "")
    if home and os.path.exists(home):
        return home
    hipcc = shutil.which("hipcc")
    return os.path.dirname(os.path.dirname(hipcc)) if hipcc else "/opt/rocm"


_INC = _cupy_include_dir()
#: What CuPy 13.3 gives hiprtc for a RawModule (core.assemble_cupy_compiler_options: the
#: bundled CCCL first, our options, CuPy's and ROCm's include dirs; then
#: compiler._compile_with_cache_hip: -fcuda-flush-denormals-to-zero), no -O option: the
#: default optimisation (hiprtc's -O3), as at run time; the 56 groups took 414 s of one
#: core at it and 147 s at -O0, about 2 min more of wall time on the CI's 2 cores. CuPy
#: adds no arch option on HIP (hiprtc targets the current device); --offload-arch=gfx90a
#: stands in for the device here. CuPy 14.1+ adds hipcc's include dirs instead of CCCL's.
HIPRTC_OPTIONS = [f"-I{_INC}/cupy/_cccl/cub", f"-I{_INC}/cupy/_cccl/thrust",
                  f"-I{_INC}/cupy/_cccl/libcudacxx", *STD, f"-I{_INC}",
                  f"-I{_rocm_path()}/include", "-fcuda-flush-denormals-to-zero",
                  "--offload-arch=gfx90a"]
#: What CuPy (13.3 with NVRTC >= 12, and 14) gives NVRTC, less the include dirs of a CUDA
#: install: -ftz=true (_compile_with_cache_cuda), the arch and
#: --device-as-default-execution-space (compile_using_nvrtc). For an sm_90 device CuPy asks
#: for a cubin (-arch=sm_90); PTX (compute_90, as CuPy does with CUPY_COMPILE_WITH_PTX=1)
#: goes through the same front end without ptxas (all groups: 149 s of one core against
#: 347 s), and its .entry lines name the kernels as well.
NVRTC_OPTIONS = [*STD, "-ftz=true", "-arch=compute_90", "--device-as-default-execution-space"]


def _nvrtc():
    try:
        import nvidia
    except ImportError:
        return None
    for base in nvidia.__path__:
        for path in sorted(glob.glob(os.path.join(base, "cu*", "lib", "libnvrtc.so*"))):
            try:
                lib = ctypes.CDLL(path)
                lib.nvrtcCompileProgram
                return lib
            except (OSError, AttributeError):
                continue
    return None


def _hiprtc():
    for name in ("libhiprtc.so", "libhiprtc.so.6", "libhiprtc.so.7", "libamdhip64.so",
                 "libamdhip64.so.5"):
        try:
            lib = ctypes.CDLL(name)
            lib.hiprtcCompileProgram
            return lib
        except (OSError, AttributeError):
            continue
    return None


# ------------------------------------------------------------ ELF symbol tables
_STT_FUNC, _STT_OBJECT, _SHN_UNDEF = 2, 1, 0
_STO_CUDA_ENTRY = 0x10  # st_other of a __global__ function in a cubin


def elf_symbols(data: bytes) -> dict:
    """{name: (type, st_other)} of the defined symbols in the .symtab and .dynsym of a
    little-endian ELF64 object (a cubin, an AMDGPU code object)."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError(f"not a little-endian ELF64 object: {data[:8]!r}")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
                for i in range(shnum)]
    out = {}
    for _, sh_type, _, _, off, size, link, _, _, entsize in sections:
        if sh_type not in (2, 11):  # SHT_SYMTAB, SHT_DYNSYM
            continue
        stroff, strsize = sections[link][4], sections[link][5]
        strtab = data[stroff:stroff + strsize]
        for at in range(off, off + size, entsize or 24):
            st_name, st_info, st_other, st_shndx = struct.unpack_from("<IBBH", data, at)
            if st_shndx == _SHN_UNDEF:
                continue
            name = strtab[st_name:strtab.index(b"\0", st_name)].decode()
            out[name] = (st_info & 0xF, st_other)
    return out


_PTX_ENTRY = re.compile(rb"^\s*(?:\.visible\s+|\.weak\s+)?\.entry\s+([A-Za-z_$][\w$]*)", re.M)


def ptx_entries(ptx: bytes) -> set:
    """The kernels (``.entry`` directives) of a PTX module."""
    return {m.group(1).decode() for m in _PTX_ENTRY.finditer(ptx)}


def missing_kernels(binary: bytes, lowered, amdgpu: bool) -> list:
    """The lowered names that are not kernels of the binary: a PTX ``.entry``, or a
    defined function symbol (a cubin's marked as an entry), plus, in an AMDGPU code
    object, its kernel descriptor ``<name>.kd``, which is what hipModuleGetFunction
    resolves."""
    if not amdgpu and not binary.startswith(b"\x7fELF"):
        entries = ptx_entries(binary)
        return [n for n in lowered if n not in entries]
    syms = elf_symbols(binary)
    bad = []
    for name in lowered:
        kind, other = syms.get(name, (None, 0))
        if kind != _STT_FUNC:
            bad.append(name)
        elif amdgpu and syms.get(name + ".kd", (None,))[0] != _STT_OBJECT:
            bad.append(name + ".kd")
        elif not amdgpu and not other & _STO_CUDA_ENTRY:
            bad.append(name + " (not an entry)")
    return bad


def _compile(lib, prefix, source, exprs, options):
    """Create, add name expressions, compile; returns (ok, log, binary, lowered names).
    The binary is hiprtcGetCode's code object, or NVRTC's cubin (an sm_ arch) or PTX."""
    prog = ctypes.c_void_p()
    create = getattr(lib, f"{prefix}CreateProgram")
    rc = create(ctypes.byref(prog), source.encode(), b"hipfer.cu", 0, None, None)
    assert rc == 0, f"{prefix}CreateProgram failed ({rc})"
    try:
        for e in exprs:
            rc = getattr(lib, f"{prefix}AddNameExpression")(prog, e.encode())
            assert rc == 0, f"{prefix}AddNameExpression({e}) failed ({rc})"
        opts = [o.encode() for o in options]
        arr = (ctypes.c_char_p * len(opts))(*opts)
        rc = getattr(lib, f"{prefix}CompileProgram")(prog, len(opts), arr)
        size = ctypes.c_size_t()
        getattr(lib, f"{prefix}GetProgramLogSize")(prog, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value + 1)
        getattr(lib, f"{prefix}GetProgramLog")(prog, buf)
        log = buf.value.decode(errors="replace")
        if rc != 0:
            return False, log, b"", []
        lowered = []  # every name expression must resolve to a lowered kernel name
        for e in exprs:
            name = ctypes.c_char_p()
            r = getattr(lib, f"{prefix}GetLoweredName")(prog, e.encode(), ctypes.byref(name))
            if r != 0:
                return False, f"no lowered name for {e} ({r})\n{log}", b"", []
            lowered.append(name.value.decode())
        what = "Code"
        if prefix == "nvrtc":  # no cubin (size 0) for a compute_ arch
            getattr(lib, "nvrtcGetCUBINSize")(prog, ctypes.byref(size))
            what = "CUBIN" if size.value else "PTX"
        getattr(lib, f"{prefix}Get{what}Size")(prog, ctypes.byref(size))
        binary = ctypes.create_string_buffer(size.value)
        rc = getattr(lib, f"{prefix}Get{what}")(prog, binary)
        if rc != 0 or not size.value:
            return False, f"{prefix}Get{what} failed ({rc}, {size.value} bytes)\n{log}", b"", []
        return True, log, binary.raw, lowered
    finally:
        getattr(lib, f"{prefix}DestroyProgram")(ctypes.byref(prog))


GROUPS = all_instances()
_NVRTC = _nvrtc()
_HIPRTC = _hiprtc()


def _check(lib, prefix, what, group, file, exprs, options):
    ok, log, binary, lowered = _compile(lib, prefix, module_source(file), exprs, options)
    assert ok, f"{what} failed on {group} ({file}):\n{log[-4000:]}"
    bad = missing_kernels(binary, lowered, amdgpu=prefix == "hiprtc")
    assert not bad, f"{what}, {group}: {len(bad)} lowered names are no kernel: {bad[:5]}"


@pytest.mark.gpu_compile
@pytest.mark.skipif(_NVRTC is None, reason="NVRTC not installed (pip install nvidia-cuda-nvrtc)")
@pytest.mark.parametrize("group,file,exprs", GROUPS, ids=[g[0] for g in GROUPS])
def test_nvrtc_compiles(group, file, exprs):
    _check(_NVRTC, "nvrtc", "NVRTC (compute_90)", group, file, exprs, NVRTC_OPTIONS)


@pytest.mark.gpu_compile
@pytest.mark.parametrize("group,file,exprs", GROUPS, ids=[g[0] for g in GROUPS])
def test_hiprtc_compiles(group, file, exprs):
    if _HIPRTC is None:
        if os.environ.get("HIPFER_REQUIRE_HIPCC") == "1":
            pytest.fail("hiprtc (libamdhip64) is missing but HIPFER_REQUIRE_HIPCC=1")
        pytest.skip("hiprtc not installed (Debian: libamdhip64-dev)")
    _check(_HIPRTC, "hiprtc", "hiprtc (gfx90a)", group, file, exprs, HIPRTC_OPTIONS)


# ------------------------------------------- the symbol check itself, on tiny kernels
_TINY = "template <typename T> __global__ void k(T* p) { p[threadIdx.x] = T(1); }\n"


@pytest.mark.parametrize("prefix,arch", [("nvrtc", "compute_90"), ("nvrtc", "sm_90"),
                                        ("hiprtc", "gfx90a")])
def test_symbol_check_sees_kernels(prefix, arch):
    """The check finds the lowered name of a kernel (in PTX, a cubin, a code object) and
    refuses a name that is not one."""
    lib = _NVRTC if prefix == "nvrtc" else _HIPRTC
    if lib is None:
        pytest.skip(f"{prefix} not installed")
    options = HIPRTC_OPTIONS if prefix == "hiprtc" else [
        o if not o.startswith("-arch=") else f"-arch={arch}" for o in NVRTC_OPTIONS]
    ok, log, binary, lowered = _compile(lib, prefix, _TINY, ["k<float>"], options)
    assert binary.startswith(b"\x7fELF") == (arch != "compute_90")
    assert ok, log
    assert lowered == ["_Z1kIfEvPT_"]
    amd = prefix == "hiprtc"
    assert missing_kernels(binary, lowered, amdgpu=amd) == []
    assert missing_kernels(binary, ["_Z1kIdEvPT_"], amdgpu=amd) == ["_Z1kIdEvPT_"]


def test_elf_symbols_refuses_non_elf():
    with pytest.raises(ValueError, match="ELF64"):
        elf_symbols(b"//\n// Generated by NVIDIA NVVM Compiler\n.version 8.0\n")
