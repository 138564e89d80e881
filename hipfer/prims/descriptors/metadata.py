"""MetadataPrims: integer and bool ops (fills, comparisons, where, reductions)."""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from .. import rules as r
from ..optable import BinaryOp, ReduceOp
from ._base import Descriptor, Modes

__all__ = ["GenerateKind", "Generate", "MetadataBinary", "MetadataWhere", "MetadataReduce"]


class GenerateKind(Enum):
    IOTA = "iota"          # out[i] = start + i * step over the flattened (C-order) output
    CONSTANT = "constant"  # out[...] = value


@dataclass(frozen=True)
class Generate(Descriptor, family="metadata"):
    kind: GenerateKind

    def infer(self, dtypes, shapes):
        return r.same(self, dtypes, shapes)


_BINARY_OPS = (BinaryOp.EQUAL, BinaryOp.NOT_EQUAL, BinaryOp.ADD, BinaryOp.SUB, BinaryOp.MUL,
               BinaryOp.BITWISE_AND)


@dataclass(frozen=True)
class MetadataBinary(Descriptor, family="metadata"):
    op: BinaryOp

    def infer(self, dtypes, shapes):
        if self.op not in _BINARY_OPS:
            raise ValueError(f"MetadataBinary: {self.op.name} is not a metadata op")
        return r.binary(self, dtypes, shapes, self.op, ("scalar", "metadata"), kinds="biu")


@dataclass(frozen=True)
class MetadataWhere(Descriptor, family="metadata"):
    """cond ? a : b over integer/bool tensors."""

    def infer(self, dtypes, shapes):
        return r.where(self, dtypes, shapes, "biu")


_REDUCE_OPS = (ReduceOp.SUM, ReduceOp.PROD, ReduceOp.MAX, ReduceOp.MIN, ReduceOp.ALL,
               ReduceOp.ANY)


@dataclass(frozen=True)
class MetadataReduce(Descriptor, family="metadata"):
    op: ReduceOp
    modes_a: Modes
    modes_c: Modes

    def infer(self, dtypes, shapes):
        r.reduce_op(self, _REDUCE_OPS)
        return r.reduction(self, dtypes, shapes, self.op, "biu")

    def probe_shapes(self, n_inputs):
        return (r.ones(len(self.modes_a)),)
