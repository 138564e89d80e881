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


class Info:
    """What this hipfer offers: capabilities, devices and dtypes per device."""

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

    def devices(self) -> list:
        return devices()

    def dtypes(self, *, device=None, kind=None) -> dict:
        """name -> dtype for the dtypes on device (default device if None), optionally
        only those of a kind (a kind name, a dtype, or a tuple of those; see isdtype)."""
        if device is not None:
            as_device(device)  # validate: every backend takes every dtype
        dts = _dtypes.ALL_DTYPES
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
