"""FusedPrims: the Fused descriptor, one op of the fused device op set (hipfer.nn).

Its rules are per op, in the op table (hipfer.prims.fused_ops); the methods here look
the op up there.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Hashable, Tuple

from ._base import Descriptor

__all__ = ["Fused"]


@dataclass(frozen=True)
class Fused(Descriptor, family="fused"):
    """One op of the fused device op set (hipfer.nn). ``op`` names a row of the op table
    (hipfer.prims.fused_ops); ``params`` are its structural parameters as sorted (name,
    value) pairs (flags, k, axes: what a kernel is specialised on). Scalars that change
    from call to call (learning rate, seed, p, alpha) are not here: they go to execute()
    as keyword arguments, so a new value reuses the plan. Build with ``Fused.of(op, **params)``."""
    op: str
    params: Tuple[Tuple[str, Hashable], ...] = ()

    @staticmethod
    def of(op: str, **params) -> "Fused":
        return Fused(op, tuple(sorted(params.items())))

    def get(self, name: str, default=None):
        for k, v in self.params:
            if k == name:
                return v
        return default

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.params)
        return f"Fused.{self.op}({args})"

    def infer(self, dtypes, shapes):
        from .. import fused_ops  # the op table, imported when a fused op is first planned
        return fused_ops.infer(self, dtypes, shapes)

    def probe_shapes(self, n_inputs):
        from .. import fused_ops
        return fused_ops.probe_shapes(self)
