"""Dask with hipfer chunks on 1, 2, 4, ... GPUs (one worker per GPU): scaling against one
GPU and against CuPy-backed Dask on the same cluster.

    python3 benchmarks/bench_dask.py [--workers 1 2 4] [--n N] [--chunk C] [--json FILE]
    python3 benchmarks/bench_dask.py --device cpu --workers 1 2 --n 2048   (a CPU check)

Workloads (issue 22's goals: >= 1.8x on 2 GPUs and >= 3.4x on 4 for the matmul chain and
the reduction, and within 1.2x of CuPy-backed Dask on the same GPUs):
* matmul chain: ((A @ B) @ C).sum(axis=0) on n x n float32 matrices in chunk x chunk blocks;
* reduction: x.mean(axis=0) and (x ** 2).sum() over a (4n) x n float32 array.
Each is timed end to end (graph submission to the result on the client), median of
--repeats runs after one warm-up run (kernels compiled, plans cached on every worker).
The inputs are made on the workers (dask.array.random under array.backend: hipfer, or
the same blocks converted to CuPy), so no host data crosses the cluster.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time


def _inputs(lib: str, n: int, chunk: int, seed: int):
    import dask
    import dask.array as da

    import hipfer.dask as hd
    with dask.config.set({"array.backend": "hipfer"}):
        rng = da.random.default_rng(seed)
        mats = [rng.random((n, n), chunks=chunk, dtype="float32") for _ in range(3)]
        tall = rng.random((4 * n, n), chunks=chunk, dtype="float32")
    if lib == "cupy":
        import cupy
        conv = (lambda b: cupy.from_dlpack(b))
        mats = [m.map_blocks(conv, meta=cupy.empty((0, 0), "float32")) for m in mats]
        tall = tall.map_blocks(conv, meta=cupy.empty((0, 0), "float32"))
    elif lib == "numpy":
        mats, tall = [hd.to_numpy(m) for m in mats], hd.to_numpy(tall)
    return mats, tall


def _workloads(mats, tall):
    a, b, c = mats
    return {"matmul chain": lambda: ((a @ b) @ c).sum(axis=0),
            "reduction": lambda: (tall.mean(axis=0), (tall ** 2).sum())}


def _time(client, make, repeats: int) -> float:
    import dask
    client.compute(make(), sync=True)  # warm-up: kernels, plans, inputs persisted
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        client.gather(client.compute(dask.persist(make())[0]))
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def measure(workers: int, libs, n: int, chunk: int, repeats: int, device: str) -> dict:
    import dask
    from distributed import Client

    from hipfer.dask import gpu_cluster
    out = {}
    env = {"HIPFER_DEVICE": "cpu"} if device == "cpu" else {}
    with gpu_cluster(workers, env=env, silence_logs=40) as cluster, Client(cluster) as client:
        for lib in libs:
            mats, tall = _inputs(lib, n, chunk, seed=0)
            mats, tall = dask.persist(mats, tall)
            client.wait_for_workers(workers)
            for name, make in _workloads(mats, tall).items():
                out[(lib, name)] = _time(client, make, repeats)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, nargs="+", default=None,
                    help="cluster sizes (default: 1, 2, 4 up to the GPUs present)")
    ap.add_argument("--n", type=int, default=16384)
    ap.add_argument("--chunk", type=int, default=4096)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--device", choices=("gpu", "cpu"), default="gpu")
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args(argv)
    from hipfer.prims.registry import gpu_status
    st = gpu_status()
    if args.device == "gpu" and not st.usable:
        print(f"no usable GPU ({st.reason}); use --device cpu", file=sys.stderr)
        return 2
    sizes = args.workers or [k for k in (1, 2, 4, 8) if k <= max(st.count, 1)]
    libs = ("hipfer", "cupy") if args.device == "gpu" else ("hipfer", "numpy")
    results = {k: measure(k, libs, args.n, args.chunk, args.repeats, args.device) for k in sizes}
    base = results[sizes[0]]
    print(f"| workers | workload | hipfer s | scaling vs {sizes[0]} | {libs[1]} s | "
          f"hipfer / {libs[1]} |")
    print("| --- | --- | --- | --- | --- | --- |")
    rows = []
    for k in sizes:
        for name in ("matmul chain", "reduction"):
            h, p = results[k][("hipfer", name)], results[k][(libs[1], name)]
            scale = base[("hipfer", name)] / h
            rows.append({"workers": k, "workload": name, "hipfer_s": h, "peer": libs[1],
                         "peer_s": p, "scaling": scale, "ratio": h / p})
            print(f"| {k} | {name} | {h:.3f} | {scale:.2f}x | {p:.3f} | {h / p:.2f} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"n": args.n, "chunk": args.chunk, "device": args.device, "rows": rows},
                      f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
