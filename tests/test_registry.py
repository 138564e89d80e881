"""BackendRegistry: devices, GPU discovery, default device, contraction libraries."""
import ctypes.util
import os
import subprocess
import sys

import pytest

import hipfer as hf
from hipfer import prims


def test_cpu_backend_always_there():
    be = prims.get_backend("cpu")
    assert be.name == "numpy"
    assert prims.get_backend(hf.Device("cpu")) is be
    assert hf.Device("cpu") in prims.devices()


def test_gpu_status_explains_itself():
    st = prims.gpu_status()
    if st.usable:
        assert st.count >= 1 and st.stack in ("cuda", "rocm")
    else:
        assert st.reason  # says why: CuPy missing, no driver, no device ...
        with pytest.raises(RuntimeError, match="not available"):
            prims.get_backend("gpu:0")


def test_bad_devices():
    for bad in ("tpu", "gpu:x", "cpu:1", 3):
        with pytest.raises(ValueError):
            hf.as_device(bad)
    assert str(hf.as_device("cuda:0")) == "gpu:0" and repr(hf.as_device("cpu")) == "Device('cpu')"


def test_hipfer_device_env_overrides_default():
    code = "import hipfer as hf; print(hf.get_default_device(), hf.zeros(2).device)"
    env = dict(os.environ, HIPFER_DEVICE="cpu")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["cpu", "cpu"]
    env["HIPFER_DEVICE"] = "nonsense"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode != 0 and "unknown device" in out.stderr


@pytest.mark.parametrize("loader,kind", [(hf.load_cutensor, "cutensor"), (hf.load_hiptensor, "hiptensor")])
def test_contraction_library_errors(tmp_path, loader, kind):
    with pytest.raises(FileNotFoundError, match="not found"):
        loader(tmp_path / "libnothing.so")
    junk = tmp_path / "junk.so"
    junk.write_bytes(b"not an ELF file")
    with pytest.raises(OSError, match=f"could not load .* as the {kind} library"):
        loader(junk)
    libm = ctypes.util.find_library("m")
    if libm:
        path = next((p for p in ("/lib/x86_64-linux-gnu/" + libm, "/usr/lib/x86_64-linux-gnu/" + libm,
                                 "/lib64/" + libm) if os.path.exists(p)), None)
        if path:
            with pytest.raises(ValueError, match=f"is not a {kind} library"):
                loader(path)
    assert prims.contraction_library(kind) is None


def test_backend_registry_namespace():
    assert prims.BackendRegistry.get("cpu") is prims.get_backend("cpu")
    assert prims.BackendRegistry.load_cutensor is prims.load_cutensor
