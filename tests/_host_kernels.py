"""Kernels of hipfer/kernels/*.cuh built for the CPU with tests/data/host_gpu.h (every
thread a fiber; see there), for the host emulation tests (test_kernels_*_host.py).

    lib = build(directory, "radix.cuh", {expr: (C++ parameters, ctypes argtypes)})
    getattr(lib, symbol(expr))(grid, block, warp, seed, *args)   -> None or an error

Each expression gets an extern "C" launcher; wrappers (C++ text placed after the kernel
source, for launches that need more than forwarding, e.g. Shape structs) are exported as
given. The kernels' __shared__ variables (function-local statics of hf:: templates) are
registered with the emulator, which poisons them before every block as a GPU's shared
memory holds garbage.
"""
from __future__ import annotations

import ctypes
import shutil
import subprocess
from pathlib import Path

from hipfer.kernels import KERNEL_DIR

CXX = shutil.which("g++") or shutil.which("clang++")
#: the shared-memory poisoning reads the symbol table
HAVE_TOOLS = CXX is not None and bool(shutil.which("nm") and shutil.which("c++filt"))
DATA = Path(__file__).resolve().parent / "data"
I64, PTR, INT = ctypes.c_longlong, ctypes.c_void_p, ctypes.c_int
LAUNCH = (ctypes.c_uint, ctypes.c_uint, INT, ctypes.c_uint)  # grid, block, warp, seed


def symbol(expr: str) -> str:
    return "emu_" + "".join(c if c.isalnum() else "_" for c in expr)


def build(directory: Path, source: str, kernels: dict, wrappers: str = "", exports: dict = None,
          opt: str = "-O1") -> ctypes.CDLL:
    """The library of source's kernels: kernels {expression: (C++ parameters, argtypes)}
    each forwarded by a launcher named symbol(expression); wrappers: more C++ (its
    functions listed in exports {name: argtypes after the launch's four})."""
    lines = ['#include "host_gpu.h"', f'#include "{source}"']
    for expr, (params, _) in kernels.items():
        names = ", ".join(p.split()[-1].lstrip("*") for p in params.split(", "))
        lines.append(f'extern "C" const char* {symbol(expr)}(unsigned grid, unsigned block, '
                     f'int warp, unsigned seed, {params}) {{\n'
                     f'  return hf_emu::launch(grid, block, warp, seed,\n'
                     f'                        [=] {{ {expr}({names}); }});\n}}')
    lines.append(wrappers)
    stem = Path(source).stem + "_host"
    src, so = Path(directory) / f"{stem}.cpp", Path(directory) / f"{stem}.so"
    src.write_text("\n".join(lines) + "\n")
    subprocess.run([CXX, "-std=c++17", opt, "-fPIC", "-shared", f"-I{DATA}", f"-I{KERNEL_DIR}",
                    str(src), "-o", str(so)], check=True)
    lib = ctypes.CDLL(str(so))
    if shutil.which("nm") and shutil.which("c++filt"):
        _register_shared(lib, so)
    for name, argtypes in [(symbol(e), a) for e, (_, a) in kernels.items()] + \
            list((exports or {}).items()):
        fn = getattr(lib, name)
        fn.argtypes = LAUNCH + tuple(argtypes)
        fn.restype = ctypes.c_char_p
    return lib


def _register_shared(lib, so: Path) -> None:
    nm = subprocess.run(["nm", "-S", "--defined-only", str(so)], capture_output=True, text=True,
                        check=True).stdout
    names = [line.split() for line in nm.splitlines() if line.count(" ") == 3]
    dem = subprocess.run(["c++filt"], input="\n".join(n[3] for n in names), capture_output=True,
                         text=True, check=True).stdout.splitlines()
    lib.hf_emu_shared.argtypes = (PTR, ctypes.c_size_t)
    for (_, size, kind, name), pretty in zip(names, dem):
        if kind in "ubB" and pretty.startswith("hf::") and ")::" in pretty:
            lib.hf_emu_shared(ctypes.addressof(ctypes.c_char.in_dll(lib, name)), int(size, 16))
