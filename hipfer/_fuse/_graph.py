"""The expression graph of a fused function, and the eager dtype rules it applies.

A graph is a tuple of nodes in evaluation order (each node's operands come before it):

- ``Node("input", dt, (), k)``: the k-th tensor argument (its conj flag folds at load);
- ``Node("scalar", dt, (), k)``: scalar slot k (a Python scalar argument or a literal of
  the function) as a 0-d operand of dtype dt -- the value is a kernel argument, not part
  of the graph, so a new value does not recompile;
- ``Node("op", dt, args, desc)``: one elementwise prims descriptor (ScalarUnary,
  AnalyticBinary, PointwiseCast, MaskWhere, ...) on earlier nodes, dt its output dtype.

The rules below are the namespace functions' own (hipfer/_elementwise.py, _core.operands,
_data_type_functions.astype): the same promotions, the same casts inserted in the same
places, the same descriptor per op, and each output dtype from the descriptor's rule
(prims.infer). So running the nodes one by one is the eager chain, op for op.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

import numpy as np

from .. import _dtypes
from ..prims import descriptors as d
from ..prims.infer import infer
from ..prims.optable import BinaryOp, UnaryOp

UNARY_DESC = {"scalar": d.ScalarUnary, "analytic": d.AnalyticUnary}
BINARY_DESC = {"scalar": d.ScalarBinary, "analytic": d.AnalyticBinary,
               "metadata": d.MetadataBinary}


@dataclass(frozen=True)
class Node:
    kind: str            # "input" | "scalar" | "op"
    dtype: np.dtype
    args: Tuple[int, ...]
    what: object         # input / slot index, or the descriptor of an "op"


@dataclass(frozen=True)
class Reduction:
    """The reduction a fused function may end in: ufunc-style op name ("sum", "prod",
    "max", "min", "mean", "any", "all"), the normalised axes, keepdims, the dtype it
    returns (the graph's output is already cast to the one it accumulates in) and the
    ndim of the value it reduces."""
    op: str
    axes: Tuple[int, ...]
    keepdims: bool
    out_dtype: np.dtype
    ndim: int                      # of the value reduced


@dataclass(frozen=True)
class Graph:
    nodes: Tuple[Node, ...]
    out: int                       # the node whose value is the elementwise result
    n_inputs: int
    reduction: Optional[Reduction] = None

    @property
    def out_dtype(self) -> np.dtype:
        return self.reduction.out_dtype if self.reduction else self.nodes[self.out].dtype


class FuseError(TypeError):
    """What cannot be traced (raised at trace time, naming the op)."""


class Builder:
    """Appends nodes, sharing none (each op of the function is one node, as eagerly)."""

    def __init__(self):
        self.nodes: list = []
        self.slots: list = []      # slot k -> (source, value): ("arg", i) or ("const", v)

    def add(self, node: Node) -> int:
        self.nodes.append(node)
        return len(self.nodes) - 1

    def input(self, k: int, dt) -> int:
        return self.add(Node("input", np.dtype(dt), (), k))

    def scalar(self, source, dt) -> int:
        self.slots.append(source)
        return self.add(Node("scalar", np.dtype(dt), (), len(self.slots) - 1))

    def op(self, desc, args: Tuple[int, ...], fn: str) -> int:
        dtypes = tuple(self.nodes[a].dtype for a in args)
        try:
            ((_, dt),) = infer(desc, dtypes, tuple(() for _ in args))
        except (TypeError, ValueError) as e:
            raise FuseError(f"hipfer.fuse: {fn}(): {_tail(e)}") from None
        return self.add(Node("op", np.dtype(dt), tuple(args), desc))

    def cast(self, a: int, dt) -> int:
        """a in dtype dt: a itself when it has it (as _core.cast)."""
        dt = np.dtype(dt)
        if self.nodes[a].dtype == dt:
            return a
        return self.op(d.PointwiseCast(dt), (a,), "astype")


def _tail(e: Exception) -> str:
    msg = str(e)
    head, sep, rest = msg.partition(": ")
    return rest if sep and head[:1].isupper() and " " not in head.split("(")[0] else msg


# ------------------------------------------------------- the namespace's dtype rules
def unary_desc(op: UnaryOp):
    return UNARY_DESC[op.row.family](op)


def binary_desc(op: BinaryOp):
    return BINARY_DESC[op.row.family](op)


def unary_operand_dtype(op: UnaryOp, dt: np.dtype, fn: str) -> np.dtype:
    """The dtype _elementwise._unary runs op in for an operand of dtype dt."""
    row = op.row
    if dt.kind not in row.kinds and row.family == "analytic" and dt.kind in "biu":
        dt = _dtypes.default_float
    if dt.kind not in row.kinds:
        raise FuseError(f"hipfer.fuse: {fn}() does not support dtype {dt}")
    return dt


def binary_operand_dtype(op: BinaryOp, dt: np.dtype, fn: str) -> np.dtype:
    """The dtype _elementwise._binary runs op in once the operands promoted to dt."""
    kinds = op.row.kinds
    if dt.kind not in kinds and dt.kind in "biu" and "f" in kinds and "i" not in kinds:
        dt = _dtypes.default_float
    if dt.kind not in kinds:
        raise FuseError(f"hipfer.fuse: {fn}() does not support dtype {dt}")
    return np.dtype(dt)
