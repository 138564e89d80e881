"""Every kernel group hipfer can generate compiles for AMD and NVIDIA targets, offline.

The groups are dumped exactly as ``hipfer dump-kernels`` writes them (the run-time source
plus an array that instantiates every name expression) and compiled by
tools/hip-compile-check: hipcc for gfx90a (CDNA2, wave64), gfx940 (CDNA3), gfx1030
(RDNA2, wave32) and gfx1100 (RDNA3), and nvcc for sm_90 when it is installed. No GPU
is needed. The run-time compilers (hiprtc, NVRTC) are checked by test_kernel_rtc.py.

Without hipcc the AMD targets skip, unless HIPFER_REQUIRE_HIPCC=1 (set by .ci/run,
which installs it): then a missing hipcc is a failure, so a broken install cannot pass.
Without nvcc sm_90 skips (CI has no CUDA toolkit; the session machines check it).
Groups that compiled before, unchanged and with the same toolchain, are not compiled
again (see PassCache; CI turns that off).
"""
import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from hipfer.kernels import all_instances, dump

ROOT = Path(__file__).resolve().parents[1]
TOOL = ROOT / "tools" / "hip-compile-check"
HIP_ARCHS = "gfx90a gfx940 gfx1030 gfx1100"
CUDA_ARCHS = "sm_90"
SUMMARY = re.compile(r"(\d+) file\(s\) x (\d+) target\(s\): (\d+) OK, (\d+) FAIL, (\d+) skipped")


def _require_hipcc() -> bool:
    return os.environ.get("HIPFER_REQUIRE_HIPCC") == "1"


def _find(tool: str, fallback: str):
    return shutil.which(tool) or (fallback if os.access(fallback, os.X_OK) else None)


@pytest.fixture(scope="module")
def groups():
    return all_instances()


@pytest.fixture(scope="module")
def dumped(tmp_path_factory):
    out = tmp_path_factory.mktemp("kernels")
    return out, dump(out)


def test_groups_are_well_formed(groups, dumped):
    assert groups, "hipfer.kernels.all_instances() found no kernel groups"
    names = [g for g, _, _ in groups]
    assert len(set(names)) == len(names), f"duplicate group names: {names}"
    for group, file, exprs in groups:
        assert re.fullmatch(r"[A-Za-z0-9_.\-]+", group), f"group name {group!r} is not a plain file name"
        assert exprs, f"group {group} ({file}) instantiates nothing"
        assert len(set(exprs)) == len(exprs), f"group {group} repeats a name expression"

    out, paths = dumped
    assert sorted(p.name for p in paths) == sorted(f"{g}.hip" for g in names)
    by_name = {g: exprs for g, _, exprs in groups}
    for p in paths:
        text = p.read_text()
        assert text.strip(), f"{p.name} is empty"
        assert "hf_instances[]" in text, f"{p.name} lacks the instantiation array"
        for e in by_name[p.stem]:
            assert f"&{e}" in text, f"{p.name} does not instantiate {e}"
        assert not re.search(r'^\s*#\s*include\s+"', text, re.M), f"{p.name} has a local #include left"


def _toolchain_id(cmd) -> bytes:
    """What a compile result depends on besides the source: the tool, its flags, the compilers."""
    parts = [TOOL.read_bytes(), " ".join(cmd).encode()]
    for tool, fallback in (("hipcc", "/opt/rocm/bin/hipcc"), ("nvcc", "/usr/local/cuda/bin/nvcc")):
        exe = _find(tool, fallback)
        if exe:
            parts.append(subprocess.run([exe, "--version"], capture_output=True,
                                        env=dict(os.environ, HIP_PLATFORM="amd")).stdout)
    return b"\0".join(parts)


class PassCache:
    """Files that already compiled on every target with this exact toolchain, by content
    hash, so a local rerun compiles only what changed. HIPFER_COMPILE_CACHE names the
    directory; "off" (CI) compiles everything."""

    def __init__(self, toolchain: bytes):
        where = os.environ.get("HIPFER_COMPILE_CACHE",
                               str(Path.home() / ".cache" / "hipfer" / "compile-check"))
        self.dir = None if where == "off" else Path(where)
        self.toolchain = toolchain

    def _entry(self, path: Path) -> Path:
        return self.dir / hashlib.sha256(self.toolchain + b"\0" + path.read_bytes()).hexdigest()

    def passed(self, path: Path) -> bool:
        return self.dir is not None and self._entry(path).exists()

    def record(self, path: Path):
        if self.dir is not None:
            self.dir.mkdir(parents=True, exist_ok=True)
            self._entry(path).touch()


# One test per target, so that pytest-xdist (the README's test command) spreads them over
# the machine's cores; each compiles every group for its target, -j nproc.
TARGETS = [("hip", a) for a in HIP_ARCHS.split()] + [("cuda", a) for a in CUDA_ARCHS.split()]


@pytest.mark.gpu_compile
@pytest.mark.parametrize("side,arch", TARGETS, ids=[a for _, a in TARGETS])
def test_every_kernel_group_compiles(dumped, side, arch):
    if side == "hip" and _find("hipcc", "/opt/rocm/bin/hipcc") is None:
        if _require_hipcc():
            pytest.fail("HIPFER_REQUIRE_HIPCC=1 but hipcc is not installed")
        pytest.skip("hipcc not installed (Debian 12: apt-get install --no-install-recommends "
                    "hipcc libamdhip64-dev rocm-device-libs); HIPFER_REQUIRE_HIPCC=1 makes this a failure")
    if side == "cuda" and _find("nvcc", "/usr/local/cuda/bin/nvcc") is None:
        pytest.skip("nvcc not installed: sm_90 is checked where the CUDA toolkit is")
    out, paths = dumped
    assert paths, "no kernel groups were dumped"
    cmd = [str(TOOL), "-j", str(len(os.sched_getaffinity(0)))]
    if side == "hip":
        cmd += [f"--hip-archs={arch}", "--no-cuda"]
        if _require_hipcc():
            cmd.append("--require-hip")
    else:
        cmd += [f"--cuda-archs={arch}", "--no-hip"]
    cache = PassCache(_toolchain_id(cmd))
    todo = [p for p in paths if not cache.passed(p)]
    if not todo:
        return  # every group compiled before, unchanged, with this toolchain

    r = subprocess.run(cmd + [str(p) for p in todo], capture_output=True, text=True, timeout=3600)
    log = r.stdout + r.stderr
    m = SUMMARY.search(log)
    assert m, f"hip-compile-check printed no summary (exit {r.returncode}):\n{log[-4000:]}"
    nfiles, ntargets, ok, fail, skipped = map(int, m.groups())
    for p in todo:
        if sum(1 for line in log.splitlines() if line.startswith("OK") and line.endswith(str(p))) == ntargets:
            cache.record(p)
    failing = "\n".join(line for line in log.splitlines()
                        if line.startswith(("FAIL", "      |", "SKIP")) or "ERROR" in line)
    assert fail == 0 and r.returncode == 0, f"{fail} compile(s) failed for {arch}:\n{failing}"
    assert ok > 0, f"nothing was compiled for {arch}:\n{log[-4000:]}"
    assert nfiles == len(todo) and ntargets == 1
    if _require_hipcc():  # CI: every file, nothing skipped
        assert skipped == 0 and ok == nfiles, f"files were skipped for {arch}:\n{failing}"
