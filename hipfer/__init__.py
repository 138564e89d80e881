"""hipfer: array-API tensors for AMD GPUs (CuPy-ROCm), NVIDIA GPUs (CuPy-CUDA) and the CPU.

    import hipfer as hf
    x = hf.asarray([[1.0, 2.0], [3.0, 4.0]])      # on the default device
    y = hf.conj(x)                                  # O(1): a flag, no copy
    z = x @ x.mT + 1

The namespace is built on hipfer.prims (operation families) and its backends. Its
topic modules import one way (docs/architecture.md, "Layers"); this module imports them
all, then installs the Tensor's operators and methods (hipfer._array_methods) and the
NumPy backend's compiled warm path (hipfer._warmpath), last.
"""
from __future__ import annotations

from ._version import __version__  # noqa: F401

from ._dtypes import (  # noqa: F401
    bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
    float16, float32, float64, complex64, complex128,
)
import builtins as _builtins

from ._device import Device, as_device, default_device, get_default_device  # noqa: F401
from ._tensor import Tensor  # noqa: F401
# The namespace: one module per topic of the standard, each listing its names in __all__.
from ._creation import *  # noqa: F401,F403
from ._elementwise import *  # noqa: F401,F403
from ._views import *  # noqa: F401,F403
from ._manipulation import *  # noqa: F401,F403
from ._statistical import *  # noqa: F401,F403
from ._linear_algebra import *  # noqa: F401,F403
from ._sorting import *  # noqa: F401,F403
from ._indexing import *  # noqa: F401,F403
from ._data_type_functions import *  # noqa: F401,F403
from ._info import *  # noqa: F401,F403
from ._dlpack import *  # noqa: F401,F403
from ._searching import *  # noqa: F401,F403
from ._sets import *  # noqa: F401,F403
from ._introspection import *  # noqa: F401,F403
from ._functional import *  # noqa: F401,F403
from ._polynomial import *  # noqa: F401,F403
from ._window import *  # noqa: F401,F403
from ._printing import *  # noqa: F401,F403
from ._io import *  # noqa: F401,F403
from ._fuse import *  # noqa: F401,F403
from . import prims, random  # noqa: F401
from .prims.registry import load_cutensor, load_hiptensor  # noqa: F401


def is_conj(x: Tensor, /) -> _builtins.bool:  # hipfer.bool is the dtype
    """True when x reads as the conjugate of its stored data (lazy conjugation)."""
    return x.is_conj()


def resolve_conj(x: Tensor, /) -> Tensor:
    """x with its conjugation flag materialised (one pass; x itself if no flag)."""
    return x.resolve_conj()


def to_device(x: Tensor, device, /) -> Tensor:
    """x on device (a Device, "cpu", "gpu", "gpu:N"): x itself when it is there already,
    else a copy made there (the one explicit way between host and GPU)."""
    return x.to_device(device)


__array_api_version__ = "2025.12"

from ._constants import *  # noqa: E402,F401,F403
from ._utility import *  # noqa: E402,F401,F403
from ._math import *  # noqa: E402,F401,F403
from ._numpy_statistics import *  # noqa: E402,F401,F403
from ._nanfunctions import *  # noqa: E402,F401,F403
from ._histograms import *  # noqa: E402,F401,F403


# The linalg and fft extensions; tensordot and vecdot are also main-namespace functions.
from . import fft, lib, linalg  # noqa: E402,F401
from .linalg import tensordot, vecdot  # noqa: E402,F401
from ._einsum import einsum, einsum_path, einsum_vjp, einsum_vjp_subscripts  # noqa: E402,F401


# Last: the Tensor's operators and methods, and the warm path in front of the namespace's
# elementwise functions and reductions (the topic modules keep their plain functions).
import sys as _sys  # noqa: E402

from . import _array_methods, _warmpath  # noqa: E402

_array_methods.install(_sys.modules[__name__])
_warmpath.install(globals())
del _sys

# Dask's dispatch learns about Tensor once dask.array is imported too (either order)
from . import _dask_hook  # noqa: E402

_dask_hook.install()

# The public names: every topic module's __all__ and the names defined or imported here.
from . import (_constants, _creation, _data_type_functions, _dlpack, _elementwise,  # noqa: E402
               _functional, _fuse, _histograms, _indexing, _info, _introspection, _io,
               _linear_algebra, _manipulation, _math, _nanfunctions, _numpy_statistics,
               _polynomial, _printing, _searching, _sets, _sorting, _statistical, _utility,
               _views, _window)
#: the topic modules (each star-imported above): a new one goes here and in a star import
_TOPICS = (_constants, _creation, _data_type_functions, _dlpack, _elementwise, _functional,
           _fuse, _histograms, _indexing, _info, _introspection, _io, _linear_algebra,
           _manipulation, _math, _nanfunctions, _numpy_statistics, _polynomial, _printing,
           _searching, _sets, _sorting, _statistical, _utility, _views, _window)
# Submodules are attributes, not in __all__ (linalg, fft, random, prims, backends loaded;
# _LAZY loaded on first use). tests/test_public_api_hygiene.py keeps this list honest.
__all__ = sorted({n for m in _TOPICS for n in m.__all__} | {
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128",
    "Device", "as_device", "default_device", "get_default_device", "Tensor",
    "load_cutensor", "load_hiptensor", "is_conj", "resolve_conj", "to_device",
    "tensordot", "vecdot", "einsum", "einsum_path", "einsum_vjp", "einsum_vjp_subscripts"})

#: subpackages loaded on first use: hipfer.nn imports hipfer (it sits above the namespace),
#: bench and kernels are tooling, dask needs Dask; none of them costs ``import hipfer``
#: anything
_LAZY = ("nn", "bench", "kernels", "dask")


def __getattr__(name: str):
    if name in _LAZY:
        import importlib  # the module object is cached in sys.modules and in globals()
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


del annotations  # the __future__ feature, not an API name
