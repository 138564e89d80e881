"""hipfer.nn batch norm and group norm on the GPU, forward and backward, against PyTorch on
the same device and data and against the bandwidth floor.

    python3 benchmarks/bench_nn_batchnorm.py [--quick] [--dtype float32|float64] [--json FILE]

Each case is timed with device events around back-to-back warm calls (median of several
rounds). floor ms = the bytes the op must move (each full-size operand read once, each
full-size result written once; the per-channel vectors are negligible) / the copy
bandwidth measured in the same run (a device-to-device copy, bytes read + written);
"of floor" = floor / hipfer time (1 is the limit). The training ops read x (and grad) twice
-- once for the statistics, once to normalise -- so they reach at most 2/3 (forward) and
3/5 (backward) of the floor unless the second read hits in the cache. PyTorch:
F.batch_norm (training, with running statistics: hipfer's row is batch_norm with
running_mean / running_var, which updates them in the same launch), F.batch_norm (eval)
and F.group_norm forward, and their backward through torch.autograd.grad (graph kept, so
only the backward kernels run). The "batch_norm + update_running" row times the two-op
form (batch_norm, then batch_norm_update_running) for comparison.
"""
from __future__ import annotations

import argparse
import json
import sys
from math import prod

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
    rng = np.random.default_rng(0)
    dt = np.dtype(opts.dtype)

    # ---- copy bandwidth of this card (bytes read + written per second, 256 MiB copied)
    bw = copy_bandwidth(cupy, time_ms, 1 << 28) * 1e3

    # (N, C, *spatial), groups for group norm
    shapes = ([((8, 64, 28, 28), 32), ((512, 256), 32)] if opts.quick else
              [((32, 64, 56, 56), 32), ((64, 256, 14, 14), 32), ((16, 512, 7, 7), 32),
               ((128, 32, 112, 112), 8), ((8, 64, 64, 64, 16), 32), ((8192, 1024), 32),
               ((65536, 64), 16)])
    rows_out = []

    def add(op, shape, t_hf, n_arrays, t_torch, note=""):
        floor = n_arrays * prod(shape) * dt.itemsize / bw * 1e3
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

    for shape, groups in shapes:
        c, count = shape[1], prod(shape) // shape[1]
        x = cupy.asarray(rng.standard_normal(shape).astype(dt))
        g = cupy.asarray(rng.standard_normal(shape).astype(dt))
        gamma = cupy.asarray(rng.uniform(0.5, 1.5, c).astype(dt))
        beta = cupy.asarray(rng.standard_normal(c).astype(dt))
        rm, rv = cupy.zeros(c, dt), cupy.ones(c, dt)
        X, G, GM, BT = hf.asarray(x), hf.asarray(g), hf.asarray(gamma), hf.asarray(beta)
        RM, RV = hf.asarray(rm.copy()), hf.asarray(rv.copy())
        if torch:
            tx = torch.from_dlpack(x).clone().requires_grad_(True)
            tg = torch.from_dlpack(g)
            tw = torch.from_dlpack(gamma).clone().requires_grad_(True)
            tb = torch.from_dlpack(beta).clone().requires_grad_(True)
            trm, trv = torch.from_dlpack(rm.copy()), torch.from_dlpack(rv.copy())

        # batch norm, training
        def bn_train():
            nn.batch_norm(X, GM, BT, eps=1e-5, running_mean=RM, running_var=RV, momentum=0.1)

        def bn_train_two_ops():
            _, mean, _, var = nn.batch_norm(X, GM, BT, eps=1e-5)
            nn.batch_norm_update_running(RM, RV, mean, var, momentum=0.1, count=count)
        t_torch = torch_time(lambda: F.batch_norm(tx, trm, trv, tw, tb, True, 0.1, 1e-5))
        add("batch_norm (+ running)", shape, time_ms(bn_train), 2, t_torch)
        add("batch_norm + update_running", shape, time_ms(bn_train_two_ops), 2, t_torch,
            "two ops")
        _, MEAN, INVSTD, _ = nn.batch_norm(X, GM, BT, eps=1e-5)
        ty = F.batch_norm(tx, trm, trv, tw, tb, True, 0.1, 1e-5) if torch else None
        add("batch_norm_backward", shape,
            time_ms(lambda: nn.batch_norm_backward(G, X, MEAN, INVSTD, GM)), 3,
            torch_time(lambda: torch.autograd.grad(ty, (tx, tw, tb), tg, retain_graph=True)))

        # batch norm, eval
        add("batch_norm_eval", shape, time_ms(lambda: nn.batch_norm_eval(X, GM, BT, RM, RV)), 2,
            torch_time(lambda: F.batch_norm(tx, trm, trv, tw, tb, False, 0.1, 1e-5)), "one pass")
        ty = F.batch_norm(tx, trm, trv, tw, tb, False, 0.1, 1e-5) if torch else None
        add("batch_norm_eval_backward", shape,
            time_ms(lambda: nn.batch_norm_eval_backward(G, X, GM, RM, RV)), 3,
            torch_time(lambda: torch.autograd.grad(ty, (tx, tw, tb), tg, retain_graph=True)),
            "one pass")

        # group norm
        if c % groups == 0:
            add(f"group_norm ({groups} groups)", shape,
                time_ms(lambda: nn.group_norm(X, GM, BT, groups=groups)), 2,
                torch_time(lambda: F.group_norm(tx, groups, tw, tb, 1e-5)))
            _, GMEAN, RSTD = nn.group_norm(X, GM, BT, groups=groups)
            ty = F.group_norm(tx, groups, tw, tb, 1e-5) if torch else None
            add("group_norm_backward", shape,
                time_ms(lambda: nn.group_norm_backward(G, X, GMEAN, RSTD, GM)), 3,
                torch_time(lambda: torch.autograd.grad(ty, (tx, tw, tb), tg, retain_graph=True)))

    name = cupy.cuda.runtime.getDeviceProperties(0)["name"]
    name = name.decode() if isinstance(name, bytes) else name
    print(f"# hipfer.nn batchnorm ops on {name}, {dt.name}; copy bandwidth {bw / 1e12:.2f} TB/s")
    print("| op | shape | hipfer ms | torch ms | hipfer / torch | floor ms | of floor | note |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows_out:
        tt = f"{r['torch_ms']:.4f}" if r["torch_ms"] else ""
        vs = f"{r['vs_torch']:.2f}" if r["vs_torch"] else ""
        print(f"| {r['op']} | {'x'.join(map(str, r['shape']))} | {r['hipfer_ms']:.4f} | {tt} | {vs} "
              f"| {r['floor_ms']:.4f} | {r['of_floor']:.2f} | {r['note']} |")
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump({"dtype": dt.name, "copy_bw_bytes_per_s": bw, "rows": rows_out}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
