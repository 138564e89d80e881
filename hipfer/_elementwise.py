"""Elementwise functions of the namespace, built from the op table.

Each public function is one row of ``prims.optable`` (``UnaryOp`` / ``BinaryOp``) under
the row's ``api`` name, plus ``less`` / ``less_equal`` (``greater`` with the operands
swapped) and the functions written here (conj, real, imag, where, clip). The operands
are promoted to one dtype (NumPy's rules for now; Python scalars are "weak"), cast
where needed with PointwiseCast, and run as the op's family descriptor. The NumPy
backend's compiled warm path is put in front of these functions (and the operators)
when hipfer is imported (hipfer._warmpath.install), not here.
"""
from __future__ import annotations

import numpy as np

from . import _dtypes, _elementwise_docs as _docs, _ops
from ._core import cast, fill, materialize, operands, scalar_operand
from ._naming import public
from ._tensor import Tensor
from .prims import descriptors as d
from .prims.optable import BinaryOp, UnaryOp

_UNARY_DESC = {"scalar": d.ScalarUnary, "analytic": d.AnalyticUnary}
_BINARY_DESC = {"scalar": d.ScalarBinary, "analytic": d.AnalyticBinary,
                "metadata": d.MetadataBinary}


def _unary(op: UnaryOp, name: str):
    row = op.row
    site = _ops.Site(_UNARY_DESC[row.family](op), keep_layout=True, fn=name)
    kinds, analytic = row.kinds, row.family == "analytic"

    def fn(x, /):
        if not isinstance(x, Tensor):
            raise TypeError(f"{fn.__name__}() expects a hipfer Tensor, got {type(x).__name__}")
        kind = x._data.dtype.kind
        if kind not in kinds:
            if analytic and kind in "biu":
                x = cast(x, _dtypes.default_float)
            if x.dtype.kind not in kinds:
                raise TypeError(f"{fn.__name__}() does not support dtype {x.dtype}")
        return Tensor(site.run1(x))
    return fn


def _binary(op: BinaryOp, name: str, swap=False):
    row = op.row
    site = _ops.Site(_BINARY_DESC[row.family](op), keep_layout=True, fn=name)
    kinds = row.kinds
    # the dtypes two tensors of one dtype run in as they are (no promotion, no cast)
    as_is = frozenset(t for t in _dtypes.ALL_DTYPES if t.kind in kinds)

    def fn(x1, x2, /):
        a, b = (x2, x1) if swap else (x1, x2)
        ta, tb = type(a), type(b)
        if ta is Tensor:
            dt = a._data.dtype
            if tb is Tensor:  # warm path: two tensors of one dtype
                if b._data.dtype is dt and dt in as_is:
                    return Tensor(site.run2(a, b))
            elif (tb is float or tb is int or tb is complex or tb is bool) and dt in as_is:
                # a Python scalar that takes the tensor's dtype (weak): no promotion
                if _dtypes.scalar_type(dt, b) is dt:
                    return Tensor(site.run2(a, scalar_operand(b, dt, a)))
        elif tb is Tensor and (ta is float or ta is int or ta is complex or ta is bool):
            dt = b._data.dtype
            if dt in as_is and _dtypes.scalar_type(dt, a) is dt:
                return Tensor(site.run2(scalar_operand(a, dt, b), b))
        a, b, dt = operands(a, b, read_only=True)
        if dt.kind not in kinds and dt.kind in "biu" and "f" in kinds and "i" not in kinds:
            dt = _dtypes.default_float  # true division / float-only ops of integers
        if dt.kind not in kinds:
            raise TypeError(f"{fn.__name__}() does not support dtype {dt}")
        return Tensor(site.run2(cast(a, dt), cast(b, dt)))
    return fn


# public name -> op: every row with a namespace name (prims.optable OpRow.api)
_UNARY = {op.row.api: op for op in UnaryOp if op.row.api}
_BINARY = {op.row.api: op for op in BinaryOp if op.row.api}
# a < b is b > a: the same kernel with the operands swapped
_SWAPPED = {"less": BinaryOp.GREATER, "less_equal": BinaryOp.GREATER_EQUAL}

