"""``hipfer bench`` on the CPU: the quick run, its JSON and table, --only, --plot, bad
arguments; the one timer (hipfer.bench.timing) and benchmarks/_timing.py's use of it.

The runs are subprocesses from the repository root, as a user runs them. They pin the
BLAS to one thread: CI and the developers' machines have 2 cores that other work shares,
and a 2-thread OpenBLAS made the small GEMMs of --quick up to 100x slower there.
"""
import importlib.util
import json
import os
import re
import subprocess
import sys
import time
import types
from pathlib import Path

import numpy as np
import pytest

import hipfer as hf
from hipfer.bench import cases as C
from hipfer.bench.timing import Timer, copy_bandwidth

ROOT = Path(__file__).resolve().parents[1]
ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
NO_MPL = ("import sys; sys.modules['matplotlib'] = None; from hipfer.__main__ import main; "
          "sys.exit(main(sys.argv[1:]))")


def bench(*args, env=None, runner=("-m", "hipfer"), timeout=180):
    cmd = [sys.executable, *runner, "bench", *args]
    full_env = dict(os.environ, **ONE_THREAD, **(env or {}))
    return subprocess.run(cmd, cwd=ROOT, env=full_env, capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    """One `hipfer bench --quick --device cpu --json F` for the module: (process, seconds, json)."""
    out = tmp_path_factory.mktemp("bench") / "quick.json"
    t0 = time.perf_counter()
    r = bench("--quick", "--device", "cpu", "--json", str(out))
    seconds = time.perf_counter() - t0
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return r, seconds, json.loads(out.read_text())


def test_quick_run_is_quick(quick):
    _, seconds, res = quick
    assert seconds < 60, f"hipfer bench --quick took {seconds:.0f} s on the CPU"
    assert res["meta"]["elapsed_s"] < seconds


def test_quick_json_has_every_group_and_the_limits(quick):
    _, _, res = quick
    meta, lim = res["meta"], res["limits"]
    assert meta["device"] == "cpu" and meta["quick"] is True and meta["peers"] == ["numpy"]
    assert meta["threads_env"]["OPENBLAS_NUM_THREADS"] == "1"
    assert lim["copy_gbps"] > 0
    assert set(lim["gemm_tflops"]) == {"float32", "float64", "complex64"}
    assert all(v > 0 for v in lim["gemm_tflops"].values())
    assert res["groups"] == list(C.GROUPS)
    assert {c["group"] for c in res["cases"]} == set(C.GROUPS)
    assert len(res["cases"]) == len(C.specs(C.make_context("cpu", True)))
    for c in res["cases"]:
        assert "error" not in c, c
        assert c["ms"] > 0 and c["peers"]["numpy"]["ms"] > 0, c
        assert c["peers"]["numpy"]["ratio"] == pytest.approx(c["ms"] / c["peers"]["numpy"]["ms"])
        # hipfer and NumPy computed the same thing on the same inputs
        assert c["rel_err"]["vs"] == "numpy" and c["rel_err"]["value"] < 1e-5, c
        labels = {t["label"] for t in c["targets"]}
        assert "cpu <=1.2x numpy" in labels  # every CPU case is held to the NumPy goal
        assert all(t["status"] in ("pass", "miss") for t in c["targets"]), c
    by = {c["name"]: c for c in res["cases"]}
    assert "GEMM >=0.95 bare BLAS" in {t["label"] for t in by["a @ b float32 512^3"]["targets"]}
    assert by["conj(a) @ b complex64 512^3"]["baseline"]["label"] == "hipfer a @ b"
    assert 0 < by["exp contiguous float32 4194304"]["of_limit"]
    summary = res["summary"]
    assert summary["errors"] == 0 and summary["cases"] == len(res["cases"])
    for label in ("elementwise >=0.85 copy", "strided/broadcast >=0.6 copy", "reduction >=0.85 read",
                  "GEMM >=0.95 bare BLAS", "conj(a)@b <=1.05 a@b", "cpu <=1.2x numpy"):
        assert label in summary["targets"], label


def test_quick_table_has_the_ratio_columns(quick):
    r, _, res = quick
    lines = r.stdout.splitlines()
    header = next(ln for ln in lines if ln.startswith("| group | case |"))
    for col in ("hipfer ms", "rate", "of limit", "numpy ms", "vs numpy", "targets"):
        assert f"| {col} |" in header, col
    assert "| copy bandwidth" in r.stdout and "| GEMM complex64" in r.stdout
    rows = [ln for ln in lines if ln.startswith("| ") and " | " in ln]
    for c in res["cases"]:
        assert any(f"| {c['group']} | {c['name']} |" in ln for ln in rows), c["name"]
    ncols = header.count("|")
    case_rows = [ln for ln in rows if ln.split(" | ")[0][2:] in C.GROUPS]
    assert len(case_rows) == len(res["cases"])
    for ln in case_rows:  # no stray '|' inside a cell
        assert len(re.findall(r"(?<!\\)\|", ln)) == ncols, ln
    assert "| target | pass | miss | n/a |" in r.stdout
    assert "pass cpu <=1.2x numpy" in r.stdout or "MISS cpu <=1.2x numpy" in r.stdout


def test_only_filters(tmp_path):
    out = tmp_path / "sort.json"
    r = bench("--quick", "--device", "cpu", "--only", "SORT", "--json", str(out))
    assert r.returncode == 0, r.stderr
    res = json.loads(out.read_text())
    assert res["meta"]["only"] == "SORT" and res["limits"]["copy_gbps"] > 0
    assert len(res["cases"]) == 2 and all(c["group"] == "sort" for c in res["cases"])
    assert "| sort |" in r.stdout and "| matmul |" not in r.stdout


def test_plot_writes_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "bench.png"
    r = bench("--quick", "--device", "cpu", "--only", "overhead", "--plot", str(png))
    assert r.returncode == 0, r.stderr
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000


def test_load_replays_a_saved_result(tmp_path):
    """--load prints the saved result's table without measuring, and --json rewrites it."""
    saved, again = tmp_path / "saved.json", tmp_path / "again.json"
    r = bench("--quick", "--device", "cpu", "--only", "overhead", "--json", str(saved))
    assert r.returncode == 0, r.stderr
    r2 = bench("--load", str(saved), "--json", str(again))
    assert r2.returncode == 0, r2.stderr
    assert r2.stdout == r.stdout and "measuring" not in r2.stderr
    assert json.loads(again.read_text()) == json.loads(saved.read_text())
    res = json.loads(saved.read_text())
    assert all("temp_bytes" in c["memory"] for c in res["cases"])
    (tmp_path / "bad.json").write_text("[1, 2]")
    r3 = bench("--load", str(tmp_path / "bad.json"))
    assert r3.returncode == 2 and "not a hipfer bench --json result" in r3.stderr
    r4 = bench("--load", str(tmp_path / "missing.json"))
    assert r4.returncode == 2 and "--load" in r4.stderr and "Traceback" not in r4.stderr


@pytest.mark.parametrize("args, code, message", [
    (["--device", "tpu"], 2, "invalid choice: 'tpu'"),
    (["--plot", "out.svg"], 2, "must end in .png"),
    (["--json", "/no/such/dir/out.json"], 2, "directory /no/such/dir does not exist"),
    (["--only", "no-such-case"], 2, "matches no case (groups: elementwise_unary"),
    (["--quick", "--nonsense"], 2, "unrecognized arguments: --nonsense"),
])
def test_bad_arguments_are_clear_errors(args, code, message):
    r = bench(*args)
    assert r.returncode == code, r.stdout + r.stderr
    assert message in r.stderr
    assert "usage: hipfer" in r.stderr and "Traceback" not in r.stderr


def test_gpu_without_a_gpu_says_why():
    r = bench("--device", "gpu", env={"HIPFER_DISABLE_GPU": "1"})
    assert r.returncode == 1
    assert "hipfer bench: error:" in r.stderr and "no GPU is usable" in r.stderr
    assert "HIPFER_DISABLE_GPU" in r.stderr


def test_plot_without_matplotlib_says_how_to_get_it(tmp_path):
    r = bench("--plot", str(tmp_path / "x.png"), runner=("-c", NO_MPL))
    assert r.returncode == 2
    assert "--plot needs matplotlib" in r.stderr and "hipfer[plot]" in r.stderr


def test_help_lists_bench():
    r = subprocess.run([sys.executable, "-m", "hipfer", "--help"], cwd=ROOT, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0 and "bench" in r.stdout
    r = bench("--help")
    for opt in ("--quick", "--device", "--json", "--plot", "--only"):
        assert opt in r.stdout


def test_pyproject_has_the_plot_extra():
    text = (ROOT / "pyproject.toml").read_text()
    assert 'plot = ["matplotlib' in text
    test_extra = text.split("test = [", 1)[1].split("]", 1)[0]
    assert "matplotlib" not in test_extra


# ------------------------------------------------------------------------ the timer
def test_cpu_timer_medians_and_calibrates():
    t = Timer("cpu", rounds=3, warmup=1, min_round_ms=1.0)
    calls = []
    ms = t(lambda: calls.append(1) or time.sleep(0.0002))
    assert 0.15 < ms < 50
    assert len(calls) > 3  # warm-up, the calibrating call, then rounds of several calls
    assert len(Timer("cpu", rounds=4, inner=2, warmup=0).samples(lambda: None)) == 4


def test_compare_times_in_turn_and_reports_failures():
    order = []
    t = Timer("cpu", rounds=3, inner=1, warmup=1)

    def bad():
        raise RuntimeError("peer broke")
    res = t.compare({"a": lambda: order.append("a"), "b": lambda: order.append("b"), "bad": bad})
    assert list(res) == ["a", "b", "bad"]
    assert isinstance(res["a"], float) and isinstance(res["b"], float)
    assert isinstance(res["bad"], RuntimeError)
    assert order[-6:] == ["a", "b"] * 3  # round by round, in turn


def test_timer_rejects_bad_settings():
    with pytest.raises(ValueError, match="kind"):
        Timer("tpu")
    with pytest.raises(ValueError, match="cupy"):
        Timer("gpu")
    with pytest.raises(ValueError, match="rounds"):
        Timer("cpu", rounds=0)


class _FakeCupy:
    """Just enough of CuPy for the event path: a clock the 'kernels' advance."""

    def __init__(self):
        self.now, self.synced = 0.0, 0
        fake = self

        class Event:
            def record(self):
                self.t = fake.now

            def synchronize(self):
                fake.synced += 1

        class Device:
            def synchronize(self):
                fake.synced += 1

        self.cuda = types.SimpleNamespace(Event=Event, Device=Device,
                                          get_elapsed_time=lambda a, b: b.t - a.t)


def test_gpu_timer_uses_device_events():
    cp = _FakeCupy()

    def kernel():
        cp.now += 0.25  # 0.25 ms of device time a call
    t = Timer("gpu", cupy=cp, rounds=5, inner=4, warmup=2)
    assert t(kernel) == pytest.approx(0.25)
    assert cp.synced >= 6  # after the warm-up, then each round's stop event


def test_benchmark_scripts_use_the_one_timer():
    spec = importlib.util.spec_from_file_location("_timing", ROOT / "benchmarks" / "_timing.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    t = mod.timer(_FakeCupy())
    assert isinstance(t, Timer) and t.kind == "gpu" and (t.rounds, t.inner, t.warmup) == (7, 5, 3)
    bw = mod.copy_bandwidth(np, Timer("cpu", rounds=2, inner=1, warmup=1), 1 << 20)
    assert bw > 0
    assert "def time_ms" not in (ROOT / "benchmarks" / "_timing.py").read_text()


def test_copy_bandwidth_never_copies_zeros(monkeypatch):
    seen = []
    real = np.copyto
    monkeypatch.setattr(np, "copyto", lambda dst, src: (seen.append(float(src.min())), real(dst, src)))
    assert copy_bandwidth(np, Timer("cpu", rounds=1, inner=1, warmup=0), 1 << 16) > 0
    assert seen and min(seen) >= 0.5


def test_targets_check():
    assert C.ELEM_CONTIG.check(0.9) and not C.ELEM_CONTIG.check(0.5)
    assert C.CPU_NUMPY.check(1.1) and not C.CPU_NUMPY.check(1.3)
    assert C.GEMM.check(None) is None


def test_case_names_are_unique_and_only_matches_group_or_name():
    specs = C.specs(C.make_context("cpu", True))
    names = [(s.group, s.name) for s in specs]
    assert len(names) == len(set(names))
    assert {s.group for s in specs if s.matches("einsum")} == {"einsum"}
    assert all(s.matches("") for s in specs)


def test_bench_main_is_the_same_command(capsys):
    from hipfer.bench import main
    with pytest.raises(SystemExit) as e:
        main(["--device", "cpu", "--only", "no-such-case"])
    assert e.value.code == 2
    assert "matches no case" in capsys.readouterr().err


def test_peak_temporaries_counts_what_a_call_holds():
    """hipfer.bench.memory on the CPU (tracemalloc): a call that makes one temporary as
    large as its result holds that much besides it; one that writes into an existing
    buffer holds nothing; tuples of results count every part."""
    from hipfer.bench.memory import peak_temporaries, result_bytes
    ctx = C.make_context("cpu", True)
    x = np.random.default_rng(0).random(1 << 20)
    buf = np.empty_like(x)

    def two_steps():
        t = x * 2.0
        return t + 1.0

    peak, out = peak_temporaries(ctx, two_steps)
    assert out == x.nbytes and x.nbytes * 0.99 <= peak - out <= x.nbytes * 1.1
    peak, out = peak_temporaries(ctx, lambda: np.add(x, 1.0, out=buf))
    assert out == x.nbytes and peak < 64 * 1024
    assert result_bytes((x, (buf, x[:10]))) == 2 * x.nbytes + 80
    assert result_bytes(hf.asarray(x)) == x.nbytes and result_bytes(3.0) == 0
