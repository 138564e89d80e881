"""Name expressions for ``polyval.cuh`` (Polyval), pure Python."""
from __future__ import annotations

from . import DTYPES, ctype

FILE = "polyval.cuh"
#: every dtype with a kernel type (bool, integers, floats, complex)
POLYVAL_DTYPES = tuple(DTYPES)


def polyval_expr(dt) -> str:
    return f"hf::polyval<{ctype(dt)}>"


def instances():
    return [("polyval", FILE, [polyval_expr(t) for t in POLYVAL_DTYPES])]
