"""Tracing: call the user's function with proxies that record each op into a Graph.

A ``Traced`` stands for a tensor argument (or an intermediate); Python scalars stay weak
scalars (``Weak`` for a scalar argument, whose value is a kernel argument). The proxy's
operators record the ops the Tensor's operators would run. ``hipfer.exp(proxy)`` reaches
the tracer because, while one trace runs (under a lock), the hipfer namespace's public
functions are wrapped: a call with a proxy among its arguments is recorded (an
elementwise function) or refused with the op's name (anything else); a call without one
goes to the real function. Outside a trace nothing is wrapped, so eager calls pay nothing.
"""
from __future__ import annotations

import builtins
import sys
import threading

import numpy as np

from .. import _dtypes, _elementwise
from .._tensor import Tensor
from .._views import AxisError
from ..prims import descriptors as d
from ..prims.optable import BinaryOp, ReduceOp, UnaryOp
from ._graph import (Builder, FuseError, Graph, Reduction, binary_desc,
                     binary_operand_dtype, unary_desc, unary_operand_dtype)

_PY_SCALARS = (builtins.bool, int, float, complex)


def _refuse(what: str, hint: str):
    raise FuseError(f"hipfer.fuse: {what}; {hint}")


class Weak:
    """A Python scalar argument of the fused function: weak, its value given per call."""
    __slots__ = ("type", "arg")

    def __init__(self, tp, arg: int):
        self.type, self.arg = tp, arg

    def _flow(self, *a, **k):
        _refuse(f"the value of scalar argument {self.arg} is not known at trace time "
                "(Python control flow or arithmetic on it)",
                "compute it outside the fused function and pass the result")
    __bool__ = __float__ = __int__ = __index__ = __complex__ = _flow
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = _flow
    __rtruediv__ = __neg__ = __pow__ = __rpow__ = __lt__ = __gt__ = __le__ = __ge__ = _flow


class Strong(Weak):
    """A NumPy scalar argument: strong (a 0-d tensor of its dtype, as NumPy 2 and the
    namespace treat it), its value given per call."""
    __slots__ = ("dtype",)

    def __init__(self, tp, arg: int):
        super().__init__(tp, arg)
        self.dtype = np.dtype(tp)


class Traced:
    """A tensor value inside a fused function (records ops; has dtype, ndim, device)."""
    __slots__ = ("_tr", "_node", "dtype", "ndim", "_reduced")
    __array_priority__ = 1000

    def __init__(self, tr, node: int, reduced: builtins.bool = False):
        self._tr, self._node, self._reduced = tr, node, reduced
        self.dtype = tr.b.nodes[node].dtype
        self.ndim = tr.ndims[node]

    @property
    def device(self):
        return self._tr.device

    def _flow(self, *a, **k):
        _refuse("a traced tensor's value is not known at trace time (Python control flow "
                "on tensor values: if/while/bool()/float()/len()/iteration)",
                "use hipfer.where, or call the function eagerly")
    __bool__ = __float__ = __int__ = __index__ = __complex__ = __len__ = __iter__ = _flow

    @property
    def shape(self):
        _refuse("shape is not known at trace time (a fused function is traced once for "
                "every shape of a given ndim and broadcast pattern)",
                "pass shape-derived values as arguments or call it eagerly")

    def __getitem__(self, key):
        _refuse("indexing (__getitem__) is not elementwise", "index outside the fused function")

    def __setitem__(self, key, value):
        _refuse("item assignment (__setitem__) is not elementwise",
                "assign outside the fused function")

    def __matmul__(self, other):
        _refuse("matmul is not elementwise", "call it outside the fused function")
    __rmatmul__ = __matmul__

    def __array__(self, *a, **k):
        _refuse("a traced tensor cannot become a NumPy array", "call it eagerly")

    def __array_ufunc__(self, ufunc, method, *inputs, **kw):
        """np.<ufunc>(proxy): the hipfer function of that name, as the dispatch does."""
        from .._numpy_dispatch import ALIASES
        name = ALIASES.get(ufunc.__name__, ufunc.__name__)
        fn = _TRACING.get(name)
        if method != "__call__" or kw or fn is None:
            _refuse(f"numpy.{ufunc.__name__}{'' if method == '__call__' else '.' + method}"
                    " cannot be fused", "call it outside the fused function")
        return fn(*inputs)

    def __array_function__(self, func, types, args, kwargs):
        fn = _TRACING.get(func.__name__)
        if fn is None:
            _refuse(f"{func.__name__} is not elementwise", "call it outside the fused function")
        return fn(*args, **kwargs)

    def astype(self, dtype, /, *, copy=True, device=None):
        return astype(self, dtype, copy=copy)

    def conj(self):
        return conj(self)

    conjugate = conj

    @property
    def real(self):
        return real(self)

    @property
    def imag(self):
        return imag(self)

    def sum(self, axis=None, dtype=None, keepdims=False):
        return sum(self, axis=axis, dtype=dtype, keepdims=keepdims)

    def prod(self, axis=None, dtype=None, keepdims=False):
        return prod(self, axis=axis, dtype=dtype, keepdims=keepdims)

    def max(self, axis=None, keepdims=False):
        return max(self, axis=axis, keepdims=keepdims)

    def min(self, axis=None, keepdims=False):
        return min(self, axis=axis, keepdims=keepdims)

    def mean(self, axis=None, keepdims=False):
        return mean(self, axis=axis, keepdims=keepdims)

    def __repr__(self):
        return f"<hipfer.fuse traced tensor: {self.ndim}-d {self.dtype}>"