__all__ = ["conj", "real", "imag", "where", "clip"]
for _name, _op in _UNARY.items():
    globals()[_name] = public(_name, _unary(_op, _name))
    __all__.append(_name)
for _name, _op in _BINARY.items():
    globals()[_name] = public(_name, _binary(_op, _name))
    __all__.append(_name)
for _name, _op in _SWAPPED.items():
    globals()[_name] = public(_name, _binary(_op, _name, swap=True))
    __all__.append(_name)
del _name, _op
for _name, _op in {**_UNARY, **_BINARY, **_SWAPPED}.items():  # docstrings from the op table
    globals()[_name].__doc__ = _docs.doc(_name, _op.row)
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
        return fill(x.shape, 0, x.dtype, x.device)
    im = Tensor(x._data.imag)
    return negative(im) if x._conj else im  # noqa: F821 - made from the op table above


def where(condition: Tensor, x1, x2, /) -> Tensor:
    """x1 where condition is True, else x2, elementwise.

    condition: a bool Tensor. x1, x2: Tensors or Python scalars (weak). The three shapes
    broadcast; the result has the promoted dtype of x1 and x2 (the array API's rules).
    """
    if not isinstance(condition, Tensor) or condition.dtype != np.bool_:
        raise TypeError("where() needs a bool Tensor condition")
    a, b, dt = operands(x1, x2, read_only=True)
    desc = d.MetadataWhere() if dt.kind in "biu" else d.MaskWhere()
    return Tensor(_ops.run(desc, [condition, cast(a, dt), cast(b, dt)], called="where"))


# ------------------------------------------------------------------------- clip
def _clip_bound(x: Tensor, bound, name: str) -> Tensor:
    """A clip bound as a Tensor of x's dtype (the standard fixes the result dtype to x's).
    A Python int bound of an integer x is first clamped to the dtype's range, so it
    clips as the exact value would; a float bound of an integer x is refused."""
    dt = x.dtype
    if isinstance(bound, Tensor):
        if bound.dtype.kind not in "biuf":
            raise TypeError(f"clip() {name} must be real-valued, got dtype {bound.dtype}")
        if dt.kind in "iu" and bound.dtype.kind == "f":
            # as for a float scalar: the cast would wrap (uint8 x, -1.5 -> 255)
            raise TypeError(f"clip() {name} has dtype {bound.dtype} but x has dtype {dt}")
        if dt.kind in "iu" and bound.dtype.kind in "iu" and bound.dtype != dt:
            # another integer dtype: clamp the bound to the range both dtypes hold first,
            # so that it clips as its exact value would instead of wrapping in the cast
            info, own = np.iinfo(dt), np.iinfo(bound.dtype)
            bound = clip(bound, max(int(info.min), int(own.min)), min(int(info.max),
                                                                      int(own.max)))
        return cast(bound, dt)
    if isinstance(bound, bool) or not isinstance(bound, (int, float, np.integer, np.floating)):
        raise TypeError(f"clip() {name} must be an int, a float, a Tensor or None, "
                        f"got {type(bound).__name__}")
    if dt.kind in "iu":
        if isinstance(bound, (float, np.floating)):
            raise TypeError(f"clip() {name}={bound!r} is a float but x has dtype {dt}")
        info = np.iinfo(dt)
        bound = min(max(int(bound), int(info.min)), int(info.max))
    return fill((), bound, dt, x.device)


def clip(x: Tensor, /, min=None, max=None) -> Tensor:
    """Clamp x to [min, max]: minimum(maximum(x, min), max) in x's dtype, broadcasting x
    against the bounds. NaN in x or in a bound gives NaN (the standard's special cases);
    min > max gives max (NumPy's)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"clip() expects a hipfer Tensor, got {type(x).__name__}")
    if x.dtype.kind not in "iuf":
        raise TypeError(f"clip() needs a real-valued x, got dtype {x.dtype}")
    out = x
    if min is not None:
        out = Tensor(_ops.run(d.ScalarBinary(BinaryOp.MAXIMUM), [out, _clip_bound(x, min, "min")],
                              called="clip"))
    if max is not None:
        out = Tensor(_ops.run(d.ScalarBinary(BinaryOp.MINIMUM), [out, _clip_bound(x, max, "max")],
                              called="clip"))
    return materialize(x) if out is x else out
