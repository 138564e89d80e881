"""Session probe: conv2d's three GEMMs (forward y = W cols, dcols = W^T g, dw = g cols^T) on
the benchmark's layers (float32), each as conv2d runs it and with the operands swapped
(the transposed product: C^T = B^T A^T, the same numbers laid out the other way), through
CuPy (cuBLAS) and through torch.matmul (cuBLASLt's heuristics), against cuDNN's whole
conv2d forward. TF32 off everywhere.

    PYTHONPATH=$PWD python3 tools/probe_conv_order.py
"""
import sys

import cupy
import numpy as np
import torch

sys.path.insert(0, "benchmarks")
from _timing import timer  # noqa: E402

torch.backends.cudnn.benchmark = True
torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = False
t = timer(cupy)
rng = cupy.random.default_rng(0)
LAYERS = [(32, 64, 56, 64, 3, 1, 1), (32, 128, 28, 128, 3, 1, 1), (32, 256, 14, 256, 3, 1, 1),
          (32, 512, 7, 512, 3, 1, 1), (32, 3, 224, 64, 7, 2, 3), (32, 128, 56, 128, 3, 2, 1),
          (32, 256, 14, 256, 1, 1, 0)]
print("| layer | GEMM (m, n, k) | as run | swapped | torch as run | torch swapped | cuDNN fwd |")
print("|---|---|---:|---:|---:|---:|---:|")
for n, c, h, co, k, s, p in LAYERS:
    o = (h + 2 * p - k) // s + 1
    nl, kk = n * o * o, c * k * k
    w = rng.standard_normal((co, kk), dtype=np.float32)
    cols = rng.standard_normal((kk, nl), dtype=np.float32)
    g = rng.standard_normal((co, nl), dtype=np.float32)
    x = rng.standard_normal((n, c, h, h), dtype=np.float32)
    tw = torch.from_dlpack(w).reshape(co, c, k, k)
    tx = torch.from_dlpack(x)
    cudnn = t(lambda: torch.nn.functional.conv2d(tx, tw, stride=s, padding=p))
    T = torch.from_dlpack
    cases = [("fwd W cols", (co, nl, kk), lambda: w @ cols, lambda: (cols.T @ w.T),
              lambda: T(w) @ T(cols), lambda: T(cols).T @ T(w).T),
             ("dcols W^T g", (kk, nl, co), lambda: w.T @ g, lambda: g.T @ w,
              lambda: T(w).T @ T(g), lambda: T(g).T @ T(w)),
             ("dw g cols^T", (co, kk, nl), lambda: g @ cols.T, lambda: cols @ g.T,
              lambda: T(g) @ T(cols).T, lambda: T(cols) @ T(g).T)]
    for name, (m, nn_, kq), a, b, ta, tb in cases:
        fl = 2.0 * m * nn_ * kq
        ms = [t(f) for f in (a, b, ta, tb)]
        cells = " | ".join(f"{v:.3f} ({fl / v / 1e9:.0f})" for v in ms)
        print(f"| N{n} C{c} {h}x{h}->{co} k{k} s{s} | {name} ({m}, {nn_}, {kq}) | {cells} | "
              f"{cudnn:.3f} |")
        sys.stdout.flush()
