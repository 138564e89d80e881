"""hipfer.nn row ops on the GPU: softmax_rows, logsumexp_rows, layer_norm and rms_norm,
forward and backward, against PyTorch on the same device and data and against the bandwidth
floor.

    python3 benchmarks/bench_nn_norm.py [--quick] [--dtype float32|float64] [--json FILE]

Each case is timed with device events around back-to-back warm calls (median of several
rounds). floor ms = the bytes the op must move (each operand read once, each result
written once) / the copy bandwidth measured in the same run (a device-to-device copy,
bytes read + written); "of floor" = floor / hipfer time, the fraction of the memory
bandwidth hipfer reaches (1 is the limit). PyTorch: torch.softmax, F.layer_norm,
F.rms_norm (when present), torch.logsumexp forward, and their backward through
torch.autograd.grad (the graph kept, so only the backward kernels run). hipfer's layer_norm
also writes xhat (a third full-size array that torch does not keep); its floor counts it.
The floors leave out the per-row and per-column vectors (std, gamma, dgamma, ...): they are
under 0.1% of the bytes at these sizes. Inputs are drawn on the device (standard normal).
"""
from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from _timing import copy_bandwidth, timer  # noqa: E402 (benchmarks/ is on sys.path when run as a script)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes (a smoke run)")
    ap.add_argument("--dtype", default="float32", choices=("float32", "float64"))
    ap.add_argument("--json", help="write the results here as JSON")
    opts = ap.parse_args(argv)

    import cupy
    import hipfer as hf
    import hipfer.nn as nn
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        torch = F = None
    time_ms = timer(cupy)
    rng = cupy.random.default_rng(0)
    dt = np.dtype(opts.dtype)

    # ---- copy bandwidth of this card (bytes read + written per second, 256 MiB copied)
    bw = copy_bandwidth(cupy, time_ms, 1 << 28) * 1e3

    shapes = ([(4096, 64), (2048, 1000), (512, 4096)] if opts.quick else
              [(262144, 64), (65536, 1000), (16384, 4096), (8192, 8192), (2048, 32768)])
    rows_out = []

    def add(op, shape, t_hf, n_arrays, t_torch, note=""):
        nbytes = n_arrays * shape[0] * shape[1] * dt.itemsize
        floor = nbytes / bw * 1e3
        rows_out.append({"op": op, "shape": list(shape), "hipfer_ms": t_hf, "torch_ms": t_torch,
                         "floor_ms": floor, "of_floor": floor / t_hf,
                         "vs_torch": t_hf / t_torch if t_torch else None, "note": note})

    def torch_time(fn):
        if torch is None:
            return None
        try:
            return time_ms(fn)
        except Exception as e:  # report, keep going
            print(f"# torch failed: {type(e).__name__}: {str(e)[:100]}", file=sys.stderr)
            return None

    for shape in shapes:
        rows, cols = shape
        x = rng.standard_normal(shape, dtype=dt)
        g = rng.standard_normal(shape, dtype=dt)
        gamma = rng.standard_normal(cols, dtype=dt)
        beta = rng.standard_normal(cols, dtype=dt)
        X, G, GM, BT = hf.asarray(x), hf.asarray(g), hf.asarray(gamma), hf.asarray(beta)
        tx = torch.from_dlpack(x).clone().requires_grad_(True) if torch else None
        tg = torch.from_dlpack(g) if torch else None
        tw = torch.from_dlpack(gamma).clone().requires_grad_(True) if torch else None
        tb = torch.from_dlpack(beta).clone().requires_grad_(True) if torch else None

        # softmax
        Y = nn.softmax_rows(X)
        add("softmax_rows", shape, time_ms(lambda: nn.softmax_rows(X)), 2,
            torch_time(lambda: torch.softmax(tx, -1)))
        Xc = hf.asarray(x.copy())
        add("softmax_rows in place", shape, time_ms(lambda: nn.softmax_rows(Xc, out=Xc)), 2, None)
        add("logsumexp_rows", shape, time_ms(lambda: nn.logsumexp_rows(X)), 1,
            torch_time(lambda: torch.logsumexp(tx, -1)), "reads x only")
        ty = torch.softmax(tx, -1) if torch else None
        add("softmax_rows_backward", shape, time_ms(lambda: nn.softmax_rows_backward(G, Y)), 3,
            torch_time(lambda: torch.autograd.grad(ty, tx, tg, retain_graph=True)))

        # layer norm
        _, XH, SD = nn.layer_norm(X, GM, BT, eps=1e-5)
        add("layer_norm", shape, time_ms(lambda: nn.layer_norm(X, GM, BT, eps=1e-5)), 3,
            torch_time(lambda: F.layer_norm(tx, (cols,), tw, tb, 1e-5)), "writes y and xhat")
        ty = F.layer_norm(tx, (cols,), tw, tb, 1e-5) if torch else None
        add("layer_norm_backward", shape, time_ms(lambda: nn.layer_norm_backward(G, XH, SD, GM)), 3,
            torch_time(lambda: torch.autograd.grad(ty, (tx, tw, tb), tg, retain_graph=True)))

        # RMS norm
        _, RMS = nn.rms_norm(X, GM, eps=1e-6)
        has_rms = torch is not None and hasattr(F, "rms_norm")
        add("rms_norm", shape, time_ms(lambda: nn.rms_norm(X, GM, eps=1e-6)), 2,
            torch_time(lambda: F.rms_norm(tx, (cols,), tw, 1e-6)) if has_rms else None)
        ty = F.rms_norm(tx, (cols,), tw, 1e-6) if has_rms else None
        add("rms_norm_backward", shape, time_ms(lambda: nn.rms_norm_backward(G, X, RMS, GM)), 3,
            torch_time(lambda: torch.autograd.grad(ty, (tx, tw), tg, retain_graph=True))
            if has_rms else None)

    name = cupy.cuda.runtime.getDeviceProperties(0)["name"]
    name = name.decode() if isinstance(name, bytes) else name
    print(f"# hipfer.nn norm ops on {name}, {dt.name}; copy bandwidth {bw / 1e12:.2f} TB/s")
    print("| op | rows x cols | hipfer ms | torch ms | hipfer / torch | floor ms | of floor | note |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows_out:
        tt = f"{r['torch_ms']:.4f}" if r["torch_ms"] else ""
        vs = f"{r['vs_torch']:.2f}" if r["vs_torch"] else ""
        print(f"| {r['op']} | {r['shape'][0]} x {r['shape'][1]} | {r['hipfer_ms']:.4f} | {tt} | {vs} "
              f"| {r['floor_ms']:.4f} | {r['of_floor']:.2f} | {r['note']} |")
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump({"dtype": dt.name, "copy_bw_bytes_per_s": bw, "rows": rows_out}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