class Tracer:
    """One trace: the graph being built and the ndim of each node."""

    def __init__(self, device):
        self.b = Builder()
        self.ndims: list = []
        self.device = device

    def node(self, idx: int, ndim: int) -> int:
        while len(self.ndims) <= idx:
            self.ndims.append(ndim)
        return idx


# ------------------------------------------------------------------ operands
def _tracer_of(*xs) -> Tracer:
    for x in xs:
        if isinstance(x, Traced):
            if x._reduced:
                _refuse("a reduction can only end a fused function",
                        "apply further ops outside it")
            return x._tr
    return None


def _check_value(x, fn: str):
    if isinstance(x, Tensor):
        _refuse(f"{fn}() got a Tensor captured from outside the fused function",
                "pass it as an argument of the fused function")
    if not isinstance(x, (Traced, Weak, np.generic) + _PY_SCALARS):
        _refuse(f"{fn}() got an operand of type {type(x).__name__}",
                "fused functions take hipfer Tensors and Python scalars")


def _scalar(tr: Tracer, s, dt) -> int:
    """A scalar slot of dtype dt for s (a Weak argument or a literal)."""
    source = ("arg", s.arg, s.type) if isinstance(s, Weak) else ("const", s)
    return tr.node(tr.b.scalar(source, dt), 0)


def _weak_dtype(dt, s, fn: str):
    """_dtypes.scalar_type for a literal or a Weak argument (its range is checked per call)."""
    if isinstance(s, Weak):
        sample = {builtins.bool: False, int: 0, float: 0.0, complex: 0j}[s.type]
        return _dtypes.scalar_type(dt, sample)
    return _dtypes.scalar_type(dt, s)


def _pair(tr: Tracer, a, b, fn: str):
    """_core.operands for traced values: (node a, node b, common dtype)."""
    _check_value(a, fn)
    _check_value(b, fn)
    ta, tb = isinstance(a, Traced), isinstance(b, Traced)
    if ta and tb:
        return a._node, b._node, _dtypes.result_type(a.dtype, b.dtype)
    if not (ta or tb):
        raise FuseError(f"hipfer.fuse: {fn}(): at least one operand must be a tensor")
    t, s = (a, b) if ta else (b, a)
    dt = (_dtypes.result_type(t.dtype, s.dtype) if isinstance(s, (np.generic, Strong))
          else _weak_dtype(t.dtype, s, fn))
    sn = _scalar(tr, s.item() if isinstance(s, np.generic) else s, dt)
    return (t._node, sn, dt) if ta else (sn, t._node, dt)


def _ndim(tr: Tracer, *nodes) -> int:
    return builtins.max([tr.ndims[n] for n in nodes] + [0])


def _op(tr: Tracer, desc, args, fn: str) -> Traced:
    n = tr.b.op(desc, tuple(args), fn)
    return Traced(tr, tr.node(n, _ndim(tr, *args)))


def _cast(tr: Tracer, n: int, dt) -> int:
    m = tr.b.cast(n, dt)
    return tr.node(m, tr.ndims[n])


