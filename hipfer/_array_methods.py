"""The one place that installs operators and methods on the Tensor.

hipfer/_tensor.py holds the Tensor's state, attributes and conversions and imports
nothing above it; everything a Tensor does through the namespace -- its operators,
indexing, resolve_conj, DLPack export, __array_namespace__ and NumPy's ndarray methods
and attributes (hipfer._ndarray_methods) -- is installed
here by ``install(namespace)``, which ``import hipfer`` calls once its topic modules are
loaded. Each operator calls its namespace function directly (no lookup at call time),
with the NumPy backend's compiled warm path in front where it is built
(hipfer._warmpath). Operands that are neither Tensors nor Python scalars give
NotImplemented, so Python tries the other side and then raises TypeError.
"""
from __future__ import annotations

import types

from . import _elementwise, _indexing, _ndarray_methods, _numpy_dispatch, _warmpath
from ._core import NotAnOperand, materialize
from ._dlpack import dlpack_device, export
from ._linear_algebra import matmul
from ._tensor import Tensor

#: array API versions whose namespace hipfer serves (the newest is hipfer's own)
API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12", "2025.12")

#: namespace function -> operator dunder stem
DUNDER = {
    "add": "add", "subtract": "sub", "multiply": "mul", "divide": "truediv",
    "floor_divide": "floordiv", "remainder": "mod", "pow": "pow", "matmul": "matmul",
    "bitwise_and": "and", "bitwise_or": "or", "bitwise_xor": "xor",
    "bitwise_left_shift": "lshift", "bitwise_right_shift": "rshift",
    "greater": "gt", "greater_equal": "ge", "less": "lt", "less_equal": "le",
    "equal": "eq", "not_equal": "ne", "negative": "neg", "positive": "pos", "abs": "abs",
    "bitwise_invert": "invert",
}
# comparisons have no reflected or in-place form: Python reflects them itself (3 < x is
# x > 3), and x < y stays a comparison
_COMPARISONS = {"greater", "greater_equal", "less", "less_equal", "equal", "not_equal"}
_UNARY = {"negative", "positive", "abs", "bitwise_invert"}


def _named(op, dunder: str):
    op.__name__ = dunder
    op.__qualname__ = f"Tensor.{dunder}"
    return op


def _binary(fn, dunder: str, reflected: bool):
    def op(self, other, /):
        try:
            return fn(other, self) if reflected else fn(self, other)
        except NotAnOperand:
            return NotImplemented
    return _named(op, dunder)


def _inplace(fn, name: str, dunder: str):
    """x op= y: computed as x op y, then stored into x; the result must keep x's dtype
    and shape (in-place operators never promote or broadcast the left side)."""
    def op(self, other, /):
        try:
            res = fn(self, other)
        except NotAnOperand:
            return NotImplemented
        if res.dtype != self.dtype:
            raise TypeError(f"in-place {name}: the result dtype {res.dtype} differs from the "
                            f"left operand's {self.dtype} (in-place operators do not promote)")
        if res.shape != self.shape:
            raise ValueError(f"in-place {name}: the result shape {res.shape} differs from "
                             f"the left operand's {self.shape}")
        self[...] = res
        return self
    return _named(op, dunder)


def _unary(fn, dunder: str):
    def op(self, /):
        return fn(self)
    return _named(op, dunder)


def _operators() -> dict:
    """dunder -> method, the warm path in front of those of the elementwise op table (a
    reflected operator computes op(other, self): its ufunc operands swap)."""
    ops = {**_elementwise._UNARY, **_elementwise._BINARY, **_elementwise._SWAPPED}
    out = {}
    for name, stem in DUNDER.items():
        fn = matmul if name == "matmul" else getattr(_elementwise, name)
        forms = [(f"__{stem}__", False)]
        if name not in _COMPARISONS and name not in _UNARY:
            forms.append((f"__r{stem}__", True))
            out[f"__i{stem}__"] = _inplace(fn, name, f"__i{stem}__")
        for dunder, reflected in forms:
            slow = _unary(fn, dunder) if name in _UNARY else _binary(fn, dunder, reflected)
            op = ops.get(name)
            swap = (name in _elementwise._SWAPPED) != reflected
            out[dunder] = slow if op is None else _warmpath.elementwise(slow, op, swap)
    return out


# ---------------------------------------------------------------- the other methods
def _getitem(self, key, /) -> Tensor:
    return _indexing.getitem(self, key)


def _setitem(self, key, value, /) -> None:
    _indexing.setitem(self, key, value)


def _resolve_conj(self) -> Tensor:
    """A tensor whose stored data is what it reads as (one pass if the flag is set)."""
    return materialize(self) if self._conj else self


def _dlpack(self, /, *, stream=None, max_version=None, dl_device=None, copy=None):
    """A DLPack capsule of the data (the conjugation flag resolved first)."""
    return export(self, stream, max_version, dl_device, copy)


def _dlpack_device(self, /) -> tuple:
    """(DLPack device type, device id): (kDLCPU=1, 0), (kDLCUDA=2, id) or (kDLROCM=10, id)."""
    return dlpack_device(self)


def _array_namespace_of(namespace):
    def __array_namespace__(self, /, *, api_version=None):
        if api_version is not None and api_version not in API_VERSIONS:
            raise ValueError(f"unsupported array API version {api_version!r} "
                             f"(hipfer implements {', '.join(API_VERSIONS)})")
        return namespace
    return __array_namespace__


def install(namespace) -> None:
    """Install every operator and method above on Tensor (namespace: the hipfer module,
    which __array_namespace__ returns)."""
    methods = {
        "__getitem__": _getitem, "__setitem__": _setitem,
        "resolve_conj": _resolve_conj, "__dlpack__": _dlpack,
        "__dlpack_device__": _dlpack_device,
        "__array_namespace__": _array_namespace_of(namespace),
        **_operators(),
        **_ndarray_methods.METHODS,  # NumPy's ndarray methods and attributes (reshape too)
    }
    for name, fn in methods.items():
        if isinstance(fn, types.FunctionType):  # a Warm object keeps its function's name
            fn.__name__, fn.__qualname__ = name, f"Tensor.{name}"
        setattr(Tensor, name, fn)
    _numpy_dispatch.install(Tensor, namespace)  # __array_ufunc__, __array_function__
