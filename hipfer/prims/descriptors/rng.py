"""RngPrims: counter-based Uniform, Normal and Integer, and the parametric samplers
LogGamma, Poisson and Binomial (hipfer.prims.counter_rng)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import rules as r
from ._base import Descriptor

__all__ = ["Uniform", "Normal", "Integer", "LogGamma", "Poisson", "Binomial"]


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


def _sampler(desc, dtypes, shapes, nparams, out_dtype):
    """float64 parameter operands, broadcast together: the output's shape."""
    r.expect(desc, dtypes, shapes, nparams)
    for dt in dtypes:
        if dt != np.float64:
            raise TypeError(f"{r.name(desc)}: parameters must be float64, got {dt}")
    return ((r.broadcast_shapes(*shapes), np.dtype(out_dtype)),)


@dataclass(frozen=True)
class LogGamma(Descriptor, family="rng"):
    """log of standard gamma variates of shape a (float64 >= 0), one counter each."""

    def infer(self, dtypes, shapes):
        return _sampler(self, dtypes, shapes, 1, np.float64)


@dataclass(frozen=True)
class Poisson(Descriptor, family="rng"):
    """Poisson counts (int64) of means lam (float64 >= 0), one counter each."""

    def infer(self, dtypes, shapes):
        return _sampler(self, dtypes, shapes, 1, np.int64)


@dataclass(frozen=True)
class Binomial(Descriptor, family="rng"):
    """Binomial counts (int64) of n trials (float64 integral >= 0) with success
    probability p (float64 in [0, 1]), one counter each."""

    def infer(self, dtypes, shapes):
        return _sampler(self, dtypes, shapes, 2, np.int64)
