"""Elementwise functions of the namespace, built from the op table.

Each public function is one entry of ``_UNARY`` / ``_BINARY`` (public name -> op). The
operands are promoted to one dtype (NumPy's rules for now; Python scalars are "weak"),
cast where needed with PointwiseCast, and run as the op's family descriptor.
"""
from __future__ import annotations

import numpy as np

from . import _dtypes, _ops
from ._tensor import Tensor, _NotAnOperand
from .prims import descriptors as d
from .prims.optable import BinaryOp, UnaryOp

_UNARY_DESC = {"scalar": d.ScalarUnary, "analytic": d.AnalyticUnary}
_BINARY_DESC = {"scalar": d.ScalarBinary, "analytic": d.AnalyticBinary,
                "metadata": d.MetadataBinary}


def _astype(x: Tensor, dt) -> Tensor:
    if x.dtype == dt:
        return x
    return Tensor(_ops.run(d.PointwiseCast(dt), [x]))


def _materialize(x: Tensor) -> Tensor:
    """Contiguous copy with the conjugation flag resolved."""
    return Tensor(_ops.run(d.MakeContiguous(), [x]))


def _scalar_tensor(value, dt, device) -> Tensor:
    from ._creation import full
    return full((), value, dtype=dt, device=device)


def _operands(a, b):
    """Promote a pair of operands (Tensors or Python scalars) to Tensors of one dtype."""
    ta, tb = isinstance(a, Tensor), isinstance(b, Tensor)
    for v, is_t in ((a, ta), (b, tb)):
        if not is_t and not isinstance(v, (bool, int, float, complex, np.generic)):
            raise _NotAnOperand(f"unsupported operand type {type(v).__name__}")
    if not (ta or tb):
        raise TypeError("at least one operand must be a hipfer Tensor")
    if ta and tb:
        dt = _dtypes.result_type(a.dtype, b.dtype)
    else:
        t, s = (a, b) if ta else (b, a)
        dt = _dtypes.result_type(t.dtype, s)  # NumPy 2: Python scalars are weak
        s = _scalar_tensor(s, dt, t.device)
        a, b = (t, s) if ta else (s, t)
    return a, b, dt


def _unary(op: UnaryOp):
    row = op.row
    desc = _UNARY_DESC[row.family](op)

    def fn(x, /):
        if not isinstance(x, Tensor):
            raise TypeError(f"{fn.__name__}() expects a hipfer Tensor, got {type(x).__name__}")
        if x.dtype.kind not in row.kinds and row.family == "analytic" and x.dtype.kind in "biu":
            x = _astype(x, _dtypes.default_float)
        if x.dtype.kind not in row.kinds:
            raise TypeError(f"{fn.__name__}() does not support dtype {x.dtype}")
        return Tensor(_ops.run(desc, [x]))
    return fn


def _binary(op: BinaryOp, swap=False):
    row = op.row
    desc = _BINARY_DESC[row.family](op)

    def fn(x1, x2, /):
        a, b = (x2, x1) if swap else (x1, x2)
        a, b, dt = _operands(a, b)
        if dt.kind not in row.kinds and dt.kind in "biu" and "f" in row.kinds:
            dt = _dtypes.default_float  # true division / analytic ops of integers
        if dt.kind not in row.kinds:
            raise TypeError(f"{fn.__name__}() does not support dtype {dt}")
        return Tensor(_ops.run(desc, [_astype(a, dt), _astype(b, dt)]))
    return fn


