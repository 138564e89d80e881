"""Session probe: the norm forwards (logsumexp_rows, softmax_rows, layer_norm, rms_norm) on
the GPU against the copy-bandwidth floor, with their results checked against float64
NumPy (on every k-th row) and for bitwise repeats across two runs.

    PYTHONPATH=$PWD python3 tools/probe_lse.py

(with hipfer._launch built -- python3 setup.py build_ext --inplace -- or the 64-column
rows measure the host's time per call). Prints one line per op and shape: ms, floor ms, fraction of the floor, the largest error
against NumPy relative to the tolerance, and whether two runs gave the same bits. Exits 1
if a check fails."""
import os
import sys

import cupy
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks"))
from _timing import copy_bandwidth, timer  # noqa: E402

import hipfer as hf  # noqa: E402
import hipfer.nn as nn  # noqa: E402
from hipfer.backends.cupy._engine import fast_launch_status  # noqa: E402

SHAPES = [(np.float32, (262144, 64)), (np.float32, (65536, 1000)), (np.float32, (16384, 4096)),
          (np.float32, (8192, 8192)), (np.float32, (2048, 32768)), (np.float64, (65536, 1000))]
CHECKED = 1 << 22  # values of each shape checked against NumPy


def refs(x, gamma, beta):
    """float64 NumPy: logsumexp, softmax, layer_norm (y, xhat, std), rms_norm (y, rms)."""
    m = x.max(axis=1, keepdims=True)
    e = np.exp(x - m)
    s = e.sum(axis=1, keepdims=True)
    d = x - x.mean(axis=1, keepdims=True)
    std = np.sqrt(np.mean(d * d, axis=1) + 1e-5)
    xhat = d / std[:, None]
    rms = np.sqrt(np.mean(x * x, axis=1) + 1e-6)
    return {"logsumexp_rows": [(m + np.log(s))[:, 0]], "softmax_rows": [e / s],
            "layer_norm": [xhat * gamma + beta, xhat, std],
            "rms_norm": [x / rms[:, None] * gamma, rms]}


def main() -> int:
    time_ms = timer(cupy)
    src = cupy.ones(1 << 26, np.float32)
    dst = cupy.empty_like(src)
    for _ in range(2000):  # about 0.1 s of copies: the clocks up before anything is timed
        cupy.copyto(dst, src)
    del src, dst
    bw = copy_bandwidth(cupy, time_ms, 1 << 28)
    name = cupy.cuda.runtime.getDeviceProperties(0)["name"]
    # without hipfer._launch a call's host time (tens of us) can exceed a small kernel's
    print(f"# {name.decode() if isinstance(name, bytes) else name}: copy bandwidth "
          f"{bw / 1e9:.2f} TB/s; fast launch {fast_launch_status()}", flush=True)
    rng = cupy.random.default_rng(0)
    failed = 0
    for dt, shape in SHAPES:
        rows, cols = shape
        x = rng.standard_normal(shape, dtype=dt)
        gamma, beta = rng.standard_normal(cols, dtype=dt), rng.standard_normal(cols, dtype=dt)
        X, GM, BT = hf.asarray(x), hf.asarray(gamma), hf.asarray(beta)
        ops = {"logsumexp_rows": (1, lambda: [nn.logsumexp_rows(X)]),
               "softmax_rows": (2, lambda: [nn.softmax_rows(X)]),
               "layer_norm": (3, lambda: list(nn.layer_norm(X, GM, BT, eps=1e-5))),
               "rms_norm": (2, lambda: list(nn.rms_norm(X, GM, eps=1e-6)))}
        k = max(1, rows * cols // CHECKED)  # every k-th row: all blocks and teams take part
        ref = refs(cupy.asnumpy(x[::k]).astype(np.float64), cupy.asnumpy(gamma).astype(np.float64),
                   cupy.asnumpy(beta).astype(np.float64))
        tol = 2e-5 if dt == np.float32 else 1e-12
        for op, (n_arrays, fn) in ops.items():
            got = [np.asarray(t.to_device("cpu")) for t in fn()]
            again = [np.asarray(t.to_device("cpu")) for t in fn()]
            same = all(a.tobytes() == b.tobytes() for a, b in zip(got, again))
            # error / (rtol |ref| + atol), as assert_allclose with atol = 10 rtol: <= 1 passes
            err = max(float(np.max(np.abs(g[::k] - r) / (tol * np.abs(r) + 10 * tol)))
                      for g, r in zip(got, ref[op]))
            ok = same and err <= 1
            failed += not ok
            t = time_ms(fn)
            floor = n_arrays * x.nbytes / bw
            print(f"{op:15s} {np.dtype(dt).name} {rows:6d} x {cols:5d}  {t:.4f} ms  floor "
                  f"{floor:.4f}  of floor {floor / t:.2f}  err/tol {err:.2g}  repeat "
                  f"{'same' if same else 'DIFFERS'}{'' if ok else '  FAIL'}", flush=True)
    print("# all checks passed" if not failed else f"# {failed} check(s) FAILED")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
