"""hipfer.nn BLAS-like ops on the GPU: against the memory-bandwidth floor and against CuPy
and PyTorch on the same device and the same data.

    python3 benchmarks/bench_nn_blas.py [--quick] [--json FILE]

These ops are bandwidth-bound. The floor of each case is bytes moved (every operand read
once, every output written once) / the device-to-device copy bandwidth measured in the
same run (cupy copy of a 1 GiB array: 2 bytes moved per byte); "of floor" is floor time /
hipfer time (1.0: at the copy rate; the goal is >= 0.8). Times: median over rounds of the
mean of back-to-back calls between device events (warm: plans and kernels built first).
adam_step is compared with PyTorch's fused Adam (torch._fused_adam_ when present: the
kernel torch.optim.Adam(fused=True) launches, without the optimizer's Python) and with
torch.optim.Adam(fused=True).step(); sum/dot/column_sums/accumulate_rows with cupy.sum,
cupy.dot (cuBLAS) and torch.sum / torch.dot.
"""
from __future__ import annotations


import numpy as np

from _timing import run_cases  # noqa: E402 (benchmarks/ is on sys.path when run as a script)






def cases(cupy, torch, hf, nn, rng, quick: bool):
    """(name, shape, dtype, bytes moved, hipfer fn, {other: fn})."""
    big = 1 << (24 if quick else 26)
    rows = (4096, 1024) if quick else (65536, 1024)
    out = []

    def arr(shape, dt):
        return cupy.asarray(rng.standard_normal(shape).astype(dt))

    def th(a):
        return None if torch is None else torch.from_dlpack(a)

    for dt in (np.float32, np.float64):
        it = np.dtype(dt).itemsize
        n = big // (it // 4)
        x, y = arr((n,), dt), arr((n,), dt)
        X, Y, tx, ty = hf.asarray(x), hf.asarray(y), th(x), th(y)
        out.append(("sum", (n,), dt, n * it, lambda X=X: nn.sum(X),
                    {"cupy.sum": lambda x=x: x.sum(),
                     "torch.sum": None if torch is None else (lambda t=tx: t.sum())}))
        out.append(("dot", (n,), dt, 2 * n * it, lambda X=X, Y=Y: nn.dot(X, Y),
                    {"cupy.dot": lambda x=x, y=y: cupy.dot(x, y),
                     "torch.dot": None if torch is None else (lambda a=tx, b=ty: torch.dot(a, b))}))
        for shape in (rows, rows[::-1], (n // 64, 64), (64, n // 64)):
            m_ = arr(shape, dt)
            M, tm = hf.asarray(m_), th(m_)
            o = hf.asarray(cupy.zeros(shape[1], dt))
            out.append(("column_sums", shape, dt, m_.nbytes + shape[1] * it,
                        lambda M=M, o=o: nn.column_sums(M, o),
                        {"cupy.sum(axis=0)": lambda a=m_: a.sum(axis=0),
                         "torch.sum(0)": None if torch is None else (lambda t=tm: t.sum(0))}))
            o = hf.asarray(cupy.zeros(shape[0], dt))
            out.append(("accumulate_rows", shape, dt, m_.nbytes + 2 * shape[0] * it,
                        lambda M=M, o=o: nn.accumulate_rows(M, o),
                        {"cupy.sum(axis=1)": lambda a=m_: a.sum(axis=1),
                         "torch.sum(1)": None if torch is None else (lambda t=tm: t.sum(1))}))
        shape = rows
        m_, v = arr(shape, dt), arr(shape[1:], dt)
        M, V, tm, tv = hf.asarray(m_), hf.asarray(v), th(m_), th(v)
        out.append(("add_row_vector", shape, dt, 2 * m_.nbytes + v.nbytes,
                    lambda M=M, V=V: nn.add_row_vector(M, V, out=M),
                    {"cupy +=": lambda a=m_, b=v: a.__iadd__(b),
                     "torch +=": None if torch is None else (lambda a=tm, b=tv: a.add_(b))}))
        shape = (32, 256, 56, 56) if not quick else (8, 256, 56, 56)
        shape = (shape[0] // (it // 4),) + shape[1:]
        m_, v = arr(shape, dt), arr(shape[1:2], dt)
        M, V, tm, tv = hf.asarray(m_), hf.asarray(v), th(m_), th(v)
        vb = v[:, None, None]
        out.append(("add_channel_vector", shape, dt, 2 * m_.nbytes + v.nbytes,
                    lambda M=M, V=V: nn.add_channel_vector(M, V, out=M),
                    {"cupy +=": lambda a=m_, b=vb: a.__iadd__(b),
                     "torch +=": None if torch is None else (lambda a=tm, b=th(vb): a.add_(b))}))
        n_p = big // 2 // (it // 4)
        p, g, m1, m2 = (arr((n_p,), dt) for _ in range(4))
        m2 = abs(m2)
        P, G, M1, M2 = (hf.asarray(a) for a in (p, g, m1, m2))
        kw = dict(lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, bias_correction1=0.5,
                  bias_correction2=0.25)
        out.append(("adam_step", (n_p,), dt, 7 * n_p * it,
                    lambda P=P, G=G, M1=M1, M2=M2: nn.adam_step(P, G, M1, M2, **kw),
                    torch_adam(torch, *(th(a) for a in (p, g, m1, m2)))))
    return out


def torch_adam(torch, p, g, m, v) -> dict:
    if torch is None:
        return {}
    res = {}
    if hasattr(torch, "_fused_adam_"):
        step = torch.tensor(1.0, device=p.device)

        def fused():
            torch._fused_adam_([p], [g], [m], [v], [], [step], amsgrad=False, lr=1e-3,
                               beta1=0.9, beta2=0.999, weight_decay=0.0, eps=1e-8,
                               maximize=False)
        res["torch._fused_adam_"] = fused
    q = torch.nn.Parameter(p.clone())
    q.grad = g.clone()
    opt = torch.optim.Adam([q], lr=1e-3, fused=True)
    res["torch Adam(fused).step"] = opt.step
    return res


def main():
    run_cases(__doc__, cases)


if __name__ == "__main__":
    main()
