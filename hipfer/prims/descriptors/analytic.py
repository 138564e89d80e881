"""AnalyticPrims: transcendental elementwise ops and VAR / STD."""
from __future__ import annotations

from dataclasses import dataclass

from .. import rules as r
from ..optable import BinaryOp, ReduceOp, UnaryOp
from ._base import Descriptor, Modes

__all__ = ["AnalyticUnary", "AnalyticBinary", "AnalyticReduce"]


@dataclass(frozen=True)
class AnalyticUnary(Descriptor, family="analytic"):
    op: UnaryOp

    def infer(self, dtypes, shapes):
        return r.unary(self, dtypes, shapes, self.op, "analytic")


@dataclass(frozen=True)
class AnalyticBinary(Descriptor, family="analytic"):
    op: BinaryOp

    def infer(self, dtypes, shapes):
        return r.binary(self, dtypes, shapes, self.op, ("analytic",))


_REDUCE_OPS = (ReduceOp.VAR, ReduceOp.STD, ReduceOp.NANVAR, ReduceOp.NANSTD)


@dataclass(frozen=True)
class AnalyticReduce(Descriptor, family="analytic"):
    """VAR or STD with the given correction (degrees of freedom removed); NANVAR /
    NANSTD over the non-NaN elements only, NaN where count - correction <= 0 (NumPy's
    nanvar; var gives inf there)."""
    op: ReduceOp
    modes_a: Modes
    modes_c: Modes
    correction: float = 0.0

    def infer(self, dtypes, shapes):
        r.reduce_op(self, _REDUCE_OPS)
        if self.correction < 0:
            raise ValueError("AnalyticReduce: correction must be >= 0")
        return r.reduction(self, dtypes, shapes, self.op)

    def probe_shapes(self, n_inputs):
        return (r.ones(len(self.modes_a)),)
