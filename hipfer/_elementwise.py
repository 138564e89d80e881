"""Elementwise functions of the namespace, built from the op table.

Each public function is one entry of ``_UNARY`` / ``_BINARY`` (public name -> op). The
operands are promoted to one dtype (NumPy's rules for now; Python scalars are "weak"),
cast where needed with PointwiseCast, and run as the op's family descriptor.
"""
from __future__ import annotations

import math

import numpy as np

from . import _dtypes, _ops, _warmpath
from ._naming import public
from ._tensor import _DUNDER, Tensor, _NotAnOperand
from .prims import descriptors as d
from .prims.optable import BinaryOp, UnaryOp

_UNARY_DESC = {"scalar": d.ScalarUnary, "analytic": d.AnalyticUnary}
_BINARY_DESC = {"scalar": d.ScalarBinary, "analytic": d.AnalyticBinary,
                "metadata": d.MetadataBinary}


_CASTS: dict = {}  # dtype -> Site(PointwiseCast(dtype))
_FILL = _ops.Site(d.Generate(d.GenerateKind.CONSTANT))


def cast_site(dt) -> _ops.Site:
    """The Site of PointwiseCast(dt) (astype keeps the operand's layout, as NumPy's does)."""
    site = _CASTS.get(dt)
    if site is None:
        site = _CASTS[dt] = _ops.Site(d.PointwiseCast(dt), keep_layout=True)
    return site


def _astype(x: Tensor, dt) -> Tensor:
    if x.dtype == dt:
        return x
    return Tensor(cast_site(dt).run1(x))


def _materialize(x: Tensor) -> Tensor:
    """Contiguous copy with the conjugation flag resolved."""
    return Tensor(_ops.run(d.MakeContiguous(), [x]))


def _scalar_tensor(value, dt, device) -> Tensor:
    from ._creation import full
    return full((), value, dtype=dt, device=device)


def _scalar_like(value, dt, t: Tensor) -> Tensor:
    """A 0-d tensor of dtype dt holding value, on t's device: what
    ``full((), value, dtype=dt, device=t.device)`` gives for the scalars _operands passes
    (a supported dt; a complex value only with a complex dt), without its checks and
    device lookup."""
    return Tensor(_FILL.generate(_ops.backend_of_data(t._data), (), dt, value=value))


_SCALARS: dict = {}  # (backend, dtype, type, value, signs) -> a cached 0-d device Tensor
_SCALARS_MAX = 256


def _scalar_operand(value, dt, t: Tensor) -> Tensor:
    """_scalar_like for an operand that is only read: the 0-d array is made once per
    (backend, dtype, value) and reused, since making it is an allocation and a fill (a
    launch on a device) -- as much host time as the op itself. NumPy's are made
    read-only, so a stray write would raise instead of changing the cached value."""
    be = _ops.backend_of_data(t._data)
    if not be.caches_scalars:
        return _scalar_like(value, dt, t)
    tv = type(value)
    # -0.0 == 0.0 (and hashes alike): the signs keep them apart; a NaN never equals
    # itself, so it is only found again as the same object
    signs = ((math.copysign(1.0, value),) if tv is float else
             (math.copysign(1.0, value.real), math.copysign(1.0, value.imag)) if tv is complex else ())
    key = (be, dt, tv, value, signs)
    s = _SCALARS.get(key)
    if s is None:
        if len(_SCALARS) >= _SCALARS_MAX:
            _SCALARS.clear()
        s = _scalar_like(value, dt, t)
        if isinstance(s._data, np.ndarray):
            s._data.flags.writeable = False
        be.synchronize()  # later users may run on another stream
        _SCALARS[key] = s
    return s


def _operands(a, b, read_only: bool = False):
    """Promote a pair of operands (Tensors, Python or NumPy scalars) to Tensors of one dtype.

    Tensors promote by hipfer._dtypes.result_type (the standard's tables; NumPy's rules
    across kinds). Python scalars are weak: they take the tensor's dtype where their kind
    fits (an int out of its range raises OverflowError) -- see hipfer._dtypes. NumPy
    scalars count as 0-d tensors of their dtype, as in NumPy 2. Anything else raises
    _NotAnOperand, so an operator can return NotImplemented. read_only: the caller only
    reads the operands (never returns or writes one), so a Python scalar's 0-d array may
    be a cached one (_scalar_operand).
    """
    ta, tb = isinstance(a, Tensor), isinstance(b, Tensor)
    for v, is_t in ((a, ta), (b, tb)):
        if not is_t and not isinstance(v, (bool, int, float, complex, np.generic)):
            raise _NotAnOperand(f"unsupported operand type {type(v).__name__}")
    if not (ta or tb):
        raise TypeError("at least one operand must be a hipfer Tensor")
    if ta and tb:
        return a, b, _dtypes.result_type(a.dtype, b.dtype)
    t, s = (a, b) if ta else (b, a)
    if isinstance(s, np.generic):
        dt = _dtypes.result_type(t.dtype, s.dtype)
    else:
        dt = _dtypes.scalar_type(t.dtype, s)
    s = _scalar_operand(s, dt, t) if read_only and not isinstance(s, np.generic) else _scalar_like(s, dt, t)
    return (t, s, dt) if ta else (s, t, dt)