# ---------------------------------------------------------- tracing functions
def _unary_fn(op: UnaryOp, name: str):
    def fn(x, /):
        tr = _tracer_of(x)
        if tr is None:
            _refuse(f"{name}() expects a tensor", "pass a hipfer Tensor")
        dt = unary_operand_dtype(op, x.dtype, name)
        return _op(tr, unary_desc(op), (_cast(tr, x._node, dt),), name)
    return fn


def _binary_fn(op: BinaryOp, name: str, swap: builtins.bool = False):
    def fn(x1, x2, /):
        a, b = (x2, x1) if swap else (x1, x2)
        tr = _tracer_of(a, b)
        na, nb, dt = _pair(tr, a, b, name)
        dt = binary_operand_dtype(op, dt, name)
        return _op(tr, binary_desc(op), (_cast(tr, na, dt), _cast(tr, nb, dt)), name)
    return fn


def conj(x, /):
    _tracer_of(x)
    if x.dtype.kind != "c":
        return x
    return _op(x._tr, unary_desc(UnaryOp.CONJ), (x._node,), "conj")


def real(x, /):
    _tracer_of(x)
    if x.dtype.kind != "c":
        return x
    return _op(x._tr, unary_desc(UnaryOp.REAL), (x._node,), "real")


def imag(x, /):
    _tracer_of(x)
    if x.dtype.kind != "c":
        _refuse("imag() of a real tensor is a constant tensor of zeros",
                "use hipfer.zeros_like outside the fused function")
    return _op(x._tr, unary_desc(UnaryOp.IMAG), (x._node,), "imag")


def where(condition, x1, x2, /):
    tr = _tracer_of(condition, x1, x2)
    if not isinstance(condition, Traced) or condition.dtype != np.bool_:
        _check_value(condition, "where")
        raise FuseError("hipfer.fuse: where() needs a bool tensor condition")
    na, nb, dt = _pair(tr, x1, x2, "where")
    desc = d.MetadataWhere() if dt.kind in "biu" else d.MaskWhere()
    return _op(tr, desc, (condition._node, _cast(tr, na, dt), _cast(tr, nb, dt)), "where")


def astype(x, dtype, /, *, copy=True, device=None):
    tr = _tracer_of(x)
    if tr is None:
        _refuse("astype() expects a tensor", "pass a hipfer Tensor")
    dt = _dtypes.as_dtype(dtype)
    if x.dtype.kind == "c" and dt.kind in "iuf":
        raise FuseError(f"hipfer.fuse: astype from {x.dtype} to {dt} would drop the "
                        "imaginary part; take real() or imag() first")
    if device is not None:
        _refuse("astype(device=...) moves data", "move the tensors before the call")
    if x.dtype == dt:
        return x  # eager copies (copy=True); the values are the same
    return Traced(tr, _cast(tr, x._node, dt))


def _clip_bound(x: Traced, bound, name: str) -> int:
    """_elementwise._clip_bound for traced values: a node of x's dtype."""
    tr, dt = x._tr, x.dtype
    if isinstance(bound, Traced):
        _tracer_of(bound)
        if bound.dtype.kind not in "biuf":
            raise FuseError(f"hipfer.fuse: clip() {name} must be real-valued, got dtype "
                            f"{bound.dtype}")
        if dt.kind in "iu" and bound.dtype.kind == "f":
            raise FuseError(f"hipfer.fuse: clip() {name} has dtype {bound.dtype} but x has "
                            f"dtype {dt}")
        if dt.kind in "iu" and bound.dtype.kind in "iu" and bound.dtype != dt:
            info, own = np.iinfo(dt), np.iinfo(bound.dtype)
            bound = clip(bound, builtins.max(int(info.min), int(own.min)),
                         builtins.min(int(info.max), int(own.max)))
        return _cast(tr, bound._node, dt)
    _check_value(bound, "clip")
    if isinstance(bound, Weak):
        _refuse("clip() bounds given as scalar arguments", "pass them as 0-d tensors")
    if isinstance(bound, builtins.bool) or not isinstance(bound, (int, float, np.integer,
                                                                  np.floating)):
        raise FuseError(f"hipfer.fuse: clip() {name} must be an int, a float, a Tensor or "
                        f"None, got {type(bound).__name__}")
    if dt.kind in "iu":
        if isinstance(bound, (float, np.floating)):
            raise FuseError(f"hipfer.fuse: clip() {name}={bound!r} is a float but x has "
                            f"dtype {dt}")
        info = np.iinfo(dt)
        bound = builtins.min(builtins.max(int(bound), int(info.min)), int(info.max))
    return _scalar(tr, bound.item() if isinstance(bound, np.generic) else bound, dt)


