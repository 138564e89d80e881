"""hipfer.nn recurrent ops on the GPU: the scans at sequence length 1024 against an
equivalent PyTorch per-step loop on the same device and data (goal: >= 10x faster), and
one LSTM / GRU cell step against PyTorch's eager pointwise ops (and its fused LSTM cell).

    python3 benchmarks/bench_nn_recurrent.py [--quick] [--json FILE]

"of floor" is the time to read every operand and write every output once at the copy
bandwidth / hipfer's time. The scans are latency-bound rather than bandwidth-bound (one
thread walks 1024 steps in order; see docs/nn_recurrent.md), so the floor is a bound,
not a target. "fwd+bwd" cases time forward and backward together against the torch
loop's forward and autograd backward.
"""
from __future__ import annotations

import numpy as np

from _timing import run_cases  # noqa: E402 (benchmarks/ is on sys.path when run as a script)


def _torch_scan(torch):
    def selective_scan(x, delta, A, Bm, C, D):
        h = x.new_zeros(x.shape[0], x.shape[2], A.shape[1])
        ys = []
        for t in range(x.shape[1]):
            dt = delta[:, t, :, None]
            h = torch.exp(dt * A) * h + (dt * x[:, t, :, None]) * Bm[:, t, None, :]
            ys.append((h * C[:, t, None, :]).sum(-1) + D * x[:, t])
        return torch.stack(ys, 1)

    def wkv(w, u, k, v):
        w = -torch.exp(w)
        aa = torch.zeros_like(k[:, 0])
        bb = torch.zeros_like(aa)
        pp = torch.full_like(aa, -1e38)
        ys = []
        for t in range(k.shape[1]):
            kk, vv = k[:, t], v[:, t]
            ww = u + kk
            p = torch.maximum(pp, ww)
            e1, e2 = torch.exp(pp - p), torch.exp(ww - p)
            ys.append((e1 * aa + e2 * vv) / (e1 * bb + e2))
            ww = w + pp
            p = torch.maximum(ww, kk)
            e1, e2 = torch.exp(ww - p), torch.exp(kk - p)
            aa, bb, pp = e1 * aa + e2 * vv, e1 * bb + e2, p
        return torch.stack(ys, 1)

    def retention(q, k, v, gamma):
        s = q.new_zeros(q.shape[0], q.shape[2], v.shape[2])
        g = gamma[:, None, None]
        os = []
        for t in range(q.shape[1]):
            s = g * s + k[:, t, :, None] * v[:, t, None, :]
            os.append(torch.bmm(q[:, t, None, :], s)[:, 0])
        return torch.stack(os, 1)
    return selective_scan, wkv, retention


def _fwd_bwd(torch, f, tensors):
    """The torch loop's forward and autograd backward (leaves that need gradients)."""
    leaves = [t.detach().clone().requires_grad_() for t in tensors]

    def run():
        y = f(*leaves)
        y.backward(torch.ones_like(y))
    return run


