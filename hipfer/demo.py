"""``hipfer demo``: real workloads on the default device, each checked against NumPy.

    python -m hipfer demo                 # default device (GPU if usable, else CPU)
    python -m hipfer demo --device cpu --size 256

Exit status 0 when every check passes, 1 otherwise.
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import hipfer as hf


def _host(t) -> np.ndarray:
    return np.asarray(t.to_device("cpu"))


def _rel_err(got, ref) -> float:
    ref = np.asarray(ref)
    den = np.linalg.norm(ref.ravel()) or 1.0
    return float(np.linalg.norm((np.asarray(got) - ref).ravel()) / den)


def softmax_rows(n, rng):
    """Row softmax of a batch of logits: max, subtract, exp, sum, divide."""
    x = rng.standard_normal((n, 4 * n)).astype(np.float32) * 4
    t = hf.asarray(x)
    m = hf.max(t, axis=1, keepdims=True)
    e = hf.exp(t - m)
    got = e / hf.sum(e, axis=1, keepdims=True)
    ref = np.exp(x - x.max(1, keepdims=True))
    ref /= ref.sum(1, keepdims=True)
    return _host(got), ref, 1e-5


def hermitian_gram(n, rng):
    """G = A^H A with the conjugate folded into the GEMM (conj is a flag, not a pass)."""
    a = (rng.standard_normal((2 * n, n)) + 1j * rng.standard_normal((2 * n, n))).astype(np.complex128)
    t = hf.asarray(a)
    got = hf.conj(t).mT @ t
    return _host(got), a.conj().T @ a, 1e-12


def power_iteration(n, rng):
    """Largest eigenvalue of a symmetric matrix (spectral gap 2x) by power iteration."""
    q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    lam_true = np.concatenate([np.linspace(1.0, 2.0, n - 1), [4.0]])
    s = (q * lam_true) @ q.T
    t = hf.asarray(s)
    v = hf.asarray(rng.standard_normal(n))
    lam = hf.asarray(0.0)
    for _ in range(100):
        w = t @ v
        lam = hf.sum(v * w) / hf.sum(v * v)
        v = w / hf.sqrt(hf.sum(w * w))
    return np.array([float(lam)]), np.array([np.linalg.eigvalsh(s)[-1]]), 1e-6


def monte_carlo_pi(n, rng):
    """pi from counter-based uniforms: the same numbers on every device, so the count is exact."""
    m = 64 * n * n
    g = hf.random.Generator(2024)
    xy = g.random((2, m))
    inside = hf.sum((xy[0] * xy[0] + xy[1] * xy[1]) < 1.0)
    from hipfer.prims import counter_rng
    u = counter_rng.uniform(2024, 0, 2 * m, np.float64).reshape(2, m)
    ref = np.sum(u[0] * u[0] + u[1] * u[1] < 1.0)
    return np.array([int(inside)]), np.array([ref]), 0.0


def top_scores(n, rng):
    """Top-8 scores per row (NaN-free), indices in rank order."""
    x = rng.standard_normal((n, 16 * n))
    vals, idx = hf.topk(hf.asarray(x), 8, axis=1)
    ref = np.argsort(-x, axis=1, kind="stable")[:, :8]
    return _host(idx), ref, 0.0


def histogram(n, rng):
    """Histogram by index_put with accumulate (repeated bins summed deterministically)."""
    bins = rng.integers(0, n, size=32 * n)
    w = rng.random(32 * n)
    got = hf.index_put(hf.zeros((n,)), (hf.asarray(bins),), hf.asarray(w), accumulate=True)
    return _host(got), np.bincount(bins, weights=w, minlength=n), 1e-12


WORKLOADS = [softmax_rows, hermitian_gram, power_iteration, monte_carlo_pi, top_scores, histogram]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="hipfer demo", description=__doc__.splitlines()[0])
    ap.add_argument("--device", default=None, help="cpu, gpu or gpu:N (default: the default device)")
    ap.add_argument("--size", type=int, default=128, help="problem size n (default 128)")
    args = ap.parse_args(argv)
    dev = hf.as_device(args.device) if args.device else hf.get_default_device()
    rng = np.random.default_rng(7)
    print(f"hipfer {hf.__version__} demo on {dev} (n={args.size})")
    failed = 0
    with hf.default_device(dev):
        for work in WORKLOADS:
            t0 = time.perf_counter()
            try:
                got, ref, rtol = work(args.size, rng)
                err = _rel_err(got, ref)
                ok = err <= rtol and got.shape == np.asarray(ref).shape
                note = f"rel.err {err:.1e} (<= {rtol:.0e})"
            except Exception as e:  # report and carry on: the demo is a smoke test
                ok, note = False, f"{type(e).__name__}: {e}"
            dt = time.perf_counter() - t0
            failed += not ok
            print(f"  {'PASS' if ok else 'FAIL'}  {work.__name__:<16} {dt * 1e3:8.1f} ms  {note}")
    print(f"{len(WORKLOADS) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
