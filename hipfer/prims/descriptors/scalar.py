"""ScalarPrims: elementwise ops, where, reductions, arg-reductions, scans and searchsorted."""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import numpy as np

from .. import rules as r
from ..optable import BinaryOp, ReduceOp, UnaryOp
from ._base import Descriptor, Modes

__all__ = ["ScalarUnary", "ScalarBinary", "ScalarWhere", "ScalarReduce", "ArgReduce",
           "ScanOp", "Cumulative", "SearchSorted", "Polyval"]


@dataclass(frozen=True)
class ScalarUnary(Descriptor, family="scalar"):
    op: UnaryOp

    def infer(self, dtypes, shapes):
        return r.unary(self, dtypes, shapes, self.op, "scalar")


@dataclass(frozen=True)
class ScalarBinary(Descriptor, family="scalar"):
    op: BinaryOp

    def infer(self, dtypes, shapes):
        return r.binary(self, dtypes, shapes, self.op, ("scalar",))


@dataclass(frozen=True)
class ScalarWhere(Descriptor, family="scalar"):
    """out = cond ? a : b; dtypes (bool, T, T)."""

    def infer(self, dtypes, shapes):
        return r.where(self, dtypes, shapes, "biufc")


_REDUCE_OPS = (ReduceOp.SUM, ReduceOp.PROD, ReduceOp.MEAN, ReduceOp.MAX, ReduceOp.MIN,
               ReduceOp.NANSUM, ReduceOp.NANPROD, ReduceOp.NANMEAN, ReduceOp.NANMAX,
               ReduceOp.NANMIN)


@dataclass(frozen=True)
class ScalarReduce(Descriptor, family="scalar"):
    op: ReduceOp
    modes_a: Modes
    modes_c: Modes

    def infer(self, dtypes, shapes):
        r.reduce_op(self, _REDUCE_OPS)
        kinds = "fc" if self.op is ReduceOp.MEAN else None  # mean() casts integers first
        return r.reduction(self, dtypes, shapes, self.op, kinds)

    def probe_shapes(self, n_inputs):
        return (r.ones(len(self.modes_a)),)


@dataclass(frozen=True)
class ArgReduce(Descriptor, family="scalar"):
    """int64 index along axis of the first maximum (op MAX) or minimum (op MIN); NaN
    counts as the extreme (the first NaN wins, as in NumPy), -0.0 == 0.0. The axis is
    removed from the output (keepdims is a reshape above the prims)."""
    op: ReduceOp
    axis: int

    def infer(self, dtypes, shapes):
        r.expect(self, dtypes, shapes, 1)
        dt, shape = dtypes[0], shapes[0]
        axis = r.nonempty_axis(self, shape, self.axis)
        if self.op not in (ReduceOp.MAX, ReduceOp.MIN):
            raise ValueError(f"ArgReduce: op must be MAX or MIN, got {self.op.name}")
        r.check_kind(self, self.op.name, dt, "biuf")
        out = shape[:axis] + shape[axis + 1:]
        if shape[axis] == 0 and int(np.prod(out)) > 0:
            raise ValueError(f"ArgReduce({self.op.name}): an empty axis has no extreme")
        return ((out, np.dtype(np.int64)),)

    def probe_shapes(self, n_inputs):
        return (r.axis_probe(self.axis),) * n_inputs


class ScanOp(Enum):
    SUM = "sum"
    PROD = "prod"


@dataclass(frozen=True)
class Cumulative(Descriptor, family="scalar"):
    """Inclusive running sum / product along axis in the input dtype (ints wrap; bool
    SUM is or, PROD is and), in a fixed order. include_initial prepends the identity,
    so that axis grows by one."""
    op: ScanOp
    axis: int
    include_initial: bool = False

    def infer(self, dtypes, shapes):
        r.expect(self, dtypes, shapes, 1)
        dt, shape = dtypes[0], shapes[0]
        axis = r.nonempty_axis(self, shape, self.axis)
        if not isinstance(self.op, ScanOp):
            raise ValueError(f"Cumulative: op must be a ScanOp, got {self.op!r}")
        r.check_kind(self, self.op.name, dt, "biufc")
        out = shape[:axis] + (shape[axis] + bool(self.include_initial),) + shape[axis + 1:]
        return ((out, dt),)

    def probe_shapes(self, n_inputs):
        return (r.axis_probe(self.axis),) * n_inputs


@dataclass(frozen=True)
class SearchSorted(Descriptor, family="scalar"):
    """out[j] = insertion index of x2[j] into the ascending 1-d x1 (int64, x2's shape):
    side 'left' counts x1 elements < v, 'right' those <= v, with NaN above every number
    (sort's order)."""
    side: str = "left"

    def infer(self, dtypes, shapes):
        r.expect(self, dtypes, shapes, 2)
        if self.side not in ("left", "right"):
            raise ValueError(f"SearchSorted: side must be 'left' or 'right', got {self.side!r}")
        if dtypes[0] != dtypes[1]:
            raise TypeError(f"SearchSorted: dtypes differ ({dtypes[0]} and {dtypes[1]}); "
                            "promote them first")
        r.check_kind(self, self.side, dtypes[0], "biuf")
        if len(shapes[0]) != 1:
            raise ValueError(f"SearchSorted: x1 must be 1-d, got shape {shapes[0]}")
        return ((shapes[1], np.dtype(np.int64)),)

    def probe_shapes(self, n_inputs):
        return (1,), ()


@dataclass(frozen=True)
class Polyval(Descriptor, family="scalar"):
    """out = p(x) by Horner's rule, p highest power first: operands (p, x) of one dtype,
    p 1-d, x any shape; out has x's shape and dtype. NumPy's arithmetic exactly
    (np.polyval: y = 0, then y = y * x + p[k] for each k, every step rounded in the
    dtype, integers wrapping), so the result is bitwise that of the eager composition."""

    def infer(self, dtypes, shapes):
        r.expect(self, dtypes, shapes, 2)
        if dtypes[0] != dtypes[1]:
            raise TypeError(f"Polyval: dtypes differ ({dtypes[0]} and {dtypes[1]}); "
                            "promote them first")
        r.check_kind(self, "p", dtypes[0], "biufc")
        if len(shapes[0]) != 1:
            raise ValueError(f"Polyval: p must be 1-d, got shape {shapes[0]}")
        return ((tuple(shapes[1]), dtypes[1]),)

    def probe_shapes(self, n_inputs):
        return (1,), ()
