"""hipfer._launch, the compiled launch path (hipfer/_launch.c), without a GPU: the module
is built from source here, and the driver's launch is replaced by a ctypes stub that
records what it is given -- function handle, grid, block, shared memory, stream, and the
bytes behind every kernel parameter -- so the argument packing is checked byte for byte
against what cupy.RawKernel would pass. On the GPU the same objects launch the real
kernels of the whole suite (tests run with the extension built, see tools/device_check.sh).
"""
import ctypes
import importlib.util
import os
import shutil
import sysconfig

import numpy as np
import pytest

SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "hipfer", "_launch.c"))

_LAUNCH = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, *([ctypes.c_uint] * 7), ctypes.c_void_p,
                           ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p)


@pytest.fixture(scope="module")
def ext(tmp_path_factory):
    """The extension built from hipfer/_launch.c with the compiler Python was built with."""
    if not shutil.which((sysconfig.get_config_var("CC") or "cc").split()[0]) and not os.environ.get("CI"):
        pytest.skip("no C compiler")
    from setuptools import Distribution, Extension
    out = tmp_path_factory.mktemp("launch_ext")
    dist = Distribution({"name": "launch_ext", "ext_modules": [Extension("_launch", [SRC])]})
    cmd = dist.get_command_obj("build_ext")
    cmd.build_lib, cmd.build_temp = str(out), str(out / "tmp")
    cmd.ensure_finalized()
    cmd.run()
    path = next(p for p in out.iterdir() if p.name.startswith("_launch") and p.suffix in (".so", ".pyd"))
    spec = importlib.util.spec_from_file_location("_launch", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class Mem:
    def __init__(self, ptr):
        self.ptr = ptr


class Arr:
    """Stands in for a cupy array: only .data.ptr is read."""

    def __init__(self, ptr):
        self.data = Mem(ptr)


class Stream:
    ptr = 0x5EED


class Driver:
    """The stub launch: records every call, returns self.rc (0: success)."""

    def __init__(self, sizes):
        self.sizes, self.calls, self.rc = sizes, [], 0
        self.fn = _LAUNCH(self._launch)

    def _launch(self, f, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        # read the parameter bytes now: they live in the launching call's frame
        self.calls.append(dict(f=f, grid=(gx, gy, gz), block=(bx, by, bz), shared=shared, stream=stream,
                               extra=extra, params=[ctypes.string_at(params[i], n) for i, n in enumerate(self.sizes)]))
        return self.rc

    @property
    def address(self):
        return ctypes.cast(self.fn, ctypes.c_void_p).value


@pytest.fixture
def driver(ext):
    d = Driver([])
    ext.init(Arr, lambda: Stream, d.address)
    return d


SHAPE = np.dtype([("dim", "<i8", (12,)), ("ndim", "<i4")], align=True)


def test_arguments_are_packed_as_rawkernel_packs_them(ext, driver, rng):
    g = np.zeros((), SHAPE)
    g["dim"][:3] = rng.integers(1, 1000, 3)
    g["ndim"] = 3
    f32 = np.float32(rng.standard_normal())
    c64 = np.complex64(complex(*rng.standard_normal(2)))
    args = (Arr(0x7F0000001000), None, np.int64(-7), np.int32(-3), np.int8(-1), np.uint16(65535), f32, c64,
            np.float16(1.5), g[()], np.bool_(True), True, 2 ** 40, 2.5, 1 - 2j, np.array([9], np.int64))
    want = [(0x7F0000001000).to_bytes(8, "little"), bytes(8), np.int64(-7).tobytes(), np.int32(-3).tobytes(),
            np.int8(-1).tobytes(), np.uint16(65535).tobytes(), f32.tobytes(), c64.tobytes(),
            np.float16(1.5).tobytes(), g.tobytes(), b"\x01", b"\x01", np.int64(2 ** 40).tobytes(),
            np.float64(2.5).tobytes(), np.complex128(1 - 2j).tobytes(), np.int64(9).tobytes()]
    driver.sizes = [len(w) for w in want]
    k = ext.Kernel(0xF00D, None)
    assert k((3, 2), (256,), args, shared_mem=96) is True
    (c,) = driver.calls
    assert c["f"] == 0xF00D and c["grid"] == (3, 2, 1) and c["block"] == (256, 1, 1)
    assert c["shared"] == 96 and c["stream"] == Stream.ptr and c["extra"] is None
    assert c["params"] == want
    k((1,), (64, 2, 2), list(args), 0)  # a list, shared memory positionally
    assert driver.calls[1]["block"] == (64, 2, 2) and driver.calls[1]["shared"] == 0
    assert driver.calls[1]["params"] == want


def test_align_launches_only_aligned_pointers(ext, driver):
    driver.sizes = [8, 8, 8]
    k = ext.Kernel(1, None)
    masks = (15, 0, 15)
    assert k((1,), (1,), (Arr(0x1000), Arr(0x1004), Arr(0x2010), np.int64(1)), align=masks) is True
    assert k((1,), (1,), (Arr(0x1000), Arr(0x1004), Arr(0x2018)), align=masks) is False
    assert k((1,), (1,), (Arr(0x1008), Arr(0x1000), Arr(0x2000)), align=masks) is False
    assert len(driver.calls) == 1  # a refused launch reaches no driver
    assert k((1,), (1,), (Arr(0x1008),), align=None) is True
    with pytest.raises(TypeError, match="not an array"):
        k((1,), (1,), (np.int64(0), Arr(0)), align=(15,))
    with pytest.raises(ValueError, match="alignment masks"):
        k((1,), (1,), (Arr(0),), align=(15, 15))


def test_a_refused_launch_goes_through_raw(ext, driver):
    """The driver's error (no context in a new thread, say) hands the same call to the
    RawKernel, which sets the context up or raises CuPy's error."""
    seen = []

    def raw(grid, block, args, *, shared_mem=0):
        seen.append((grid, block, args, shared_mem))

    driver.sizes, driver.rc = [8], 201
    k = ext.Kernel(2, raw)
    args = (Arr(0x100),)
    assert k((4,), (32,), args, shared_mem=16) is True
    assert seen == [((4,), (32,), args, 16)]
    k((4,), (32,), args)
    assert seen[-1] == ((4,), (32,), args, 0)

    def failing(grid, block, args, *, shared_mem=0):
        raise RuntimeError("cudaErrorInvalidValue")
    with pytest.raises(RuntimeError, match="cudaErrorInvalidValue"):
        ext.Kernel(2, failing)((1,), (1,), args)


@pytest.mark.parametrize("call, err, match", [
    (lambda k: k([1], (1,), ()), TypeError, "grid must be a tuple"),
    (lambda k: k((1, 1, 1, 1), (1,), ()), TypeError, "grid must be a tuple"),
    (lambda k: k((0,), (1,), ()), ValueError, r"grid\[0\] = 0"),
    (lambda k: k((1,), (2 ** 31,), ()), ValueError, "block"),
    (lambda k: k((1,), (1,), 5), TypeError, "tuple or list"),
    (lambda k: k((1,), (1,), (object(),)), TypeError, "argument 0: cannot pass a object"),
    (lambda k: k((1,), (1,), (np.zeros(0),)), ValueError, "argument 0: 0 bytes"),
    (lambda k: k((1,), (1,), (np.zeros(600),)), ValueError, "at most 4096"),
    (lambda k: k((1,), (1,), (np.int32(0),) * 65), ValueError, "65 kernel arguments"),
    (lambda k: k((1,), (1,), (2 ** 70,)), OverflowError, "too (big|large)"),
    (lambda k: k((1,), (1,)), TypeError, "Kernel"),
    (lambda k: k((1,), (1,), (), stream=None), TypeError, "unexpected keyword"),
])
def test_bad_launches_raise(ext, driver, call, err, match):
    k = ext.Kernel(3, None)
    with pytest.raises(err, match=match):
        call(k)
    assert not driver.calls


def test_kernel_object(ext):
    raw = object()
    k = ext.Kernel(0xABC, raw)
    assert k.handle == 0xABC and k.raw is raw and "Kernel" in repr(k)
    with pytest.raises(ValueError, match="null"):
        ext.Kernel(0, raw)
    with pytest.raises(TypeError):
        ext.init(Arr, None, 1)


def test_engine_falls_back_without_the_extension(monkeypatch):
    """With HIPFER_FAST_LAUNCH=0 (or no extension) kernels are RawLaunch objects, which
    keep Kernel's calling convention, align included."""
    pytest.importorskip("cupy")
    from hipfer.backends.cupy import _engine as eng
    monkeypatch.setenv("HIPFER_FAST_LAUNCH", "0")
    monkeypatch.setattr(eng, "_fast", [])
    assert eng.fast_launch_status().startswith("off")
    seen = []
    k = eng.launchable(lambda grid, block, args, shared_mem=0: seen.append((grid, block, args, shared_mem)))
    assert isinstance(k, eng.RawLaunch)
    assert k((1,), (2,), (Arr(0x1008),), align=(15,)) is False and not seen
    assert k((1,), (2,), (Arr(0x1010),), shared_mem=8, align=(15,)) is True
    assert seen[0][3] == 8
