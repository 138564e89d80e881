"""hipfer.nn activation ops on the GPU: against the memory-bandwidth floor and against
PyTorch (and CuPy where it has the op) on the same device and the same data.

    python3 benchmarks/bench_nn_activation.py [--quick] [--json FILE]

These ops are bandwidth-bound. The floor of each case is bytes moved (every operand read
once, every output written once; dropout's bool mask counts one byte an element) / the
device-to-device copy bandwidth measured in the same run (cupy copy of a 1 GiB array: 2
bytes moved per byte); "of floor" is floor time / hipfer time (1.0: at the copy rate; the
goal is >= 0.8). Times: median over rounds of the mean of back-to-back calls between
device events (warm: plans and kernels built first). Comparators: torch.relu,
torch.nn.functional.silu, torch.nn.functional.dropout(training=True) (which also makes
its mask), and cupy.maximum for relu.
"""
from __future__ import annotations


import numpy as np

from _timing import run_cases  # noqa: E402 (benchmarks/ is on sys.path when run as a script)






def cases(cupy, torch, hf, nn, rng, quick: bool):
    """(name, n, dtype, bytes moved, hipfer fn, {other: fn})."""
    F = None if torch is None else torch.nn.functional
    out = []
    for dt in (np.float32, np.float64):
        it = np.dtype(dt).itemsize
        n = (1 << (24 if quick else 26)) // (it // 4)  # the same bytes for both dtypes
        x = cupy.asarray(rng.standard_normal(n).astype(dt))
        X = hf.asarray(x)
        tx = None if torch is None else torch.from_dlpack(x)
        rw = 2 * n * it
        out.append(("relu", n, dt, rw, lambda X=X: nn.relu(X),
                    {"torch.relu": None if F is None else (lambda t=tx: torch.relu(t)),
                     "cupy.maximum": lambda a=x: cupy.maximum(a, 0)}))
        out.append(("relu in place", n, dt, rw, lambda X=X: nn.relu(X, out=X),
                    {"torch.relu_": None if F is None else (lambda t=tx: torch.relu_(t))}))
        out.append(("silu", n, dt, rw, lambda X=X: nn.silu(X),
                    {"F.silu": None if F is None else (lambda t=tx: F.silu(t))}))
        state = {"offset": 0}

        def drop(X=X, n=n):  # a fresh stream each call, as training would use
            state["offset"] += n
            return nn.dropout(X, 0.1, seed=1234, offset=state["offset"])
        out.append(("dropout p=0.1", n, dt, rw + n, drop,
                    {"F.dropout": None if F is None else (lambda t=tx: F.dropout(t, 0.1, training=True))}))
        y = cupy.asarray(rng.random(n).astype(dt))
        Y = hf.asarray(y)
        ty = None if torch is None else torch.from_dlpack(y)
        out.append(("bce_with_logits", n, dt, 3 * n * it, lambda X=X, Y=Y: nn.bce_with_logits(X, Y),
                    {"F.bce_with_logits(none)": None if F is None else (
                        lambda a=tx, b=ty: F.binary_cross_entropy_with_logits(a, b, reduction="none"))}))
        out.append(("bce_with_logits mean", n, dt, 2 * n * it,
                    lambda X=X, Y=Y: nn.bce_with_logits(X, Y, reduction="mean"),
                    {"F.bce_with_logits(mean)": None if F is None else (
                        lambda a=tx, b=ty: F.binary_cross_entropy_with_logits(a, b))}))
    return out


def main():
    run_cases(__doc__, cases)


if __name__ == "__main__":
    main()
