"""Where conv2d's time goes on the GPU, and whether one large GEMM beats the batched form.

    PYTHONPATH=$PWD python3 tools/probe_conv_gemm.py

For ResNet-like layers (float32, as benchmarks/bench_nn_conv.py): host time per call of
conv2d / conv2d_backward (cupyx.profiler.benchmark's cpu time), the device time of the
whole op and of its pieces, and the GEMMs in two forms:
  batched: a (co, kk) weight against a stack of N (kk, L) columns (what conv2d runs now);
  single:  one GEMM over (kk, N*L) columns (the layout a transposed im2col would write).
dw likewise: N per-sample GEMMs summed over the batch, against one GEMM with k = N*L.
"""
from __future__ import annotations

import sys

import numpy as np

sys.path.insert(0, "benchmarks")
from _timing import timer  # noqa: E402


def main() -> int:
    import cupy
    import cupyx.profiler
    import torch
    import hipfer as hf
    import hipfer.nn as nn
    from hipfer.nn._common import batched_gemm
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    t = timer(cupy)
    rng = np.random.default_rng(0)

    def rand(shape):
        return cupy.asarray(rng.standard_normal(shape, dtype=np.float32))

    print("| layer | piece | ms | TFLOP/s |")
    print("|---|---|---:|---:|")
    for n, c, h, co, k, s, p in [(32, 64, 56, 64, 3, 1, 1), (32, 128, 28, 128, 3, 1, 1),
                                 (32, 256, 14, 256, 3, 1, 1), (32, 512, 7, 512, 3, 1, 1),
                                 (32, 256, 14, 256, 1, 1, 0)]:
        o = (h + 2 * p - k) // s + 1
        L, kk = o * o, c * k * k
        tag = f"N{n} C{c} {h}x{h}->{co} k{k}"
        x, w, b, g = rand((n, c, h, h)), rand((co, c, k, k)), rand((co,)), rand((n, co, o, o))
        X, W, B, G = (hf.asarray(a) for a in (x, w, b, g))
        fl = 2.0 * n * co * kk * L

        def row(piece, ms, flops=None):
            tf = f"{flops / ms / 1e9:.1f}" if flops else ""
            print(f"| {tag} | {piece} | {ms:.4f} | {tf} |")
            sys.stdout.flush()

        fwd = lambda: nn.conv2d(X, W, B, stride=s, padding=p)  # noqa: E731
        bwd = lambda: nn.conv2d_backward(G, X, W, stride=s, padding=p)  # noqa: E731
        for name, fn in (("conv2d", fwd), ("conv2d_backward", bwd)):
            r = cupyx.profiler.benchmark(fn, n_repeat=30, n_warmup=5)
            row(f"{name} host (cpu_times mean)", float(np.mean(r.cpu_times)) * 1e3)
            row(f"{name} device (queued)", t(fn), fl * (1 if name == "conv2d" else 2))
        xt, wt, bt, gt = (torch.from_dlpack(a) for a in (x, w, b, g))
        row("torch conv2d", t(lambda: torch.nn.functional.conv2d(xt, wt, bt, stride=s, padding=p)), fl)
        cols = rand((n, kk, L))
        cols_t = rand((kk, n * L))
        w2 = w.reshape(co, kk)
        g3 = g.reshape(n, co, L)
        g2 = rand((co, n * L))
        row("fwd GEMM batched (hipfer batched_gemm)",
            t(lambda: batched_gemm(w2.reshape(1, co, kk), cols)), fl)
        row("fwd GEMM batched (cupy.matmul)", t(lambda: cupy.matmul(w2, cols)), fl)
        row("fwd GEMM single (cupy.matmul)", t(lambda: cupy.matmul(w2, cols_t)), fl)
        row("dcols GEMM batched", t(lambda: batched_gemm(w2.reshape(1, co, kk), g3, trans_a=True)), fl)
        row("dcols GEMM single", t(lambda: cupy.matmul(w2.T, g2)), fl)
        row("dw per-sample GEMMs", t(lambda: batched_gemm(g3, cols, trans_b=True)), fl)
        row("dw per-sample GEMMs + sum", t(lambda: batched_gemm(g3, cols, trans_b=True).sum(0)), fl)
        row("dw single GEMM k=N*L", t(lambda: cupy.matmul(g2, cols_t.T)), fl)
        row("permute (N,co,L)<->(co,N,L) copy", t(lambda: cupy.ascontiguousarray(g3.transpose(1, 0, 2))))
        if k > 1:
            row("im2col", t(lambda: nn.im2col(X, (k, k), stride=s, padding=p)))
            D = hf.asarray(cols)
            row("col2im_add", t(lambda: nn.col2im_add(D, X.shape, (k, k), stride=s, padding=p)))
        Y = hf.asarray(rand((n, co, L)))
        Bv = hf.reshape(B, (co, 1))
        row("bias add y + b", t(lambda: Y + Bv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
