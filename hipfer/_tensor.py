"""Tensor: one backend array (numpy.ndarray or cupy.ndarray, any strides) + a lazy
conjugation flag.

Views (slicing, permute_dims, .mT, broadcast_to, diagonal, reshape when the strides allow)
share the backend array's memory. ``conj`` on a complex tensor flips the flag in O(1);
kernels fold it in at load and GEMM as a conjugate-transpose op; ``resolve_conj()``
materialises it once. Export to other libraries (``__array__``, ``__dlpack__``) resolves
first; ``to_device`` moves the stored data and keeps the flag (no extra pass).
"""
from __future__ import annotations

import numpy as np

from ._device import CPU, Device, as_device


_ndarray = np.ndarray


def _is_cupy(data) -> bool:
    return type(data) is not _ndarray and type(data).__module__.startswith("cupy")


def xp_of(data):
    """The array module (numpy or cupy) that owns a backend array."""
    if _is_cupy(data):
        import cupy
        return cupy
    return np


_GPU_DEVICES: dict = {}  # device index -> Device("gpu", index), made once


def _device_of_data(data) -> Device:
    if type(data) is _ndarray:
        return CPU
    if _is_cupy(data):
        index = data.device.id
        dev = _GPU_DEVICES.get(index)
        if dev is None:
            dev = _GPU_DEVICES[index] = Device("gpu", index)
        return dev
    return CPU


#: array API versions whose namespace hipfer serves (the newest is hipfer's own)
_API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12", "2025.12")

