"""FusedPrims on NumPy: the reference implementation of every hipfer.nn op.

One module per topic of hipfer.prims.fused_ops (``fused_<topic>.py``) exports
``MAKERS = {op name: make(desc, dtypes, shapes, outs) -> run(inputs, out, **runtime)}``.
"""
from __future__ import annotations

from ...prims import descriptors as d
from ...prims import fused_ops

HANDLERS = {d.Fused: fused_ops.Handler(__package__)}
