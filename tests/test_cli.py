"""The ``hipfer`` command line, and the generated docs table.

The commands run in subprocesses from the repository root, as a user runs them, and
``info`` / ``dump-kernels`` also where importing CuPy is impossible.
"""
import importlib.util
import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from hipfer.__main__ import main
from hipfer.kernels import all_instances

ROOT = Path(__file__).resolve().parents[1]
# Run hipfer's CLI with `import cupy` made impossible (None in sys.modules -> ImportError).
NO_CUPY = "import sys; sys.modules['cupy'] = None; from hipfer.__main__ import main; sys.exit(main(sys.argv[1:]))"


def hipfer(*args, no_cupy=False, env=None):
    cmd = [sys.executable] + (["-c", NO_CUPY] if no_cupy else ["-m", "hipfer"]) + list(args)
    full_env = dict(os.environ, **(env or {}))
    return subprocess.run(cmd, cwd=ROOT, env=full_env, capture_output=True, text=True, timeout=120)


def test_no_command_prints_help():
    r = hipfer()
    assert r.returncode == 0, r.stderr
    assert "dump-kernels" in r.stdout and "info" in r.stdout


def test_unknown_command_is_a_usage_error():
    r = hipfer("frobnicate")
    assert r.returncode == 2
    assert "invalid choice" in r.stderr


def test_info_text():
    r = hipfer("info")
    assert r.returncode == 0, r.stderr
    for key in ("hipfer", "python", "numpy", "backends", "devices", "contraction"):
        assert key in r.stdout
    assert ("gpu stack" in r.stdout) or ("none usable:" in r.stdout)


def test_info_json_reports_a_reason_without_gpu():
    r = hipfer("info", "--json")
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    assert info["python"] and info["numpy"] and info["hipfer"]
    assert info["devices"][0] == "cpu" and "numpy" in info["backends"]
    gpu = info["gpu"]
    if gpu["usable"]:
        assert gpu["stack"] in ("rocm", "cuda") and gpu["count"] >= 1
        assert "cupy" in info["backends"] and len(info["devices"]) == 1 + gpu["count"]
    else:
        assert gpu["reason"], "no GPU and no reason given"
        assert info["devices"] == ["cpu"] and info["backends"] == ["numpy"]
    assert info["contraction"] == {"loaded": None, "errors": {}}
    assert info["launch"].startswith("hipfer._launch")
    assert info["cpu_warm_path"].startswith(("hipfer._warm", "off ("))


def test_info_without_cupy_says_so():
    r = hipfer("info", "--json", no_cupy=True)
    assert r.returncode == 0, r.stderr
    gpu = json.loads(r.stdout)["gpu"]
    assert not gpu["usable"]
    assert "CuPy is not importable" in gpu["reason"]


def test_info_with_gpu_disabled():
    r = hipfer("info", env={"HIPFER_DISABLE_GPU": "1"})
    assert r.returncode == 0, r.stderr
    assert "none usable: HIPFER_DISABLE_GPU is set" in r.stdout


def test_info_reports_a_bad_contraction_library(tmp_path):
    r = hipfer("info", "--hiptensor", str(tmp_path / "libhiptensor.so"))
    assert r.returncode == 1
    assert "hiptensor failed:" in r.stdout and "does not exist" in r.stdout


def test_dump_kernels_without_cupy(tmp_path):
    out = tmp_path / "k"
    r = hipfer("dump-kernels", str(out), no_cupy=True)
    assert r.returncode == 0, r.stderr
    from hipfer.kernels import fuse
    n = len(all_instances()) + len(fuse.instances())  # hipfer.fuse's sample groups too
    assert f"wrote {n} kernel group(s)" in r.stdout
    files = sorted(out.glob("*.hip"))
    assert len(files) == n and all(f.stat().st_size > 0 for f in files)


def test_dump_kernels_only_filters(tmp_path):
    first = all_instances()[0][0]
    r = hipfer("dump-kernels", str(tmp_path), "--only", first)
    assert r.returncode == 0, r.stderr
    names = {p.stem for p in tmp_path.glob("*.hip")}
    assert first in names and all(first in n for n in names)


def test_dump_kernels_with_no_match_fails(tmp_path):
    r = hipfer("dump-kernels", str(tmp_path), "--only", "no-such-group")
    assert r.returncode == 1
    assert "no kernel groups matching 'no-such-group'" in r.stderr


def test_demo_gets_its_arguments(monkeypatch):
    seen = []
    fake = types.ModuleType("hipfer.demo")
    fake.main = lambda args: seen.append(args) or 3
    monkeypatch.setitem(sys.modules, "hipfer.demo", fake)
    monkeypatch.setattr(sys.modules["hipfer"], "demo", fake, raising=False)
    assert main(["demo", "--size", "8", "-q"]) == 3
    assert seen == [["--size", "8", "-q"]]


def test_command_errors_go_to_stderr(monkeypatch, capsys):
    fake = types.ModuleType("hipfer.demo")

    def boom(args):
        raise ValueError("bad size")
    fake.main = boom
    monkeypatch.setitem(sys.modules, "hipfer.demo", fake)
    monkeypatch.setattr(sys.modules["hipfer"], "demo", fake, raising=False)
    assert main(["demo"]) == 1
    assert "hipfer demo: error: ValueError: bad size" in capsys.readouterr().err


def test_families_table_is_current():
    spec = importlib.util.spec_from_file_location("gen_families", ROOT / "docs" / "gen_families.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    doc = (ROOT / "docs" / "architecture.md").read_text()
    assert gen.committed(doc) == gen.generated(), \
        "docs/architecture.md is stale: run python docs/gen_families.py --write"


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    cmd = "python3 -m pytest -q -n auto --dist worksteal"
    assert f'python3 -m pip install -e ".[test]" && {cmd}\n' in readme
    assert '-e ".[test]"' in ci and f"{cmd} ||" in ci


def test_nn_doc_is_current():
    spec = importlib.util.spec_from_file_location("gen_nn", ROOT / "docs" / "gen_nn.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    doc = (ROOT / "docs" / "nn.md").read_text()
    assert gen.committed(doc) == gen.generated(), "docs/nn.md is stale: run python docs/gen_nn.py --write"
