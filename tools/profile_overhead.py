"""Where the warm per-call host time of tiny GPU ops goes: hipfer against CuPy on
10-element float32 tensors (µs per call), then the parts of a call one by one (launch
paths, allocation, lookups), then optionally a cProfile of hipfer's calls.

    python3 tools/profile_overhead.py [--profile]
"""
import cProfile
import ctypes
import pstats
import sys
import time

import cupy
import numpy as np

import hipfer as hf
from hipfer.backends.cupy import _engine as eng
from hipfer.kernels import elementwise as ek
from hipfer.prims.optable import BinaryOp


def per_call_us(fn, n=20000):
    for _ in range(200):
        fn()
    cupy.cuda.Device().synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    cupy.cuda.Device().synchronize()
    return (time.perf_counter() - t0) / n * 1e6


def print_profile(fn, n=5000, top=14):
    """cProfile of n calls of fn: its top functions by own time."""
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(n):
        fn()
    pr.disable()
    pstats.Stats(pr).sort_stats("tottime").print_stats(top)


def show(name, fn):
    print(f"{name:60s} {per_call_us(fn):7.2f} us", flush=True)


def main():
    print("fast launch:", eng.fast_launch_status() if hasattr(eng, "fast_launch_status") else "n/a")
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
    }
    for name, (h, c) in cases.items():
        th, tc = per_call_us(h), per_call_us(c)
        print(f"{name:42s} hipfer {th:7.2f} us   cupy {tc:7.2f} us   ratio {th / tc:5.2f}", flush=True)

    # ---- the layers of hipfer's x + y, outermost first
    from hipfer import _ops
    site = next(c.cell_contents for c in hf.add.__closure__ if isinstance(c.cell_contents, _ops.Site))
    be = _ops.backend_of((x, y))
    key = (site, xc.dtype, yc.dtype, xc.shape, yc.shape, xc.strides, yc.strides, False, False)
    hit = be.plans.sites.get(key)
    plan = hit.plan
    out = cupy.empty_like(xc)
    show("layer: x + y", lambda: x + y)
    show("layer: hf.add(x, y)", lambda: hf.add(x, y))
    show("layer: Site.run2(x, y) (no Tensor wrap)", lambda: site.run2(x, y))
    show("layer: _ops.backend_of((x, y))", lambda: _ops.backend_of((x, y)))
    show("layer: _ops.backend_of_data(a)", lambda: _ops.backend_of_data(xc))
    show("layer: the site key and plans.sites.get(key)",
         lambda: be.plans.sites.get((site, xc.dtype, yc.dtype, xc.shape, yc.shape, xc.strides, yc.strides,
                                     x._conj, y._conj)))
    show("layer: the site's runner([a, b])", lambda: hit([xc, yc]))
    show("layer: be.empty((10,), float32)", lambda: be.empty((10,), xc.dtype))
    show("layer: be.execute(plan, [a, b], out)", lambda: be.execute(plan, [xc, yc], out))
    show("layer: plan.run([a, b], out)", lambda: plan.run([xc, yc], out))

    # ---- launch paths, one hipfer kernel (the vector add), the same arguments
    vec = eng.get_kernels(ek.FILE, ek.binary(BinaryOp.ADD.row, np.dtype(np.float32)))[0]
    raw = getattr(vec, "raw", vec)
    zc = cupy.empty_like(xc)
    n64, splat, cj = np.int64(10), np.int32(0), np.int32(0)
    args = (xc, yc, zc, n64, splat, cj)
    show("RawKernel(grid, block, args) (numpy scalars)", lambda: raw((1,), (256,), args))
    fn = raw.kernel
    show("RawKernel.kernel (Function) call", lambda: fn((1,), (256,), args))
    try:
        from cupy.cuda.function import CNumpyArray
        pre = (xc, yc, zc) + tuple(CNumpyArray(np.array([v])) for v in (n64, splat, cj))
        show("Function call, constants pre-wrapped (CNumpyArray)", lambda: fn((1,), (256,), pre))
        show("RawKernel call, constants pre-wrapped", lambda: raw((1,), (256,), pre))
    except Exception as e:  # pragma: no cover - diagnostics only
        print("CNumpyArray:", e)
    if vec is not raw:
        show("hipfer._launch.Kernel call", lambda: vec((1,), (256,), args))
    launch = cupy.cuda.driver.launchKernel
    vals = [ctypes.c_uint64(xc.data.ptr), ctypes.c_uint64(yc.data.ptr), ctypes.c_uint64(zc.data.ptr),
            ctypes.c_int64(10), ctypes.c_int32(0), ctypes.c_int32(0)]
    params = (ctypes.c_void_p * 6)(*[ctypes.addressof(v) for v in vals])
    ptr, pp, st = fn.ptr, ctypes.addressof(params), cupy.cuda.get_current_stream().ptr
    show("driver.launchKernel alone (arguments packed once)", lambda: launch(ptr, 1, 1, 1, 256, 1, 1, 0, st, pp, 0))

    # ---- allocation and lookups
    f32 = np.dtype(np.float32)
    show("cupy.ndarray((10,), np.dtype)", lambda: cupy.ndarray((10,), f32))
    show("cupy.ndarray((10,), np.float32)", lambda: cupy.ndarray((10,), np.float32))
    show("cupy.empty((10,), float32)", lambda: cupy.empty((10,), f32))
    show("cupy.cuda.memory.alloc(40)", lambda: cupy.cuda.memory.alloc(40))
    pool = cupy.get_default_memory_pool()
    show("default pool .malloc(40)", lambda: pool.malloc(40))
    m = cupy.cuda.memory.alloc(512)
    show("cupy.ndarray((10,), dt, memptr) (no allocation)", lambda: cupy.ndarray((10,), f32, m))
    show("cupy.empty_like(x)", lambda: cupy.empty_like(xc))
    show("runtime.getDevice()", lambda: cupy.cuda.runtime.getDevice())
    show("get_current_stream().ptr", lambda: cupy.cuda.get_current_stream().ptr)
    show("x.data.ptr", lambda: xc.data.ptr)
    show("x.strides", lambda: xc.strides)
    show("x.flags.c_contiguous", lambda: xc.flags.c_contiguous)
    show("hf.Tensor wrap", lambda: hf.Tensor(xc))
    show("python: empty lambda", lambda: None)

    if "--profile" in sys.argv:
        for name, (h, _) in cases.items():
            print(f"\n===== {name}")
            print_profile(h)


if __name__ == "__main__":
    main()
