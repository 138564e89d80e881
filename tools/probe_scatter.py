"""scatter_add_rows on the GPU: exactness, then time against torch and the sort alone.

    PYTHONPATH=$PWD python3 tools/probe_scatter.py

Checks (each prints OK or raises): the stable order of hipfer's radix sort
(kernels/radix.cuh) equals cupy.argsort and NumPy's stable argsort for random,
all-equal, sorted and reversed indices over several (m, n); scatter_add_rows in
float64 equals np.add.at (rows added in increasing i) bit for bit, and two runs are
bitwise identical; an out-of-range index raises IndexError and leaves out untouched.
Times (ms, device events, benchmarks/_timing.py): scatter_add_rows against
torch.index_add_ (atomics) and under torch.use_deterministic_algorithms (a sort), and
the sort alone against cupy.argsort of the same indices; last, every index naming one
row (a run of m sequential adds per element on the few threads of one row group:
latency-bound).
"""
from __future__ import annotations

import sys
from pathlib import Path

import cupy
import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from _timing import timer  # noqa: E402

import hipfer as hf  # noqa: E402
import hipfer.nn as nn  # noqa: E402
from hipfer.nn._movement import gpu as FM  # noqa: E402
from hipfer.backends.cupy._engine import error_flag, fast_launch_status  # noqa: E402
from hipfer.kernels import radix  # noqa: E402

SHAPES = ((65536, 256, 4096), (65536, 512, 65536))  # (m, row, n)
rng = np.random.default_rng(0)


def radix_sort(idx, n):
    """Sorts the int64 cupy array idx in [0, n) as the backend does: (workspace, address
    of the sorted keys, address of their positions)."""
    p = radix.plan(len(idx), n, runs=True)
    ws = cupy.empty(p.nbytes, np.uint8)
    steps, key, perm, _ = radix.launches(p, idx, n, error_flag().buf, ws.data.ptr)
    for expr, blocks, threads, args in steps:
        FM._kernel(expr)((blocks,), (threads,), args)
    return ws, key, perm


def view(ws, addr, m, dt):
    return cupy.ndarray((m,), dt, ws.data + (addr - ws.data.ptr))


def indices(pattern, m, n):
    if pattern == "random":
        return rng.integers(0, n, m)
    if pattern == "equal":
        return np.full(m, int(rng.integers(0, n)), np.int64)
    ramp = np.arange(m, dtype=np.int64) * n // m
    return ramp if pattern == "sorted" else ramp[::-1].copy()


def check_sort():
    for m, n in ((1, 1), (65, 2), (1000, 257), (65536, 256), (65536, 4096), (65536, 65536),
                 (100003, 70000), (300000, 1 << 20)):
        for pattern in ("random", "equal", "sorted", "reversed"):
            h = indices(pattern, m, n)
            idx = cupy.asarray(h)
            ws, key, perm = radix_sort(idx, n)
            key, perm = view(ws, key, m, np.uint64), view(ws, perm, m, np.uint32)
            want = np.argsort(h, kind="stable")
            got = cupy.asnumpy(perm).astype(np.int64)
            assert np.array_equal(got, want), f"radix order != numpy stable ({m}, {n}, {pattern})"
            assert np.array_equal(got, cupy.asnumpy(cupy.argsort(idx))), \
                f"radix order != cupy.argsort ({m}, {n}, {pattern})"
            assert np.array_equal(cupy.asnumpy(key), h[want].astype(np.uint64))
    print("sort: radix order == cupy.argsort == numpy stable argsort: OK")


def check_scatter():
    for m, row, n in SHAPES + ((5000, 3, 7), (4000, 17, 1), (777, 0, 5)):
        for pattern in ("random", "equal"):
            h_idx = indices(pattern, m, n)
            h_src = rng.standard_normal((m, row))
            h_out = rng.standard_normal((n, row))
            want = h_out.copy()
            np.add.at(want, h_idx, h_src)
            S, I = hf.asarray(cupy.asarray(h_src)), hf.asarray(cupy.asarray(h_idx))
            runs = []
            for _ in range(2):
                O = hf.asarray(cupy.asarray(h_out))
                nn.scatter_add_rows(S, I, out=O)
                runs.append(cupy.asnumpy(O._data))
            assert np.array_equal(runs[0].view(np.uint64), want.view(np.uint64)), \
                f"scatter_add_rows != np.add.at bitwise ({m}, {row}, {n}, {pattern})"
            assert np.array_equal(runs[1].view(np.uint64), runs[0].view(np.uint64))
    bad = cupy.asarray(np.array([0, 3, 9, 1], np.int64))
    O = hf.asarray(cupy.ones((5, 2)))
    try:
        nn.scatter_add_rows(hf.asarray(cupy.ones((4, 2))), hf.asarray(bad), out=O)
        raise AssertionError("no IndexError for index 9 of 5 rows")
    except IndexError:
        assert bool((O._data == 1).all()), "out was written before the IndexError"
    print("scatter_add_rows: float64 == np.add.at bitwise, runs identical, IndexError: OK")


def main():
    print(f"{cupy.cuda.runtime.getDeviceProperties(0)['name'].decode()}, "
          f"hipfer._launch {fast_launch_status()}")
    check_sort()
    check_scatter()
    time_ms = timer(cupy)
    print("\n| case | hipfer ms | torch index_add_ ms | torch deterministic ms | "
          "radix sort ms | cupy.argsort ms |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for m, row, n in SHAPES:
        h_idx = rng.integers(0, n, m)
        idx = cupy.asarray(h_idx)
        t_sort = time_ms(lambda: radix_sort(idx, n))
        t_argsort = time_ms(lambda: cupy.argsort(idx))
        for dt in (np.float32, np.float64):
            src = cupy.asarray(rng.standard_normal((m, row)).astype(dt))
            out = cupy.zeros((n, row), dt)
            S, I, O = hf.asarray(src), hf.asarray(idx), hf.asarray(out)
            ts, ti, to = torch.from_dlpack(src), torch.from_dlpack(idx), torch.from_dlpack(out)
            t_hf = time_ms(lambda: nn.scatter_add_rows(S, I, out=O))
            t_torch = time_ms(lambda: to.index_add_(0, ti, ts))
            torch.use_deterministic_algorithms(True)
            try:
                t_det = time_ms(lambda: to.index_add_(0, ti, ts))
            finally:
                torch.use_deterministic_algorithms(False)
            print(f"| ({m}, {row}) -> {n} rows, {np.dtype(dt).name} | {t_hf:.3f} | {t_torch:.3f} | "
                  f"{t_det:.3f} | {t_sort:.4f} | {t_argsort:.4f} |", flush=True)
    # one row takes every source (see the docstring)
    m, row, n = SHAPES[0]
    src, out = cupy.asarray(rng.standard_normal((m, row))), cupy.zeros((n, row))
    idx = cupy.full(m, 7, np.int64)
    S, I, O = hf.asarray(src), hf.asarray(idx), hf.asarray(out)
    ts, ti, to = torch.from_dlpack(src), torch.from_dlpack(idx), torch.from_dlpack(out)
    t_hf = time_ms(lambda: nn.scatter_add_rows(S, I, out=O), rounds=3, inner=2)
    t_torch = time_ms(lambda: to.index_add_(0, ti, ts), rounds=3, inner=2)
    print(f"| ({m}, {row}) -> row 7 of {n}, float64 | {t_hf:.3f} | {t_torch:.3f} | | | |")


if __name__ == "__main__":
    main()
