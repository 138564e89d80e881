"""Session probe: batch_norm (training, with running statistics), batch_norm_backward and
batch_norm_eval_backward on 2-d inputs (the short-row tiles of fused_batchnorm.cuh) and on
4-d ones, against PyTorch on the same GPU and data: time (benchmarks/_timing.py's timer),
the largest error against torch relative to the largest magnitude of each output, and
whether two runs give the same bits. One table.

    PYTHONPATH=$PWD python3 tools/probe_bn2d.py
"""
import sys
from pathlib import Path

import cupy
import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from _timing import timer  # noqa: E402

import hipfer as hf  # noqa: E402
import hipfer.nn as nn  # noqa: E402

CASES = [((8192, 1024), np.float32), ((65536, 64), np.float32), ((4096, 4096), np.float32),
         ((1024, 256), np.float32), ((32, 64, 56, 56), np.float32), ((64, 256, 14, 14), np.float32),
         ((16, 512, 7, 7), np.float32), ((128, 32, 112, 112), np.float32),
         ((8192, 1024), np.float64), ((65536, 64), np.float64), ((32, 64, 56, 56), np.float64)]
EPS, MOMENTUM = 1e-5, 0.1

time_ms = timer(cupy)
rng = cupy.random.default_rng(0)


def arr(a):
    """A CuPy view of a hipfer or torch array (DLPack)."""
    return cupy.from_dlpack(a)


def rel_err(got, want) -> float:
    got, want = arr(got).astype(np.float64), arr(want).astype(np.float64)
    return float(cupy.abs(got - want).max() / max(float(cupy.abs(want).max()), 1e-30))


def same_bits(a, b) -> bool:
    return all(bool(cupy.array_equal(arr(x), arr(y))) for x, y in zip(a, b))


def t(*arrays):
    return tuple(torch.from_dlpack(a) for a in arrays)


rows = []
for shape, dt in CASES:
    c = shape[1]
    x = rng.standard_normal(shape, dtype=dt) * 2 + 0.5
    g = rng.standard_normal(shape, dtype=dt)
    gamma = rng.uniform(0.5, 1.5, c).astype(dt)
    beta = rng.standard_normal(c, dtype=dt)
    rm0, rv0 = rng.standard_normal(c, dtype=dt), rng.uniform(0.5, 2, c).astype(dt)
    X, G, GM, BT = hf.asarray(x), hf.asarray(g), hf.asarray(gamma), hf.asarray(beta)
    tx = torch.from_dlpack(x).clone().requires_grad_(True)
    tw = torch.from_dlpack(gamma).clone().requires_grad_(True)
    tb = torch.from_dlpack(beta).clone().requires_grad_(True)
    tg = torch.from_dlpack(g)

    # batch_norm with running statistics (updated in place: fresh copies for the checks)
    def bn_fresh():
        rm, rv = hf.asarray(rm0.copy()), hf.asarray(rv0.copy())
        y, mean, invstd, _ = nn.batch_norm(X, GM, BT, eps=EPS, running_mean=rm, running_var=rv,
                                           momentum=MOMENTUM)
        return y, mean, invstd, rm, rv
    first, second = bn_fresh(), bn_fresh()
    trm, trv = t(rm0.copy(), rv0.copy())
    ty = F.batch_norm(tx, trm, trv, tw, tb, True, MOMENTUM, EPS)
    err = max(rel_err(first[0], ty.detach()), rel_err(first[3], trm), rel_err(first[4], trv))
    RM, RV = hf.asarray(rm0.copy()), hf.asarray(rv0.copy())
    trm2, trv2 = t(rm0.copy(), rv0.copy())
    rows.append(("batch_norm (+ running)", shape, dt,
                 time_ms(lambda: nn.batch_norm(X, GM, BT, eps=EPS, running_mean=RM, running_var=RV,
                                               momentum=MOMENTUM)),
                 time_ms(lambda: F.batch_norm(tx, trm2, trv2, tw, tb, True, MOMENTUM, EPS)),
                 err, same_bits(first, second)))

    # batch_norm_backward at hipfer's own statistics; torch through autograd
    _, MEAN, INVSTD, _, _ = first
    out = nn.batch_norm_backward(G, X, MEAN, INVSTD, GM)
    again = nn.batch_norm_backward(G, X, MEAN, INVSTD, GM)
    want = torch.autograd.grad(ty, (tx, tw, tb), tg, retain_graph=True)
    rows.append(("batch_norm_backward", shape, dt,
                 time_ms(lambda: nn.batch_norm_backward(G, X, MEAN, INVSTD, GM)),
                 time_ms(lambda: torch.autograd.grad(ty, (tx, tw, tb), tg, retain_graph=True)),
                 max(rel_err(a, b) for a, b in zip(out, want)), same_bits(out, again)))

    # batch_norm_eval_backward (running statistics)
    RM, RV = hf.asarray(rm0), hf.asarray(rv0)
    trm, trv = t(rm0, rv0)
    ty = F.batch_norm(tx, trm, trv, tw, tb, False, MOMENTUM, EPS)
    out = nn.batch_norm_eval_backward(G, X, GM, RM, RV, eps=EPS)
    again = nn.batch_norm_eval_backward(G, X, GM, RM, RV, eps=EPS)
    want = torch.autograd.grad(ty, (tx, tw, tb), tg, retain_graph=True)
    rows.append(("batch_norm_eval_backward", shape, dt,
                 time_ms(lambda: nn.batch_norm_eval_backward(G, X, GM, RM, RV, eps=EPS)),
                 time_ms(lambda: torch.autograd.grad(ty, (tx, tw, tb), tg, retain_graph=True)),
                 max(rel_err(a, b) for a, b in zip(out, want)), same_bits(out, again)))
    del x, g, tx, tg, ty, X, G
    print(f"# {shape} {np.dtype(dt).name} done", file=sys.stderr, flush=True)

name = cupy.cuda.runtime.getDeviceProperties(0)["name"]
print(f"# {name.decode() if isinstance(name, bytes) else name}; errors: max |hipfer - torch| / "
      "max |torch| over the op's outputs")
print("| op | shape | dtype | hipfer ms | torch ms | hipfer / torch | max rel err | same bits |")
print("|---|---|---|---|---|---|---|---|")
for op, shape, dt, th, tt, err, same in rows:
    print(f"| {op} | {'x'.join(map(str, shape))} | {np.dtype(dt).name} | {th:.4f} | {tt:.4f} | "
          f"{th / tt:.2f} | {err:.1e} | {'yes' if same else 'NO'} |")
