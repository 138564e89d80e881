"""einsum on the GPU: hipfer against bare GEMM, against itself on conj(a), and against
cupy.einsum and torch.einsum on the same device and the same data.

    python3 benchmarks/bench_einsum.py [--quick] [--json FILE]

Each case is timed with device events around the call (warm: plans and kernels are
built in the warm-up), median of several repeats. Ratios: hipfer time / other time
(< 1: hipfer is faster); for GEMM-shaped cases also the achieved rate over the GEMM rate
measured in the same run (cuBLAS on a large square sgemm / cgemm). cupy.einsum gets
optimize=True (its default, False, contracts left to right); torch.einsum uses
opt_einsum's path when opt_einsum is installed (it is on the device image).
"""
from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from hipfer.bench.cases import lattice_network, mps_network  # noqa: E402
from _timing import timer  # noqa: E402 (benchmarks/ is on sys.path when run as a script)




def rand(cupy, shape, dtype, rng):
    a = rng.standard_normal(shape).astype(np.float64)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return cupy.asarray(a.astype(dtype))


def network_args(cupy, hf, arrays, labels, conj):
    """Interleaved einsum arguments for hipfer and for cupy/torch from a network of
    hipfer.bench.cases (numpy arrays, label lists, which operands are conjugated). An
    array used twice is uploaded once: hipfer reads a conjugated use through its flag."""
    uploaded: dict = {}
    args_hf, args_cp = [], []
    for a, legs, cj in zip(arrays, labels, conj):
        if id(a) not in uploaded:
            c = cupy.asarray(a)
            uploaded[id(a)] = (c, hf.asarray(c))
        c, t = uploaded[id(a)]
        args_hf += [hf.conj(t) if cj else t, legs]
        args_cp += [cupy.conj(c) if cj else c, legs]
    return args_hf + [[]], args_cp + [[]]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes (a smoke run)")
    ap.add_argument("--json", help="write the results here as JSON")
    ap.add_argument("--profile", help="write a cProfile report of hipfer's warm network "
                                      "calls (host time) to this file")
    ap.add_argument("--cutensor", metavar="PATH", help="load this libcutensor.so.2 first: "
                    "pairwise steps cuTENSOR takes run as one library call")
    opts = ap.parse_args(argv)

    import cupy
    import hipfer as hf
    if opts.cutensor:
        hf.load_cutensor(opts.cutensor)
    try:
        import torch
    except ImportError:
        torch = None
    time_ms = timer(cupy)
    rng = np.random.default_rng(0)
    q = opts.quick
    rows = []

    def add(name, t_hf, others, flops=None, peak=None, note=""):
        row = {"case": name, "hipfer_ms": t_hf, **{f"{k}_ms": v for k, v in others.items()}}
        for k, v in others.items():
            row[f"vs_{k}"] = t_hf / v if v else None
        if flops is not None:
            row["tflops"] = flops / t_hf / 1e9
            if peak:
                row["of_gemm_peak"] = row["tflops"] / peak
        row["note"] = note
        rows.append(row)

    def torch_of(a):
        return torch.from_dlpack(a) if torch is not None else None

    # ---- the GEMM rate of this card (cuBLAS, large square), the ceiling for ratios
    n = 2048 if q else 8192
    peaks = {}
    for dt in (np.float32, np.complex64):
        a, b = rand(cupy, (n, n), dt, rng), rand(cupy, (n, n), dt, rng)
        t = time_ms(lambda: cupy.matmul(a, b))
        peaks[dt] = (8 if np.dtype(dt).kind == "c" else 2) * n ** 3 / t / 1e9
    # ---- GEMM-shaped contractions against the bare GEMM
    m = k = nn = 2048 if q else 8192
    for dt in (np.float32, np.complex64):
        fl = (8 if np.dtype(dt).kind == "c" else 2) * m * k * nn
        a, b = rand(cupy, (m, k), dt, rng), rand(cupy, (k, nn), dt, rng)
        A, B = hf.asarray(a), hf.asarray(b)
        t_gemm = time_ms(lambda: cupy.matmul(a, b))
        for sub, x, y in (("ik,kj->ij", A, B), ("ki,kj->ij", hf.asarray(a.T.copy()), B),
                          ("ik,jk->ij", A, hf.asarray(b.T.copy()))):
            t = time_ms(lambda: hf.einsum(sub, x, y))
            add(f"{sub} {np.dtype(dt).name} {m}^3", t, {"gemm": t_gemm}, fl, peaks[dt])
        if np.dtype(dt).kind == "c":  # conj(a) against a: the flag folds into the GEMM op
            ah = hf.asarray(a.T.copy())  # conj(a).T read as op C: no extra pass
            t_plain = time_ms(lambda: hf.einsum("ki,kj->ij", ah, B))
            t_conj = time_ms(lambda: hf.einsum("ki,kj->ij", hf.conj(ah), B))
            add(f"conj: ki*,kj->ij {np.dtype(dt).name}", t_conj, {"plain": t_plain}, fl, peaks[dt],
                "conj(a) over a")
        t_mm = time_ms(lambda: hf.matmul(A, B))
        add(f"matmul {np.dtype(dt).name} {m}^3", t_mm, {"gemm": t_gemm}, fl, peaks[dt])

    # ---- real networks against cupy.einsum and torch.einsum
    def compare(name, args_hf, args_cp, flops=None, sub=None):
        if sub is not None:
            args_hf = [sub] + list(args_hf)
        t_hf = time_ms(lambda: hf.einsum(*args_hf))
        res = hf.einsum(*args_hf)
        others, notes = {}, []
        cargs = args_cp if sub is None else [sub] + list(args_cp)
        try:
            ref = cupy.einsum(*cargs, optimize=True)
            others["cupy"] = time_ms(lambda: cupy.einsum(*cargs, optimize=True))
            err = float(cupy.linalg.norm(res._data - ref) / max(float(cupy.linalg.norm(ref)), 1e-300))
            notes.append(f"rel.err vs cupy {err:.1e}")
        except Exception as e:  # report, keep going
            notes.append(f"cupy failed: {type(e).__name__}: {str(e)[:80]}")
        if torch is not None:
            targs = [torch_of(x) if isinstance(x, cupy.ndarray) else x for x in cargs]
            try:
                others["torch"] = time_ms(lambda: torch.einsum(*targs))
            except Exception as e:
                notes.append(f"torch failed: {type(e).__name__}: {str(e)[:80]}")
        add(name, t_hf, others, flops, None, "; ".join(notes))
        if opts.profile:
            import cProfile
            import io
            import pstats
            prof = cProfile.Profile()
            prof.runcall(lambda: [hf.einsum(*args_hf) for _ in range(20)])
            buf = io.StringIO()
            pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(25)
            with open(opts.profile, "a") as f:
                f.write(f"==== {name} (20 calls)\n{buf.getvalue()}\n")

    b, h, s, d = (2, 4, 256, 64) if q else (8, 16, 1024, 64)
    for dt in (np.float32,):
        qq, kk, vv = (rand(cupy, (b, h, s, d), dt, rng) for _ in range(3))
        compare(f"attention scores bhqd,bhkd->bhqk {b}x{h}x{s}x{d}",
                [hf.asarray(qq), hf.asarray(kk)], [qq, kk], 2 * b * h * s * s * d,
                sub="bhqd,bhkd->bhqk")
        p = rand(cupy, (b, h, s, s), dt, rng)
        compare(f"attention values bhqk,bhkd->bhqd {b}x{h}x{s}x{d}",
                [hf.asarray(p), hf.asarray(vv)], [p, vv], 2 * b * h * s * s * d,
                sub="bhqk,bhkd->bhqd")
    sites, bond = (8, 32) if q else (16, 256)  # 3 labels a site + 2: under cupy/torch's 52
    for dt in (np.complex64, np.float64):
        ah, ac = network_args(cupy, hf, *mps_network(rng, sites, bond, 2, dt))
        compare(f"MPS <psi|psi> {sites} sites, D={bond}, {np.dtype(dt).name}", ah, ac)
    rr, cc, bd = (3, 3, 4) if q else (4, 4, 12)
    ah, ac = network_args(cupy, hf, *lattice_network(rng, rr, cc, bd, np.float64))
    compare(f"lattice Z {rr}x{cc}, D={bd}, float64", ah, ac)

    # ---- print
    lib = f", cuTENSOR {opts.cutensor} loaded" if opts.cutensor else ""
    print(f"# einsum benchmarks on {cupy.cuda.runtime.getDeviceProperties(0)['name'].decode()}{lib}")
    print(f"# GEMM peak measured: sgemm {peaks[np.float32]:.1f} TFLOP/s, cgemm {peaks[np.complex64]:.1f} TFLOP/s")
    print("| case | hipfer ms | other ms | ratio | TFLOP/s | of GEMM peak | note |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        others = [(k[:-3], v) for k, v in r.items() if k.endswith("_ms") and k != "hipfer_ms"]
        other = ", ".join(f"{k} {v:.3f}" for k, v in others)
        ratio = ", ".join(f"{k} {r['vs_' + k]:.3f}" for k, _ in others)
        tf = f"{r['tflops']:.1f}" if "tflops" in r else ""
        pk = f"{r['of_gemm_peak']:.2f}" if "of_gemm_peak" in r else ""
        print(f"| {r['case']} | {r['hipfer_ms']:.3f} | {other} | {ratio} | {tf} | {pk} | {r['note']} |")
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump({"peaks_tflops": {np.dtype(k).name: v for k, v in peaks.items()},
                       "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
