"""How the fused kernels' shape (kernels/fuse.py EW_UNROLL, EW_WAVES, RED_UNROLL,
RED_TREE and the axes paths) moves their time on the GPU, against torch.compile in the
same process: the chains of benchmarks/bench_fuse.py on 64M float32 per operand, each
variant in a fresh hipfer.fuse with the module cache cleared.

    python3 tools/probe_fuse_kernels.py [--n N]
"""
import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1 << 26)
    args = ap.parse_args()
    import cupy
    import hipfer as hf
    from hipfer.backends.cupy import fuse as B
    from hipfer.bench.timing import Timer
    from hipfer.kernels import fuse as F
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    from bench_fuse import chain
    rng = np.random.default_rng(0)
    n = args.n
    host = [rng.standard_normal(n).astype(np.float32) for _ in range(5)]
    dev = hf.Device("gpu", 0)
    xs = [hf.asarray(h, device=dev) for h in host]
    xs2 = [x.reshape(n // 1024, 1024) for x in xs]
    timer = Timer("gpu", cupy=cupy, rounds=15, warmup=2)
    floor = 6 * n * 4 / 4.25e12

    def el(a, b, c, w, t):
        return chain(a, b, c, w, t, hf.exp, hf.sin)
    want = np.asarray(hf.to_device(el(*xs), "cpu"))

    def variant(label, fn, data, check=None, **consts):
        saved = {k: getattr(F, k) for k in consts}
        for k, v in consts.items():
            setattr(F, k, v)
        B._modules.clear()
        try:
            f = hf.fuse(fn)
            got = f(*data)
            ms = timer(lambda: f(*data))
            note = ""
            if check is not None:
                note = check(np.asarray(hf.to_device(got, "cpu")))
            print(f"{label:48s} {ms:.4f} ms  {note}", flush=True)
        finally:
            for k, v in saved.items():
                setattr(F, k, v)

    def bitwise(g):
        return "bitwise = eager" if g.tobytes() == want.tobytes() else "DIFFERS from eager"
    print(f"elementwise floor at 4.25 TB/s: {floor * 1e3:.4f} ms")
    for u, w in ((1, 32), (1, 64), (2, 32), (2, 64), (2, 1 << 20), (4, 64), (4, 1 << 20)):
        variant(f"chain EW_UNROLL={u} EW_WAVES={w}", el, xs, bitwise, EW_UNROLL=u, EW_WAVES=w)

    def s_all(a, b, c, w, t):
        return hf.sum(el(a, b, c, w, t))
    ref = float(np.sum(want, dtype=np.float64))

    def close(g):
        return f"rel.err {abs(float(g) - ref) / abs(ref):.1e}"
    for u, tree, blocks, per in ((2, "shared", 8192, 2), (2, "shuffle", 8192, 2), (4, "shuffle", 8192, 2),
                                 (4, "shuffle", 4096, 4), (4, "shared", 8192, 2), (2, "shuffle", 16384, 1)):
        variant(f"sum RED_UNROLL={u} {tree} blocks<={blocks} per={per}", s_all, xs, close,
                RED_UNROLL=u, RED_TREE=tree, RED_MAX_BLOCKS=blocks, RED_PER_THREAD=per)
    w2 = want.reshape(n // 1024, 1024)
    for axis in (1, 0):
        ref_ax = np.sum(w2.astype(np.float64), axis=axis)

        def s_ax(a, b, c, w, t, axis=axis):
            return hf.sum(el(a, b, c, w, t), axis=axis)

        def close_ax(g, ref_ax=ref_ax):
            return f"max rel.err {np.max(np.abs(g - ref_ax) / (np.abs(ref_ax) + 1)):.1e}"
        variants = [("group", {}), ("block", {"AXES_GROUP_M": 1 << 40}),
                    ("block shared tree", {"AXES_GROUP_M": 1 << 40, "RED_TREE": "shared"})]
        if axis == 0:
            variants = [("thread", {})]
        for label, consts in variants:
            variant(f"sum(axis={axis}) of {n // 1024}x1024 {label}", s_ax, xs2, close_ax, **consts)
    try:
        import torch
        ts = [torch.from_numpy(h).cuda() for h in host]
        ts2 = [t.reshape(n // 1024, 1024) for t in ts]
        for label, g, data in (
                ("torch.compile chain", lambda a, b, c, w, t: chain(a, b, c, w, t, torch.exp, torch.sin), ts),
                ("torch.compile sum", lambda a, b, c, w, t: chain(a, b, c, w, t, torch.exp, torch.sin).sum(), ts),
                ("torch.compile sum(axis=1)",
                 lambda a, b, c, w, t: chain(a, b, c, w, t, torch.exp, torch.sin).sum(1), ts2),
                ("torch.compile sum(axis=0)",
                 lambda a, b, c, w, t: chain(a, b, c, w, t, torch.exp, torch.sin).sum(0), ts2)):
            c = torch.compile(g)
            print(f"{label:48s} {timer(lambda: c(*data)):.4f} ms", flush=True)
    except Exception as e:  # noqa: BLE001 - a probe: report and go on
        print("torch.compile:", type(e).__name__, e)


if __name__ == "__main__":
    main()
