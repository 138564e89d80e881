"""The inspection API: ``hipfer.__array_namespace_info__()``."""
from __future__ import annotations

from . import _dtypes
from ._creation import asarray
from ._data_type_functions import isdtype
from ._device import Device, as_device, devices, get_default_device
from ._indexing import nonzero
from ._sets import unique_values

__all__ = ["__array_namespace_info__"]

_KIND_NAMES = ("bool", "signed integer", "unsigned integer", "integral",
               "real floating", "complex floating", "numeric")

# hipfer's dtypes beyond the standard's: listed by dtypes() only when asked for
EXTENSION_DTYPES = (_dtypes.float16,)
STANDARD_DTYPES = tuple(t for t in _dtypes.ALL_DTYPES if t not in EXTENSION_DTYPES)


class Devices(tuple):
    """The devices, a tuple (2025.12; a list before) that also concatenates with a list,
    giving a Devices again: SciPy's test fixtures write ``devices() + [None]``."""

    def __add__(self, other):
        if isinstance(other, (tuple, list)):
            return Devices(tuple(self) + tuple(other))
        return NotImplemented

    def __radd__(self, other):
        if isinstance(other, (tuple, list)):
            return Devices(tuple(other) + tuple(self))
        return NotImplemented


class Info:
    """What this hipfer offers: capabilities, devices and dtypes per device. The dtypes
    are the standard's; float16, hipfer's extension, is listed by dtypes(extensions=True)."""

    def capabilities(self) -> dict:
        """Optional features: boolean-mask indexing, data-dependent output shapes (both
        probed on the CPU, so the answer follows what this build implements) and the most
        axes a tensor may have (12: the GPU kernels' HF_MAX_NDIM; the CPU allows more)."""
        return {"boolean indexing": _probe_boolean_indexing(),
                "data-dependent shapes": _probe_data_dependent(),
                "max dimensions": 12}

    def default_device(self) -> Device:
        return get_default_device()

    def default_dtypes(self, *, device=None) -> dict:
        if device is not None:
            as_device(device)  # validate
        return {"real floating": _dtypes.default_float,
                "complex floating": _dtypes.default_complex,
                "integral": _dtypes.default_int,
                "indexing": _dtypes.default_int}

    def devices(self) -> Devices:
        """Every device, the CPU first, as a tuple (a Devices: it also adds to a list)."""
        return Devices(devices())

    def dtypes(self, *, device=None, kind=None, extensions: bool = False) -> dict:
        """name -> dtype for the standard's dtypes on device (default device if None),
        optionally only those of a kind (a kind name, a dtype, or a tuple of those; see
        isdtype). extensions=True (hipfer's keyword) adds the dtypes beyond the standard's
        that every backend also has: float16 (a "real floating" kind)."""
        if device is not None:
            as_device(device)  # validate: every backend takes every dtype
        dts = _dtypes.ALL_DTYPES if extensions else STANDARD_DTYPES
        if kind is not None:
            dts = tuple(t for t in dts if isdtype(t, kind))
        return {t.name: t for t in dts}


def __array_namespace_info__() -> Info:
    """The inspection namespace object of the array API standard."""
    return Info()


_probes: dict = {}


def _probe(name, fn) -> bool:
    if name not in _probes:
        try:
            fn()
            _probes[name] = True
        except Exception:  # any failure means the feature is not there
            _probes[name] = False
    return _probes[name]


def _probe_boolean_indexing() -> bool:
    def run():
        x = asarray([1, 2, 3], device="cpu")
        y = x[asarray([True, False, True], device="cpu")]
        assert y.shape == (2,)
    return _probe("boolean indexing", run)


def _probe_data_dependent() -> bool:
    def run():
        x = asarray([1, 0, 1], device="cpu")
        assert nonzero(x)[0].shape == (2,) and unique_values(x).shape == (2,)
    return _probe("data-dependent shapes", run)
