"""A tiny convolutional net on hipfer.nn, trained on synthetic data.

Task: which quadrant of a noisy 12x12 image holds a bright 3x3 square? Net: conv 3x3
(1 -> 8) + ReLU, 2x2 max pool, conv 3x3 (8 -> 8) + ReLU, 3x3 average pool (keeps a 2x2
grid: the quadrants), linear 32 -> 4, softmax cross-entropy. The backward pass is
written out by hand from the hipfer.nn backward ops (conv2d_backward, max_unpool,
avg_pool_backward); SGD with momentum. Runs in seconds on the CPU:

    python examples/train_cnn.py [--steps 100] [--device cpu|gpu]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import hipfer as hf
import hipfer.nn as nn

SIZE, CLASSES = 12, 4


def make_data(rng, n):
    """n images (n, 1, SIZE, SIZE) float32 and their quadrant labels (n,)."""
    x = 0.5 * rng.standard_normal((n, 1, SIZE, SIZE))
    label = rng.integers(0, CLASSES, n)
    half = SIZE // 2
    for i, q in enumerate(label):
        y0 = (q // 2) * half + rng.integers(0, half - 2)
        x0 = (q % 2) * half + rng.integers(0, half - 2)
        x[i, 0, y0:y0 + 3, x0:x0 + 3] += 1.0
    return x.astype(np.float32), label


def init_params(rng):
    def he(shape, fan_in):
        return hf.asarray((rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32))

    def zeros(n):
        return hf.asarray(np.zeros(n, np.float32))
    return {"w1": he((8, 1, 3, 3), 9), "b1": zeros(8), "w2": he((8, 8, 3, 3), 72), "b2": zeros(8),
            "wf": he((32, CLASSES), 32), "bf": zeros(CLASSES)}


def forward(p, x):
    """(logits, what the backward pass needs)."""
    z1 = nn.conv2d(x, p["w1"], p["b1"], padding=1)
    r1 = hf.maximum(z1, 0.0)
    p1, arg1 = nn.max_pool(r1, 2)
    z2 = nn.conv2d(p1, p["w2"], p["b2"], padding=1)
    r2 = hf.maximum(z2, 0.0)
    a2 = nn.avg_pool(r2, 3)
    feat = hf.reshape(a2, (x.shape[0], -1))
    logits = feat @ p["wf"] + p["bf"]
    return logits, (x, z1, r1, p1, arg1, z2, r2, feat)


def loss_and_grads(p, x, onehot):
    logits, (x, z1, r1, p1, arg1, z2, r2, feat) = forward(p, x)
    e = hf.exp(logits - hf.max(logits, axis=1, keepdims=True))
    probs = e / hf.sum(e, axis=1, keepdims=True)
    n = x.shape[0]
    loss = -float(hf.sum(onehot * hf.log(probs))) / n
    dlogits = (probs - onehot) / n
    g = {"wf": hf.matrix_transpose(feat) @ dlogits, "bf": hf.sum(dlogits, axis=0)}
    dfeat = hf.reshape(dlogits @ hf.matrix_transpose(p["wf"]), (n, 8, 2, 2))
    dz2 = hf.where(z2 > 0, nn.avg_pool_backward(dfeat, r2.shape, 3), 0.0)
    dp1, g["w2"], g["b2"] = nn.conv2d_backward(dz2, p1, p["w2"], padding=1)
    dz1 = hf.where(z1 > 0, nn.max_unpool(dp1, arg1, r1.shape, 2), 0.0)
    _, g["w1"], g["b1"] = nn.conv2d_backward(dz1, x, p["w1"], padding=1)
    return loss, g


def accuracy(p, x, label):
    logits, _ = forward(p, x)
    return float(np.mean(np.argmax(np.asarray(logits.to_device("cpu")), axis=1) == label))


def train(steps=100, batch=64, lr=0.05, momentum=0.9, seed=0, log=None):
    """Train on 512 examples; returns (losses per step, accuracy on 256 new examples)."""
    rng = np.random.default_rng(seed)
    xs, labels = make_data(rng, 512)
    p = init_params(rng)
    vel = {k: hf.zeros_like(v) for k, v in p.items()}
    eye = np.eye(CLASSES, dtype=np.float32)
    losses = []
    for step in range(steps):
        idx = rng.choice(len(xs), batch, replace=False)
        loss, g = loss_and_grads(p, hf.asarray(xs[idx]), hf.asarray(eye[labels[idx]]))
        for k in p:
            vel[k] = momentum * vel[k] - lr * g[k]
            p[k] = p[k] + vel[k]
        losses.append(loss)
        if log and (step % 25 == 0 or step == steps - 1):
            log(f"step {step:4d}  loss {loss:.4f}")
    xt, lt = make_data(rng, 256)
    return losses, accuracy(p, hf.asarray(xt), lt)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--device", default=None, help="cpu or gpu (default: hipfer's default)")
    args = ap.parse_args()
    t0 = time.perf_counter()
    if args.device:
        with hf.default_device(args.device):
            losses, acc = train(args.steps, log=print)
    else:
        losses, acc = train(args.steps, log=print)
    print(f"loss {losses[0]:.3f} -> {losses[-1]:.3f}, test accuracy {acc:.3f}, "
          f"{time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
