"""Session probe: the activation kernels' grid (grid-stride loops over a grid of at most
32 waves, as now, against one thread per 16-byte vector), float32 and float64 relu,
relu in place, silu, dropout and bce_with_logits, against torch; one process.

    PYTHONPATH=$PWD python3 tools/probe_act_grid.py
"""
import sys

import cupy
import numpy as np
import torch

sys.path.insert(0, "benchmarks")
from _timing import timer  # noqa: E402

import hipfer as hf  # noqa: E402
import hipfer.nn as nn  # noqa: E402
from hipfer.nn._activation import gpu as FA  # noqa: E402

t = timer(cupy)
rng = cupy.random.default_rng(0)
orig = FA.grid_for
for dt, n in ((np.float32, 1 << 26), (np.float64, 1 << 25)):
    x = rng.standard_normal(n, dtype=dt)
    y = rng.random(n, dtype=dt)
    X, Y = hf.asarray(x), hf.asarray(y)
    cases = {"relu": lambda: nn.relu(X), "silu": lambda: nn.silu(X),
             "dropout": lambda: nn.dropout(X, 0.1, seed=1),
             "bce": lambda: nn.bce_with_logits(X, Y)}
    tx, ty = torch.from_dlpack(x), torch.from_dlpack(y)
    F = torch.nn.functional
    print(f"{np.dtype(dt).name}: torch relu {t(lambda: torch.relu(tx)):.4f} "
          f"silu {t(lambda: F.silu(tx)):.4f} dropout {t(lambda: F.dropout(tx, 0.1)):.4f}")
    for waves in (32, 64, 10 ** 9):
        FA.grid_for = lambda n, per=1, block=256, max_waves=32, w=waves: orig(n, per, block, w)
        # plans keep their _Launch (grid fixed at plan time): new shapes per variant
        m = n - waves % 7 * 4 - 4
        Xw, Yw = hf.asarray(x[:m]), hf.asarray(y[:m])
        res = {"relu": t(lambda: nn.relu(Xw)), "silu": t(lambda: nn.silu(Xw)),
               "dropout": t(lambda: nn.dropout(Xw, 0.1, seed=1)),
               "bce": t(lambda: nn.bce_with_logits(Xw, Yw))}
        print(f"  waves {waves}: " + ", ".join(f"{k} {v:.4f}" for k, v in res.items()))
    FA.grid_for = orig
