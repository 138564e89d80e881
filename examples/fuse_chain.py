"""hipfer.fuse on a damped oscillation: one pass instead of seven, the same bits.

    python3 examples/fuse_chain.py [--n N] [--device cpu|gpu]

Traces y = a * exp(-b * t) + c * sin(w * t) once, runs it fused and eagerly, checks the
results are bitwise equal, then fuses the same chain ending in a sum (its energy) and
compares it with the eager sum within float32's rounding. Prints both times.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402

import hipfer as hf  # noqa: E402


def damped(a, b, c, w, t):
    return a * hf.exp(-b * t) + c * hf.sin(w * t)


@hf.fuse
def energy(a, b, c, w, t):
    return hf.sum(damped(a, b, c, w, t) ** 2)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=1 << 22)
    p.add_argument("--device", default=None)
    args = p.parse_args(argv)
    dev = hf.as_device(args.device) if args.device else hf.get_default_device()
    rng = np.random.default_rng(7)
    a, c, w = (hf.asarray(rng.standard_normal(args.n).astype(np.float32), device=dev)
               for _ in range(3))
    b = hf.asarray(rng.random(args.n, dtype=np.float32), device=dev)  # decay rates >= 0
    t = hf.asarray(np.linspace(0, 10, args.n, dtype=np.float32), device=dev)
    fused = hf.fuse(damped)

    t0 = time.perf_counter()
    y = fused(a, b, c, w, t)
    first = time.perf_counter() - t0  # the trace, the program and one run
    t0 = time.perf_counter()
    y = fused(a, b, c, w, t)
    warm = time.perf_counter() - t0
    t0 = time.perf_counter()
    y_eager = damped(a, b, c, w, t)
    eager = time.perf_counter() - t0
    same = bool(hf.all(hf.equal(y, y_eager) | (hf.isnan(y) & hf.isnan(y_eager))))
    print(f"{args.n} elements on {dev}: fused {warm * 1e3:.1f} ms (first call "
          f"{first * 1e3:.1f} ms), eager {eager * 1e3:.1f} ms; bitwise equal: {same}")
    e_fused, e_eager = float(energy(a, b, c, w, t)), float(hf.sum(damped(a, b, c, w, t) ** 2))
    print(f"energy fused {e_fused:.6g}, eager {e_eager:.6g} "
          f"(rel. diff {abs(e_fused - e_eager) / abs(e_eager):.1e})")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
