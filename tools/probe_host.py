"""Session probe: host time per call of small nn ops on the GPU backend, and cProfile's top
functions for each (where a host-bound call spends its time).

    python3 tools/probe_host.py      (from the repository root)
"""
import time

import cupy
import numpy as np

import hipfer as hf
import hipfer.nn as nn
from profile_overhead import print_profile  # tools/ is the script's directory

rng = np.random.default_rng(0)


def arr(shape):
    return hf.asarray(cupy.asarray(rng.standard_normal(shape).astype(np.float32)))


X, GM, BT = arr((16, 512, 7, 7)), arr((512,)), arr((512,))
RM, RV = arr((512,)), hf.asarray(cupy.ones(512, np.float32))
XC, WC, BC = arr((32, 256, 14, 14)), arr((256, 256, 1, 1)), arr((256,))
XS = arr((64, 1000))


def bn_train():
    _, mean, _, var = nn.batch_norm(X, GM, BT)
    nn.batch_norm_update_running(RM, RV, mean, var, momentum=0.1, count=16 * 49)


cases = {"batch_norm (+ running) 16x512x7x7":
         lambda: nn.batch_norm(X, GM, BT, running_mean=RM, running_var=RV, momentum=0.1),
         "batch_norm + update_running 16x512x7x7": bn_train,
         "batch_norm_eval 16x512x7x7": lambda: nn.batch_norm_eval(X, GM, BT, RM, RV),
         "softmax_rows 64x1000": lambda: nn.softmax_rows(XS),
         "conv2d 1x1 32x256x14x14": lambda: nn.conv2d(XC, WC, BC),
         "hf.exp 64x1000": lambda: hf.exp(XS)}
for name, fn in cases.items():
    for _ in range(50):
        fn()
    cupy.cuda.runtime.deviceSynchronize()
    t0 = time.perf_counter()
    for _ in range(500):
        fn()
    host = (time.perf_counter() - t0) / 500
    cupy.cuda.runtime.deviceSynchronize()
    print(f"== {name}: {host * 1e6:.1f} us host per call (queued, not synchronised)")
    print_profile(fn, n=300)
    cupy.cuda.runtime.deviceSynchronize()
