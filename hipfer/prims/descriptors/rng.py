"""RngPrims: counter-based Uniform, Normal and Integer (hipfer.prims.counter_rng)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import rules as r
from ._base import Descriptor

__all__ = ["Uniform", "Normal", "Integer"]


def _floats(desc, dtypes, shapes):
    """Uniform and Normal: one output of a float dtype (the one 'operand' is the output)."""
    r.expect(desc, dtypes, shapes, 1)
    r.check_kind(desc, r.name(desc), dtypes[0], "f")
    return ((shapes[0], dtypes[0]),)


@dataclass(frozen=True)
class Uniform(Descriptor, family="rng"):
    """Uniform [0, 1) in the output dtype (float32/float64)."""

    def infer(self, dtypes, shapes):
        return _floats(self, dtypes, shapes)


@dataclass(frozen=True)
class Normal(Descriptor, family="rng"):
    """Standard normal (Box-Muller over two counters per pair of outputs)."""

    def infer(self, dtypes, shapes):
        return _floats(self, dtypes, shapes)


@dataclass(frozen=True)
class Integer(Descriptor, family="rng"):
    """Uniform integers in [low, high)."""
    low: int
    high: int

    def infer(self, dtypes, shapes):
        r.expect(self, dtypes, shapes, 1)
        dt = dtypes[0]
        r.check_kind(self, "Integer", dt, "iu")
        info = np.iinfo(dt)
        if not self.low < self.high:
            raise ValueError(f"Integer: need low < high, got [{self.low}, {self.high})")
        if self.low < info.min or self.high - 1 > info.max:
            raise ValueError(f"Integer: [{self.low}, {self.high}) does not fit {dt}")
        return ((shapes[0], dt),)
