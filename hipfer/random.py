"""Counter-based random numbers: the same seed gives the same numbers on CPU and GPU.

    g = hipfer.random.Generator(42)
    u = g.random((3, 4))            # uniform [0, 1), float64
    z = g.normal((1000,), dtype=hipfer.float32)
    k = g.integers(0, 10, (5,))

Each call consumes as many counters as it draws (normal: rounded up to even), so a
sequence of calls is reproducible and independent of the device (see
hipfer.prims.counter_rng for the formulas).
"""
from __future__ import annotations

from . import _dtypes, _ops
from ._creation import _dev, _norm_shape
from ._tensor import Tensor
from .prims import descriptors as _d

__all__ = ["Generator", "default_rng"]


class Generator:
    """A counter-based random generator: the numbers depend only on (seed, offset) and
    the call sequence, not on the device; each call advances offset by what it drew."""

    def __init__(self, seed: int = 0, *, offset: int = 0):
        self.seed = int(seed) & 0xFFFFFFFFFFFFFFFF
        self.offset = int(offset)

    def __repr__(self):
        return f"Generator(seed={self.seed}, offset={self.offset})"

    def _draw(self, desc, shape, dtype, device, step_even=False):
        shape = _norm_shape(shape)
        out = _ops.generate(desc, shape, dtype, _dev(device), seed=self.seed, offset=self.offset)
        n = 1
        for s in shape:
            n *= s
        self.offset += n + (n & 1 if step_even else 0)
        return Tensor(out)

    def random(self, shape=(), *, dtype=None, device=None) -> Tensor:
        """Uniform on [0, 1) (float32 or float64)."""
        dt = _dtypes.as_dtype(dtype or _dtypes.default_float)
        return self._draw(_d.Uniform(), shape, dt, device)

    def normal(self, shape=(), *, dtype=None, device=None) -> Tensor:
        """Standard normal (Box-Muller)."""
        dt = _dtypes.as_dtype(dtype or _dtypes.default_float)
        return self._draw(_d.Normal(), shape, dt, device, step_even=True)

    def integers(self, low: int, high: int, shape=(), *, dtype=None, device=None) -> Tensor:
        """Uniform integers on [low, high)."""
        dt = _dtypes.as_dtype(dtype or _dtypes.default_int)
        return self._draw(_d.Integer(int(low), int(high)), shape, dt, device)


def default_rng(seed: int = 0) -> Generator:
    """A Generator(seed) at offset 0 (NumPy's spelling)."""
    return Generator(seed)

del annotations  # the __future__ feature, not an API name
