"""The outer product and a fill of the same 256 MiB, for Nsight Compute:

    ncu --kernel-name regex:"ew_binary_nd|ew_generate" --launch-skip 3 --launch-count 2 \\
        --section SpeedOfLight --section WarpStateStats --section Occupancy python3 tools/ncu_outer.py
"""
import cupy
import numpy as np

import hipfer as hf

n = 8192
u = hf.asarray(cupy.random.standard_normal(n, dtype=np.float32))
v = hf.asarray(cupy.random.standard_normal(n, dtype=np.float32))
for _ in range(4):
    u[:, None] * v[None, :]
    hf.full((n, n), 1.0, dtype=hf.float32)
cupy.cuda.Device().synchronize()
