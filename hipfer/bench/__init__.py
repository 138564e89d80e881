"""``hipfer bench``: hipfer on the current device against the device's limits and its peers.

    hipfer bench [--quick] [--device cpu|gpu] [--json FILE] [--plot FILE.png] [--only SUBSTR]
    hipfer bench --load FILE.json [--plot FILE.png]     (a saved result's table and plot)

One run measures the limits (copy bandwidth; GEMM rate per dtype), then every case of
``hipfer.bench.cases`` -- elementwise unary and binary (contiguous, strided, broadcast),
reductions, ``where``, ``take``, sort, matmul, einsum networks, the fused ops of
``hipfer.nn`` and the warm per-call overhead on 10-element tensors -- with hipfer and with
each peer on the same inputs: NumPy on the CPU; CuPy and PyTorch (when importable) on the
GPU. It prints a markdown table (times, GB/s or TFLOP/s, the fraction of the limit, the
ratio to each peer, the goals of issue 7 as pass/miss), and writes JSON and a PNG plot
(``--plot`` needs matplotlib: ``pip install 'hipfer[plot]'``) on request.

The modules: ``timing`` (the timer every benchmark of the project uses), ``cases`` (the
case table and the limits), ``report`` (table, JSON, plot).
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys
import time

__all__ = ["UsageError", "add_arguments", "main", "run", "validate"]


class UsageError(ValueError):
    """A bad command line (reported like argparse's own errors)."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--quick", action="store_true",
                   help="small sizes and few repeats (under a minute on a CPU-only machine)")
    p.add_argument("--device", choices=("cpu", "gpu"), default=None,
                   help="where to run: cpu (NumPy peer) or gpu (CuPy and PyTorch peers); "
                        "default: the GPU when one is usable, else the CPU")
    p.add_argument("--json", metavar="FILE", help="also write the results as JSON to FILE")
    p.add_argument("--plot", metavar="FILE.png",
                   help="also draw the fractions of the limit and the peer ratios to a PNG "
                        "(needs matplotlib: pip install 'hipfer[plot]')")
    p.add_argument("--load", metavar="FILE.json",
                   help="measure nothing: print the table of a saved --json result (and "
                        "draw its --plot), e.g. one measured on another machine")
    p.add_argument("--only", default="", metavar="SUBSTR",
                   help="only the cases whose group or name contains SUBSTR (case-insensitive); "
                        "the limits are always measured")


def _check_out_file(opt: str, path: str) -> None:
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        raise UsageError(f"{opt} {path}: directory {d} does not exist")
    if os.path.isdir(path):
        raise UsageError(f"{opt} {path}: is a directory")


def validate(args) -> None:
    """Fail before measuring anything: output paths, the plot's needs."""
    if args.json:
        _check_out_file("--json", args.json)
    if args.plot:
        if not args.plot.lower().endswith(".png"):
            raise UsageError(f"--plot {args.plot}: the file name must end in .png")
        _check_out_file("--plot", args.plot)
        try:
            importlib.import_module("matplotlib")
        except ImportError:
            raise UsageError("--plot needs matplotlib, which is not importable: "
                             "python3 -m pip install 'hipfer[plot]'") from None


def _default_device() -> str:
    from hipfer.prims.registry import gpu_status
    return "gpu" if gpu_status().usable else "cpu"


def _device_name(ctx) -> str:
    if ctx.device == "gpu":
        p = ctx.cupy.cuda.runtime.getDeviceProperties(0)
        name = p.get("name", b"?")
        name = name.decode(errors="replace") if isinstance(name, bytes) else str(name)
        arch = p.get("gcnArchName", b"")
        arch = arch.decode(errors="replace") if isinstance(arch, bytes) else str(arch)
        return f"{name} ({arch})" if arch else name
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    import platform
    return f"{model or platform.processor() or platform.machine()}, {os.cpu_count()} CPUs"


#: environment variables that set the CPU libraries' thread counts (recorded in the report)
_THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def _loadavg():
    """The 1-minute load average (None where the OS has none): other work on the machine
    shows in CPU timings."""
    try:
        return round(os.getloadavg()[0], 2)
    except (OSError, AttributeError):
        return None