def cases(cupy, torch, hf, nn, rng, quick: bool):
    """(name, size, dtype, bytes moved, hipfer fn, {other: fn})."""
    L = 1024
    scans = _torch_scan(torch) if torch is not None else (None, None, None)
    out = []
    for dt in (np.float32, np.float64):
        it = np.dtype(dt).itemsize

        def arr(shape, lo=-1.0, hi=1.0):
            a = cupy.asarray(rng.uniform(lo, hi, shape).astype(dt))
            return a, hf.asarray(a), None if torch is None else torch.from_dlpack(a)

        def peer(f, ts, bwd=False):
            if torch is None:
                return None
            return _fwd_bwd(torch, f, ts) if bwd else (lambda: f(*ts))

        # Mamba: B, D, N as in a small Mamba block
        b, d, n = (2, 256, 16) if quick else (4, 1024, 16)
        ops = [arr((b, L, d)), arr((b, L, d), 0.05, 0.8), arr((d, n), -1.5, -0.1), arr((b, L, n)),
               arr((b, L, n)), arr((d,))]
        H, T = [o[1] for o in ops], [o[2] for o in ops]
        dy = arr((b, L, d))[1]
        nbytes = (3 * b * L * d + 2 * b * L * n + d * n + d) * it
        out.append(("selective_scan", (b, L, d, n), dt, nbytes, lambda H=H: nn.selective_scan(*H),
                    {"torch loop": peer(scans[0], T)}))
        out.append(("selective_scan fwd+bwd", (b, L, d, n), dt, 3 * nbytes,
                    lambda H=H, dy=dy: (nn.selective_scan(*H), nn.selective_scan_backward(*H, dy)),
                    {"torch loop + autograd": peer(scans[0], T, True)}))
        # RWKV-4
        b, c = (2, 512) if quick else (8, 1024)
        ops = [arr((c,)), arr((c,)), arr((b, L, c), -2, 2), arr((b, L, c))]
        H, T = [o[1] for o in ops], [o[2] for o in ops]
        dy = arr((b, L, c))[1]
        nbytes = (3 * b * L * c + 2 * c) * it
        out.append(("wkv", (b, L, c), dt, nbytes, lambda H=H: nn.wkv(*H), {"torch loop": peer(scans[1], T)}))
        out.append(("wkv fwd+bwd", (b, L, c), dt, 3 * nbytes,
                    lambda H=H, dy=dy: (nn.wkv(*H), nn.wkv_backward(*H, dy)),
                    {"torch loop + autograd": peer(scans[1], T, True)}))
        # RetNet: B = batch * heads, head dims 64
        b, dk, dv = (8, 32, 32) if quick else (32, 64, 64)
        ops = [arr((b, L, dk)), arr((b, L, dk)), arr((b, L, dv)), arr((b,), 0.9, 0.99)]
        H, T = [o[1] for o in ops], [o[2] for o in ops]
        do = arr((b, L, dv))[1]
        nbytes = (b * L * (2 * dk + 2 * dv) + b) * it
        out.append(("retention", (b, L, dk, dv), dt, nbytes, lambda H=H: nn.retention(*H),
                    {"torch loop": peer(scans[2], T)}))
        out.append(("retention fwd+bwd", (b, L, dk, dv), dt, 3 * nbytes,
                    lambda H=H, do=do: (nn.retention(*H), nn.retention_backward(*H, do)),
                    {"torch loop + autograd": peer(scans[2], T, True)}))
        # cells: one step
        n_, h = (64, 256) if quick else (256, 1024)
        g, G, tg = arr((n_, 4 * h), -2, 2)
        c0, C0, tc0 = arr((n_, h))
        others = {}
        if torch is not None:
            def torch_lstm(tg=tg, tc0=tc0):
                i, f, gg, o = tg.chunk(4, 1)
                cc = torch.sigmoid(f) * tc0 + torch.sigmoid(i) * torch.tanh(gg)
                return torch.sigmoid(o) * torch.tanh(cc), cc
            others["torch eager"] = torch_lstm
            if hasattr(torch, "_thnn_fused_lstm_cell"):
                zeros = torch.zeros_like(tg)
                others["torch fused"] = lambda tg=tg, z=zeros, tc0=tc0: torch._thnn_fused_lstm_cell(tg, z, tc0)
        out.append(("lstm_cell", (n_, h), dt, (4 * n_ * h + n_ * h + 2 * n_ * h + 4 * n_ * h) * it,
                    lambda G=G, C0=C0: nn.lstm_cell(G, C0), others))
        x_pre, X, tx = arr((n_, 3 * h), -2, 2)
        h_pre, Hp, th = arr((n_, 3 * h), -2, 2)
        hp, HP, thp = arr((n_, h))
        others = {}
        if torch is not None:
            def torch_gru(tx=tx, th=th, thp=thp):
                xr, xz, xn = tx.chunk(3, 1)
                hr, hz, hn = th.chunk(3, 1)
                r, z = torch.sigmoid(xr + hr), torch.sigmoid(xz + hz)
                nn_ = torch.tanh(xn + r * hn)
                return (1 - z) * nn_ + z * thp
            others["torch eager"] = torch_gru
        out.append(("gru_cell", (n_, h), dt, (6 * n_ * h + n_ * h + n_ * h + 4 * n_ * h) * it,
                    lambda X=X, Hp=Hp, HP=HP: nn.gru_cell(X, Hp, HP), others))
    return out


def main():
    run_cases(__doc__, cases)


if __name__ == "__main__":
    main()
