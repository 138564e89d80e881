"""The one timer of the project: ``hipfer bench`` and every script in ``benchmarks/`` use it.

    t = Timer("gpu", cupy=cupy)     # device events on CuPy's current stream
    t = Timer("cpu")                # time.perf_counter
    ms = t(fn)                      # median ms per warm call

A measurement warms ``fn`` up (plans built, kernels compiled, caches filled), then times
``rounds`` rounds of ``inner`` back-to-back calls and returns the median of the per-call
means. Calls queue up as they do in a real program, so on the GPU host work that overlaps
the device's is not counted twice, and a round of tiny calls measures the host's time per
call (the per-call overhead). When ``inner`` is not given it is chosen so that a round
lasts at least ``min_round_ms`` (one call timed after the warm-up decides it).
"""
from __future__ import annotations

import math
import statistics
import time

__all__ = ["Timer", "copy_bandwidth", "random_array"]


class Timer:
    """time_ms = Timer(kind, ...); time_ms(fn) -> median milliseconds per call of fn().

    kind: "gpu" (CUDA/HIP events through ``cupy``, on its current stream) or "cpu"
    (``time.perf_counter``). The keyword arguments are the defaults of each call, which
    may override rounds, inner and warmup.
    """

    def __init__(self, kind: str = "cpu", *, cupy=None, rounds: int = 7, inner: int | None = None,
                 warmup: int = 3, min_round_ms: float = 2.0, max_inner: int = 1000):
        if kind not in ("cpu", "gpu"):
            raise ValueError(f"Timer kind must be 'cpu' or 'gpu', got {kind!r}")
        if kind == "gpu" and cupy is None:
            raise ValueError("a gpu Timer needs the cupy module (Timer('gpu', cupy=cupy))")
        if rounds < 1 or warmup < 0 or (inner is not None and inner < 1):
            raise ValueError("rounds and inner must be >= 1, warmup >= 0")
        self.kind, self.cupy = kind, cupy
        self.rounds, self.inner, self.warmup = rounds, inner, warmup
        self.min_round_ms, self.max_inner = float(min_round_ms), int(max_inner)

    def __repr__(self):
        return (f"Timer({self.kind!r}, rounds={self.rounds}, inner={self.inner}, "
                f"warmup={self.warmup}, min_round_ms={self.min_round_ms})")

    def sync(self) -> None:
        """Wait for the device (a no-op on the CPU)."""
        if self.kind == "gpu":
            self.cupy.cuda.Device().synchronize()

    def _round(self, fn, inner: int) -> float:
        """Mean ms per call of `inner` back-to-back calls."""
        if self.kind == "gpu":
            cp = self.cupy
            start, stop = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            for _ in range(inner):
                fn()
            stop.record()
            stop.synchronize()
            return cp.cuda.get_elapsed_time(start, stop) / inner
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        return (time.perf_counter() - t0) * 1e3 / inner

    def samples(self, fn, rounds: int | None = None, inner: int | None = None,
                warmup: int | None = None) -> list:
        """The per-call ms of each round (after the warm-up)."""
        rounds = self.rounds if rounds is None else rounds
        inner = self.inner if inner is None else inner
        warmup = self.warmup if warmup is None else warmup
        for _ in range(warmup):
            fn()
        self.sync()
        if inner is None:
            one = self._round(fn, 1)
            inner = 1 if one <= 0 else max(1, min(self.max_inner, math.ceil(self.min_round_ms / one)))
        return [self._round(fn, inner) for _ in range(rounds)]

    def __call__(self, fn, rounds: int | None = None, inner: int | None = None,
                 warmup: int | None = None) -> float:
        return statistics.median(self.samples(fn, rounds, inner, warmup))

    def compare(self, fns: dict, rounds: int | None = None, warmup: int | None = None) -> dict:
        """{name: median ms, or the exception it raised} for several functions timed in
        turn, round by round, so that each sees the same machine (other load, clocks,
        caches left by the others); one that fails is reported, not fatal."""
        rounds = self.rounds if rounds is None else rounds
        warmup = self.warmup if warmup is None else warmup
        inner, result = {}, {}
        for name, fn in fns.items():
            try:
                for _ in range(max(1, warmup)):
                    fn()
                self.sync()
                if self.inner is not None:
                    inner[name] = self.inner
                else:
                    one = self._round(fn, 1)
                    inner[name] = 1 if one <= 0 else max(
                        1, min(self.max_inner, math.ceil(self.min_round_ms / one)))
            except Exception as e:  # noqa: BLE001 (reported to the caller)
                result[name] = e
        times = {name: [] for name in inner}
        for _ in range(rounds):
            for name in list(times):
                try:
                    times[name].append(self._round(fns[name], inner[name]))
                except Exception as e:  # noqa: BLE001
                    result[name] = e
                    del times[name]
        for name, ts in times.items():
            result[name] = statistics.median(ts)
        return {name: result[name] for name in fns}


def random_array(xp, n: int, dtype="float32", seed: int = 0):
    """n uniform values in [0.5, 1.5) of a float dtype, made on xp's device (numpy or
    cupy): benchmarks never time zeros, whose pages or caches may behave unlike data."""
    if xp.__name__ == "numpy":
        import numpy as np
        a = np.random.default_rng(seed).random(n, dtype=np.dtype(dtype))
    else:
        a = xp.random.random_sample(n, dtype=dtype)
    a += 0.5
    return a


def copy_bandwidth(xp, time_ms, nbytes: int = 1 << 30) -> float:
    """Bytes per ms (= GB/s * 1e6) of a large copy with xp.copyto (device-to-device on
    cupy, memcpy on numpy), counting bytes read + bytes written."""
    src = random_array(xp, max(1, nbytes // 4), "float32")
    dst = xp.empty_like(src)
    t = time_ms(lambda: xp.copyto(dst, src))
    return 2 * src.nbytes / t
