"""Peak memory of one call: issue 7's "no hidden temporaries" check.

    extra, out = peak_temporaries(ctx, fn)

runs ``fn()`` once (warm) and returns the high-water mark of the memory allocated during
the call beyond what existed before it (``extra``) and the bytes of what it returned
(``out``). ``extra - out`` is what the call held besides its result: 0 for an op that
writes only its outputs. On the GPU the count is CuPy's memory pool (a ``MemoryHook``:
every allocation from the pool and every return to it, rounded as the pool rounds); on
the CPU it is ``tracemalloc`` (NumPy reports its data buffers there).
"""
from __future__ import annotations

__all__ = ["peak_temporaries", "result_bytes"]


def result_bytes(x) -> int:
    """Bytes of a call's result: an array, a hipfer Tensor, or a tuple / list of them."""
    if isinstance(x, (tuple, list)):
        return sum(result_bytes(y) for y in x)
    if hasattr(x, "_data") and hasattr(x, "resolve_conj"):  # hipfer Tensor
        x = x._data
    n = getattr(x, "nbytes", None)
    return int(n) if n is not None else 0


def _gpu_hook_class(cupy):
    from cupy.cuda import memory_hook

    class PeakHook(memory_hook.MemoryHook):
        name = "hipfer_bench_peak"

        def __init__(self):
            self.current = self.peak = 0

        def malloc_postprocess(self, **kw):
            self.current += kw["mem_size"]
            self.peak = max(self.peak, self.current)

        def free_postprocess(self, **kw):
            self.current -= kw["mem_size"]
    return PeakHook


def peak_temporaries(ctx, fn) -> tuple:
    """(peak bytes allocated during one call of fn beyond those live before it, bytes of
    its result). The result is kept alive until the count is read, so ``peak >= out``."""
    if ctx.device == "gpu":
        hook = _gpu_hook_class(ctx.cupy)()
        ctx.cupy.cuda.Device().synchronize()
        with hook:
            res = fn()
        ctx.cupy.cuda.Device().synchronize()
        return hook.peak, result_bytes(res)
    import tracemalloc
    started = tracemalloc.is_tracing()
    if not started:
        tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        res = fn()
        peak = tracemalloc.get_traced_memory()[1] - base
        return max(0, peak), result_bytes(res)
    finally:
        if not started:
            tracemalloc.stop()
