"""Dask arrays with hipfer chunks: the workloads of docs/dask.md, each checked against
the same computation in NumPy.

    python examples/dask_workloads.py                 # local threads, default device
    python examples/dask_workloads.py --cluster 2     # two Dask workers (one per GPU)
    python examples/dask_workloads.py --n 4096 --chunk 1024

The workloads: a chunked reduction (mean and std over an axis, a full sum of squares), a
matmul chain (A @ B @ C then a reduction), a tall-skinny QR and SVD (dask.array.linalg's
tsqr), an einsum and a tensordot over chunked operands, and an xarray groupby-mean over
hipfer data. Every chunk is a hipfer Tensor (on the GPU when one is usable) and every
result too: ``run`` asserts it.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import dask
import dask.array as da

import hipfer as hf
import hipfer.dask  # noqa: F401  (registered anyway once both are imported; explicit here)


def _host(t) -> np.ndarray:
    assert isinstance(t, hf.Tensor), f"expected a hipfer Tensor, got {type(t).__name__}"
    return np.asarray(t, copy=True)


def _chunked(a: np.ndarray, chunks) -> da.Array:
    return da.from_array(hf.asarray(a), chunks=chunks)


def reduction(rng, n, chunk):
    a = rng.standard_normal((n, n // 4))
    x = _chunked(a, (chunk, chunk // 4))
    got = dask.compute(x.mean(axis=0), x.std(axis=1), (x ** 2).sum())
    want = (a.mean(axis=0), a.std(axis=1), (a ** 2).sum())
    return got, want


def matmul_chain(rng, n, chunk):
    a, b, c = (rng.standard_normal((n, n)) / np.sqrt(n) for _ in range(3))
    x, y, z = (_chunked(m, chunk) for m in (a, b, c))
    got = dask.compute(((x @ y) @ z).sum(axis=0))
    return got, ((a @ b) @ c).sum(axis=0)[None]


def tall_skinny(rng, n, chunk):
    a = rng.standard_normal((n * 4, 16))
    x = _chunked(a, (chunk, 16))
    q, r = da.linalg.tsqr(x)
    u, s, v = da.linalg.svd(x)
    q, r, s = dask.compute(q, r, s)
    # QR is unique up to signs: compare Q R with A, R's magnitude, and the singular values
    qr = _host(q) @ _host(r)
    return (hf.asarray(qr), hf.abs(r), s), (a, np.abs(np.linalg.qr(a)[1]),
                                            np.linalg.svd(a, compute_uv=False))


def contractions(rng, n, chunk):
    a = rng.standard_normal((n // 8, 8, 16))
    b = rng.standard_normal((16, 8, 12))
    x, y = _chunked(a, (chunk // 8, 8, 8)), _chunked(b, (8, 8, 12))
    got = dask.compute(da.einsum("ijk,kjl->il", x, y), da.tensordot(x, y, axes=([1, 2], [1, 0])))
    want = np.einsum("ijk,kjl->il", a, b)
    return got, (want, want)


def xarray_groupby(rng, n, chunk):
    import xarray as xr
    a = rng.standard_normal((n, 8))
    a[::7, 3] = np.nan
    group = np.arange(n) % 5
    d = xr.DataArray(hf.asarray(a), dims=("time", "x"), coords={"g": ("time", group)})
    got = d.groupby("g").mean()
    want = np.stack([np.nanmean(a[group == k], axis=0) for k in range(5)])
    return (got.data,), (want,)


WORKLOADS = {"reduction": reduction, "matmul chain": matmul_chain, "tall-skinny QR/SVD": tall_skinny,
             "einsum/tensordot": contractions, "xarray groupby": xarray_groupby}


def run(n: int = 512, chunk: int = 128, seed: int = 0, only=None, rtol: float = 1e-9) -> dict:
    """Run each workload (under the current Dask scheduler), check it against NumPy and
    that its results are hipfer Tensors; {name: seconds}."""
    rng = np.random.default_rng(seed)
    times = {}
    for name, fn in WORKLOADS.items():
        if only and name not in only:
            continue
        t0 = time.perf_counter()
        got, want = fn(rng, n, chunk)
        times[name] = time.perf_counter() - t0
        for g, w in zip(got, want):
            np.testing.assert_allclose(_host(g), w, rtol=rtol, atol=rtol * 10,
                                       err_msg=name)
    return times


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=2048)
    ap.add_argument("--chunk", type=int, default=512)
    ap.add_argument("--cluster", type=int, default=0, metavar="WORKERS",
                    help="run on a local cluster of this many workers (one per GPU)")
    args = ap.parse_args(argv)
    if args.cluster:
        from distributed import Client

        from hipfer.dask import gpu_cluster
        with gpu_cluster(args.cluster) as cluster, Client(cluster):
            times = run(args.n, args.chunk)
    else:
        times = run(args.n, args.chunk)
    for name, s in times.items():
        print(f"{name:<22} {s * 1e3:9.1f} ms  (matches NumPy; hipfer chunks)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
