"""Session probe: the host time of one warm nn.batch_norm call (with running statistics,
16x512x7x7) taken apart stage by stage: each line times the call path from that stage down
(queued calls, not synchronised), so the differences are the stages' costs.

    PYTHONPATH=$PWD python3 tools/probe_fused_host.py
"""
import time

import cupy
import numpy as np
import torch

import hipfer as hf
import hipfer.nn as nn
from hipfer import _ops
from hipfer.prims import descriptors as d

rng = np.random.default_rng(0)


def arr(shape):
    return hf.asarray(cupy.asarray(rng.standard_normal(shape).astype(np.float32)))


X, GM, BT, RM, RV = arr((16, 512, 7, 7)), arr((512,)), arr((512,)), arr((512,)), arr((512,))
ins = [X, GM, BT, RM, RV]
datas = [t._data for t in ins]
desc = d.Fused.of("batch_norm_running")
be = _ops.backend_of(ins)
kw = dict(eps=1e-5, momentum=0.1)
p = be.plan(desc, tuple(a.dtype for a in datas), tuple(a.shape for a in datas),
            strides=tuple(a.strides for a in datas))
outs = _ops._alloc(be, p.outs)
tx, tw, tb = (torch.from_dlpack(t._data) for t in (X, GM, BT))
trm, trv = torch.zeros(512, device="cuda"), torch.ones(512, device="cuda")


def us(fn, n=2000):
    for _ in range(200):
        fn()
    cupy.cuda.runtime.deviceSynchronize()
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - t0) / n)
        cupy.cuda.runtime.deviceSynchronize()
    return best * 1e6


stages = [
    ("nn.batch_norm(..., running)", lambda: nn.batch_norm(X, GM, BT, running_mean=RM, running_var=RV,
                                                           momentum=0.1)),
    ("_ops.run(desc, tensors)", lambda: _ops.run(desc, ins, **kw)),
    ("_ops.run_arrays(be, desc, datas)", lambda: _ops.run_arrays(be, desc, datas, **kw)),
    ("be.plan + alloc + execute", lambda: be.execute(
        be.plan(desc, (np.float32,) * 5, tuple(a.shape for a in datas),
                strides=tuple(a.strides for a in datas)), datas, _ops._alloc(be, p.outs), **kw)),
    ("alloc + plan.run", lambda: p.run(datas, _ops._alloc(be, p.outs), **kw)),
    ("plan.run (outs kept)", lambda: p.run(datas, outs, **kw)),
    ("alloc 4 outputs", lambda: _ops._alloc(be, p.outs)),
    ("d.Fused.of", lambda: d.Fused.of("batch_norm_running")),
    ("F.batch_norm (torch)", lambda: torch.nn.functional.batch_norm(tx, trm, trv, tw, tb, True, 0.1,
                                                                    1e-5)),
    ("torch.exp", lambda: torch.exp(tx)),
    ("hf.exp", lambda: hf.exp(X)),
]
for name, fn in stages:
    print(f"{name:40s} {us(fn):7.2f} us")
