"""Every kernel group through the run-time compilers CuPy itself uses: NVRTC (CuPy-CUDA)
and hiprtc (CuPy-ROCm), with the same source text and name expressions as at run time.

The offline hipcc/nvcc check (test_kernel_compile.py) is not enough: NVRTC and hiprtc
lack some builtins and headers the offline compilers have (NVRTC has no
__builtin_huge_val, for one). Neither needs a GPU. NVRTC comes from the
``nvidia-cuda-nvrtc`` wheel (a test extra), hiprtc from Debian's libamdhip64
(installed by .ci/run with hipcc; gfx90a); HIPFER_REQUIRE_HIPCC=1 turns a missing hiprtc into
a failure.
"""
import ctypes
import glob
import os

import pytest

from hipfer.kernels import all_instances, module_source

OPTIONS = ["-std=c++17"]  # what hipfer.backends.cupy._engine passes (CuPy adds the arch)


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


def _compile(lib, prefix, source, exprs, options):
    """Create, add name expressions, compile; returns (ok, log)."""
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
        if rc == 0:  # every name expression must resolve to a lowered kernel name
            for e in exprs:
                name = ctypes.c_char_p()
                r = getattr(lib, f"{prefix}GetLoweredName")(prog, e.encode(), ctypes.byref(name))
                if r != 0:
                    return False, f"no lowered name for {e} ({r})\n{log}"
        return rc == 0, log
    finally:
        getattr(lib, f"{prefix}DestroyProgram")(ctypes.byref(prog))


GROUPS = all_instances()
_NVRTC = _nvrtc()
_HIPRTC = _hiprtc()


@pytest.mark.gpu_compile
@pytest.mark.skipif(_NVRTC is None, reason="NVRTC not installed (pip install nvidia-cuda-nvrtc)")
@pytest.mark.parametrize("group,file,exprs", GROUPS, ids=[g[0] for g in GROUPS])
def test_nvrtc_compiles(group, file, exprs):
    ok, log = _compile(_NVRTC, "nvrtc", module_source(file), exprs,
                       OPTIONS + ["--gpu-architecture=compute_90"])
    assert ok, f"NVRTC failed on {group} ({file}):\n{log[-4000:]}"


@pytest.mark.gpu_compile
@pytest.mark.parametrize("group,file,exprs", GROUPS, ids=[g[0] for g in GROUPS])
def test_hiprtc_compiles(group, file, exprs):
    if _HIPRTC is None:
        if os.environ.get("HIPFER_REQUIRE_HIPCC") == "1":
            pytest.fail("hiprtc (libamdhip64) is missing but HIPFER_REQUIRE_HIPCC=1")
        pytest.skip("hiprtc not installed (Debian: libamdhip64-dev)")
    # One arch suffices here: what differs from the offline compile (builtins, name
    # lowering) does not depend on it, and hipcc covers the four targets at -O3. So -O0:
    # the same front end and checks, in a third to a seventh of the time (2-core CI).
    ok, log = _compile(_HIPRTC, "hiprtc", module_source(file), exprs,
                       OPTIONS + ["--offload-arch=gfx90a", "-O0"])
    assert ok, f"hiprtc (gfx90a) failed on {group} ({file}):\n{log[-4000:]}"
