"""hipfer.fuse against eager execution, numexpr (CPU), CuPy eager / cupy.fuse and
torch.compile (GPU) on the same chains.

    python3 benchmarks/bench_fuse.py [--device cpu|gpu] [--n N] [--repeats R] [--json FILE]

Chains (issue 24): ``a * exp(-b * t) + c * sin(w * t)`` (7 elementwise ops, float32, n
elements each operand) and the same chain ending in ``sum``. Each time is the median of
--repeats calls after a warm-up (traced, compiled, plans cached). Also: the trace and
compile cost of the first call, and the warm per-call cost of a fused call on 16
elements against an eager ``add`` of 16 elements. On the GPU the floor is the bytes read
once and written once over the measured copy bandwidth. numexpr uses its default thread
count (reported); hipfer's CPU evaluator uses hipfer._fuse._cpu.THREADS threads.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def _time(fn, repeats: int, sync=None) -> float:
    """Median seconds per call (hipfer.bench.timing.Timer, the project's one timer; on
    the GPU with device events)."""
    from hipfer.bench.timing import Timer
    if sync is None:
        t = Timer("cpu", rounds=repeats, warmup=1)
    else:
        import cupy
        t = Timer("gpu", cupy=cupy, rounds=repeats, warmup=1)
    return t(fn) / 1e3


def chain(a, b, c, w, t, exp, sin):
    return a * exp(-b * t) + c * sin(w * t)


def run(device: str, n: int, repeats: int) -> dict:
    import hipfer as hf
    from hipfer._fuse import _cpu
    rng = np.random.default_rng(0)
    host = [rng.standard_normal(n).astype(np.float32) for _ in range(5)]
    dev = hf.Device("cpu") if device == "cpu" else hf.Device("gpu", 0)
    xs = [hf.asarray(h, device=dev) for h in host]
    sync = None if device == "cpu" else (lambda: hf.prims.get_backend(dev).synchronize())

    def eager(a, b, c, w, t):
        return chain(a, b, c, w, t, hf.exp, hf.sin)

    def eager_sum(a, b, c, w, t):
        return hf.sum(eager(a, b, c, w, t))

    fused, fused_sum = hf.fuse(eager), hf.fuse(eager_sum)
    res = {"device": device, "n": n, "dtype": "float32", "repeats": repeats,
           "hipfer_threads": _cpu.THREADS, "cpu_count": os.cpu_count()}
    t0 = time.perf_counter()
    fused(*xs)
    if sync is not None:
        sync()
    res["first_call_s"] = time.perf_counter() - t0  # trace + compile + one run
    res["hipfer_eager_s"] = _time(lambda: eager(*xs), repeats, sync)
    res["hipfer_fused_s"] = _time(lambda: fused(*xs), repeats, sync)
    res["hipfer_eager_sum_s"] = _time(lambda: eager_sum(*xs), repeats, sync)
    res["hipfer_fused_sum_s"] = _time(lambda: fused_sum(*xs), repeats, sync)
    small = [hf.asarray(h[:16], device=dev) for h in host]
    res["warm_fused_call_16_s"] = _time(lambda: fused(*small), 200, sync)
    res["warm_eager_add_16_s"] = _time(lambda: hf.add(small[0], small[1]), 200, sync)
    if device == "cpu":
        res["numpy_eager_s"] = _time(lambda: chain(*host, np.exp, np.sin), repeats)
        res["numpy_eager_sum_s"] = _time(lambda: chain(*host, np.exp, np.sin).sum(), repeats)
        try:
            import numexpr as ne
        except ImportError:
            res["numexpr"] = "not installed"
        else:
            a, b, c, w, t = host
            env = dict(a=a, b=b, c=c, w=w, t=t)
            expr = "a * exp(-b * t) + c * sin(w * t)"
            res["numexpr_threads"] = ne.nthreads
            res["numexpr_s"] = _time(lambda: ne.evaluate(expr, local_dict=env), repeats)
            res["numexpr_sum_s"] = _time(lambda: ne.evaluate(f"sum({expr})", local_dict=env),
                                         repeats)
        res["fused_vs_numpy"] = res["numpy_eager_s"] / res["hipfer_fused_s"]
        res["fused_sum_vs_numpy"] = res["numpy_eager_sum_s"] / res["hipfer_fused_sum_s"]
        if "numexpr_s" in res:
            res["fused_over_numexpr"] = res["hipfer_fused_s"] / res["numexpr_s"]
    else:
        res.update(_gpu_peers(host, n, repeats, res["hipfer_fused_s"]))
    return res


def _gpu_peers(host, n, repeats, fused_s) -> dict:
    import cupy
    out = {}
    xs = [cupy.asarray(h) for h in host]
    sync = cupy.cuda.runtime.deviceSynchronize
    sync_torch = True
    src, dst = cupy.empty(n * 4 * 6, cupy.uint8), cupy.empty(n * 4 * 6, cupy.uint8)
    copy = _time(lambda: dst.__setitem__(Ellipsis, src), repeats, sync)
    bw = 2 * src.nbytes / copy
    floor = 6 * n * 4 / bw  # 5 inputs read once, one output written once
    out.update(copy_bandwidth_GBs=bw / 1e9, floor_s=floor, fused_of_floor=floor / fused_s)
    out["cupy_eager_s"] = _time(lambda: chain(*xs, cupy.exp, cupy.sin), repeats, sync)
    # cupy.fuse names its kernel after the function: a lambda's "<lambda>" is no C name
    def cupy_chain(a, b, c, w, t):
        return chain(a, b, c, w, t, cupy.exp, cupy.sin)

    def cupy_chain_sum(a, b, c, w, t):
        return cupy.sum(chain(a, b, c, w, t, cupy.exp, cupy.sin))
    cf, cfs = cupy.fuse(cupy_chain), cupy.fuse(cupy_chain_sum)
    out["cupy_fuse_s"] = _time(lambda: cf(*xs), repeats, sync)
    out["cupy_fuse_sum_s"] = _time(lambda: cfs(*xs), repeats, sync)
    try:
        import torch
        ts = [torch.from_numpy(h).cuda() for h in host]
        tc = torch.compile(lambda a, b, c, w, t: chain(a, b, c, w, t, torch.exp, torch.sin))
        tcs = torch.compile(lambda a, b, c, w, t: chain(a, b, c, w, t, torch.exp,
                                                         torch.sin).sum())
        out["torch_compile_s"] = _time(lambda: tc(*ts), repeats, sync_torch)
        out["torch_compile_sum_s"] = _time(lambda: tcs(*ts), repeats, sync_torch)
    except Exception as e:  # no torch, or no compiler for it
        out["torch_compile"] = f"unavailable: {type(e).__name__}: {e}"
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cpu", choices=["cpu", "gpu"])
    p.add_argument("--n", type=int, default=1 << 24)
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--json", default="")
    args = p.parse_args(argv)
    res = run(args.device, args.n, args.repeats)
    text = json.dumps(res, indent=2)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