def _unary(op: UnaryOp):
    row = op.row
    site = _ops.Site(_UNARY_DESC[row.family](op), keep_layout=True)
    kinds, analytic = row.kinds, row.family == "analytic"

    def fn(x, /):
        if not isinstance(x, Tensor):
            raise TypeError(f"{fn.__name__}() expects a hipfer Tensor, got {type(x).__name__}")
        kind = x._data.dtype.kind
        if kind not in kinds:
            if analytic and kind in "biu":
                x = _astype(x, _dtypes.default_float)
            if x.dtype.kind not in kinds:
                raise TypeError(f"{fn.__name__}() does not support dtype {x.dtype}")
        return Tensor(site.run1(x))
    return fn


def _binary(op: BinaryOp, swap=False):
    row = op.row
    site = _ops.Site(_BINARY_DESC[row.family](op), keep_layout=True)
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
                    return Tensor(site.run2(a, _scalar_operand(b, dt, a)))
        elif tb is Tensor and (ta is float or ta is int or ta is complex or ta is bool):
            dt = b._data.dtype
            if dt in as_is and _dtypes.scalar_type(dt, a) is dt:
                return Tensor(site.run2(_scalar_operand(a, dt, b), b))
        a, b, dt = _operands(a, b, read_only=True)
        if dt.kind not in kinds and dt.kind in "biu" and "f" in kinds and "i" not in kinds:
            dt = _dtypes.default_float  # true division / float-only ops of integers
        if dt.kind not in kinds:
            raise TypeError(f"{fn.__name__}() does not support dtype {dt}")
        return Tensor(site.run2(_astype(a, dt), _astype(b, dt)))
    return fn


_UNARY = {
    "negative": UnaryOp.NEG, "abs": UnaryOp.ABS, "reciprocal": UnaryOp.RECIPROCAL,
    "square": UnaryOp.SQUARE, "sqrt": UnaryOp.SQRT, "rsqrt": UnaryOp.RSQRT, "exp": UnaryOp.EXP,
    "expm1": UnaryOp.EXPM1, "log": UnaryOp.LOG, "log1p": UnaryOp.LOG1P, "sin": UnaryOp.SIN,
    "cos": UnaryOp.COS, "tan": UnaryOp.TAN, "tanh": UnaryOp.TANH, "asin": UnaryOp.ASIN,
    "acos": UnaryOp.ACOS, "atan": UnaryOp.ATAN, "sinh": UnaryOp.SINH, "cosh": UnaryOp.COSH,
    "asinh": UnaryOp.ASINH, "acosh": UnaryOp.ACOSH, "atanh": UnaryOp.ATANH,
    "positive": UnaryOp.POSITIVE, "bitwise_invert": UnaryOp.BITWISE_INVERT,
    "logical_not": UnaryOp.LOGICAL_NOT, "ceil": UnaryOp.CEIL, "floor": UnaryOp.FLOOR,
    "trunc": UnaryOp.TRUNC, "round": UnaryOp.ROUND, "sign": UnaryOp.SIGN, "signbit": UnaryOp.SIGNBIT,
    "isnan": UnaryOp.ISNAN, "isinf": UnaryOp.ISINF, "isfinite": UnaryOp.ISFINITE,
    "log2": UnaryOp.LOG2, "log10": UnaryOp.LOG10,
}
_BINARY = {
    "add": BinaryOp.ADD, "subtract": BinaryOp.SUB, "multiply": BinaryOp.MUL,
    "divide": BinaryOp.DIV, "maximum": BinaryOp.MAXIMUM, "minimum": BinaryOp.MINIMUM,
    "clamp_min": BinaryOp.CLAMP_MIN, "clamp_max": BinaryOp.CLAMP_MAX,
    "greater": BinaryOp.GREATER, "greater_equal": BinaryOp.GREATER_EQUAL,
    "equal": BinaryOp.EQUAL, "not_equal": BinaryOp.NOT_EQUAL, "pow": BinaryOp.POW,
    "atan2": BinaryOp.ATAN2, "hypot": BinaryOp.HYPOT, "xlogy": BinaryOp.XLOGY,
    "bitwise_and": BinaryOp.BITWISE_AND, "bitwise_or": BinaryOp.BITWISE_OR,
    "bitwise_xor": BinaryOp.BITWISE_XOR, "bitwise_left_shift": BinaryOp.BITWISE_LEFT_SHIFT,
    "bitwise_right_shift": BinaryOp.BITWISE_RIGHT_SHIFT, "logical_and": BinaryOp.LOGICAL_AND,
    "logical_or": BinaryOp.LOGICAL_OR, "logical_xor": BinaryOp.LOGICAL_XOR,
    "floor_divide": BinaryOp.FLOOR_DIVIDE, "remainder": BinaryOp.REMAINDER,
    "copysign": BinaryOp.COPYSIGN, "nextafter": BinaryOp.NEXTAFTER, "logaddexp": BinaryOp.LOGADDEXP,
}
# a < b is b > a: the same kernel with the operands swapped
_SWAPPED = {"less": BinaryOp.GREATER, "less_equal": BinaryOp.GREATER_EQUAL}