def clip(x, /, min=None, max=None):
    tr = _tracer_of(x, min, max)
    if not isinstance(x, Traced):
        _refuse("clip() expects a tensor x", "pass a hipfer Tensor")
    if x.dtype.kind not in "iuf":
        raise FuseError(f"hipfer.fuse: clip() needs a real-valued x, got dtype {x.dtype}")
    out = x
    if min is not None:
        out = _op(tr, binary_desc(BinaryOp.MAXIMUM), (out._node, _clip_bound(x, min, "min")),
                  "clip")
    if max is not None:
        out = _op(tr, binary_desc(BinaryOp.MINIMUM), (out._node, _clip_bound(x, max, "max")),
                  "clip")
    return out


# ------------------------------------------------------------------ reductions
def _axes(axis, ndim: int, fn: str) -> tuple:
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = []
    for a in axes:
        if not -builtins.max(ndim, 1) <= a < builtins.max(ndim, 1):
            raise AxisError(f"hipfer.fuse: {fn}(): axis {a} is out of range for a "
                            f"{ndim}-d tensor")
        out.append(int(a) % builtins.max(ndim, 1))
    if len(set(out)) != len(out):
        raise ValueError(f"hipfer.fuse: {fn}(): repeated axis in {axis}")
    return tuple(sorted(out)) if ndim else ()


def _reduced(x: Traced, node: int, op: str, axis, keepdims, out_dtype, fn: str) -> Traced:
    tr = x._tr
    tr.reduction = Reduction(op, _axes(axis, x.ndim, fn), builtins.bool(keepdims),
                             np.dtype(out_dtype), x.ndim)
    return Traced(tr, node, reduced=True)


def _sum_like(op: ReduceOp):
    name = op.cname

    def fn(x, /, *, axis=None, dtype=None, keepdims=False):
        tr = _tracer_of(x)
        if tr is None:
            _refuse(f"{name}() expects a tensor", "pass a hipfer Tensor")
        k = x.dtype.kind
        dt = (_dtypes.as_dtype(dtype) if dtype is not None else
              _dtypes.int64 if k in "bi" else _dtypes.uint64 if k == "u" else x.dtype)
        n = _cast(tr, x._node, dt)
        red = name if dt.kind != "b" else ("any" if op is ReduceOp.SUM else "all")
        return _reduced(x, n, red, axis, keepdims, dt, name)
    return fn


def _extreme(op: ReduceOp):
    name = op.cname

    def fn(x, /, *, axis=None, keepdims=False):
        tr = _tracer_of(x)
        if tr is None:
            _refuse(f"{name}() expects a tensor", "pass a hipfer Tensor")
        if x.dtype.kind == "c":
            raise FuseError(f"hipfer.fuse: {name}() is not defined for complex tensors")
        return _reduced(x, x._node, name, axis, keepdims, x.dtype, name)
    return fn


def mean(x, /, *, axis=None, keepdims=False):
    """_statistical.mean: integers in the default float dtype, float16 through float32."""
    tr = _tracer_of(x)
    if tr is None:
        _refuse("mean() expects a tensor", "pass a hipfer Tensor")
    dt = _dtypes.float_for(x.dtype)
    work = _dtypes.float32 if dt == _dtypes.float16 else dt
    n = _cast(tr, _cast(tr, x._node, dt), work)
    return _reduced(x, n, "mean", axis, keepdims, dt, "mean")


sum = _sum_like(ReduceOp.SUM)  # noqa: A001
prod = _sum_like(ReduceOp.PROD)
max = _extreme(ReduceOp.MAX)  # noqa: A001
min = _extreme(ReduceOp.MIN)  # noqa: A001

# name -> tracing function: every elementwise function of the namespace and the above
_TRACING = {name: _unary_fn(op, name) for name, op in _elementwise._UNARY.items()}
_TRACING.update({name: _binary_fn(op, name) for name, op in _elementwise._BINARY.items()})
_TRACING.update({name: _binary_fn(op, name, swap=True)
                 for name, op in _elementwise._SWAPPED.items()})
