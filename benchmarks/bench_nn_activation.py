"""hipfer.nn activation ops on the GPU: against the memory-bandwidth floor and against
PyTorch (and CuPy where it has the op) on the same device and the same data.

    python3 benchmarks/bench_nn_activation.py [--quick] [--json FILE]

These ops are bandwidth-bound. The floor of each case is bytes moved (every operand read
once, every output written once; dropout's bool mask counts one byte an element) / the
device-to-device copy bandwidth measured in the same run (cupy copy of a 1 GiB array: 2
bytes moved per byte); "of floor" is floor time / hipfer time (1.0: at the copy rate; the
goal is >= 0.8). Times: median over rounds of the mean of back-to-back calls between
device events (warm: plans and kernels built first). Comparators: torch.relu,
torch.nn.functional.silu, torch.nn.functional.dropout(training=True) (which also makes
its mask), and cupy.maximum for relu.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys

import numpy as np


def timer(cupy):
    def time_ms(fn, rounds=7, inner=10, warmup=3):
        for _ in range(warmup):
            fn()
        cupy.cuda.Device().synchronize()
        times = []
        for _ in range(rounds):
            start, stop = cupy.cuda.Event(), cupy.cuda.Event()
            start.record()
            for _ in range(inner):
                fn()
            stop.record()
            stop.synchronize()
            times.append(cupy.cuda.get_elapsed_time(start, stop) / inner)
        return statistics.median(times)
    return time_ms


def copy_bandwidth(cupy, time_ms) -> float:
    """Bytes per ms of a device-to-device copy (read + write counted)."""
    src = cupy.ones(1 << 28, np.float32)
    dst = cupy.empty_like(src)
    ms = time_ms(lambda: dst.__setitem__(Ellipsis, src))
    return 2 * src.nbytes / ms


def cases(cupy, torch, hf, nn, rng, quick: bool):
    """(name, n, dtype, bytes moved, hipfer fn, {other: fn})."""
    F = None if torch is None else torch.nn.functional
    out = []
    for dt in (np.float32, np.float64):
        it = np.dtype(dt).itemsize
        n = (1 << (24 if quick else 26)) // (it // 4)  # the same bytes for both dtypes
        x = cupy.asarray(rng.standard_normal(n).astype(dt))
        X = hf.asarray(x)
        tx = None if torch is None else torch.from_dlpack(x)
        rw = 2 * n * it
        out.append(("relu", n, dt, rw, lambda X=X: nn.relu(X),
                    {"torch.relu": None if F is None else (lambda t=tx: torch.relu(t)),
                     "cupy.maximum": lambda a=x: cupy.maximum(a, 0)}))
        out.append(("relu in place", n, dt, rw, lambda X=X: nn.relu(X, out=X),
                    {"torch.relu_": None if F is None else (lambda t=tx: torch.relu_(t))}))
        out.append(("silu", n, dt, rw, lambda X=X: nn.silu(X),
                    {"F.silu": None if F is None else (lambda t=tx: F.silu(t))}))
        state = {"offset": 0}

        def drop(X=X, n=n):  # a fresh stream each call, as training would use
            state["offset"] += n
            return nn.dropout(X, 0.1, seed=1234, offset=state["offset"])
        out.append(("dropout p=0.1", n, dt, rw + n, drop,
                    {"F.dropout": None if F is None else (lambda t=tx: F.dropout(t, 0.1, training=True))}))
        y = cupy.asarray(rng.random(n).astype(dt))
        Y = hf.asarray(y)
        ty = None if torch is None else torch.from_dlpack(y)
        out.append(("bce_with_logits", n, dt, 3 * n * it, lambda X=X, Y=Y: nn.bce_with_logits(X, Y),
                    {"F.bce_with_logits(none)": None if F is None else (
                        lambda a=tx, b=ty: F.binary_cross_entropy_with_logits(a, b, reduction="none"))}))
        out.append(("bce_with_logits mean", n, dt, 2 * n * it,
                    lambda X=X, Y=Y: nn.bce_with_logits(X, Y, reduction="mean"),
                    {"F.bce_with_logits(mean)": None if F is None else (
                        lambda a=tx, b=ty: F.binary_cross_entropy_with_logits(a, b))}))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes")
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()
    import cupy
    import hipfer as hf
    import hipfer.nn as nn
    try:
        import torch
        if not torch.cuda.is_available():
            torch = None
    except ImportError:
        torch = None
    time_ms = timer(cupy)
    bw = copy_bandwidth(cupy, time_ms)
    print(f"device-to-device copy: {bw / 1e6:.0f} GB/s\n")
    rng = np.random.default_rng(0)
    rows = []
    print("| op | n | dtype | hipfer ms | GB/s | of floor | others (ms) |")
    print("| --- | ---: | --- | ---: | ---: | ---: | --- |")
    for name, n, dt, nbytes, fn, others in cases(cupy, torch, hf, nn, rng, args.quick):
        t = time_ms(fn)
        res = {"op": name, "n": n, "dtype": np.dtype(dt).name, "ms": t,
               "gbps": nbytes / t / 1e6, "of_floor": nbytes / bw / t, "others": {}}
        for other, ofn in others.items():
            if ofn is None:
                continue
            try:
                res["others"][other] = time_ms(ofn)
            except Exception as e:  # a comparator failing is recorded, not fatal
                res["others"][other] = f"failed: {type(e).__name__}: {e}"[:80]
        rows.append(res)
        txt = ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}"
                        for k, v in res["others"].items())
        print(f"| {name} | {n} | {res['dtype']} | {t:.3f} | {res['gbps']:.0f} | "
              f"{res['of_floor']:.2f} | {txt} |")
        sys.stdout.flush()
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"copy_gbps": bw / 1e6, "cases": rows}, f, indent=1)


if __name__ == "__main__":
    main()
