"""What every benchmark shares: device-event timing and the copy-bandwidth ceiling.

The timer is hipfer.bench.timing's, the one `hipfer bench` uses (one timer in the
project); this module keeps the scripts' interface to it.
"""
from __future__ import annotations

import numpy as np

from hipfer.bench.timing import Timer, copy_bandwidth as _copy_bandwidth


def timer(cupy):
    """time_ms(fn): median over rounds of the mean time of `inner` back-to-back calls
    between two device events, after a warm-up (hipfer.bench.timing.Timer on the GPU,
    7 rounds of 5 calls after 3 warm-up calls unless a call says otherwise). Calls queue
    up as they do in a real program, so host work that overlaps the device's is not
    counted twice."""
    return Timer("gpu", cupy=cupy, rounds=7, inner=5, warmup=3)


def copy_bandwidth(cupy, time_ms, nbytes: int = 1 << 30) -> float:
    """Bytes per ms of a large device-to-device copy (bytes read + bytes written), on
    random data."""
    return _copy_bandwidth(cupy, time_ms, nbytes)


def run_cases(doc: str, cases) -> None:
    """The main() of a per-op benchmark: parse --quick/--json, measure the copy
    bandwidth, then time each case of cases(cupy, torch, hf, nn, rng, quick) -> [(name,
    size, dtype, bytes moved, hipfer fn, {peer name: fn or None})] and print one markdown
    row each (a failing peer is recorded, not fatal)."""
    import argparse
    import json
    import sys
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
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
    print("| op | size | dtype | hipfer ms | GB/s | of floor | others (ms) |")
    print("| --- | --- | --- | ---: | ---: | ---: | --- |")
    rows = []
    for name, size, dt, nbytes, fn, others in cases(cupy, torch, hf, nn, np.random.default_rng(0),
                                                      args.quick):
        t = time_ms(fn)
        res = {"op": name, "size": size if isinstance(size, int) else list(size),
               "dtype": np.dtype(dt).name, "ms": t, "gbps": nbytes / t / 1e6,
               "of_floor": nbytes / bw / t, "others": {}}
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
        print(f"| {name} | {size if isinstance(size, int) else tuple(size)} | {res['dtype']} | "
              f"{t:.3f} | {res['gbps']:.0f} | {res['of_floor']:.2f} | {txt} |")
        sys.stdout.flush()
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"copy_gbps": bw / 1e6, "cases": rows}, f, indent=1)
