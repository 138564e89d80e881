"""Freeze the array API 2025.12 names and signatures into docs/array_api_2025_12.json.

Run once per standard revision (maintainers only): it reads array-api-strict, whose
namespace follows the specification's signatures, so that the coverage table and its
test depend on a committed file, not on whichever array-api-strict CI installs.
"""
import inspect
import json
import sys
from pathlib import Path

import array_api_strict as xp

VERSION = "2025.12"
# array-api-strict's own helpers, not names of the standard
NOT_SPEC = {"ArrayAPIStrictFlags", "get_array_api_strict_flags", "set_array_api_strict_flags",
            "reset_array_api_strict_flags", "__version__", "Device"}
ARRAY_ATTRS = ["T", "mT", "device", "dtype", "ndim", "shape", "size"]
# dunders every Python object (or array-api-strict's class) has that the standard does not list
PY_OBJECT = {"__init__", "__new__", "__class__", "__delattr__", "__dir__", "__doc__", "__format__",
             "__getattribute__", "__getstate__", "__init_subclass__", "__module__", "__reduce__",
             "__reduce_ex__", "__setattr__", "__sizeof__", "__slots__", "__str__",
             "__subclasshook__", "__annotations__", "__weakref__", "__dict__", "__hash__",
             "__repr__", "__buffer__", "__array__"}


def sig(obj):
    try:
        s = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    out = []
    for p in s.parameters.values():
        if p.name == "self":
            continue
        d = None if p.default is inspect.Parameter.empty else repr(p.default)
        if d is not None and d.startswith("<"):  # array-api-strict's "not given" sentinels
            d = "None"
        out.append([p.name, p.kind.name, d])
    return out


def main():
    xp.set_array_api_strict_flags(api_version=VERSION)
    spec = {"version": VERSION, "source": f"array-api-strict {xp.__version__}",
            "namespace": {}, "linalg": {}, "fft": {}, "array": {}}
    for name in sorted(xp.__all__):
        if name in NOT_SPEC or name in ("linalg", "fft"):
            continue
        obj = getattr(xp, name)
        spec["namespace"][name] = sig(obj) if callable(obj) and not isinstance(obj, type) \
            and name not in ("bool",) and not hasattr(obj, "kind") else None
    linalg_names = ["cholesky", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh",
                    "inv", "matmul", "matrix_norm", "matrix_power", "matrix_rank",
                    "matrix_transpose", "outer", "pinv", "qr", "slogdet", "solve", "svd",
                    "svdvals", "tensordot", "trace", "vecdot", "vector_norm"]
    fft_names = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft",
                 "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]
    for n in linalg_names:
        spec["linalg"][n] = sig(getattr(xp.linalg, n))
    for n in fft_names:
        spec["fft"][n] = sig(getattr(xp.fft, n))
    arr = type(xp.asarray([1.0]))
    for n in sorted(dir(arr)):
        if n in ARRAY_ATTRS or n == "to_device" or (n.startswith("__") and n not in PY_OBJECT):
            attr = getattr(arr, n)
            spec["array"][n] = sig(attr) if callable(attr) else None
    out = Path(__file__).with_name("array_api_2025_12.json")
    out.write_text(json.dumps(spec, indent=1, sort_keys=True) + "\n")
    print(f"wrote {out}: {sum(len(v) for v in spec.values() if isinstance(v, dict))} names")


if __name__ == "__main__":
    sys.exit(main())
