"""hipfer.nn movement ops on the GPU: against the memory-bandwidth floor and against CuPy
and PyTorch on the same device and the same data.

    python3 benchmarks/bench_nn_movement.py [--quick] [--json FILE]

The floor of each case is bytes moved (every operand read once, every output written
once; for top_k_rows the row read once) / the device-to-device copy bandwidth measured
in the same run (cupy copy of a 1 GiB array: 2 bytes moved per byte); "of floor" is
floor time / hipfer time (1.0: at the copy rate; the goal is >= 0.8). Times: median over
rounds of the mean of back-to-back calls between device events (warm: plans and kernels
built first). Comparators: permute_0213 with cupy/torch permute + contiguous copy;
gather_rows with cupy.take and torch.index_select; scatter_add_rows with
cupyx.scatter_add and torch index_add_ / scatter_add_ (atomics: their sums are not
deterministic, hipfer's are), and torch's index_add_ under use_deterministic_algorithms; top_k_rows with torch.topk; copy_2d with a strided slice
assignment. gather_rows and scatter_add_rows include their error-flag read (a sync).
"""
from __future__ import annotations


import numpy as np

from _timing import run_cases  # noqa: E402 (benchmarks/ is on sys.path when run as a script)






def deterministic(torch, fn):
    """fn() under torch.use_deterministic_algorithms (index_add_ then sorts, as hipfer)."""
    torch.use_deterministic_algorithms(True)
    try:
        return fn()
    finally:
        torch.use_deterministic_algorithms(False)


def cases(cupy, torch, hf, nn, rng, quick: bool):
    """(name, shape, dtype, bytes moved, hipfer fn, {other: fn or None})."""
    import cupyx
    out = []
    s = 4 if quick else 1  # shrink factor

    def arr(shape, dt):
        return cupy.asarray(rng.standard_normal(shape).astype(dt))

    def th(a):
        return None if torch is None else torch.from_dlpack(a)

    def tfn(f):
        return None if torch is None else f

    for dt in (np.float32, np.float64):
        it = np.dtype(dt).itemsize
        # permute_0213: head split (long D), head merge, and D = 1 (a batched transpose)
        for shape in ((8 // s, 1024, 16, 64), (8 // s, 16, 1024, 64), (64 // s, 512, 512, 1),
                      (16 // s, 512, 64, 3)):
            x = arr(shape, dt)
            X, tx = hf.asarray(x), th(x)
            out.append(("permute_0213", shape, dt, 2 * x.nbytes, lambda X=X: nn.permute_0213(X),
                        {"cupy": lambda x=x: cupy.ascontiguousarray(x.transpose(0, 2, 1, 3)),
                         "torch": tfn(lambda t=tx: t.permute(0, 2, 1, 3).contiguous())}))
        # gather_rows
        n, d, m = 65536 // s, 1024, 65536 // s
        x, idx = arr((n, d), dt), cupy.asarray(rng.integers(0, n, m))
        X, I, tx, ti = hf.asarray(x), hf.asarray(idx), th(x), th(idx)
        out.append(("gather_rows", (n, d, m), dt, 2 * m * d * it + 8 * m,
                    lambda X=X, I=I: nn.gather_rows(X, I),
                    {"cupy.take": lambda x=x, i=idx: cupy.take(x, i, axis=0),
                     "torch.index_select": tfn(lambda t=tx, i=ti: t.index_select(0, i))}))
        # scatter_add_rows: many source rows into few (repeats), and a spread-out case
        for n, d, m in ((4096, 256, 65536 // s), (65536 // s, 512, 65536 // s)):
            src, idx, o = arr((m, d), dt), cupy.asarray(rng.integers(0, n, m)), cupy.zeros((n, d), dt)
            S, I, O = hf.asarray(src), hf.asarray(idx), hf.asarray(o)
            ts, ti, to = th(src), th(idx), th(o)
            tie = None if torch is None else ti[:, None].expand(-1, d).contiguous()
            out.append(("scatter_add_rows", (m, d, n), dt, src.nbytes + 8 * m + 2 * o.nbytes,
                        lambda S=S, I=I, O=O: nn.scatter_add_rows(S, I, out=O),
                        {"cupyx.scatter_add": lambda o=o, i=idx, v=src: cupyx.scatter_add(o, i, v),
                         "torch.index_add_": tfn(lambda o=to, i=ti, v=ts: o.index_add_(0, i, v)),
                         "torch.index_add_ deterministic": tfn(
                             lambda o=to, i=ti, v=ts: deterministic(torch, lambda: o.index_add_(0, i, v))),
                         "torch.scatter_add_": tfn(lambda o=to, i=tie, v=ts: o.scatter_add_(0, i, v))}))
        # top_k_rows: vocabulary sampling, short rows, one long row, large k
        for (rows, cols), k in (((64, 32000), 50), ((4096 // s, 1024), 8), ((16, 150000), 1),
                                ((1024 // s, 4096), 1024)):
            x = arr((rows, cols), dt)
            X, tx = hf.asarray(x), th(x)
            out.append((f"top_k_rows k={k}", (rows, cols), dt, x.nbytes + rows * k * (it + 8),
                        lambda X=X, k=k: nn.top_k_rows(X, k),
                        {"torch.topk": tfn(lambda t=tx, k=k: torch.topk(t, k))}))
        # rope
        shape = (8 // s, 32, 1024, 128)
        x, c, sn = arr(shape, dt), arr(shape[-2:-1] + (64,), dt), arr(shape[-2:-1] + (64,), dt)
        X, C, S = hf.asarray(x), hf.asarray(c), hf.asarray(sn)
        out.append(("rope", shape, dt, 2 * x.nbytes + c.nbytes + sn.nbytes,
                    lambda X=X, C=C, S=S: nn.rope(X, C, S), {}))
        # copy_2d: columns 256:768 of a (rows, 1024) matrix into a (rows, 512) one
        rows = 65536 // s
        a, b = arr((rows, 1024), dt), cupy.empty((rows, 512), dt)
        A, B, ta, tb = hf.asarray(a), hf.asarray(b), th(a), th(b)
        out.append(("copy_2d", (rows, 512), dt, 2 * b.nbytes,
                    lambda A=A, B=B: nn.copy_2d(A, B, rows=rows, cols=512, src_offset=256,
                                                src_stride=1024),
                    {"cupy slice =": lambda a=a, b=b: b.__setitem__(Ellipsis, a[:, 256:768]),
                     "torch copy_": tfn(lambda a=ta, b=tb: b.copy_(a[:, 256:768]))}))
    return out


def main():
    run_cases(__doc__, cases)


if __name__ == "__main__":
    main()
