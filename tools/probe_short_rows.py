"""Session probe: short rows (64-128 columns) of the norm forwards and of the last-axis
sum, with variants chosen by environment (one process per variant):
  TEAMMIN=n   norm forwards: at least n threads a row (each holds fewer values)
  GRIDCAP=n   sum's vec path: at most n blocks an SM (each block loops over more rows)
Prints ms per op and shape, and torch's."""
import os

import cupy
import numpy as np
import torch

from hipfer.nn._norm import kernels as K
from hipfer.kernels import reduction as kr

team_min = int(os.environ.get("TEAMMIN", "0"))
grid_cap = int(os.environ.get("GRIDCAP", "0"))
if team_min:
    orig_team = K.team_size
    K.team_size = lambda cols, per_thread, max_block=K.MAX_BLOCK: max(
        orig_team(cols, per_thread, max_block), min(team_min, max_block))
if grid_cap:
    orig_geom = kr.launch_geometry

    def capped(M, K_, path):
        block, n_split, chunk, grid, fin = orig_geom(M, K_, path)
        sms = cupy.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
        return block, n_split, chunk, min(grid, grid_cap * sms), fin
    kr.launch_geometry = capped
import hipfer as hf  # noqa: E402
import hipfer.nn as nn  # noqa: E402
from hipfer.bench.timing import Timer  # noqa: E402

tag = f"TEAMMIN={team_min} GRIDCAP={grid_cap}"
T = Timer("gpu", cupy=cupy, rounds=9, inner=5, warmup=3)
F = torch.nn.functional
rng = cupy.random.default_rng(0)
for dt, shape in [(np.float32, (262144, 64)), (np.float32, (131072, 128)), (np.float64, (262144, 64))]:
    x = rng.standard_normal(shape, dtype=dt)
    gm = rng.standard_normal(shape[1], dtype=dt)
    bt = rng.standard_normal(shape[1], dtype=dt)
    X, GM, BT = hf.asarray(x), hf.asarray(gm), hf.asarray(bt)
    tx, tg, tb = torch.from_dlpack(x), torch.from_dlpack(gm), torch.from_dlpack(bt)
    floor = 2 * x.nbytes / 4.12e9
    res = [("softmax", T(lambda: nn.softmax_rows(X))),
           ("logsumexp", T(lambda: nn.logsumexp_rows(X))),
           ("layer_norm", T(lambda: nn.layer_norm(X, GM, BT))),
           ("rms_norm", T(lambda: nn.rms_norm(X, GM))),
           ("torch softmax", T(lambda: torch.softmax(tx, -1))),
           ("torch rms_norm", T(lambda: F.rms_norm(tx, (shape[1],), tg)))]
    print(tag, np.dtype(dt).name, shape, f"floor2={floor:.4f}",
          " ".join(f"{n}={t:.4f}" for n, t in res), flush=True)
for shape in [(1 << 20, 64), (1 << 18, 64)]:
    x = rng.standard_normal(shape, dtype=np.float32)
    X, tx = hf.asarray(x), torch.from_dlpack(x)
    print(tag, "sum", shape, f"read-floor={x.nbytes / 4.12e9:.4f}",
          f"hipfer={T(lambda: hf.sum(X, axis=-1)):.4f}", f"torch={T(lambda: tx.sum(dim=-1)):.4f}",
          flush=True)