_TRACING.update(conj=conj, real=real, imag=imag, where=where, astype=astype, clip=clip,
                sum=sum, prod=prod, max=max, min=min, mean=mean)
_TRACING["conjugate"] = conj


# NumPy's names (hipfer.arccos, np.arctan2(proxy), ...): the same op rows, traced where
# their dtype rule is the standard's -- a floating operand present (NumPy gives integer
# inputs of float functions its smallest float, and bool its own loops: those are refused
# with the remedy, never traced to a different dtype)
def _kind_of(v) -> str:
    dt = getattr(v, "dtype", None)
    if dt is not None:
        return dt.kind
    tp = v.type if isinstance(v, Weak) else type(v)
    return {builtins.bool: "b", int: "i", float: "f", complex: "c"}.get(tp, "f")


def _numpy_named(make, name: str, integer_ok: builtins.bool, only=None):
    def fn(*args):
        kinds = [_kind_of(a) for a in args]
        if only and any(k not in only for k in kinds):
            _refuse(f"{name} does not take {'/'.join(sorted(set(kinds) - set(only)))} "
                    "operands", f"call hipfer.{name} outside the fused function")
        if "b" in kinds or not (integer_ok or any(k in "fc" for k in kinds)):
            _refuse(f"numpy's {name} of {'bool' if 'b' in kinds else 'integer'} operands "
                    "follows NumPy's own dtype rule, which hipfer.fuse does not trace",
                    f"call hipfer.{name} outside the fused function, or its array API "
                    "spelling inside")
        return make(*args)
    return fn


_INTEGER_OK = {"absolute", "fix", "left_shift", "right_shift", "mod", "fmod", "fmax", "fmin",
               "gcd", "lcm", "power"}
for _name, (_row_op, _kinds, _copy) in _elementwise.NUMPY_UNARY.items():
    _TRACING[_name] = _numpy_named(_unary_fn(_row_op, _name), _name, _name in _INTEGER_OK,
                                   _kinds)
for _name, _row_op in _elementwise.NUMPY_BINARY.items():
    _TRACING[_name] = _numpy_named(_binary_fn(_row_op, _name), _name, _name in _INTEGER_OK)
for _name, _same in _elementwise.NUMPY_SAME.items():
    _TRACING[_name] = _TRACING[_same]
del _name, _row_op, _kinds, _copy, _same

# the Traced's operators: the Tensor's (hipfer._array_methods.DUNDER), recorded
_DUNDER = {"add": "add", "subtract": "sub", "multiply": "mul", "divide": "truediv",
           "floor_divide": "floordiv", "remainder": "mod", "pow": "pow",
           "bitwise_and": "and", "bitwise_or": "or", "bitwise_xor": "xor",
           "bitwise_left_shift": "lshift", "bitwise_right_shift": "rshift"}
_COMPARE = {"greater": "gt", "greater_equal": "ge", "less": "lt", "less_equal": "le",
            "equal": "eq", "not_equal": "ne"}
_UNARY_DUNDER = {"negative": "neg", "positive": "pos", "abs": "abs",
                 "bitwise_invert": "invert"}


def _install_operators():
    for name, stem in _DUNDER.items():
        f = _TRACING[name]
        setattr(Traced, f"__{stem}__", lambda self, o, f=f: f(self, o))
        setattr(Traced, f"__r{stem}__", lambda self, o, f=f: f(o, self))
    for name, stem in _COMPARE.items():
        f = _TRACING[name]
        setattr(Traced, f"__{stem}__", lambda self, o, f=f: f(self, o))
    for name, stem in _UNARY_DUNDER.items():
        f = _TRACING[name]
        setattr(Traced, f"__{stem}__", lambda self, f=f: f(self))
    Traced.__hash__ = None


_install_operators()


# -------------------------------------------------------- the namespace during a trace
_lock = threading.RLock()


def _has_proxy(args, kwargs) -> builtins.bool:
    for v in args:
        if isinstance(v, (Traced, Weak)) or (isinstance(v, (tuple, list)) and
                                             _has_proxy(v, {})):
            return True
    return _has_proxy(tuple(kwargs.values()), {}) if kwargs else False


