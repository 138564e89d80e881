"""What a value is, as NumPy's module-level queries say: ndim, shape, size, isscalar,
iterable, isfortran, shares_memory, may_share_memory, show_config.

They read metadata (shapes, strides, buffer bounds) and never data, so none of them
syncs or copies. Non-tensors get NumPy's own answer: NumPy reads a list's shape on the
host, where the list already is.
"""
from __future__ import annotations

import numpy as np

from ._tensor import Tensor, xp_of
from ._views import _axis

__all__ = ["ndim", "shape", "size", "isscalar", "iterable", "isfortran", "shares_memory",
           "may_share_memory", "show_config"]


def ndim(a, /) -> int:
    """The number of dimensions of a (a tensor, an array or nested sequences)."""
    return a.ndim if isinstance(a, Tensor) else np.ndim(a)


def shape(a, /) -> tuple:
    """The shape of a (a tensor, an array or nested sequences)."""
    return a.shape if isinstance(a, Tensor) else np.shape(a)


def size(a, /, axis=None) -> int:
    """The number of elements of a, or its length along axis (NumPy's size)."""
    if not isinstance(a, Tensor):
        return np.size(a, axis)
    if axis is None:
        return a.size
    return a.shape[_axis(axis, a.ndim, "hipfer.size(): axis")]


def isscalar(element, /) -> bool:
    """NumPy's isscalar: True for Python and NumPy scalars, False for tensors (a 0-d
    tensor too, as a 0-d ndarray is not a scalar to NumPy)."""
    return False if isinstance(element, Tensor) else bool(np.isscalar(element))


def iterable(y, /) -> bool:
    """NumPy's iterable: whether iter(y) works (a 0-d tensor is not iterable)."""
    if isinstance(y, Tensor):
        return y.ndim > 0
    try:
        iter(y)
    except TypeError:
        return False
    return True


def _contiguous(shape, strides, order: str) -> bool:
    """strides in elements (the Tensor's)"""
    dims = zip(shape, strides) if order == "F" else zip(reversed(shape), reversed(strides))
    expect = 1
    for n, st in dims:
        if n == 1:
            continue
        if st != expect:
            return False
        expect *= n
    return True


def isfortran(a, /) -> bool:
    """NumPy's isfortran: a is Fortran-contiguous (column-major) and not also C-contiguous
    (a 1-d tensor is both, so False)."""
    if not isinstance(a, Tensor):
        return bool(np.isfortran(a))
    if a.size == 0:  # NumPy: empty arrays are contiguous both ways
        return False
    return _contiguous(a.shape, a.strides, "F") and not _contiguous(a.shape, a.strides, "C")


def _overlap(name: str, a, b, max_work):
    # a tensor's backend array answers for it; arrays of two modules (a GPU tensor and
    # NumPy data) live in different memories
    a = a._data if isinstance(a, Tensor) else a
    b = b._data if isinstance(b, Tensor) else b
    xp = xp_of(a)
    if xp is not xp_of(b) or (xp is not np and a.device != b.device):
        return False
    fn = getattr(xp, name)
    return bool(fn(a, b) if max_work is None else fn(a, b, max_work=max_work))


def shares_memory(a, b, /, max_work=None) -> bool:
    """NumPy's shares_memory for two tensors: whether they overlap in memory (views of one
    buffer), answered from their buffer bounds and strides on the host."""
    return _overlap("shares_memory", a, b, max_work)


def may_share_memory(a, b, /, max_work=None) -> bool:
    """NumPy's may_share_memory: the cheap bounds test (True may be a false positive)."""
    return _overlap("may_share_memory", a, b, max_work)


def show_config() -> None:
    """Print what ``hipfer info`` prints: versions, devices, the GPU stack (or why no GPU
    is usable), the kernel launch path and cache, the contraction library."""
    from argparse import Namespace

    from ._sysinfo import _format_info, collect_info
    print(_format_info(collect_info(Namespace(hiptensor=None, cutensor=None))))
