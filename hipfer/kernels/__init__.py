"""The HIP C++ kernel sources and the list of every instantiation hipfer can generate.

Pure Python (no CuPy needed), so the sources can be dumped and compiled offline for AMD
targets where no GPU stack is installed (``python -m hipfer dump-kernels DIR``).

A *kernel group* is one source file plus the template instantiations (C++ name
expressions such as ``hf::ew_unary_vec<hf::op_exp, float, float>``) compiled
together. At run time the CuPy backend compiles ``module_source(file)`` with CuPy
``RawModule(name_expressions=...)``; the dump writes the *same* text followed by an
array taking the address of every instantiation, which makes hipcc and nvcc instantiate
them all. Each ``kernels/<topic>.py`` module, and each hipfer.nn topic's
``hipfer/nn/_<topic>/kernels.py``, builds its name expressions with the same functions
the backend uses, and lists its groups in ``instances()``. The sources are the core's
headers and kernels here and each nn topic's ``fused_<topic>.cuh`` in its folder: one
name space of file names (``#include "x.cuh"`` names a file, never a path).
"""
from __future__ import annotations

import functools
import importlib
import re
from pathlib import Path
from typing import Dict, Iterable, List, Tuple

import numpy as np

KERNEL_DIR = Path(__file__).resolve().parent

#: the C++ type of each dtype, spelled as a demangler prints it: HIP 5.x hiprtc finds a
#: name expression's kernel by comparing demangled names, so typedefs (hf::f32) fail there
CTYPE = {
    np.dtype(np.bool_): "bool",
    np.dtype(np.int8): "signed char", np.dtype(np.int16): "short",
    np.dtype(np.int32): "int", np.dtype(np.int64): "long long",
    np.dtype(np.uint8): "unsigned char", np.dtype(np.uint16): "unsigned short",
    np.dtype(np.uint32): "unsigned int", np.dtype(np.uint64): "unsigned long long",
    np.dtype(np.float16): "hf::half", np.dtype(np.float32): "float", np.dtype(np.float64): "double",
    np.dtype(np.complex64): "hf::complex<float>", np.dtype(np.complex128): "hf::complex<double>",
}
#: every dtype the GPU kernels handle, in a fixed order
DTYPES = tuple(CTYPE)


def ctype(dt) -> str:
    try:
        return CTYPE[np.dtype(dt)]
    except KeyError:
        raise TypeError(f"dtype {np.dtype(dt)} has no GPU kernel type") from None


def dtypes_of_kinds(kinds: str) -> Tuple[np.dtype, ...]:
    return tuple(t for t in DTYPES if t.kind in kinds)


def calc_dtype(dt) -> np.dtype:
    """The dtype the kernels compute and accumulate dt in (calc_of in common.cuh):
    float32 for float16, else dt itself."""
    dt = np.dtype(dt)
    return np.dtype(np.float32) if dt == np.float16 else dt


_INCLUDE = re.compile(r'^\s*#\s*include\s+"([A-Za-z0-9_]+\.cuh)"\s*$', re.M)


def source_dirs() -> Tuple[Path, ...]:
    """The folders of kernel sources: this one (the core), then each hipfer.nn topic's
    (hipfer/nn/_<topic>/). Found by path: reading a source imports nothing of a topic."""
    from ..prims.fused_ops import TOPICS, topic_package
    root = KERNEL_DIR.parent.parent  # the folder holding the hipfer package
    return (KERNEL_DIR,) + tuple(root.joinpath(*topic_package(t).split(".")) for t in TOPICS)


@functools.lru_cache(maxsize=None)
def _sources() -> Dict[str, Path]:
    found: Dict[str, Path] = {}
    for folder in source_dirs():
        for path in sorted(folder.glob("*.cuh")):
            if path.name in found:  # an #include would be ambiguous
                raise RuntimeError(f"kernel source {path.name!r} is both {found[path.name]} "
                                   f"and {path}")
            found[path.name] = path
    return found


def source_path(filename: str) -> Path:
    """The file of the kernel source called filename (a core header or a topic's .cuh)."""
    try:
        return _sources()[filename]
    except KeyError:
        raise FileNotFoundError(f"kernel source {filename!r} not found in "
                                f"{', '.join(map(str, source_dirs()))}") from None


@functools.lru_cache(maxsize=None)
def module_source(filename: str) -> str:
    """The source filename (source_path) with our own ``#include "x.cuh"`` lines inlined
    (each header once, in first-use order), so that hiprtc/NVRTC need no include path and
    the on-disk caches (CuPy's and hipfer's, both keyed by source text) see every header
    change."""
    seen: set = set()

    def expand(name: str) -> str:
        if name in seen:
            return ""
        seen.add(name)
        text = source_path(name).read_text()
        return _INCLUDE.sub(lambda m: expand(m.group(1)), text)

    return expand(filename)


def instance_list(exprs: Iterable[str]) -> str:
    """C++ that forces instantiation of every name expression (for offline compiles)."""
    body = ",\n".join(f"  (const void*)&{e}" for e in exprs)
    return f"\n// instantiations (hipfer dump-kernels)\nconst void* hf_instances[] = {{\n{body}\n}};\n"


# Modules of hipfer.kernels that list instantiations via instances() -> [(group, file, [exprs])]
INSTANCE_MODULES = ("elementwise", "reduction", "indexing", "rng", "gemm", "sort", "scan",
                    "search", "polyval", "select")


def instance_modules() -> List[str]:
    """Every module with an instances() list: the core's (INSTANCE_MODULES), then each
    hipfer.nn topic's kernels.py."""
    from ..prims.fused_ops import TOPICS, topic_module
    return ([f"{__name__}.{m}" for m in INSTANCE_MODULES]
            + [topic_module(t, "kernels") for t in TOPICS])


def all_instances() -> List[Tuple[str, str, List[str]]]:
    """Every kernel group the package can generate: (group name, source file, exprs)."""
    groups = []
    for mod in instance_modules():
        try:
            m = importlib.import_module(mod)
        except ModuleNotFoundError as e:
            if e.name == mod:
                continue
            raise
        groups.extend(m.instances())
    names = [g[0] for g in groups]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise RuntimeError(f"duplicate kernel group names: {sorted(dup)}")
    return groups


def dump(outdir, only: str = "") -> List[Path]:
    """Write one self-contained .hip file per kernel group into outdir; returns the paths.
    ``only``: keep groups whose name contains this substring."""
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for group, file, exprs in all_instances():
        if only and only not in group:
            continue
        p = out / f"{group}.hip"
        p.write_text(f"// hipfer kernel group {group}: {file}, {len(exprs)} instantiation(s)\n"
                     + module_source(file) + instance_list(exprs))
        paths.append(p)
    return paths
