"""ComplexScalePrims: a complex tensor times a real one of its precision."""
from __future__ import annotations

from dataclasses import dataclass

from .. import rules as r
from ._base import Descriptor

__all__ = ["ComplexScale"]


@dataclass(frozen=True)
class ComplexScale(Descriptor, family="complex_scale"):
    """out = a * s with a complex and s real of the same precision (broadcasting)."""

    def infer(self, dtypes, shapes):
        r.expect(self, dtypes, shapes, 2)
        a, s = dtypes
        if a.kind != "c" or s.kind != "f" or r.real_dtype(a) != s:
            raise TypeError(f"ComplexScale: needs (complex, real of the same precision), got "
                            f"({a}, {s})")
        return ((r.broadcast_shapes(*shapes, what="ComplexScale"), a),)
