"""Tensor: one backend array (numpy.ndarray or cupy.ndarray, any strides) + a lazy
conjugation flag.

Views (slicing, permute_dims, .mT, broadcast_to, diagonal, reshape when the strides allow)
share the backend array's memory. ``conj`` on a complex tensor flips the flag in O(1);
kernels fold it in at load and GEMM as a conjugate-transpose op; ``resolve_conj()``
materialises it once. Export to other libraries (``__array__``, ``__dlpack__``) resolves
first; ``to_device`` moves the stored data and keeps the flag (no extra pass).

This module holds the Tensor's state, attributes and conversions, and imports nothing
above hipfer._device (and, for to_device, the backend registry). What needs the
namespace -- the operators, indexing, resolve_conj, DLPack export, __array_namespace__,
NumPy's ndarray methods and repr (hipfer._ndarray_methods) -- is installed on the class by
hipfer._array_methods when hipfer is imported.
"""
from __future__ import annotations

import contextlib
import os

import numpy as np

from ._device import CPU, Device, as_device
from .prims.registry import get_backend


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


#: test mode: CPU tensors refuse implicit conversion to NumPy exactly as GPU tensors do,
#: so a CPU test run proves NumPy calls never reach __array__ (HIPFER_REFUSE_HOST=1 for a
#: whole run, ``refuse_host()`` for a block)
REFUSE_HOST = os.environ.get("HIPFER_REFUSE_HOST") == "1"


@contextlib.contextmanager
def refuse_host(on: bool = True):
    """Within the block, CPU tensors refuse implicit NumPy conversion (``__array__``
    without copy=True raises TypeError) as GPU tensors always do."""
    global REFUSE_HOST
    was, REFUSE_HOST = REFUSE_HOST, on
    try:
        yield
    finally:
        REFUSE_HOST = was


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
        """The axes reversed (a view), as NumPy's and CuPy's .T for any ndim: the standard
        defines only the 2-d case (the matrix transpose; .mT transposes the last two)."""
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
        src = self._data
        host = src.get() if _is_cupy(src) else src
        return Tensor(get_backend(dev).asarray(host), self._conj)

    # ------------------------------------------------------------ sequences
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
        """The values on the host (the flag applied there: one NumPy pass)."""
        d = self._data
        h = d.get() if _is_cupy(d) else d
        return np.asarray(np.conjugate(h)) if self._conj else h  # 0-d: an array, not a scalar

    def _scalar(self, kind):
        if self.ndim != 0:
            raise TypeError(f"only 0-d tensors convert to Python {kind.__name__}, "
                            f"this one has shape {self.shape}")
        return kind(self._host()[()])

    def __bool__(self, /):
        # NumPy 2: a tensor of one element (any ndim) has a truth value, no other one
        if self.size != 1:
            raise ValueError("the truth value of an empty tensor is ambiguous" if self.size == 0
                             else "the truth value of a tensor with more than one element is "
                             "ambiguous; use any() or all()")
        return bool(self._host().reshape(())[()])

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
        if not copy and (REFUSE_HOST or _is_cupy(self._data)):
            raise TypeError(f"tensor on {self.device} cannot be converted to a NumPy array "
                            "implicitly; use x.to_device('cpu') or numpy.asarray(x, copy=True)")
        a = self._host()
        if dtype is not None:
            a = a.astype(dtype, copy=False)
        if copy:
            a = a.copy() if a is self._data else a
        elif copy is False and a is not self._data:
            why = [w for w, needed in (("the dtype changes", a.dtype != self._data.dtype),
                                       ("the conjugation flag must be applied", self._conj))
                   if needed]
            raise ValueError(f"numpy.asarray(tensor, copy=False): a copy is needed because "
                             f"{' and '.join(why) or 'the data must be rearranged'}")
        return a

    def to_numpy(self) -> np.ndarray:
        """The values as a new NumPy array: the explicit host copy (CuPy's ``.get()``,
        torch's ``.numpy()``; xarray's ``.to_numpy()`` calls it), on every device."""
        return self.__array__(copy=True)

    # pickling (every protocol: __slots__ need these for protocols 0 and 1)
    def __getstate__(self):
        d = self._data
        if _is_cupy(d):  # the values and the device, uploaded by the backend on load (not
            return d.get(), self._conj, self.device  # CuPy's pickle: it lost a 0-d -0.0)
        return d, self._conj

    def __setstate__(self, state):
        data, self._conj = state[:2]
        # an unpickled dtype is a copy, not NumPy's own instance, and the warm path and the
        # scalar cache tell dtypes apart by identity: view the data as the canonical one
        canonical = np.dtype(data.dtype.str)
        data = data if data.dtype is canonical else data.view(canonical)
        self._data = get_backend(state[2]).asarray(data) if len(state) > 2 else data

    __hash__ = None  # mutable, and == is elementwise