def _versions(ctx) -> dict:
    import platform
    import numpy as np
    import hipfer
    v = {"hipfer": hipfer.__version__, "python": platform.python_version(), "numpy": np.__version__}
    if ctx.cupy is not None:
        v["cupy"] = ctx.cupy.__version__
    if ctx.torch is not None:
        v["torch"] = ctx.torch.__version__
    return v


def _rel_err(a, b):
    import numpy as np
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return None, f"shapes differ: {a.shape} vs {b.shape}"
    if a.size == 0:
        return 0.0, ""
    a = a.astype(np.complex128 if a.dtype.kind == "c" or b.dtype.kind == "c" else np.float64)
    b = b.astype(a.dtype)
    den = float(np.max(np.abs(b)))
    return float(np.max(np.abs(a - b))) / (den if den > 0 else 1.0), ""


def _err(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"[:200]


def measure_case(ctx, spec, time_ms, limits) -> dict:
    """One row of the report: hipfer's time and rate, its fraction of the limit, each peer's
    time and the ratio, the baseline, the relative difference from the first peer's result,
    the memory it held besides its result (hipfer.bench.memory), and the targets as
    pass/miss. hipfer, the peers and the baseline are timed in turn,
    round by round (Timer.compare). A failure is recorded in the row, never fatal."""
    from .cases import CPU_NUMPY, GEMM_DTYPES, to_numpy
    from .memory import peak_temporaries
    row = {"group": spec.group, "name": spec.name}
    try:
        case = spec.build()
    except Exception as e:
        row["error"] = "building the inputs failed: " + _err(e)
        return row
    row.update(dtype=case.dtype, shape=list(case.shape), bytes=case.bytes, flops=case.flops,
               note=case.note, peers={})
    fns = dict(case.fns)
    if case.baseline is not None:
        fns["__baseline__"] = case.baseline[1]
    times = time_ms.compare(fns)  # in turn, round by round: the same machine for each
    t = times.pop("hipfer")
    if isinstance(t, BaseException):
        row["error"] = "hipfer failed: " + _err(t)
        return row
    row["ms"] = t
    if case.flops:
        row["tflops"] = case.flops / t / 1e9
        if case.dtype in GEMM_DTYPES:
            row["limit"] = f"gemm {case.dtype}"
            row["of_limit"] = row["tflops"] / limits["gemm_tflops"][case.dtype]
    elif case.bytes:
        row["gbps"] = case.bytes / t / 1e6
        row["limit"] = "copy"
        row["of_limit"] = row["gbps"] / limits["copy_gbps"]
    for peer in ctx.peers:
        if peer not in times:
            continue
        tp = times[peer]
        row["peers"][peer] = ({"error": _err(tp)} if isinstance(tp, BaseException)
                              else {"ms": tp, "ratio": t / tp})
    if case.baseline is not None:
        tb = times["__baseline__"]
        row["baseline"] = ({"label": case.baseline[0], "error": _err(tb)} if isinstance(tb, BaseException)
                           else {"label": case.baseline[0], "ms": tb, "ratio": t / tb})
    try:
        peak, out_bytes = peak_temporaries(ctx, case.fns["hipfer"])
        row["memory"] = {"peak_bytes": peak, "out_bytes": out_bytes,
                         "temp_bytes": max(0, peak - out_bytes)}
    except Exception as e:
        row["memory"] = {"error": _err(e)}
    if case.check:
        for peer in ctx.peers:
            if "ms" in row["peers"].get(peer, {}):
                try:
                    err, why = _rel_err(to_numpy(case.fns["hipfer"]()), to_numpy(case.fns[peer]()))
                    row["rel_err"] = {"vs": peer, "value": err, **({"why": why} if why else {})}
                except Exception as e:
                    row["rel_err"] = {"vs": peer, "value": None, "why": _err(e)}
                break
    targets = list(case.targets)
    if ctx.device == "cpu" and "numpy" in case.fns:
        targets.append(CPU_NUMPY)
    row["targets"] = []
    for tg in targets:
        if tg.metric == "of_limit":
            value = row.get("of_limit")
        elif tg.metric == "temp_bytes":
            value = row["memory"].get("temp_bytes")
        elif tg.metric in ("vs:baseline", "of_baseline"):
            value = row.get("baseline", {}).get("ratio")
            if value is not None and tg.metric == "of_baseline":
                value = 1.0 / value
        else:
            value = row["peers"].get(tg.metric[3:], {}).get("ratio")
        ok = tg.check(value)
        row["targets"].append({"label": tg.label, "metric": tg.metric, "op": tg.op,
                               "threshold": tg.threshold, "value": value,
                               "status": "n/a" if ok is None else ("pass" if ok else "miss")})
    del case, fns, times
    if ctx.device == "gpu":
        ctx.cupy.get_default_memory_pool().free_all_blocks()
    return row


def _summary(rows) -> dict:
    targets = {}
    for r in rows:
        for tg in r.get("targets", ()):
            c = targets.setdefault(tg["label"], {"pass": 0, "miss": 0, "n/a": 0})
            c[tg["status"]] += 1
    return {"cases": len(rows), "errors": sum(1 for r in rows if "error" in r), "targets": targets}


def run(args, out=None, progress=None) -> int:
    """Measure, print the table to out (stdout), write --json / --plot. Raises UsageError
    for a bad command line, RuntimeError when --device gpu has no GPU."""
    from datetime import datetime, timezone
    out = sys.stdout if out is None else out
    progress = sys.stderr if progress is None else progress
    validate(args)
    from . import cases as C
    from . import report
    if getattr(args, "load", None):
        return _replay(args, out, report)
    from .timing import Timer
    import hipfer as hf
    device = args.device or _default_device()
    ctx = C.make_context(device, args.quick)
    todo = [s for s in C.specs(ctx) if s.matches(args.only)]
    if not todo:
        raise UsageError(f"--only {args.only!r} matches no case (groups: {', '.join(C.GROUPS)})")
    if device == "gpu":
        timer = Timer("gpu", cupy=ctx.cupy, rounds=5 if args.quick else 9,
                      warmup=2 if args.quick else 3, min_round_ms=1.0 if args.quick else 2.0)
    else:
        # more rounds than on the GPU: a CPU shared with other work is noisy
        timer = Timer("cpu", rounds=7 if args.quick else 11, warmup=1 if args.quick else 2,
                      min_round_ms=4.0 if args.quick else 20.0)
    t0 = time.perf_counter()
    load = _loadavg()
    with hf.default_device(ctx.hf_device):
        print(f"hipfer bench: {device}, {len(todo)} case(s), measuring the limits", file=progress,
              flush=True)
        limits = C.measure_limits(ctx, timer)
        rows = []
        for i, spec in enumerate(todo, 1):
            print(f"[{i}/{len(todo)}] {spec.group}: {spec.name}", file=progress, flush=True)
            rows.append(measure_case(ctx, spec, timer, limits))
    result = {
        "meta": {
            "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "device": device,
            "device_name": _device_name(ctx),
            "quick": bool(args.quick),
            "only": args.only,
            "peers": list(ctx.peers),
            "versions": _versions(ctx),
            "timer": repr(timer),
            "elapsed_s": None,
            "loadavg_1min": {"start": load, "end": _loadavg()},
            "threads_env": {k: os.environ[k] for k in _THREAD_VARS if k in os.environ},
        },
        "limits": limits,
        "groups": list(C.GROUPS),
        "cases": rows,
        "summary": _summary(rows),
    }
    result["meta"]["elapsed_s"] = round(time.perf_counter() - t0, 2)
    return _write(result, args, out, report)


def _write(result, args, out, report) -> int:
    """The table to out, --json and --plot to their files; the exit status."""
    out.write(report.format_table(result))
    out.flush()
    if args.json:
        report.write_json(result, args.json)
    if args.plot:
        report.write_plot(result, args.plot)
    return 1 if result["summary"]["errors"] else 0


def _replay(args, out, report) -> int:
    """--load: the table (and --plot / --json) of a saved result."""
    import json
    try:
        with open(args.load) as f:
            result = json.load(f)
    except (OSError, ValueError) as e:
        raise UsageError(f"--load {args.load}: {e}") from None
    if not isinstance(result, dict) or not {"meta", "limits", "cases", "summary"} <= set(result):
        raise UsageError(f"--load {args.load}: not a hipfer bench --json result")
    return _write(result, args, out, report)


def build_parser(prog: str = "hipfer bench") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    add_arguments(p)
    return p


def main(argv=None) -> int:
    """``hipfer bench ARGS`` as a function (the CLI calls run() through hipfer.__main__)."""
    p = build_parser()
    args = p.parse_args(argv)
    try:
        return run(args)
    except UsageError as e:
        p.error(str(e))
