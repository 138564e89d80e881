"""Session probe: norm forwards with the instantiation variants (VARIANT env: base |
bound512), one process per variant. Prints ms per op and shape, and torch's for base."""
import os
import sys

import cupy
import numpy as np
import torch

from hipfer.nn._norm import kernels as K

variant = os.environ.get("VARIANT", "base")
orig_expr = K.expr


def patched_expr(kernel, dt, block=K.MAX_BLOCK):
    """VARIANT=bound512: every forward launch that has a 512-bound instantiation takes it
    (no minimum of resident blocks: the kernels as they were before FWD_BOUNDS)."""
    wide = kernel in K.FORWARD and 512 in K.FWD_BOUNDS[kernel]
    return orig_expr(kernel, dt, 512 if wide else block)


if variant == "bound512":
    K.expr = patched_expr
if variant == "half":  # every forward kernel holds half the values a thread (short rows)
    for k in K.FORWARD:
        K.VALUES[k] //= 2
import hipfer as hf  # noqa: E402
import hipfer.nn as nn  # noqa: E402
from hipfer.bench.timing import Timer  # noqa: E402

T = Timer("gpu", cupy=cupy, rounds=7, inner=5, warmup=3)
F = torch.nn.functional
rng = cupy.random.default_rng(0)
for dt, shape in [(np.float32, (262144, 64)), (np.float32, (65536, 1000)),
                  (np.float32, (16384, 4096)), (np.float32, (2048, 32768)),
                  (np.float64, (65536, 1000)), (np.float64, (16384, 4096))]:
    x = rng.standard_normal(shape, dtype=dt)
    gm = rng.standard_normal(shape[1], dtype=dt)
    bt = rng.standard_normal(shape[1], dtype=dt)
    X, GM, BT = hf.asarray(x), hf.asarray(gm), hf.asarray(bt)
    tx, tg, tb = torch.from_dlpack(x), torch.from_dlpack(gm), torch.from_dlpack(bt)
    res = [("softmax", T(lambda: nn.softmax_rows(X))),
           ("logsumexp", T(lambda: nn.logsumexp_rows(X))),
           ("layer_norm", T(lambda: nn.layer_norm(X, GM, BT))),
           ("rms_norm", T(lambda: nn.rms_norm(X, GM)))]
    if variant == "base":
        res += [("torch softmax", T(lambda: torch.softmax(tx, -1))),
                ("torch layer_norm", T(lambda: F.layer_norm(tx, (shape[1],), tg, tb))),
                ("torch rms_norm", T(lambda: F.rms_norm(tx, (shape[1],), tg)))]
    print(variant, np.dtype(dt).name, shape, " ".join(f"{n}={t:.4f}" for n, t in res), flush=True)
