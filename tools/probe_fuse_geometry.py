"""How the fused full reduction's geometry (kernels/fuse.py RED_MAX_BLOCKS,
RED_PER_THREAD) moves its time on the GPU: the sum chain of benchmarks/bench_fuse.py on
64M float32 per operand, each geometry in a fresh hipfer.fuse, against torch.compile.

    python3 tools/probe_fuse_geometry.py [--n N]
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
    from hipfer.bench.timing import Timer
    from hipfer.kernels import fuse as F
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    from bench_fuse import chain
    rng = np.random.default_rng(0)
    host = [rng.standard_normal(args.n).astype(np.float32) for _ in range(5)]
    dev = hf.Device("gpu", 0)
    xs = [hf.asarray(h, device=dev) for h in host]
    timer = Timer("gpu", cupy=cupy, rounds=15, warmup=2)
    floor = 5 * args.n * 4 / 4.2e12
    print(f"read floor at 4.2 TB/s: {floor * 1e3:.3f} ms")
    for blocks, per in ((1024, 8), (2048, 8), (4096, 4), (8192, 2), (16384, 1), (528, 8),
                        (1056, 8), (2112, 8), (4224, 4)):
        F.RED_MAX_BLOCKS, F.RED_PER_THREAD = blocks, per

        def chain_sum(a, b, c, w, t):
            return hf.sum(chain(a, b, c, w, t, hf.exp, hf.sin))
        f = hf.fuse(chain_sum)
        ms = timer(lambda: f(*xs))
        print(f"max blocks {blocks:6d} per thread {per}: {ms:.4f} ms ({floor * 1e3 / ms:.2f} of floor)",
              flush=True)
    try:
        import torch
        ts = [torch.from_numpy(h).cuda() for h in host]
        g = torch.compile(lambda a, b, c, w, t: chain(a, b, c, w, t, torch.exp, torch.sin).sum())
        print(f"torch.compile: {timer(lambda: g(*ts)):.4f} ms")
    except Exception as e:  # noqa: BLE001 - a probe: report and go on
        print("torch.compile:", type(e).__name__, e)


if __name__ == "__main__":
    main()
