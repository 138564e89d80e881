"""Session probe: short-row and NCHW (0, 2, 3) sums. LANES=1 forces one lane per row of
the vec path for rows of up to 64 elements (A/B against the planned lanes)."""
import os

import cupy
import numpy as np
import torch

from hipfer.kernels import reduction as kr

if os.environ.get("LANES") == "1":
    orig = kr.vec_lanes
    kr.vec_lanes = lambda M, K: 1 if K <= 64 and M >= kr.VEC_WARP_MIN_M else orig(M, K)
import hipfer as hf  # noqa: E402
from hipfer.bench.timing import Timer  # noqa: E402

T = Timer("gpu", cupy=cupy, rounds=9, inner=5, warmup=3)
rng = cupy.random.default_rng(0)
for shape, axis in [((1 << 20, 64), -1), ((1 << 19, 128), -1), ((334, 64, 56, 56), (0, 2, 3))]:
    x = rng.standard_normal(shape, dtype=np.float32)
    X, tx = hf.asarray(x), torch.from_dlpack(x)
    dims = axis if isinstance(axis, tuple) else (axis,)
    print(os.environ.get("LANES", "planned"), shape, axis,
          f"hipfer={T(lambda: hf.sum(X, axis=axis)):.4f}",
          f"torch={T(lambda: tx.sum(dim=dims)):.4f}", f"copy-floor={x.nbytes / 4.2e9:.4f}",
          flush=True)