#: namespace function -> operator dunder stem
_DUNDER = {
    "add": "add", "subtract": "sub", "multiply": "mul", "divide": "truediv",
    "floor_divide": "floordiv", "remainder": "mod", "pow": "pow", "matmul": "matmul",
    "bitwise_and": "and", "bitwise_or": "or", "bitwise_xor": "xor",
    "bitwise_left_shift": "lshift", "bitwise_right_shift": "rshift",
    "greater": "gt", "greater_equal": "ge", "less": "lt", "less_equal": "le",
    "equal": "eq", "not_equal": "ne", "negative": "neg", "positive": "pos", "abs": "abs",
    "bitwise_invert": "invert",
}


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
        """This tensor on device (itself if already there; the flag moves along).

        stream: a CuPy stream (or a raw stream handle as int) the copy runs on (a move
        between devices always involves a GPU).
        """
        dev = as_device(device)
        if dev == self.device:
            return self
        if stream is None:
            return self._moved(dev)
        import cupy
        if isinstance(stream, int):
            stream = cupy.cuda.ExternalStream(stream)
        with stream:
            return self._moved(dev)

    def _moved(self, dev: Device) -> "Tensor":
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
    def __getitem__(self, key, /) -> "Tensor":
        return _indexing().getitem(self, key)

    def __setitem__(self, key, value, /) -> None:
        _indexing().setitem(self, key, value)

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

    def __bool__(self, /):
        return self._scalar(bool)

    def __int__(self, /):
        if self.dtype.kind == "c":
            raise TypeError("cannot convert a complex tensor to int")
        return self._scalar(int)

    def __float__(self, /):
        if self.dtype.kind == "c":
            raise TypeError("cannot convert a complex tensor to float")
        return self._scalar(float)

    def __complex__(self, /):
        return self._scalar(complex)

    def __index__(self, /):
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
        if api_version is not None and api_version not in _API_VERSIONS:
            raise ValueError(f"unsupported array API version {api_version!r} "
                             f"(hipfer implements {', '.join(_API_VERSIONS)})")
        import hipfer
        return hipfer

    # ------------------------------------------------------------ DLPack
    def __dlpack__(self, /, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule of the data (the conjugation flag resolved first)."""
        from ._dlpack import export
        return export(self, stream, max_version, dl_device, copy)

    def __dlpack_device__(self, /) -> tuple:
        """(DLPack device type, device id): (kDLCPU=1, 0), (kDLCUDA=2, id) or (kDLROCM=10, id)."""
        from ._dlpack import dlpack_device
        return dlpack_device(self)

    # ------------------------------------------------------------ operators
    # Each operator calls the namespace function of the standard (looked up in hipfer at
    # call time, so a function any topic module defines serves here). Operands that are
    # neither Tensors nor Python scalars give NotImplemented, so Python tries the other
    # side and then raises TypeError.
    def _binop(name, reflected=False):
        fn = None  # the namespace function, found on first use (hipfer imports this module)

        def op(self, other, /):
            nonlocal fn
            if fn is None:
                fn = _fn(name)
            try:
                return fn(other, self) if reflected else fn(self, other)
            except _NotAnOperand:
                return NotImplemented
        op.__name__ = f"__{'r' if reflected else ''}{_DUNDER[name]}__"
        op.__qualname__ = f"Tensor.{op.__name__}"
        return op

    def _inplace(name):
        """x op= y: computed as x op y, then stored into x; the result must keep x's
        dtype and shape (in-place operators never promote or broadcast the left side)."""
        def op(self, other, /):
            try:
                res = _fn(name)(self, other)
            except _NotAnOperand:
                return NotImplemented
            if res.dtype != self.dtype:
                raise TypeError(f"in-place {name}: the result dtype {res.dtype} differs from the "
                                f"left operand's {self.dtype} (in-place operators do not promote)")
            if res.shape != self.shape:
                raise ValueError(f"in-place {name}: the result shape {res.shape} differs from "
                                 f"the left operand's {self.shape}")
            self[...] = res
            return self
        op.__name__ = f"__i{_DUNDER[name]}__"
        op.__qualname__ = f"Tensor.{op.__name__}"
        return op

    def _unop(name):
        def op(self, /):
            return _fn(name)(self)
        op.__name__ = f"__{_DUNDER[name]}__"
        op.__qualname__ = f"Tensor.{op.__name__}"
        return op

    __add__, __radd__, __iadd__ = _binop("add"), _binop("add", True), _inplace("add")
    __sub__, __rsub__, __isub__ = (_binop("subtract"), _binop("subtract", True),
                                   _inplace("subtract"))
    __mul__, __rmul__, __imul__ = (_binop("multiply"), _binop("multiply", True),
                                   _inplace("multiply"))
    __truediv__, __rtruediv__, __itruediv__ = (_binop("divide"), _binop("divide", True),
                                               _inplace("divide"))
    __floordiv__, __rfloordiv__, __ifloordiv__ = (_binop("floor_divide"),
                                                  _binop("floor_divide", True),
                                                  _inplace("floor_divide"))
    __mod__, __rmod__, __imod__ = (_binop("remainder"), _binop("remainder", True),
                                   _inplace("remainder"))
    __pow__, __rpow__, __ipow__ = _binop("pow"), _binop("pow", True), _inplace("pow")
    __and__, __rand__, __iand__ = (_binop("bitwise_and"), _binop("bitwise_and", True),
                                   _inplace("bitwise_and"))
    __or__, __ror__, __ior__ = (_binop("bitwise_or"), _binop("bitwise_or", True),
                                _inplace("bitwise_or"))
    __xor__, __rxor__, __ixor__ = (_binop("bitwise_xor"), _binop("bitwise_xor", True),
                                   _inplace("bitwise_xor"))
    __lshift__, __rlshift__, __ilshift__ = (_binop("bitwise_left_shift"),
                                            _binop("bitwise_left_shift", True),
                                            _inplace("bitwise_left_shift"))
    __rshift__, __rrshift__, __irshift__ = (_binop("bitwise_right_shift"),
                                            _binop("bitwise_right_shift", True),
                                            _inplace("bitwise_right_shift"))
    __matmul__, __rmatmul__, __imatmul__ = (_binop("matmul"), _binop("matmul", True),
                                            _inplace("matmul"))
    # comparisons: Python reflects them itself (3 < x is x > 3)
    __gt__, __ge__ = _binop("greater"), _binop("greater_equal")
    __lt__, __le__ = _binop("less"), _binop("less_equal")
    __eq__, __ne__ = _binop("equal"), _binop("not_equal")
    __neg__, __pos__ = _unop("negative"), _unop("positive")
    __abs__, __invert__ = _unop("abs"), _unop("bitwise_invert")
    del _binop, _inplace, _unop

    __hash__ = None  # mutable, and == is elementwise


_modules: dict = {}  # hipfer, hipfer._indexing: imported on first use (they import this module)


def _namespace():
    m = _modules.get("hipfer")
    if m is None:
        import hipfer as m
        _modules["hipfer"] = m
    return m


def _indexing():
    m = _modules.get("_indexing")
    if m is None:
        from . import _indexing as m
        _modules["_indexing"] = m
    return m


def _fn(name: str):
    """The namespace function behind an operator."""
    fn = getattr(_modules.get("hipfer") or _namespace(), name, None)
    if fn is None:
        raise TypeError(f"this operator needs hipfer.{name}, which this build lacks")
    return fn


class _NotAnOperand(TypeError):
    """Raised by operand conversion so operators can return NotImplemented."""

