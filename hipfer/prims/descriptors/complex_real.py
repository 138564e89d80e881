"""ComplexRealPrims: complex -> real ABS / REAL / IMAG, alone or under a reduction."""
from __future__ import annotations

from dataclasses import dataclass

from .. import rules as r
from ..optable import ReduceOp, UnaryOp
from ._base import Descriptor, Modes

__all__ = ["ComplexRealUnary", "ComplexRealReduce"]

_UNARY_OPS = (UnaryOp.ABS, UnaryOp.REAL, UnaryOp.IMAG)


@dataclass(frozen=True)
class ComplexRealUnary(Descriptor, family="complex_real"):
    """complex -> real: ABS, REAL or IMAG."""
    op: UnaryOp

    def infer(self, dtypes, shapes):
        if self.op not in _UNARY_OPS:
            raise ValueError(f"ComplexRealUnary: op must be ABS, REAL or IMAG, got "
                             f"{self.op.name}")
        r.expect(self, dtypes, shapes, 1)
        r.check_kind(self, self.op.name, dtypes[0], "c")
        return ((shapes[0], r.real_dtype(dtypes[0])),)


@dataclass(frozen=True)
class ComplexRealReduce(Descriptor, family="complex_real"):
    """reduce(unary(a)) in one pass, unary in {ABS, REAL, IMAG}, reduce in {SUM, MAX, MIN,
    MEAN}."""
    unary: UnaryOp
    reduce: ReduceOp
    modes_a: Modes
    modes_c: Modes

    def infer(self, dtypes, shapes):
        if self.unary not in _UNARY_OPS:
            raise ValueError(f"ComplexRealReduce: unary must be ABS, REAL or IMAG, got "
                             f"{self.unary.name}")
        if self.reduce not in (ReduceOp.SUM, ReduceOp.MAX, ReduceOp.MIN, ReduceOp.MEAN):
            raise ValueError(f"ComplexRealReduce: reduce must be SUM, MAX, MIN or MEAN, got "
                             f"{self.reduce.name}")
        r.expect(self, dtypes, shapes, 1)
        r.check_kind(self, self.unary.name, dtypes[0], "c")
        ((shape, _),) = r.reduction(self, dtypes, shapes, self.reduce, "c")
        return ((shape, r.real_dtype(dtypes[0])),)

    def probe_shapes(self, n_inputs):
        return (r.ones(len(self.modes_a)),)
