"""SemiringCore: BatchedGemm, ReduceAdd, Trace, AntiTrace, AntiDiag, MakeContiguous."""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import numpy as np

from .. import rules as r
from ..optable import ReduceOp
from ..semiring import Semiring
from ._base import Descriptor, Modes

__all__ = ["GemmOp", "BatchedGemm", "ReduceAdd", "Trace", "AntiTrace", "AntiDiag",
           "MakeContiguous"]


class GemmOp(Enum):
    """How BatchedGemm reads an operand: as stored, transposed, or conjugate-transposed."""
    N = "N"
    T = "T"
    C = "C"


@dataclass(frozen=True)
class BatchedGemm(Descriptor, family="semiring_core"):
    """out[b] = alpha * op_a(a[b]) (x) op_b(b[b]) + beta * out[b] over the semiring.
    Operands are (batch, m, k) and (batch, k, n) after their op; batch may be 1 on one
    side (broadcast). argmax (tropical semirings, beta 0): a second output, int64, the k
    of the winning product of each element (ties: the smallest k; -1 when k == 0)."""
    semiring: Semiring = Semiring.STANDARD
    op_a: GemmOp = GemmOp.N
    op_b: GemmOp = GemmOp.N
    argmax: bool = False

    def infer(self, dtypes, shapes):
        r.expect(self, dtypes, shapes, 2)
        if dtypes[0] != dtypes[1]:
            raise TypeError(f"BatchedGemm: operand dtypes differ ({dtypes[0]} and {dtypes[1]})")
        kinds = "iuf" if self.semiring.is_tropical else "biufc"
        r.check_kind(self, self.semiring.name, dtypes[0], kinds)
        sa, sb = shapes
        if len(sa) != 3 or len(sb) != 3:
            raise ValueError(f"BatchedGemm: operands must be 3-d (batch, rows, cols), got {sa} "
                             f"and {sb}")
        m, ka = (sa[1], sa[2]) if self.op_a is GemmOp.N else (sa[2], sa[1])
        kb, n = (sb[1], sb[2]) if self.op_b is GemmOp.N else (sb[2], sb[1])
        if ka != kb:
            raise ValueError(f"BatchedGemm: inner sizes differ ({ka} and {kb}) for shapes {sa}, "
                             f"{sb}")
        if sa[0] != sb[0] and 1 not in (sa[0], sb[0]):
            raise ValueError(f"BatchedGemm: batch sizes {sa[0]} and {sb[0]} differ")
        out = ((max(sa[0], sb[0]) if 0 not in (sa[0], sb[0]) else 0, m, n), dtypes[0])
        if self.argmax:
            if not self.semiring.is_tropical:
                raise ValueError("BatchedGemm: argmax needs a tropical semiring (MAX_PLUS, "
                                 "MIN_PLUS or MAX_MUL), not STANDARD")
            return (out, (out[0], np.dtype(np.int64)))
        return (out,)

    def probe_shapes(self, n_inputs):
        return (1, 1, 1), (1, 1, 1)


@dataclass(frozen=True)
class ReduceAdd(Descriptor, family="semiring_core"):
    """Sum over the labels of modes_a missing from modes_c; modes_a has no repeats."""
    modes_a: Modes
    modes_c: Modes

    def infer(self, dtypes, shapes):
        return r.reduction(self, dtypes, shapes, ReduceOp.SUM)

    def probe_shapes(self, n_inputs):
        return (r.ones(len(self.modes_a)),)


@dataclass(frozen=True)
class Trace(Descriptor, family="semiring_core"):
    """Single-operand einsum: modes_a may repeat labels (the diagonal is taken), labels
    missing from modes_c are summed. E.g. ('i','i') -> () is the matrix trace."""
    modes_a: Modes
    modes_c: Modes

    def infer(self, dtypes, shapes):
        r.expect(self, dtypes, shapes, 1)
        sizes = r.check_modes(self, self.modes_a, shapes[0], allow_repeats=True)
        return ((r.out_modes(self, self.modes_c, sizes), dtypes[0]),)

    def probe_shapes(self, n_inputs):
        return (r.ones(len(self.modes_a)),)


def _anti(desc, dtypes, shapes):
    """AntiTrace and AntiDiag: a (modes_a) onto diagonals of the output (modes_c), whose
    shape plan may be given as a second shape."""
    if len(dtypes) != 1 or len(shapes) not in (1, 2):
        raise ValueError(f"{r.name(desc)} takes one operand and optionally the output shape")
    sa = r.check_modes(desc, desc.modes_a, shapes[0])
    if len(shapes) == 2:
        out = shapes[1]
        sc = r.check_modes(desc, desc.modes_c, out, what="modes_c", allow_repeats=True)
    else:
        out = None
        sc = {}
    for m in desc.modes_a:
        if m not in desc.modes_c:
            raise ValueError(f"{r.name(desc)}: label {m!r} of modes_a is missing from modes_c")
        if m in sc and sc[m] != sa[m]:
            raise ValueError(f"{r.name(desc)}: label {m!r} has size {sa[m]} in a and {sc[m]} "
                             "in the output")
    extra = [m for m in desc.modes_c if m not in sa]
    if extra:
        if type(desc) is AntiDiag:
            raise ValueError(f"AntiDiag: output labels {extra} are not in modes_a (use "
                             "AntiTrace)")
        if out is None:
            raise ValueError(f"AntiTrace: the output shape is needed for labels {extra}")
    if out is None:
        out = tuple(sa[m] for m in desc.modes_c)
    return ((tuple(out), dtypes[0]),)


@dataclass(frozen=True)
class AntiTrace(Descriptor, family="semiring_core"):
    """Adjoint of Trace: out (modes_c, may repeat labels) is a on the diagonals where
    repeated labels agree and 0 elsewhere; labels of modes_c missing from modes_a are
    broadcast (the adjoint of a sum). The output shape is given to plan."""
    modes_a: Modes
    modes_c: Modes

    def infer(self, dtypes, shapes):
        return _anti(self, dtypes, shapes)

    def probe_shapes(self, n_inputs):
        return r.ones(len(self.modes_a)), r.ones(len(self.modes_c))


@dataclass(frozen=True)
class AntiDiag(Descriptor, family="semiring_core"):
    """Adjoint of taking a diagonal: every label of modes_c is in modes_a; repeated
    labels of modes_c put a onto that diagonal, zeros elsewhere."""
    modes_a: Modes
    modes_c: Modes

    def infer(self, dtypes, shapes):
        return _anti(self, dtypes, shapes)

    def probe_shapes(self, n_inputs):
        return r.ones(len(self.modes_a)), r.ones(len(self.modes_c))


@dataclass(frozen=True)
class MakeContiguous(Descriptor, family="semiring_core"):
    """C-contiguous copy (the conjugation flag is resolved on the way)."""

    def infer(self, dtypes, shapes):
        return r.same(self, dtypes, shapes)
