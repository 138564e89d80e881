"""hipfer.nn LRP passes on the GPU: against the memory-bandwidth floor and against the
same formula written with CuPy array expressions (several kernels, one temporary each).

    python3 benchmarks/bench_nn_lrp.py [--quick] [--json FILE]

The floor of each case is bytes moved (every operand read once, every output written
once) / the device-to-device copy bandwidth measured in the same run; "of floor" is
floor time / hipfer time (the goal is >= 0.8). lrp_linear and lrp_bilinear_matmul are
GEMM-bound at these sizes: their "of floor" counts only their operands' bytes and is
shown for reference (the GEMM is hipBLAS/cuBLAS); the comparator is the same three steps
in CuPy. Times: median over rounds of the mean of back-to-back warm calls between
device events.
"""
from __future__ import annotations

import numpy as np

from _timing import run_cases  # noqa: E402 (benchmarks/ is on sys.path when run as a script)


def _stab(cupy, z, eps):
    return cupy.where(z >= 0, z + eps, z - eps)


def cases(cupy, torch, hf, nn, rng, quick: bool):
    """(name, size, dtype, bytes moved, hipfer fn, {other: fn or None})."""
    out = []
    s = 8 if quick else 1
    eps = 1e-6

    def arr(shape, dt):
        return cupy.asarray(rng.standard_normal(shape).astype(dt))

    for dt in (np.float32, np.float64):
        it = np.dtype(dt).itemsize
        n = (1 << 26) // s
        a, b, r = arr(n, dt), arr(n, dt), arr(n, dt)
        A, B, R = hf.asarray(a), hf.asarray(b), hf.asarray(r)
        out.append(("lrp_stabilized_divide", n, dt, 3 * n * it,
                    lambda R=R, A=A: nn.lrp_stabilized_divide(R, A, eps=eps, gate="positive"),
                    {"cupy": lambda r=r, a=a: cupy.where(a > 0, r / _stab(cupy, a, eps), 0)}))
        out.append(("lrp_residual_split", n, dt, 5 * n * it,
                    lambda A=A, B=B, R=R: nn.lrp_residual_split(A, B, R, eps=eps),
                    {"cupy": lambda a=a, b=b, r=r: (lambda q: (a * q, b * q))(r / _stab(cupy, a + b, eps))}))
        out.append(("lrp_bilinear_elementwise", n, dt, 4 * n * it,
                    lambda A=A, B=B, R=R: nn.lrp_bilinear_elementwise(A, B, R, eps=eps),
                    {"cupy": lambda a=a, b=b, r=r: (lambda c: c * (r / _stab(cupy, 2 * c, eps)))(a * b)}))
        for shape in ((65536 // s, 64), (16384 // s, 1000), (2048 // s, 8192)):
            x, y, r = arr(shape, dt), arr(shape, dt), arr(shape, dt)
            X, Y, Rr = hf.asarray(x), hf.asarray(y), hf.asarray(r)
            out.append(("lrp_softmax_rows", shape, dt, 4 * x.nbytes,
                        lambda X=X, Y=Y, Rr=Rr: nn.lrp_softmax_rows(X, Y, Rr),
                        {"cupy": lambda x=x, y=y, r=r: x * (r - y * r.sum(-1, keepdims=True))}))
        shape = (32 // s, 32, 1024, 128)
        x, r = arr(shape, dt), arr(shape, dt)
        ang = rng.uniform(0, 6.3, (1024, 64))
        c, sn = cupy.asarray(np.cos(ang).astype(dt)), cupy.asarray(np.sin(ang).astype(dt))
        ts = tuple(hf.asarray(t) for t in (x, c, sn, r))
        out.append(("lrp_rope", shape, dt, 3 * x.nbytes, lambda ts=ts: nn.lrp_rope(*ts, eps=eps), {}))
        shape = (32 // s, 64, 112, 112)
        x = arr(shape, dt)
        r = arr((shape[0], 64, 56, 56), dt)
        X, Rr = hf.asarray(x), hf.asarray(r)
        out.append(("lrp_avg_pool", shape, dt, 2 * x.nbytes + 2 * r.nbytes,
                    lambda X=X, Rr=Rr: nn.lrp_avg_pool(X, Rr, 3, stride=2, padding=1, eps=eps), {}))
        nn_, i, j = 8192 // s, 4096, 4096
        x, w, z, r = arr((nn_, i), dt), arr((i, j), dt), arr((nn_, j), dt), arr((nn_, j), dt)
        ts = tuple(hf.asarray(t) for t in (x, w, r))
        Z = hf.asarray(z)
        out.append(("lrp_linear (GEMM)", (nn_, i, j), dt, (2 * x.size + w.size + 2 * z.size) * it,
                    lambda ts=ts, Z=Z: nn.lrp_linear(*ts, z=Z, eps=eps),
                    {"cupy": lambda x=x, w=w, z=z, r=r: x * ((r / _stab(cupy, z, eps)) @ w.T)}))
        bt, m, k = 64 // s, 512, 64
        a, b = arr((bt, m, k), dt), arr((bt, m, k), dt)
        o, r = arr((bt, m, m), dt), arr((bt, m, m), dt)
        ts = tuple(hf.asarray(t) for t in (a, b, r))
        O = hf.asarray(o)
        out.append(("lrp_bilinear_matmul (GEMM)", (bt, m, k, m), dt, (4 * a.size + 2 * o.size) * it,
                    lambda ts=ts, O=O: nn.lrp_bilinear_matmul(*ts, o=O, trans_b=True, eps=eps), {}))
    return out


if __name__ == "__main__":
    run_cases(__doc__, cases)
