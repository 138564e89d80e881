"""FusedPrims on NumPy: the reference implementation of every hipfer.nn op.

One module per topic of hipfer.prims.fused_ops (``fused_<topic>.py``) exports
``MAKERS = {op name: make(desc, dtypes, shapes, outs) -> run(inputs, out, **runtime)}``.
"""
from __future__ import annotations

import importlib

from ...prims import descriptors as d
from ...prims import fused_ops

_makers: dict = {}


def makers() -> dict:
    if not _makers:
        for topic in fused_ops.TOPICS:
            _makers.update(importlib.import_module(f"{__package__}.fused_{topic}").MAKERS)
    return _makers


class _Fused:
    def supports(self, desc, dtypes) -> bool:
        return desc.op in makers()

    def make(self, desc, dtypes, shapes, outs, strides, conj):
        return makers()[desc.op](desc, dtypes, shapes, outs)


HANDLERS = {d.Fused: _Fused()}
