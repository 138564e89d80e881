"""How the fused kernels' shape (kernels/fuse.py EW_UNROLL, EW_WAVES, RED_UNROLL,
RED_MAX_BLOCKS and the axes paths) moves their time on the GPU, against torch.compile in the
same process: the chains of benchmarks/bench_fuse.py on 64M float32 per operand, each
variant in a fresh hipfer.fuse with its own module cache. A section's variants are timed
in turn, round after round (Timer.compare), each reporting its median round: two runs of
one variant after another differed by more (clocks) than the variants did.

    python3 tools/probe_fuse_kernels.py [--n N] [--sections chain,sum,axes]
"""
import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1 << 26)
    ap.add_argument("--sections", default="chain,sum,axes")
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
    timer = Timer("gpu", cupy=cupy, rounds=9, warmup=2)
    floor = 6 * n * 4 / 4.25e12

    def el(a, b, c, w, t):
        return chain(a, b, c, w, t, hf.exp, hf.sin)
    want = np.asarray(hf.to_device(el(*xs), "cpu"))

    def variant(label, fn, data, check=None, **consts):
        """(label, call, note): call() runs the variant under its constants, with its own
        module cache (the backend's is keyed by the spec, not by the constants)."""
        saved = {k: getattr(F, k) for k in consts}
        own = {}
        f = hf.fuse(fn)

        def call():
            shared = B._modules
            B._modules = own
            for k, v in consts.items():
                setattr(F, k, v)
            try:
                return f(*data)
            finally:
                for k, v in saved.items():
                    setattr(F, k, v)
                B._modules = shared
        got = call()
        note = check(np.asarray(hf.to_device(got, "cpu"))) if check is not None else ""
        return label, call, note

    def section(variants):
        times = timer.compare({label: call for label, call, _ in variants})
        for label, _, note in variants:
            print(f"{label:48s} {times[label]:.4f} ms  {note}", flush=True)

    torch_fns = {}
    try:
        import torch
        ts = [torch.from_numpy(h).cuda() for h in host]
        ts2 = [t.reshape(n // 1024, 1024) for t in ts]

        def tc(g, data):  # compiled when a section asks for it
            def make():
                c = torch.compile(g)
                c(*data)
                return lambda: c(*data)
            return make

        def t_el(a, b, c, w, t):
            return chain(a, b, c, w, t, torch.exp, torch.sin)
        torch_fns = {"chain": tc(t_el, ts), "mem": tc(lambda a, b, c, w, t: a * b + c * w + t, ts),
                     "sum": tc(lambda *a: t_el(*a).sum(), ts),
                     1: tc(lambda *a: t_el(*a).sum(1), ts2), 0: tc(lambda *a: t_el(*a).sum(0), ts2)}
    except Exception as e:  # noqa: BLE001 - a probe: report and go on
        print("torch.compile:", type(e).__name__, e)

    def with_torch(variants, *keys):
        labels = {"chain": "chain", "mem": "a*b + c*w + t", "sum": "sum", 1: "sum(axis=1)",
                  0: "sum(axis=0)"}
        return variants + [(f"torch.compile {labels[k]}", torch_fns[k](), "") for k in keys
                           if k in torch_fns]

    def bitwise(g):
        return "bitwise = eager" if g.tobytes() == want.tobytes() else "DIFFERS from eager"
    print(f"elementwise floor at 4.25 TB/s: {floor * 1e3:.4f} ms")

    def mem(a, b, c, w, t):  # the same bytes, no transcendental: the memory path alone
        return a * b + c * w + t
    todo = args.sections.split(",")
    if "chain" in todo:
        section(with_torch(
            [variant(f"chain EW_UNROLL={u} EW_WAVES={w}", el, xs, bitwise, EW_UNROLL=u, EW_WAVES=w)
             for u, w in ((1, 32), (1, 1 << 20), (2, 1 << 20))]
            + [variant("a*b + c*w + t (no exp, sin)", mem, xs)], "chain", "mem"))

    def s_all(a, b, c, w, t):
        return hf.sum(el(a, b, c, w, t))
    ref = float(np.sum(want, dtype=np.float64))

    def close(g):
        return f"rel.err {abs(float(g) - ref) / abs(ref):.1e}"
    if "sum" in todo:
        section(with_torch(
            [variant(f"sum RED_UNROLL={u} blocks<={blocks} per={per}", s_all, xs, close,
                     RED_UNROLL=u, RED_MAX_BLOCKS=blocks, RED_PER_THREAD=per)
             for u, blocks, per in ((2, 8192, 2), (4, 8192, 2), (4, 4096, 4))], "sum"))
    w2 = want.reshape(n // 1024, 1024)
    for axis in (1, 0) if "axes" in todo else ():
        ref_ax = np.sum(w2.astype(np.float64), axis=axis)

        def s_ax(a, b, c, w, t, axis=axis):
            return hf.sum(el(a, b, c, w, t), axis=axis)

        def close_ax(g, ref_ax=ref_ax):
            return f"max rel.err {np.max(np.abs(g - ref_ax) / (np.abs(ref_ax) + 1)):.1e}"
        variants = [("group", {}), ("group AXES_UNROLL=8", {"AXES_UNROLL": 8}),
                    ("block", {"AXES_GROUP_M": 1 << 40})]
        if axis == 0:
            variants = [("thread", {}), ("thread AXES_UNROLL=8", {"AXES_UNROLL": 8})]
        section(with_torch([variant(f"sum(axis={axis}) of {n // 1024}x1024 {label}", s_ax, xs2,
                                    close_ax, **consts) for label, consts in variants], axis))


if __name__ == "__main__":
    main()
