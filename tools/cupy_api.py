"""Record the public surface of an importable CuPy: one dotted name per line, sorted.

    PYTHONPATH=<site with CuPy> python3 tools/cupy_api.py [-o FILE]

What is recorded (what hipfer can reach, so what tests/test_cupy_api.py checks against):
* every attribute of the packages cupy, cupyx and cupy_backends, and recursively of their
  submodules reached from a package by attribute (cupy.cuda.memory, and re-exports such as
  cupy.cuda.runtime, which is cupy_backends.cuda.api.runtime);
* the same for the modules hipfer imports by name (``from cupy_backends.cuda.libs import
  cublas``: found by scanning hipfer/ for imports), imported here first;
* the attribute names (dir) of the classes in CLASSES, the objects hipfer holds.
Dunder names are left out of modules (but __version__), kept for classes.

CUDA libraries a binding module links against but that are not installed (the wheel ships
no libcublas.so.12) are replaced by empty stubs with their soname and symbol version, built
with the C compiler (``$CC`` or cc): the module then loads, lazily bound, and its names can
be read; nothing in it is ever called.
"""
from __future__ import annotations

import argparse
import ast
import atexit
import ctypes
import importlib
import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import tempfile
import types
from pathlib import Path

ROOTS = ("cupy", "cupyx", "cupy_backends")
#: classes whose attribute names are recorded (instances hipfer holds or subclasses)
CLASSES = (
    "cupy.ndarray", "cupy._core.core._ndarray_base", "cupy._core.flags.Flags",
    "cupy.cuda.Device", "cupy.cuda.Stream", "cupy.cuda.ExternalStream", "cupy.cuda.Event",
    "cupy.cuda.MemoryPointer", "cupy.cuda.PinnedMemoryPointer", "cupy.cuda.MemoryPool",
    "cupy.cuda.PinnedMemoryPool", "cupy.cuda.memory_hook.MemoryHook",
    "cupy.RawModule", "cupy.RawKernel", "cupy.cuda.function.Module",
    "cupy.cuda.function.Function", "cupy.cuda.compiler.CompileException",
    "cupy.cuda.runtime.CUDARuntimeError", "cupy.cuda.driver.CUDADriverError",
    "cupy.random.Generator",  # docs/gen_numpy.py compares its methods with NumPy's
)
#: subpackages hipfer has no use for, left out to keep the record short (unless hipfer
#: imports from one: then it is walked like the rest)
SKIP = ("cupy.testing", "cupyx.jit", "cupyx.scipy")
#: arguments that construct a CLASSES instance without a GPU, where the defaults do not
ARGS = {"cupy.cuda.ExternalStream": (0, 0)}
HIPFER = Path(__file__).resolve().parent.parent / "hipfer"
_MISSING_LIB = re.compile(r"(lib[\w.+-]+\.so(?:\.\d+)*): cannot open shared object file")


def hipfer_imports(root: Path = HIPFER) -> list:
    """Dotted names of the CuPy-family modules (or module.attribute) hipfer imports."""
    names = set()
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.add(node.module)
                names.update(f"{node.module}.{a.name}" for a in node.names)
    return sorted(n for n in names if n.split(".")[0] in ROOTS)


class _Stubs:
    """Empty shared libraries standing in for missing CUDA libraries (see the module doc)."""

    def __init__(self):
        self.dir = Path(tempfile.mkdtemp(prefix="cupy_api_stubs_"))
        atexit.register(shutil.rmtree, self.dir, True)  # loaded stubs need no file
        self.made: list = []

    def make(self, soname: str) -> bool:
        if soname in self.made:
            return False  # already stubbed: the import fails for another reason
        src, vmap, lib = self.dir / "e.c", self.dir / "v.map", self.dir / soname
        src.write_text("")
        # CUDA's libraries version their symbols by the soname ("cublasCreate_v2@@libcublas.so.12")
        vmap.write_text(f"{soname} {{ local: *; }};\n")
        cc = os.environ.get("CC", "cc")
        r = subprocess.run([cc, "-shared", "-fPIC", "-o", str(lib), f"-Wl,-soname,{soname}",
                            f"-Wl,--version-script={vmap}", str(src)], capture_output=True)
        if r.returncode:
            return False
        ctypes.CDLL(str(lib), mode=ctypes.RTLD_GLOBAL)  # found by soname from now on
        self.made.append(soname)
        return True


_stubs = None


def import_module(name: str):
    """importlib.import_module, with missing CUDA libraries stubbed (lazy binding)."""
    global _stubs
    flags = sys.getdlopenflags()
    try:
        sys.setdlopenflags(os.RTLD_LAZY | os.RTLD_GLOBAL)  # stubs define no symbols
        while True:
            try:
                return importlib.import_module(name)
            except ImportError as e:
                m = _MISSING_LIB.search(str(e))
                _stubs = _stubs or _Stubs()
                if m is None or not _stubs.make(m.group(1)):
                    raise
    finally:
        sys.setdlopenflags(flags)


