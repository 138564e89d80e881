"""Where a composed op's time goes, piece by piece, on the GPU (ms per call, one line
each): `conv` (conv2d and conv2d_backward against their im2col / GEMM / col2im / sum
pieces and torch), `rows` (accumulate_rows against hf.sum and torch.sum over rows),
`scatter` (scatter_add_rows against CuPy's argsort, the error-flag sync and torch).
Usage: python3 tools/probe_pieces.py [conv] [rows] [scatter]"""
import sys
import numpy as np
import cupy
import torch
import hipfer as hf
import hipfer.nn as nn
from hipfer.bench.timing import Timer

F = torch.nn.functional
torch.backends.cudnn.benchmark = True
torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = False
T = Timer("gpu", cupy=cupy, rounds=7, inner=5, warmup=3)
rng = np.random.default_rng(0)


def rand(shape, dt=np.float32):
    return cupy.asarray(rng.standard_normal(shape).astype(dt))


def show(name, fn):
    try:
        print(f"{name:60s} {T(fn):8.4f}", flush=True)
    except Exception as e:  # noqa
        print(f"{name:60s} ERROR {type(e).__name__}: {e}", flush=True)


what = sys.argv[1:] or ["conv", "rows"]
if "conv" in what:
    for n, c, h, co, k, s, p in [(32, 64, 56, 64, 3, 1, 1), (32, 256, 14, 256, 3, 1, 1),
                                 (32, 256, 14, 256, 1, 1, 0), (32, 3, 224, 64, 7, 2, 3)]:
        o = (h + 2 * p - k) // s + 1
        tag = f"N{n} C{c} {h} ->{co} k{k}"
        x, w, b = rand((n, c, h, h)), rand((co, c, k, k)), rand((co,))
        X, W, B = (hf.asarray(a) for a in (x, w, b))
        cols = nn.im2col(X, k, stride=s, padding=p)
        W2 = hf.reshape(W, (co, c * k * k))
        y = hf.matmul(W2, cols)
        show(f"{tag} conv2d", lambda: nn.conv2d(X, W, B, stride=s, padding=p))
        show(f"{tag} im2col", lambda: nn.im2col(X, k, stride=s, padding=p))
        show(f"{tag} matmul W2@cols", lambda: hf.matmul(W2, cols))
        cc, w2 = cols._data, W2._data
        show(f"{tag} cupy.matmul w2@cols", lambda: cupy.matmul(w2, cc))
        tc, tw = torch.from_dlpack(cc), torch.from_dlpack(w2)
        show(f"{tag} torch.matmul w2@cols", lambda: torch.matmul(tw, tc))
        show(f"{tag} y + b", lambda: y + hf.reshape(B, (co, 1)))
        show(f"{tag} torch conv", lambda: F.conv2d(torch.from_dlpack(x), torch.from_dlpack(w),
                                                   torch.from_dlpack(b), stride=s, padding=p))
        g = rand((n, co, o, o))
        G = hf.asarray(g)
        g3 = hf.reshape(G, (n, co, o * o))
        show(f"{tag} bwd total", lambda: nn.conv2d_backward(G, X, W, stride=s, padding=p))
        show(f"{tag} bwd dw tensordot", lambda: hf.tensordot(g3, cols, axes=([0, 2], [0, 2])))
        show(f"{tag} bwd dcols matmul", lambda: hf.matmul(hf.matrix_transpose(W2), g3))
        dc = hf.matmul(hf.matrix_transpose(W2), g3)
        show(f"{tag} bwd col2im", lambda: nn.col2im_add(dc, X.shape, k, stride=s, padding=p))
        show(f"{tag} bwd db sum", lambda: hf.sum(G, axis=(0, 2, 3)))
if "rows" in what:
    for shape in [(65536, 1024), (1048576, 64), (64, 1048576), (1024, 65536)]:
        x = rand(shape)
        X = hf.asarray(x)
        out = hf.asarray(rand(shape[:1]))
        show(f"accumulate_rows {shape}", lambda: nn.accumulate_rows(X, out, beta=1.0))
        show(f"hf.sum axis=1 {shape}", lambda: hf.sum(X, axis=1))
        show(f"torch.sum(1) {shape}", lambda: torch.from_dlpack(x).sum(1))
if "scatter" in what:
    from hipfer.backends.cupy import _engine
    for m, d, n in [(65536, 256, 4096), (65536, 512, 65536)]:
        src = rand((m, d))
        idx = cupy.asarray(rng.integers(0, n, m))
        S, I = hf.asarray(src), hf.asarray(idx)
        show(f"scatter_add_rows {m},{d},{n}", lambda: nn.scatter_add_rows(S, I, n))
        show("  cupy.argsort int64", lambda: cupy.argsort(idx))
        i32 = idx.astype(np.int32)
        show("  cupy.argsort int32", lambda: cupy.argsort(i32))
        show("  astype int32 + argsort", lambda: cupy.argsort(idx.astype(np.int32)))
        flag = _engine.error_flag()
        show("  error flag check (sync)", lambda: flag.check(lambda pos: IndexError()))
        show("  cupy.zeros out", lambda: cupy.zeros((n, d), np.float32))
        ti, ts = torch.from_dlpack(idx), torch.from_dlpack(src)
        show("  torch.sort stable", lambda: torch.sort(ti, stable=True))
        show("  torch.index_add_", lambda: torch.zeros(n, d, device="cuda").index_add_(0, ti, ts))
