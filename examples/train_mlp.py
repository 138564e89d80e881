"""Train a two-layer MLP with hipfer.nn's fused ops: a student network learns a random
teacher network's outputs (synthetic regression, squared loss), by hand-written
backpropagation and Adam.

    python3 examples/train_mlp.py [--steps N] [--every N] [--device cpu|gpu]

Runs on the default device (the GPU when there is one, else the CPU: a few seconds).
Forward:  z = X W1 + b1;  h = relu(z);  y = h W2 + b2;  loss = |y - Y|^2 / (2 n)
Backward: dy = (y - Y) / n;  dW2 = h^T dy;  db2 = column sums of dy;  dh = dy W2^T;
          dz = dh where z > 0;  dW1 = X^T dz;  db1 = column sums of dz
"""
from __future__ import annotations

import argparse
import math
import time

import numpy as np

import hipfer as hf
import hipfer.nn as nn


def teacher_data(rng, n, d_in, d_out, width=32):
    """Inputs X ~ N(0, 1) and targets Y = tanh(X A) B of a random teacher network."""
    x = rng.standard_normal((n, d_in))
    a = rng.standard_normal((d_in, width)) / math.sqrt(d_in)
    b = rng.standard_normal((width, d_out)) / math.sqrt(width)
    return x, np.tanh(x @ a) @ b


def train(steps=300, n=1024, d_in=16, hidden=64, d_out=4, lr=1e-2, seed=0, device=None,
          dtype=np.float32, every=50, log=print):
    """Train; returns [(step, loss)] at step 1 and every `every` steps (a host sync each)."""
    rng = np.random.default_rng(seed)
    put = lambda a: hf.asarray(np.asarray(a, dtype), device=device)  # noqa: E731
    x, y = teacher_data(rng, n, d_in, d_out)
    X, Y = put(x), put(y)
    params = [put(rng.standard_normal((d_in, hidden)) * math.sqrt(2 / d_in)),  # He init
              put(np.zeros(hidden)),
              put(rng.standard_normal((hidden, d_out)) / math.sqrt(hidden)),
              put(np.zeros(d_out))]
    moments = [(hf.zeros_like(p), hf.zeros_like(p)) for p in params]
    beta1, beta2 = 0.9, 0.999
    losses = []
    for t in range(1, steps + 1):
        W1, b1, W2, b2 = params
        z = nn.add_row_vector(nn.gemm_ex(X, W1), b1)
        h = nn.relu(z)
        out = nn.gemm_ex(h, W2)
        nn.add_row_vector(out, b2, out=out)
        r = out - Y
        if t == 1 or t % every == 0:
            loss = float(nn.dot(r, r)) / (2 * n)
            losses.append((t, loss))
            log(f"step {t:5d}  loss {loss:.6f}")
        dy = r * (1.0 / n)
        dh = nn.gemm_ex(dy, W2, trans_b=True)
        dz = nn.elementwise_backward("relu", dh, x=z, out=dh)
        grads = [nn.gemm_ex(X, dz, trans_a=True), nn.column_sums(dz),
                 nn.gemm_ex(h, dy, trans_a=True), nn.column_sums(dy)]
        for p, g, (m, v) in zip(params, grads, moments):
            nn.adam_step(p, g, m, v, lr=lr, beta1=beta1, beta2=beta2, eps=1e-8,
                         bias_correction1=1 - beta1 ** t, bias_correction2=1 - beta2 ** t)
    return losses


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--every", type=int, default=50)
    ap.add_argument("--device", default=None, help="cpu or gpu (default: hipfer's default device)")
    args = ap.parse_args()
    print(f"device: {args.device or hf.get_default_device()}")
    start = time.perf_counter()
    losses = train(steps=args.steps, every=args.every, device=args.device)
    print(f"{args.steps} steps in {time.perf_counter() - start:.2f} s")
    first, last = losses[0][1], losses[-1][1]
    assert last < first, f"the loss did not fall ({first} -> {last})"
    print(f"loss fell {first / last:.1f}x")


if __name__ == "__main__":
    main()
