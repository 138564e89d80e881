"""Descriptors: frozen, hashable descriptions of one operation, one class per op kind.

A descriptor says *what* to compute; a backend's ``plan(desc, dtypes, shapes)`` decides
*how* (and is cached by key), ``execute(plan, inputs, out)`` does it. Each descriptor
class belongs to exactly one family, which it names in its class statement
(``class Sort(Descriptor, family="sort")``; ``FAMILY_OF`` collects them), and carries its
own shape and dtype rules: ``infer(dtypes, shapes)`` and ``probe_shapes(n_inputs)``
(``_base.Descriptor``), written next to its fields over the shared helpers of
``hipfer.prims.rules``. One module of this package per family holds that family's
descriptors (``semiring_core.py``, ..., ``fft.py``); this module gathers them.

Mode labels (``modes_*``) name axes as in einsum: any hashable labels, one per axis of
the operand. In reductions a label of ``modes_a`` missing from ``modes_c`` is reduced,
and ``modes_c`` may reorder the kept labels.
"""
from __future__ import annotations

from ..optable import BinaryOp, ReduceOp, UnaryOp
from ..semiring import Semiring
from ._base import FAMILIES, FAMILY_OF, Descriptor, Modes, family_of
# one module per family, in FAMILIES order (the order the classes register in FAMILY_OF)
from . import (semiring_core, semiring_fast_path, scalar, analytic, indexing, metadata,
               metadata_cast, rng, sort, complex_real, complex_scale, fused, linalg, fft)
# each family module's __all__: its descriptors and their parameter types
from .semiring_core import *  # noqa: F401,F403
from .semiring_fast_path import *  # noqa: F401,F403
from .scalar import *  # noqa: F401,F403
from .analytic import *  # noqa: F401,F403
from .indexing import *  # noqa: F401,F403
from .metadata import *  # noqa: F401,F403
from .metadata_cast import *  # noqa: F401,F403
from .rng import *  # noqa: F401,F403
from .sort import *  # noqa: F401,F403
from .complex_real import *  # noqa: F401,F403
from .complex_scale import *  # noqa: F401,F403
from .fused import *  # noqa: F401,F403
from .linalg import *  # noqa: F401,F403
from .fft import *  # noqa: F401,F403

#: the family modules, in FAMILIES order
FAMILY_MODULES = (semiring_core, semiring_fast_path, scalar, analytic, indexing, metadata,
                  metadata_cast, rng, sort, complex_real, complex_scale, fused, linalg, fft)

__all__ = ["BinaryOp", "ReduceOp", "UnaryOp", "Semiring", "Modes", "Descriptor", "FAMILIES",
           "FAMILY_OF", "family_of"] + [n for m in FAMILY_MODULES for n in m.__all__]