__all__ = ["conj", "real", "imag", "where", "clip"]
# each wrapped in the NumPy backend's compiled warm path, where it is built (_warmpath)
for _name, _op in _UNARY.items():
    globals()[_name] = _warmpath.elementwise(public(_name, _unary(_op)), _op)
    __all__.append(_name)
for _name, _op in _BINARY.items():
    globals()[_name] = _warmpath.elementwise(public(_name, _binary(_op)), _op)
    __all__.append(_name)
for _name, _op in _SWAPPED.items():
    globals()[_name] = _warmpath.elementwise(public(_name, _binary(_op, swap=True)), _op, swap=True)
    __all__.append(_name)
del _name, _op


def _warm_operators():
    """The Tensor operators of the unary and binary ops above, with the same warm path in
    front (a reflected operator computes op(other, self): its ufunc operands swap)."""
    ops = {**_UNARY, **_BINARY, **_SWAPPED}
    for name, stem in _DUNDER.items():
        op = ops.get(name)
        if op is None:
            continue
        for dunder, reflected in ((f"__{stem}__", False), (f"__r{stem}__", True)):
            slow = Tensor.__dict__.get(dunder)
            if slow is not None:
                setattr(Tensor, dunder, _warmpath.elementwise(slow, op, (name in _SWAPPED) != reflected))


_warm_operators()


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


def where(condition: Tensor, x1, x2, /) -> Tensor:
    if not isinstance(condition, Tensor) or condition.dtype != np.bool_:
        raise TypeError("where() needs a bool Tensor condition")
    a, b, dt = _operands(x1, x2, read_only=True)
    desc = d.MetadataWhere() if dt.kind in "biu" else d.MaskWhere()
    return Tensor(_ops.run(desc, [condition, _astype(a, dt), _astype(b, dt)]))


# ------------------------------------------------------------------------- clip
def _clip_bound(x: Tensor, bound, name: str) -> Tensor:
    """A clip bound as a Tensor of x's dtype (the standard fixes the result dtype to x's).
    A Python int bound of an integer x is first clamped to the dtype's range, so it
    clips as the exact value would; a float bound of an integer x is refused."""
    dt = x.dtype
    if isinstance(bound, Tensor):
        if bound.dtype.kind not in "biuf":
            raise TypeError(f"clip() {name} must be real-valued, got dtype {bound.dtype}")
        return _astype(bound, dt)
    if isinstance(bound, bool) or not isinstance(bound, (int, float, np.integer, np.floating)):
        raise TypeError(f"clip() {name} must be an int, a float, a Tensor or None, "
                        f"got {type(bound).__name__}")
    if dt.kind in "iu":
        if isinstance(bound, (float, np.floating)):
            raise TypeError(f"clip() {name}={bound!r} is a float but x has dtype {dt}")
        info = np.iinfo(dt)
        bound = min(max(int(bound), int(info.min)), int(info.max))
    return _scalar_tensor(bound, dt, x.device)


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
        out = Tensor(_ops.run(d.ScalarBinary(BinaryOp.MAXIMUM), [out, _clip_bound(x, min, "min")]))
    if max is not None:
        out = Tensor(_ops.run(d.ScalarBinary(BinaryOp.MINIMUM), [out, _clip_bound(x, max, "max")]))
    return _materialize(x) if out is x else out
