"""Where the warm per-call host time of tiny GPU ops goes: hipfer against CuPy and torch
on 10-element float32 tensors (µs per call), then a cProfile of hipfer's calls.

    python3 tools/profile_overhead.py [--profile]
"""
import cProfile
import pstats
import sys
import time

import cupy
import numpy as np

import hipfer as hf


def per_call_us(fn, n=20000):
    for _ in range(200):
        fn()
    cupy.cuda.Device().synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    cupy.cuda.Device().synchronize()
    return (time.perf_counter() - t0) / n * 1e6


def main():
    rng = np.random.default_rng(0)
    xc, yc = (cupy.asarray(rng.standard_normal(10).astype(np.float32)) for _ in range(2))
    x, y = hf.asarray(xc), hf.asarray(yc)
    cases = {
        "x + y": (lambda: x + y, lambda: xc + yc),
        "x * 2.0": (lambda: x * 2.0, lambda: xc * 2.0),
        "exp(x)": (lambda: hf.exp(x), lambda: cupy.exp(xc)),
        "sum(x)": (lambda: hf.sum(x), lambda: cupy.sum(xc)),
        "x @ y": (lambda: hf.matmul(x, y), lambda: cupy.matmul(xc, yc)),
        "empty(10)": (lambda: hf.empty((10,), dtype=hf.float32), lambda: cupy.empty((10,), np.float32)),
        "raw launch (cupy.ElementwiseKernel copy)": (None, lambda: cupy.copyto(yc, xc)),
    }
    for name, (h, c) in cases.items():
        th = per_call_us(h) if h else float("nan")
        tc = per_call_us(c)
        print(f"{name:42s} hipfer {th:7.2f} us   cupy {tc:7.2f} us   ratio {th / tc:5.2f}")
    # the floor: what a launch and an allocation cost by themselves
    k = cupy.RawKernel(r'''extern "C" __global__ void k3(const float* a, const float* b, float* c,
        long long n, int f) { long long i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) c[i] = a[i] + b[i]; }''', "k3")
    zc = cupy.empty_like(xc)
    n64, f32 = np.int64(10), np.int32(0)
    fn = k.kernel if hasattr(k, "kernel") else None
    parts = {
        "RawKernel(grid, block, (a, b, c, np.int64, np.int32))": lambda: k((1,), (64,), (xc, yc, zc, n64, f32)),
        "RawKernel with python ints": lambda: k((1,), (64,), (xc, yc, zc, 10, 0)),
        "cupy.ndarray((10,), float32)": lambda: cupy.ndarray((10,), np.float32),
        "cupy.empty((10,), float32)": lambda: cupy.empty((10,), np.float32),
        "runtime.getDevice()": lambda: cupy.cuda.runtime.getDevice(),
        "a.flags.c_contiguous": lambda: xc.flags.c_contiguous,
        "a.data.ptr": lambda: xc.data.ptr,
        "hf.Tensor(a)": lambda: hf.Tensor(xc) if hasattr(hf, "Tensor") else None,
    }
    if fn is not None:
        parts["Function (RawKernel.kernel) call"] = lambda: fn((1,), (64,), (xc, yc, zc, n64, f32))
    # the driver's own launch, arguments packed once (what any Python-level launch pays)
    import ctypes
    vals = [ctypes.c_uint64(xc.data.ptr), ctypes.c_uint64(yc.data.ptr), ctypes.c_uint64(zc.data.ptr),
            ctypes.c_int64(10), ctypes.c_int32(0)]
    params = (ctypes.c_void_p * 5)(*[ctypes.addressof(v) for v in vals])
    ptr, pp, st = k.kernel.ptr, ctypes.addressof(params), cupy.cuda.get_current_stream().ptr
    launch = cupy.cuda.driver.launchKernel
    parts["driver.launchKernel alone (arguments packed once)"] = lambda: launch(ptr, 1, 1, 1, 64, 1, 1, 0, st, pp, 0)
    for name, f in parts.items():
        print(f"{name:56s} {per_call_us(f):7.2f} us")
    if "--profile" in sys.argv:
        for name, (h, _) in cases.items():
            if h is None:
                continue
            print(f"\n===== {name}")
            pr = cProfile.Profile()
            pr.enable()
            for _ in range(5000):
                h()
            pr.disable()
            pstats.Stats(pr).sort_stats("tottime").print_stats(14)


if __name__ == "__main__":
    main()
