"""SemiringFastPath: Contract and ElementwiseBinary (ADD/MUL), both scaled."""
from __future__ import annotations

from dataclasses import dataclass

from .. import rules as r
from ..optable import BinaryOp
from ..semiring import Semiring
from ._base import Descriptor, Modes

__all__ = ["Contract", "ElementwiseBinary"]


@dataclass(frozen=True)
class Contract(Descriptor, family="semiring_fast_path"):
    """out(modes_c) = alpha * sum over the other labels of a(modes_a) b(modes_b) + beta * out."""
    modes_a: Modes
    modes_b: Modes
    modes_c: Modes
    semiring: Semiring = Semiring.STANDARD

    def infer(self, dtypes, shapes):
        r.expect(self, dtypes, shapes, 2)
        if dtypes[0] != dtypes[1]:
            raise TypeError(f"Contract: operand dtypes differ ({dtypes[0]} and {dtypes[1]})")
        if self.semiring.is_tropical:
            r.check_kind(self, self.semiring.name, dtypes[0], "iuf")
        sa = r.check_modes(self, self.modes_a, shapes[0])
        sb = r.check_modes(self, self.modes_b, shapes[1], what="modes_b")
        for m in set(sa) & set(sb):
            if sa[m] != sb[m]:
                raise ValueError(f"Contract: label {m!r} has size {sa[m]} in a and {sb[m]} in b")
        return ((r.out_modes(self, self.modes_c, {**sa, **sb}), dtypes[0]),)

    def probe_shapes(self, n_inputs):
        return r.ones(len(self.modes_a)), r.ones(len(self.modes_b))


@dataclass(frozen=True)
class ElementwiseBinary(Descriptor, family="semiring_fast_path"):
    """out = alpha * (a op b) + beta * out, op the semiring's ADD or MUL."""
    op: BinaryOp
    semiring: Semiring = Semiring.STANDARD

    def infer(self, dtypes, shapes):
        if self.op not in (BinaryOp.ADD, BinaryOp.MUL):
            raise ValueError(f"ElementwiseBinary: op must be ADD or MUL, got {self.op.name}")
        kinds = "biufc" if not self.semiring.is_tropical else "iuf"
        return r.binary(self, dtypes, shapes, self.op, ("scalar",), kinds=kinds)
