"""hipfer.nn conv ops on the GPU: conv2d forward and backward against PyTorch (cuDNN /
MIOpen) on the same device and data; im2col, col2im_add and the pools against the
bandwidth floor (bytes they must move / the copy bandwidth measured in the same run)
and against PyTorch's pools.

    python3 benchmarks/bench_nn_conv.py [--quick] [--json FILE]

Timing as in bench_einsum.py: warm calls back to back between device events, median
of several rounds. Ratios are hipfer time / other time (< 1: hipfer is faster); "of
floor" is floor time / hipfer time (1.0: at the bandwidth limit; the goal is >= 0.8).
conv2d here is im2col + one batched GEMM (+ col2im_add for dx), so it moves the columns
(kh*kw times the input) through memory where cuDNN's implicit GEMM does not: the
ratio against torch shows what that costs.
"""
from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from _timing import copy_bandwidth, timer  # noqa: E402 (benchmarks/ is on sys.path when run as a script)




def out_size(n, k, s, p):
    return (n + 2 * p - k) // s + 1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes (a smoke run)")
    ap.add_argument("--json", help="write the results here as JSON")
    opts = ap.parse_args(argv)

    import cupy
    import hipfer as hf
    import hipfer.nn as nn
    try:
        import torch
        F = torch.nn.functional
        torch.backends.cudnn.benchmark = True
        torch.backends.cudnn.allow_tf32 = False  # float32 against float32 (TF32 is torch's default)
    except ImportError:
        torch = F = None
    time_ms = timer(cupy)
    rng = np.random.default_rng(0)
    rows = []

    def add(name, t_hf, t_torch=None, floor=None, flops=None, note=""):
        rows.append({"case": name, "hipfer_ms": t_hf, "torch_ms": t_torch,
                     "vs_torch": t_hf / t_torch if t_torch else None,
                     "floor_ms": floor, "of_floor": floor / t_hf if floor else None,
                     "tflops": flops / t_hf / 1e9 if flops else None, "note": note})

    def rand(shape, dt=np.float32):
        return cupy.asarray(rng.standard_normal(shape).astype(dt))

    def tq(a):
        return torch.from_dlpack(a) if torch is not None else None

    # ---- the copy bandwidth of this card: the floor of the data-movement ops
    bw = copy_bandwidth(cupy, time_ms, 256 << 20) / 1e6  # GB/s, copying 256 MiB

    def floor_ms(nbytes):
        return nbytes / bw / 1e6

    # (N, C, H, Cout, k, stride, padding): ResNet-like layers, float32
    convs = ([(8, 64, 56, 64, 3, 1, 1), (8, 3, 112, 64, 7, 2, 3)] if opts.quick else
             [(32, 64, 56, 64, 3, 1, 1), (32, 128, 28, 128, 3, 1, 1), (32, 256, 14, 256, 3, 1, 1),
              (32, 512, 7, 512, 3, 1, 1), (32, 3, 224, 64, 7, 2, 3), (32, 128, 56, 128, 3, 2, 1),
              (32, 256, 14, 256, 1, 1, 0)])
    for n, c, h, co, k, s, p in convs:
        o = out_size(h, k, s, p)
        tag = f"N{n} C{c} {h}x{h} -> {co}, k{k} s{s} p{p}"
        x, w, b, g = rand((n, c, h, h)), rand((co, c, k, k)), rand((co,)), rand((n, co, o, o))
        X, W, B, G = (hf.asarray(a) for a in (x, w, b, g))
        args = dict(stride=s, padding=p)
        cols_bytes = n * c * k * k * o * o * 4
        t = time_ms(lambda: nn.im2col(X, k, **args))
        add(f"im2col {tag}", t, floor=floor_ms(cols_bytes + x.nbytes))
        cols = nn.im2col(X, k, **args)
        t = time_ms(lambda: nn.col2im_add(cols, X.shape, k, **args))
        add(f"col2im_add {tag}", t, floor=floor_ms(cols_bytes + x.nbytes))
        fl = 2 * n * co * c * k * k * o * o
        t = time_ms(lambda: nn.conv2d(X, W, B, **args))
        tt = time_ms(lambda: F.conv2d(tq(x), tq(w), tq(b), **args)) if torch is not None else None
        if torch is not None:
            err = float(cupy.abs(nn.conv2d(X, W, B, **args)._data
                                 - cupy.from_dlpack(F.conv2d(tq(x), tq(w), tq(b), **args))).max())
            note = f"max abs diff vs torch {err:.1e}"
        else:
            note = "torch not installed"
        add(f"conv2d fwd {tag}", t, tt, flops=fl, note=note)
        t = time_ms(lambda: nn.conv2d_backward(G, X, W, **args))
        tt = None
        if torch is not None:
            def tb():
                return torch.ops.aten.convolution_backward(
                    tq(g), tq(x), tq(w), [co], [s, s], [p, p], [1, 1], False, [0, 0], 1,
                    [True, True, True])
            tt = time_ms(tb)
        add(f"conv2d bwd {tag}", t, tt, flops=2 * fl, note="dx, dw, db")

    # ---- im2col / col2im_add in float64 (the columns' 8-byte loads), against the floor
    for n, c, h, k, s, p in ([(8, 64, 56, 3, 1, 1)] if opts.quick else
                             [(16, 64, 56, 3, 1, 1), (16, 128, 56, 3, 2, 1)]):
        o = out_size(h, k, s, p)
        tag = f"N{n} C{c} {h}x{h}, k{k} s{s} p{p}, float64"
        X = hf.asarray(rand((n, c, h, h), np.float64))
        args = dict(stride=s, padding=p)
        nbytes = (n * c * k * k * o * o + n * c * h * h) * 8
        add(f"im2col {tag}", time_ms(lambda: nn.im2col(X, k, **args)), floor=floor_ms(nbytes))
        cols = nn.im2col(X, k, **args)
        add(f"col2im_add {tag}", time_ms(lambda: nn.col2im_add(cols, X.shape, k, **args)),
            floor=floor_ms(nbytes))

    # ---- pools (N, C, H, kernel, stride, padding, dtype): against torch and the floor.
    # Bytes: max_pool reads x and writes y and an int64 argmax; max_unpool reads the
    # gradient of y and the argmax and writes dx; avg_pool and its backward read one of
    # x / y and write the other. k3 s2 is the case the GPU backwards slide window rows for;
    # k3 s1 (3 window columns reach a column) takes their tap loop.
    pools = ([(8, 64, 112, 3, 2, 1, np.float32)] if opts.quick else
             [(32, 64, 112, 3, 2, 1, np.float32), (32, 256, 28, 3, 2, 1, np.float32),
              (16, 64, 112, 3, 2, 1, np.float64), (32, 64, 56, 3, 1, 1, np.float32)])
    for n, c, h, k, s, p, dt in pools:
        x = rand((n, c, h, h), dt)
        X = hf.asarray(x)
        o = out_size(h, k, s, p)
        ybytes = n * c * o * o * x.itemsize
        argbytes = n * c * o * o * 8
        tag = f"N{n} C{c} {h}x{h}, k{k} s{s} p{p}" + (", float64" if dt == np.float64 else "")
        args = dict(stride=s, padding=p)
        t = time_ms(lambda: nn.max_pool(X, k, **args))
        tt = (time_ms(lambda: F.max_pool2d(tq(x), k, s, p, return_indices=True))
              if torch is not None else None)
        add(f"max_pool {tag}", t, tt, floor=floor_ms(x.nbytes + ybytes + argbytes),
            note="y + int64 argmax")
        y, arg = nn.max_pool(X, k, **args)
        t = time_ms(lambda: nn.max_unpool(y, arg, X.shape, k, **args))
        tt = None
        if torch is not None:
            ty, ti = F.max_pool2d(tq(x), k, s, p, return_indices=True)
            tt = time_ms(lambda: torch.ops.aten.max_pool2d_with_indices_backward(
                ty, tq(x), [k, k], [s, s], [p, p], [1, 1], False, ti))
        add(f"max_unpool {tag}", t, tt, floor=floor_ms(x.nbytes + ybytes + argbytes),
            note="includes the argmax check (one 8-byte sync)")
        t = time_ms(lambda: nn.avg_pool(X, k, **args))
        tt = time_ms(lambda: F.avg_pool2d(tq(x), k, s, p)) if torch is not None else None
        add(f"avg_pool {tag}", t, tt, floor=floor_ms(x.nbytes + ybytes))
        G = nn.avg_pool(X, k, **args)
        g = cupy.asarray(G._data)
        for include_pad in (True, False):
            t = time_ms(lambda: nn.avg_pool_backward(G, X.shape, k, count_include_pad=include_pad,
                                                     **args))
            tt = None
            if torch is not None:
                tt = time_ms(lambda: torch.ops.aten.avg_pool2d_backward(
                    tq(g), tq(x), [k, k], [s, s], [p, p], False, include_pad, None))
            add(f"avg_pool_backward {tag}" + ("" if include_pad else ", count_include_pad=False"),
                t, tt, floor=floor_ms(x.nbytes + ybytes))

    # ---- print
    print(f"# hipfer.nn conv benchmarks on {cupy.cuda.runtime.getDeviceProperties(0)['name'].decode()}")
    print(f"# copy bandwidth measured: {bw:.0f} GB/s; torch {'present' if torch else 'absent'}")
    print("| case | hipfer ms | torch ms | vs torch | floor ms | of floor | TFLOP/s | note |")
    print("|---|---|---|---|---|---|---|---|")

    def f(v, fmt):
        return "" if v is None else format(v, fmt)
    for r in rows:
        print(f"| {r['case']} | {r['hipfer_ms']:.3f} | {f(r['torch_ms'], '.3f')} | "
              f"{f(r['vs_torch'], '.2f')} | {f(r['floor_ms'], '.3f')} | {f(r['of_floor'], '.2f')} | "
              f"{f(r['tflops'], '.1f')} | {r['note']} |")
    if opts.json:
        with open(opts.json, "w") as fh:
            json.dump({"bandwidth_gbs": bw, "rows": rows}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