_UNARY = {
    "negative": UnaryOp.NEG, "abs": UnaryOp.ABS, "reciprocal": UnaryOp.RECIPROCAL,
    "square": UnaryOp.SQUARE, "sqrt": UnaryOp.SQRT, "rsqrt": UnaryOp.RSQRT, "exp": UnaryOp.EXP,
    "expm1": UnaryOp.EXPM1, "log": UnaryOp.LOG, "log1p": UnaryOp.LOG1P, "sin": UnaryOp.SIN,
    "cos": UnaryOp.COS, "tan": UnaryOp.TAN, "tanh": UnaryOp.TANH, "asin": UnaryOp.ASIN,
    "acos": UnaryOp.ACOS, "atan": UnaryOp.ATAN, "sinh": UnaryOp.SINH, "cosh": UnaryOp.COSH,
    "asinh": UnaryOp.ASINH, "acosh": UnaryOp.ACOSH, "atanh": UnaryOp.ATANH,
}
_BINARY = {
    "add": BinaryOp.ADD, "subtract": BinaryOp.SUB, "multiply": BinaryOp.MUL,
    "divide": BinaryOp.DIV, "maximum": BinaryOp.MAXIMUM, "minimum": BinaryOp.MINIMUM,
    "clamp_min": BinaryOp.CLAMP_MIN, "clamp_max": BinaryOp.CLAMP_MAX,
    "greater": BinaryOp.GREATER, "greater_equal": BinaryOp.GREATER_EQUAL,
    "equal": BinaryOp.EQUAL, "not_equal": BinaryOp.NOT_EQUAL, "pow": BinaryOp.POW,
    "atan2": BinaryOp.ATAN2, "hypot": BinaryOp.HYPOT, "xlogy": BinaryOp.XLOGY,
    "bitwise_and": BinaryOp.BITWISE_AND,
}
# a < b is b > a: the same kernel with the operands swapped
_SWAPPED = {"less": BinaryOp.GREATER, "less_equal": BinaryOp.GREATER_EQUAL}

__all__ = ["conj", "real", "imag", "where", "astype"]
for _name, _op in _UNARY.items():
    globals()[_name] = _unary(_op)
    globals()[_name].__name__ = _name
    __all__.append(_name)
for _name, _op in _BINARY.items():
    globals()[_name] = _binary(_op)
    globals()[_name].__name__ = _name
    __all__.append(_name)
for _name, _op in _SWAPPED.items():
    globals()[_name] = _binary(_op, swap=True)
    globals()[_name].__name__ = _name
    __all__.append(_name)
del _name, _op


# ------------------------------------------------------------- conjugation family
def conj(x: Tensor, /) -> Tensor:
    """Complex conjugate in O(1) (flips the lazy flag; nothing is copied)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"conj() expects a hipfer Tensor, got {type(x).__name__}")
    return x.conj()


def real(x: Tensor, /) -> Tensor:
    """Real part: a view for complex tensors (the flag does not change it)."""
    if x.dtype.kind != "c":
        return x
    return Tensor(x._data.real)


def imag(x: Tensor, /) -> Tensor:
    """Imaginary part: a view, negated (one pass) when x reads conjugated; zeros for real x."""
    if x.dtype.kind != "c":
        from ._creation import zeros
        return zeros(x.shape, dtype=x.dtype, device=x.device)
    im = Tensor(x._data.imag)
    return globals()["negative"](im) if x._conj else im


def astype(x: Tensor, dtype, /, *, copy: bool = True, device=None) -> Tensor:
    dt = _dtypes.as_dtype(dtype)
    if device is not None:
        x = x.to_device(device)
    if x.dtype == dt and not copy:
        return x
    if x.dtype.kind == "c" and dt.kind != "c":
        raise TypeError(f"astype from {x.dtype} to {dt} would drop the imaginary part; "
                        "take real() first")
    return Tensor(_ops.run(d.PointwiseCast(dt), [x]))


def where(condition: Tensor, x1, x2, /) -> Tensor:
    if not isinstance(condition, Tensor) or condition.dtype != np.bool_:
        raise TypeError("where() needs a bool Tensor condition")
    a, b, dt = _operands(x1, x2)
    desc = d.MetadataWhere() if dt.kind in "biu" else d.MaskWhere()
    return Tensor(_ops.run(desc, [condition, _astype(a, dt), _astype(b, dt)]))
