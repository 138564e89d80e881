"""Session probe: where batch_norm's time goes on the GPU. For each shape, the host time per
call (queued, not synchronised), the timed call (benchmarks/_timing.py's timer), and every
kernel launched per call with its mean device time (torch.profiler / CUPTI sees CuPy's
kernels too), for nn.batch_norm with running statistics and for torch's F.batch_norm.

    PYTHONPATH=$PWD python3 tools/probe_bn_parts.py
"""
import sys
import time
from collections import defaultdict
from pathlib import Path

import cupy
import numpy as np
import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from _timing import timer  # noqa: E402

import os  # noqa: E402

from hipfer.nn._batchnorm import kernels as K  # noqa: E402

if os.environ.get("TASKS"):  # variant: tasks a split aims for (hipfer/nn/_batchnorm/kernels.py)
    K.TASKS = int(os.environ["TASKS"])
import hipfer as hf  # noqa: E402
import hipfer.nn as nn  # noqa: E402

SHAPES = [(8192, 1024), (65536, 64), (16, 512, 7, 7), (64, 256, 14, 14), (32, 64, 56, 56)]
if len(sys.argv) > 1:
    SHAPES = [tuple(int(v) for v in a.split("x")) for a in sys.argv[1:]]
time_ms = timer(cupy)
rng = cupy.random.default_rng(0)
REPS = 50


def host_us(fn, n=300):
    for _ in range(20):
        fn()
    cupy.cuda.runtime.deviceSynchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    t = (time.perf_counter() - t0) / n
    cupy.cuda.runtime.deviceSynchronize()
    return t * 1e6


def kernels(fn):
    """(name, launches per call, mean µs) of every kernel fn launches."""
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(REPS):
            fn()
        torch.cuda.synchronize()
    acc = defaultdict(lambda: [0, 0.0])
    for e in prof.events():
        if e.device_type.name == "CUDA":
            a = acc[e.name[:70]]
            a[0] += 1
            a[1] += e.device_time
    return [(k, n / REPS, t / n) for k, (n, t) in acc.items()]


for shape in SHAPES:
    dt = np.float32
    c = shape[1]
    x = rng.standard_normal(shape, dtype=dt) * 2 + 0.5
    gamma = rng.uniform(0.5, 1.5, c).astype(dt)
    beta = rng.standard_normal(c, dtype=dt)
    X, GM, BT = hf.asarray(x), hf.asarray(gamma), hf.asarray(beta)
    RM, RV = hf.asarray(cupy.zeros(c, dt)), hf.asarray(cupy.ones(c, dt))
    tx, tw, tb = (torch.from_dlpack(a) for a in (x, gamma, beta))
    trm, trv = torch.zeros(c, device="cuda"), torch.ones(c, device="cuda")
    ours = lambda: nn.batch_norm(X, GM, BT, running_mean=RM, running_var=RV, momentum=0.1)  # noqa
    theirs = lambda: F.batch_norm(tx, trm, trv, tw, tb, True, 0.1, 1e-5)  # noqa
    print(f"== {'x'.join(map(str, shape))} float32 (TASKS {K.TASKS})")
    G = hf.asarray(rng.standard_normal(shape, dtype=dt))
    _, MEAN, ISTD, _ = ours()
    back = lambda: nn.batch_norm_backward(G, X, MEAN, ISTD, GM)  # noqa
    for who, fn in (("hipfer", ours), ("torch", theirs), ("hipfer backward", back)):
        print(f"  {who}: timed {time_ms(fn):.4f} ms, host {host_us(fn):.1f} us/call")
        for name, per, us in kernels(fn):
            print(f"    {per:4.1f} x {us:8.2f} us  {name}")
    sys.stdout.flush()