#: namespace functions that only read their arguments' dtype or ndim: they run as they
#: are on traced values (hf.result_type(x, y) inside a fused function is a Python value)
_QUERIES = frozenset({"result_type", "can_cast", "isdtype", "finfo", "iinfo"})


def _wrap(original, name: str, prefix: str):
    if prefix == "" and name in _QUERIES:
        return original
    tracing = _TRACING.get(name) if prefix == "" else None

    def wrapper(*args, **kwargs):
        if _has_proxy(args, kwargs):
            if tracing is None:
                _refuse(f"{prefix}{name} is not elementwise",
                        "call it outside the fused function")
            return tracing(*args, **kwargs)
        return original(*args, **kwargs)
    wrapper.__name__ = getattr(original, "__name__", name)
    wrapper.__doc__ = getattr(original, "__doc__", None)
    return wrapper


def _patch_targets():
    """(module, name, prefix) of every public function a traced tensor may meet."""
    hipfer = sys.modules[__name__.split(".")[0]]  # the namespace (imported: it called us)
    mods = [(hipfer, hipfer.__all__, "")]
    for sub in ("linalg", "fft", "random"):
        m = getattr(hipfer, sub)
        mods.append((m, getattr(m, "__all__", [n for n in dir(m) if not n.startswith("_")]),
                     f"{sub}."))
    for m, names, prefix in mods:
        for n in names:
            v = getattr(m, n, None)
            if callable(v) and not isinstance(v, type) and n != "fuse":
                yield m, n, prefix


def _patch_function(fn, wrapped: dict) -> list:
    """Point fn's own references to hipfer functions (its module globals: ``from hipfer
    import exp``; its closure cells) at their wrappers; returns the undo steps."""
    undo = []
    g = getattr(fn, "__globals__", None)
    if isinstance(g, dict):
        for name in getattr(getattr(fn, "__code__", None), "co_names", ()):
            v = g.get(name)
            w = wrapped.get(id(v)) if v is not None else None
            if w is not None:
                g[name] = w
                undo.append(lambda g=g, name=name, v=v: g.__setitem__(name, v))
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            v = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        w = wrapped.get(id(v))
        if w is not None:
            cell.cell_contents = w
            undo.append(lambda cell=cell, v=v: setattr(cell, "cell_contents", v))
    return undo


def trace(fn, args, device) -> tuple:
    """Run fn on proxies of args (Tensors -> Traced, Python scalars -> Weak, anything
    else refused); returns (Graph, slots, which args are tensors)."""
    tr = Tracer(device)
    tr.reduction = None
    proxies, k = [], 0
    for i, a in enumerate(args):
        if isinstance(a, Tensor):
            proxies.append(Traced(tr, tr.node(tr.b.input(k, a.dtype), a.ndim)))
            k += 1
        elif isinstance(a, (np.bool_, np.number)):
            proxies.append(Strong(type(a), i))
        elif isinstance(a, _PY_SCALARS):
            proxies.append(Weak(type(a), i))
        else:
            raise TypeError(f"hipfer.fuse: argument {i} is a {type(a).__name__}; a fused "
                            "function takes hipfer Tensors and Python scalars")
    with _lock:
        saved = [(m, n, getattr(m, n)) for m, n, _ in _patch_targets()]
        wrapped = {}  # id(original) -> its wrapper
        undo = []
        try:
            for (m, n, orig), (_, _, prefix) in zip(saved, _patch_targets()):
                w = _wrap(orig, n, prefix)
                wrapped.setdefault(id(orig), w)
                setattr(m, n, w)
            undo = _patch_function(fn, wrapped)
            res = fn(*proxies)
        finally:
            for m, n, orig in saved:
                setattr(m, n, orig)
            for restore in reversed(undo):
                restore()
    if isinstance(res, Tensor):
        _refuse("the function returned a Tensor that is not computed from its arguments",
                "return an expression of the arguments")
    if not isinstance(res, Traced):
        raise TypeError(f"hipfer.fuse: the function must return one tensor expression of "
                        f"its arguments, got {type(res).__name__}")
    if res._tr is not tr:
        _refuse("the result belongs to another trace", "do not keep traced values")
    graph = Graph(tuple(tr.b.nodes), res._node, k, tr.reduction)
    return graph, tuple(tr.b.slots), tuple(tr.ndims)
