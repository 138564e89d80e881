"""Shape and dtype inference for every descriptor, shared by all backends.

``infer(desc, dtypes, shapes)`` checks that the operands fit the descriptor and returns
the output specs: a tuple of ``(shape, dtype)`` pairs (two for Topk: values and indices).
Errors are TypeError (dtypes) and ValueError (shapes, modes, parameters), each naming
the descriptor and the problem. Backends call it once per plan, never per execute.

The rules themselves are the descriptors' own (``desc.infer``, ``desc.probe_shapes``,
next to each class in ``hipfer.prims.descriptors``); this module does what is common to
all of them. The dtype and shape helpers that other modules use are re-exported here.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from .descriptors import FAMILY_OF
from .rules import (broadcast_shapes, check_modes, complex_dtype, name,  # noqa: F401
                    real_dtype, reduced_size)


def _descriptor(desc):
    """desc, when it is a descriptor (exactly one of the registered classes)."""
    if type(desc) not in FAMILY_OF:
        raise TypeError(f"unknown descriptor {desc!r}")
    return desc


def infer(desc, dtypes: Sequence[np.dtype], shapes: Sequence[tuple]):
    """Validate and return ((out_shape, out_dtype), ...) for desc applied to the operands."""
    dtypes = tuple(np.dtype(t) for t in dtypes)
    shapes = tuple(tuple(int(n) for n in s) for s in shapes)
    for s in shapes:
        if any(n < 0 for n in s):
            raise ValueError(f"{name(desc)}: negative dimension in shape {s}")
    return _descriptor(desc).infer(dtypes, shapes)


def probe_shapes(desc, n_inputs: int) -> tuple:
    """Small shapes that satisfy desc's shape rules, so ``infer(desc, dtypes,
    probe_shapes(...))`` checks dtypes (and the descriptor's own parameters) alone.
    Used by ``has_*_support(desc, dtypes)``, which knows no shapes."""
    return _descriptor(desc).probe_shapes(n_inputs)
