"""What every hipfer.nn function shares: operand checks, the one call into FusedPrims,
and the one into BatchedGemm (gemm_ex, conv2d)."""
from __future__ import annotations

from typing import Sequence

from .. import _ops
from .._tensor import Tensor
from ..prims import descriptors as d
from ..prims.fused_ops import FusedOpDef


def tensor(x, name: str, what: str = "x") -> Tensor:
    """x as a C-contiguous Tensor with no pending conjugation (fused kernels read raw
    memory); anything else that is not a Tensor is a TypeError."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): {what} must be a hipfer Tensor, got {type(x).__name__}")
    if x._conj or not x._data.flags.c_contiguous:
        x = Tensor(_ops.run(d.MakeContiguous(), [x]))
    return x


def writable(x, name: str, what: str) -> Tensor:
    """A Tensor the op updates in place: it must already be C-contiguous (a copy would
    silently drop the update)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): {what} must be a hipfer Tensor, got {type(x).__name__}")
    if x._conj or not x._data.flags.c_contiguous:
        raise ValueError(f"{name}(): {what} is updated in place and must be C-contiguous "
                         "(and not lazily conjugated)")
    return x


def fused(op: FusedOpDef, inputs: Sequence[Tensor], params: dict = None, out=None,
          **runtime):
    """Run Fused(op.name, **params) on inputs (op: a row of a topic's ops.py); returns a
    Tensor, or a tuple for several outputs. out: Tensor(s) to write (in-place ops pass
    the inputs they update)."""
    desc = d.Fused.of(op.name, **(params or {}))
    raw_out = None
    if out is not None:
        raw_out = tuple(t._data for t in out) if isinstance(out, tuple) else out._data
    res = _ops.run(desc, list(inputs), out=raw_out, **runtime)
    if out is not None:
        return out
    if isinstance(res, tuple):
        return tuple(Tensor(r) for r in res)
    return Tensor(res)


_GEMMS = {(ta, tb): d.BatchedGemm(op_a=d.GemmOp.T if ta else d.GemmOp.N,
                                  op_b=d.GemmOp.T if tb else d.GemmOp.N)
          for ta in (False, True) for tb in (False, True)}


def batched_gemm(a3, b3, *, trans_a=False, trans_b=False, out=None, **scalars):
    """op(a3) @ op(b3) as one SemiringCore BatchedGemm (hipBLAS / cuBLAS) on raw (batch,
    rows, cols) arrays, op(x) the transpose when trans_x; a batch of 1 broadcasts (read at
    stride 0). out (raw) and alpha / beta as BatchedGemm takes them. Returns the raw result."""
    return _ops.run(_GEMMS[bool(trans_a), bool(trans_b)], [Tensor(a3), Tensor(b3)], out=out,
                    **scalars)