def stubbed_libraries() -> list:
    return list(_stubs.made) if _stubs else []


def _import_prefix(dotted: str):
    """Import the longest importable module prefix of dotted (module.attribute names)."""
    parts = dotted.split(".")
    for k in range(len(parts), 0, -1):
        try:
            return import_module(".".join(parts[:k]))
        except ImportError:
            continue
    return None


def _family(obj) -> bool:
    return isinstance(obj, types.ModuleType) and obj.__name__.split(".")[0] in ROOTS


def surface() -> set:
    """The dotted names (see the module doc)."""
    imported = hipfer_imports()
    for name in ROOTS + tuple(imported):
        _import_prefix(name)
    skip = tuple(p for p in SKIP if not any(n == p or n.startswith(p + ".") for n in imported))
    names: set = set()

    def walk(path: str, mod, ancestors: tuple):
        is_pkg = hasattr(mod, "__path__")
        for attr in dir(mod):
            if attr.startswith("__") and attr != "__version__":
                continue
            names.add(f"{path}.{attr}")
            if f"{path}.{attr}".startswith(skip):
                continue
            try:
                val = getattr(mod, attr)
            except Exception:  # a lazy attribute that cannot load here
                continue
            if not _family(val) or val in ancestors:
                continue
            # true submodules, and a package's public re-exports of plain modules
            # (cupy.cuda.runtime); not every module a module happens to import, nor a
            # re-exported package (cupy.sparse.cupyx), walked where it lives
            if val.__name__ == f"{mod.__name__}.{attr}" or (
                    is_pkg and not attr.startswith("_") and not hasattr(val, "__path__")):
                walk(f"{path}.{attr}", val, ancestors + (val,))

    for root in ROOTS:
        mod = sys.modules[root]
        names.add(root)
        walk(root, mod, (mod,))
    for cls_path in CLASSES:
        obj = _resolve(cls_path)
        if obj is None:
            continue
        names.add(cls_path)
        names.update(f"{cls_path}.{a}" for a in dir(obj) + _instance_names(cls_path, obj))
    return names


def _instance_names(path: str, cls) -> list:
    """The attributes a Python-level class's instances set in __init__ (Stream.ptr,
    Event.ptr: not in dir(cls)), from instances CuPy keeps as class attributes (Stream.null)
    or made here; an __init__ that fails on the missing GPU keeps what it set before."""
    if not cls.__dictoffset__:  # a cdef class: its attributes are descriptors in dir(cls)
        return []
    found = [getattr(cls, a) for a in dir(cls) if isinstance(getattr(cls, a, None), cls)]
    if not found:  # (a half-made Stream would complain in __del__)
        obj = cls.__new__(cls)
        try:
            obj.__init__(*ARGS.get(path, ()))
        except Exception:  # the CUDA call that needs a device
            pass
        found.append(obj)
    return sorted({a for o in found for a in getattr(o, "__dict__", {})})


def _resolve(dotted: str):
    parts = dotted.split(".")
    obj = sys.modules.get(parts[0])
    for p in parts[1:]:
        obj = getattr(obj, p, None)
        if obj is None:
            return None
    return obj


def distribution() -> str:
    """name-version of the distribution CuPy was installed from (its dist-info)."""
    import cupy
    site = Path(cupy.__file__).resolve().parent.parent
    for dist in importlib.metadata.distributions(path=[str(site)]):
        if "cupy/__init__.py" in {str(f) for f in dist.files or ()}:
            return f"{dist.metadata['Name']}-{dist.version}"
    return "unknown (no dist-info beside cupy)"


def render(names: set, wheel: str = "") -> str:
    import cupy
    import numpy
    source = f"{wheel} ({distribution()})" if wheel else distribution()
    py = f"{sys.version_info.major}.{sys.version_info.minor}"
    head = [f"# CuPy {cupy.__version__} public surface, recorded by tools/cupy_api.py",
            f"# from {source}",
            f"# (Python {py}, NumPy {numpy.__version__}) with:",
            "#   unzip WHEEL -d SITE  (and fastrlock's wheel: CuPy imports it)",
            f"#   PYTHONPATH=SITE python3 tools/cupy_api.py --wheel WHEEL"
            f" -o tests/data/cupy_api_{cupy.__version__}.txt"]
    if stubbed_libraries():
        head.append(f"# stubbed (not installed) libraries: {' '.join(stubbed_libraries())}")
    return "\n".join(head + sorted(names)) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-o", "--output", help="write here (default: stdout)")
    ap.add_argument("--wheel", default="", help="the wheel CuPy was unzipped from (its file "
                    "name goes into the header: the dist-info's WHEEL tag is not the file's)")
    args = ap.parse_args(argv)
    text = render(surface(), Path(args.wheel).name if args.wheel else "")
    if args.output:
        Path(args.output).write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
