"""The write-only limit next to the copy limit: a write-only op (a fill, an outer
product) is measured against the rate a plain fill reaches, as well as against the copy
bandwidth that hipfer bench uses as its limit.

    python3 tools/write_limit.py
"""
import cupy
import numpy as np

import hipfer as hf
from hipfer.bench.timing import Timer, copy_bandwidth


def main():
    t = Timer("gpu", cupy=cupy, rounds=9)
    n = 8192
    nbytes = n * n * 4
    x = cupy.empty((n, n), np.float32)
    copy = copy_bandwidth(cupy, t)  # bytes per ms, read + written, as hipfer bench measures it
    print(f"copy bandwidth (1 GiB, read + written): {copy / 1e6:.1f} GB/s")
    rows = {
        "memset (cudaMemsetAsync)": lambda: cupy.cuda.runtime.memsetAsync(x.data.ptr, 0, nbytes, 0),
        "cupy fill(1.0)": lambda: x.fill(1.0),
        "hipfer full((8192, 8192), 1.0)": lambda: hf.full((n, n), 1.0, dtype=hf.float32),
        "torch.full": None,
    }
    try:
        import torch
        rows["torch.full"] = lambda: torch.full((n, n), 1.0, device="cuda")
    except ImportError:
        rows.pop("torch.full")
    u = hf.asarray(cupy.random.standard_normal(n, dtype=np.float32))
    v = hf.asarray(cupy.random.standard_normal(n, dtype=np.float32))
    rows["hipfer outer u[:, None] * v[None, :]"] = lambda: u[:, None] * v[None, :]
    for name, fn in rows.items():
        ms = t(fn)
        gbs = nbytes / ms / 1e6
        print(f"{name:40s} {ms:.4f} ms  {gbs:7.1f} GB/s written  {nbytes / ms / copy:.3f} of copy")


if __name__ == "__main__":
    main()
