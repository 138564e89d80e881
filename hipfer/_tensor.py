"""Tensor: one backend array (numpy.ndarray or cupy.ndarray, any strides) + a lazy
conjugation flag.

Views (slicing, permute_dims, .mT, broadcast_to, diagonal, reshape when the strides allow)
share the backend array's memory. ``conj`` on a complex tensor flips the flag in O(1);
kernels fold it in at load and GEMM as a conjugate-transpose op; ``resolve_conj()``
materialises it once. Export to other libraries (``__array__``, ``__dlpack__``) resolves
first; ``to_device`` moves the stored data and keeps the flag (no extra pass).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ._device import CPU, Device, as_device


def _is_cupy(data) -> bool:
    return type(data).__module__.startswith("cupy")


def xp_of(data):
    """The array module (numpy or cupy) that owns a backend array."""
    if _is_cupy(data):
        import cupy
        return cupy
    return np


def _device_of_data(data) -> Device:
    if _is_cupy(data):
        return Device("gpu", data.device.id)
    return CPU


class Tensor:
    """hipfer's array object. Create tensors with hipfer.asarray and friends."""
    __slots__ = ("_data", "_conj", "__weakref__")
    __array_priority__ = 100  # NumPy defers binary operators to us

    def __init__(self, data, conj: bool = False):
        self._data = data
        self._conj = bool(conj) and data.dtype.kind == "c"

    # ------------------------------------------------------------ attributes
    @property
    def dtype(self) -> np.dtype:
        return self._data.dtype

    @property
    def shape(self) -> tuple:
        return self._data.shape

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def size(self) -> int:
        return self._data.size

    @property
    def strides(self) -> tuple:
        """Strides in elements (not bytes); may be 0 (broadcast) or negative."""
        item = self._data.dtype.itemsize
        return tuple(s // item for s in self._data.strides)

    @property
    def device(self) -> Device:
        return _device_of_data(self._data)

    @property
    def T(self) -> "Tensor":
        if self.ndim != 2:
            raise ValueError(f".T needs a 2-d tensor, got {self.ndim}-d; use .mT or permute_dims")
        return Tensor(self._data.T, self._conj)

    @property
    def mT(self) -> "Tensor":
        if self.ndim < 2:
            raise ValueError(f".mT needs at least 2 axes, got {self.ndim}")
        return Tensor(self._data.swapaxes(-1, -2), self._conj)

    # ------------------------------------------------------------ conjugation
    def is_conj(self) -> bool:
        """True when the tensor reads as the conjugate of its stored data."""
        return self._conj

    def conj(self) -> "Tensor":
        """Complex conjugate in O(1): flips the flag, copies nothing."""
        if self._data.dtype.kind != "c":
            return self
        return Tensor(self._data, not self._conj)

    def resolve_conj(self) -> "Tensor":
        """A tensor whose stored data is what it reads as (one pass if the flag is set)."""
        if not self._conj:
            return self
        from ._elementwise import _materialize
        return _materialize(self)

    # ------------------------------------------------------------ device
    def to_device(self, device, /, *, stream=None) -> "Tensor":
        dev = as_device(device)
        if dev == self.device:
            return self
        from .prims.registry import get_backend
        src = self._data
        host = src.get() if _is_cupy(src) else src
        return Tensor(get_backend(dev).asarray(host), self._conj)

    # ------------------------------------------------------------ shape views
    def reshape(self, *shape, copy=None) -> "Tensor":
        from ._manipulation import reshape
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return reshape(self, shape, copy=copy)

    # ------------------------------------------------------------ indexing
    def __getitem__(self, key) -> "Tensor":
        from ._indexing import getitem
        return getitem(self, key)

    def __setitem__(self, key, value) -> None:
        from ._indexing import setitem
        setitem(self, key, value)

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        for i in range(self.shape[0]):
            yield self[i]

    # ------------------------------------------------------------ conversion
    def _host(self) -> np.ndarray:
        t = self.resolve_conj()
        d = t._data
        return d.get() if _is_cupy(d) else d

    def _scalar(self, kind):
        if self.ndim != 0:
            raise TypeError(f"only 0-d tensors convert to Python {kind.__name__}, "
                            f"this one has shape {self.shape}")
        return kind(self._host()[()])

    def __bool__(self):
        return self._scalar(bool)

    def __int__(self):
        if self.dtype.kind == "c":
            raise TypeError("cannot convert a complex tensor to int")
        return self._scalar(int)

    def __float__(self):
        if self.dtype.kind == "c":
            raise TypeError("cannot convert a complex tensor to float")
        return self._scalar(float)

    def __complex__(self):
        return self._scalar(complex)

    def __index__(self):
        if self.dtype.kind not in "iu":
            raise TypeError(f"only integer tensors can be used as an index, got {self.dtype}")
        return self._scalar(int)

    def __array__(self, dtype=None, copy=None):
        if _is_cupy(self._data) and not copy:
            raise TypeError(f"tensor on {self.device} cannot be converted to a NumPy array "
                            "implicitly; use x.to_device('cpu') or numpy.asarray(x, copy=True)")
        a = self._host()
        if dtype is not None:
            a = a.astype(dtype, copy=False)
        if copy:
            a = a.copy() if a is self._data else a
        elif copy is False and a is not self._data:
            raise ValueError("a copy is needed to resolve the conjugation flag (copy=False given)")
        return a

    def __repr__(self):
        body = np.array2string(self._host(), separator=", ", prefix="tensor(")
        dev = "" if self.device == CPU else f", device='{self.device}'"
        return f"tensor({body}, dtype={self.dtype}{dev})"

    __str__ = __repr__

    def __array_namespace__(self, /, *, api_version=None):
        import hipfer
        return hipfer

    # ------------------------------------------------------------ operators
    def _binop(name, reflected=False):
        def op(self, other):
            from . import _elementwise as ew
            fn = getattr(ew, name)
            try:
                return fn(other, self) if reflected else fn(self, other)
            except _NotAnOperand:
                return NotImplemented
        op.__name__ = f"__{'r' if reflected else ''}{name}__"
        return op

    __add__, __radd__ = _binop("add"), _binop("add", True)
    __sub__, __rsub__ = _binop("subtract"), _binop("subtract", True)
    __mul__, __rmul__ = _binop("multiply"), _binop("multiply", True)
    __truediv__, __rtruediv__ = _binop("divide"), _binop("divide", True)
    __pow__, __rpow__ = _binop("pow"), _binop("pow", True)
    __and__, __rand__ = _binop("bitwise_and"), _binop("bitwise_and", True)
    __gt__, __ge__ = _binop("greater"), _binop("greater_equal")
    __lt__, __le__ = _binop("less"), _binop("less_equal")
    __eq__, __ne__ = _binop("equal"), _binop("not_equal")
    del _binop

    def __matmul__(self, other):
        from ._linear_algebra import matmul
        if not isinstance(other, Tensor):
            return NotImplemented
        return matmul(self, other)

    def __rmatmul__(self, other):
        from ._linear_algebra import matmul
        if not isinstance(other, Tensor):
            return NotImplemented
        return matmul(other, self)

    def __neg__(self):
        from ._elementwise import negative
        return negative(self)

    def __pos__(self):
        return self

    def __abs__(self):
        from ._elementwise import abs as abs_
        return abs_(self)

    __hash__ = None  # mutable, and == is elementwise

    def _inplace(name):
        def op(self, other):
            from . import _elementwise as ew
            res = getattr(ew, name)(self, other)
            if res.shape != self.shape:
                raise ValueError(f"in-place {name}: result shape {res.shape} differs from {self.shape}")
            self[...] = res
            return self
        op.__name__ = f"__i{name}__"
        return op

    __iadd__ = _inplace("add")
    __isub__ = _inplace("subtract")
    __imul__ = _inplace("multiply")
    __itruediv__ = _inplace("divide")
    del _inplace


class _NotAnOperand(TypeError):
    """Raised by operand conversion so operators can return NotImplemented."""


def as_operand(x: Any, like: "Tensor | None" = None) -> "Tensor | Any":
    """Tensors pass through; Python scalars stay scalars (handled by the caller);
    anything else is rejected so the operator can return NotImplemented."""
    if isinstance(x, Tensor) or isinstance(x, (bool, int, float, complex)):
        return x
    raise _NotAnOperand(f"unsupported operand type {type(x).__name__}")

