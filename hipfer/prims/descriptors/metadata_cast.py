"""MetadataCastPrims: PointwiseCast and MaskWhere."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import rules as r
from ._base import Descriptor

__all__ = ["PointwiseCast", "MaskWhere"]


@dataclass(frozen=True)
class PointwiseCast(Descriptor, family="metadata_cast"):
    """out = dtype(a) (any source dtype; the conjugation flag is folded in)."""
    dtype: np.dtype

    def __post_init__(self):
        object.__setattr__(self, "dtype", np.dtype(self.dtype))

    def infer(self, dtypes, shapes):
        r.expect(self, dtypes, shapes, 1)
        return ((shapes[0], self.dtype),)


@dataclass(frozen=True)
class MaskWhere(Descriptor, family="metadata_cast"):
    """cond ? a : b with a bool mask over float/complex tensors."""

    def infer(self, dtypes, shapes):
        return r.where(self, dtypes, shapes, "fc")
