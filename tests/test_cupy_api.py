"""hipfer on CuPy 13.3's surface, proved without a GPU.

ROCm 5 users get cupy-rocm-5-0, whose newest release is 13.3.0, while hipfer is developed
on CuPy 14. Two checks, each in a static form that always runs (no CuPy needed) and a
dynamic one against the real CuPy 13.3 when ``HIPFER_CUPY13_SITE`` names a directory it
imports from (skipped otherwise; a failure when ``HIPFER_REQUIRE_CUPY13=1``):

1. Every CuPy API hipfer names. An ``ast`` scan of hipfer/ finds each dotted chain rooted
   at a name bound to cupy / cupyx / cupy_backends (imports at any scope, aliases such as
   ``rt = cupy.cuda.runtime``, parameters and attributes named ``cupy``, the objects some
   calls return: RETURNS, ATTR_TYPES); each must be in the 13.3 surface recorded by
   tools/cupy_api.py (tests/data/cupy_api_13.3.0.txt) or in ALLOWED with the guard that
   makes it safe. Limits: a receiver the scan cannot type (an array passed in as a
   parameter) is not followed; for those, UNSEEN lists the chains hipfer relies on, and
   every attribute the CuPy backend reads that NumPy arrays also have must be one
   cupy.ndarray has. ``getattr(cupy_module, name)`` with a computed name is checked
   through DYNAMIC, the names each such site can take.
2. Kernel arguments. CuPy 13.3's RawKernel packs an argument in
   cupy/cuda/function.pyx ``_pointer``: a NumPy scalar of one of the types
   '?bhilqBHILQefdFD', a size-1 numpy.ndarray, Python int / float / bool / complex, None,
   device objects; anything else is TypeError('Unsupported type') -- a np.void struct was.
   tests/_kernel_args.py builds every kind of argument the backend makes; a model of those
   rules checks them everywhere, the real ``_pointer`` on 13.3.
"""
from __future__ import annotations

import ast
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import NamedTuple

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
HIPFER = ROOT / "hipfer"
SURFACE_FILE = ROOT / "tests" / "data" / "cupy_api_13.3.0.txt"
FAMILY = ("cupy", "cupyx", "cupy_backends")

# Chains hipfer names that CuPy 13.3 lacks, each safe there: chain -> (why, the guard,
# the (module, function) sites allowed to name it: a use anywhere else still fails).
_LINALG_SITES = frozenset({("backends/cupy/linalg.py", "_missing"),
                           ("backends/cupy/linalg.py", "_solver")})
ALLOWED = {
    "cupy.linalg.eig": (
        "general eigenvalues first appear in CuPy 14.0",
        "backends/cupy/linalg.py: getattr(cupy.linalg, name, None) in _missing(kind) makes "
        "Factorize.supports False and why_not say it needs CuPy >= 14; _solver looks the "
        "name up per kind, for supported kinds only", _LINALG_SITES),
    "cupy.linalg.eigvals": ("as cupy.linalg.eig", "as cupy.linalg.eig", _LINALG_SITES),
    "cupy._environment._get_hipcc_include_dirs": (
        "CuPy 14.1 gives HIP RawModules hipcc's include dirs",
        "backends/cupy/_engine.py: _rtc_options reads it with getattr(..., None) and adds "
        "the dirs only where CuPy would", frozenset({("backends/cupy/_engine.py",
                                                      "_rtc_options")})),
}

# The objects some calls return, so that the scan follows their attributes
_ARRAY = "cupy.ndarray"
RETURNS = {
    **{f"cupy.{f}": _ARRAY for f in (
        "empty", "zeros", "ones", "asarray", "ascontiguousarray", "array", "argsort", "sort",
        "matmul", "multiply", "add", "conjugate", "sum", "swapaxes", "from_dlpack")},
    **{f"{_ARRAY}.{m}": _ARRAY for m in (
        "reshape", "astype", "transpose", "copy", "ravel", "view", "swapaxes", "conj")},
    _ARRAY: _ARRAY,
    "cupy.cuda.get_current_stream": "cupy.cuda.Stream",
    "cupy.get_default_memory_pool": "cupy.cuda.MemoryPool",
    "cupy.cuda.alloc_pinned_memory": "cupy.cuda.PinnedMemoryPointer",
    "cupy.RawModule.get_function": "cupy.RawKernel",
    **{c: c for c in ("cupy.cuda.Device", "cupy.cuda.Event", "cupy.cuda.Stream",
                      "cupy.cuda.ExternalStream", "cupy.RawModule", "cupy.RawKernel")},
}
# ... and the types of some attributes
ATTR_TYPES = {
    f"{_ARRAY}.data": "cupy.cuda.MemoryPointer", f"{_ARRAY}.T": _ARRAY,
    f"{_ARRAY}.flags": "cupy._core.flags.Flags", f"{_ARRAY}.device": "cupy.cuda.Device",
    "cupy.RawKernel.kernel": "cupy.cuda.function.Function",
}
# Chains on receivers the scan cannot type (parameters), that hipfer relies on:
# chain -> the module (under hipfer/) that uses it
UNSEEN = {
    "cupy.RawKernel.kernel": "backends/cupy/_engine.py",  # raw.kernel.ptr
    "cupy.cuda.function.Function.ptr": "backends/cupy/_engine.py",
    "cupy.ndarray.data": "backends/cupy/reduction.py",  # a.data.ptr, everywhere
    "cupy.cuda.MemoryPointer.ptr": "backends/cupy/reduction.py",
    "cupy.cuda.MemoryPointer.device_id": "_ops.py",  # data.data.device_id
    "cupy.ndarray.get": "_tensor.py",
    "cupy.ndarray.__dlpack__": "_dlpack.py",
    "cupy.ndarray.__dlpack_device__": "_dlpack.py",
    "cupy._core.flags.Flags.c_contiguous": "backends/cupy/elementwise.py",
    "cupy.cuda.Stream.__enter__": "_tensor.py",  # with stream: (to_device)
}
# Attributes of NumPy arrays the CuPy backend reads only on host (NumPy) arrays
HOST_ONLY = {"ctypes": "alpha_h.ctypes.data (semiring), host.ctypes.data (_engine): "
                       "NumPy arrays handed to the driver by address"}
# ... and NumPy flags hipfer reads (a Tensor's ._data.flags.X) only on NumPy arrays
HOST_ONLY_FLAGS = {"writeable": "_elementwise.py: cached scalars made read-only when "
                                "isinstance(s._data, np.ndarray)"}


def _linalg_names():
    """The cupy.linalg functions backends/cupy/linalg.py looks up (its _CALLS values)."""
    return {name for name, _ in _literal_values("backends/cupy/linalg.py", "_CALLS")}


def _fft_names():
    """desc.function_name for every Fft kind and direction (backends/cupy/fft.py)."""
    from hipfer.prims import descriptors as d
    prop = d.Fft.function_name.fget
    return {prop(SimpleNamespace(kind=k, inverse=inv)) for k in d.FftKind for inv in (0, 1)}


def _blas_names():
    """The cuBLAS functions of backends/cupy/semiring.py (its _BLAS_FUNCS values)."""
    return set(_literal_values("backends/cupy/semiring.py", "_BLAS_FUNCS"))


# getattr(<CuPy object>, <computed name>) sites: (module, chain) -> the names it can take
DYNAMIC = {
    ("backends/cupy/linalg.py", "cupy.linalg"): _linalg_names,
    ("backends/cupy/fft.py", "cupy.fft"): _fft_names,
    ("backends/cupy/semiring.py", "cupy_backends.cuda.libs.cublas"): _blas_names,
}


def _literal_values(rel: str, name: str) -> list:
    """The literal values of the module-level dict `name` in hipfer/<rel> (read, not run:
    the module imports CuPy)."""
    for node in ast.parse((HIPFER / rel).read_text()).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == name
                                                 for t in node.targets):
            return [ast.literal_eval(v) for v in node.value.values]
    raise LookupError(f"no dict {name} in hipfer/{rel}")


# ------------------------------------------------------------------ the scan
class Use(NamedTuple):
    chain: str
    where: str  # module:line
    site: tuple = ()  # (module, the module-level function or class it is in, or "")


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_UNKNOWN = object()  # a name bound to something else (or to two things): not followed


def _own(node):
    """The nodes of a scope in source order, nested scopes yielded but not entered."""
    for child in ast.iter_child_nodes(node):
        yield child
        if not isinstance(child, _SCOPES):
            yield from _own(child)


def _typed(chain):
    return ATTR_TYPES.get(chain, chain)


class _Module:
    """The CuPy chains of one module (see the module doc)."""

    def __init__(self, rel: str, tree: ast.AST):
        self.rel, self.tree = rel, tree
        self.uses: list = []
        self.dynamic: list = []  # (chain, where, site) of getattr with a computed name
        self.calls: list = []  # (chain, keyword names, where) of calls with keywords
        self.returns: dict = {}  # module-level function -> the chain it returns
        self._top = ""  # the module-level function or class being scanned

    def run(self):
        # twice: the first pass learns what module-level functions return (semiring's
        # _cublas() returns the cublas module it imports)
        self._scope(self.tree, [{}], record=False)
        self.uses, self.dynamic, self.calls = [], [], []
        self._scope(self.tree, [{}], record=True)
        return self

    def _where(self, node):
        return f"{self.rel}:{node.lineno}"

    def _lookup(self, name, scopes):
        for sc in reversed(scopes):
            if name in sc:
                v = sc[name]
                return None if v is _UNKNOWN else v
        return None

    def res(self, node, scopes):
        """The chain node evaluates to, or None."""
        if isinstance(node, ast.Name):
            return self._lookup(node.id, scopes)
        if isinstance(node, ast.Attribute):
            if node.attr == "cupy":  # ctx.cupy, self.cupy: the bench's handle on CuPy
                return "cupy"
            base = self.res(node.value, scopes)
            return f"{_typed(base)}.{node.attr}" if base else None
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name) and node.func.id == "getattr" and node.args:
                base = self.res(node.args[0], scopes)
                if base is None or len(node.args) < 2:
                    return None
                name = node.args[1]
                if isinstance(name, ast.Constant) and isinstance(name.value, str):
                    return f"{_typed(base)}.{name.value}"
                return f"{_typed(base)}.*"  # a computed name: one of DYNAMIC's
            if isinstance(node.func, ast.Name) and node.func.id in self.returns:
                if self._lookup(node.func.id, scopes) is None:
                    return self.returns[node.func.id]
            f = self.res(node.func, scopes)
            return RETURNS.get(f) if f else None
        return None

    def _bind(self, scope, name, chain):
        if name in scope and scope[name] != chain:
            scope[name] = _UNKNOWN
        else:
            scope[name] = chain if chain else _UNKNOWN

    def _scope(self, node, scopes, record):
        scope = scopes[-1]
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            a = node.args
            for arg in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg]:
                if arg is not None:  # a parameter called cupy is CuPy (bench: Timer)
                    self._bind(scope, arg.arg, "cupy" if arg.arg == "cupy" else None)
        nested = []
        for n in _own(node):
            if isinstance(n, _SCOPES):
                nested.append(n)
                if not isinstance(n, ast.Lambda):
                    self._bind(scope, n.name, None)
            elif isinstance(n, ast.Import):
                for a in n.names:
                    if a.name.split(".")[0] in FAMILY:
                        self._use(a.name, n, record)
                        self._bind(scope, a.asname or a.name.split(".")[0],
                                   a.name if a.asname else a.name.split(".")[0])
                    else:
                        self._bind(scope, a.asname or a.name.split(".")[0], None)
            elif isinstance(n, ast.ImportFrom):
                fam = not n.level and n.module and n.module.split(".")[0] in FAMILY
                for a in n.names:
                    chain = f"{n.module}.{a.name}" if fam else None
                    if chain:
                        self._use(chain, n, record)
                    self._bind(scope, a.asname or a.name, chain)
            elif isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None:
                targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                for t in targets:
                    if isinstance(t, ast.Name):
                        self._bind(scope, t.id, self.res(n.value, scopes))
                    elif isinstance(t, ast.Tuple) and isinstance(n.value, ast.Tuple) \
                            and len(t.elts) == len(n.value.elts):
                        for te, ve in zip(t.elts, n.value.elts):
                            if isinstance(te, ast.Name):
                                self._bind(scope, te.id, self.res(ve, scopes))
                    else:
                        self._shadow(t, scope)
            elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                if not getattr(n, "_hf_assign", False):  # (an Assign target: bound above)
                    self._bind(scope, n.id, None)  # for, with, walrus, += targets
            elif isinstance(n, ast.Attribute):
                chain = self.res(n, scopes)
                if chain and chain.split(".")[0] in FAMILY and "*" not in chain:
                    self._use(chain, n, record)
            if isinstance(n, ast.Call) and record and any(k.arg for k in n.keywords):
                chain = self.res(n.func, scopes)
                if chain and chain.split(".")[0] in FAMILY:
                    self.calls.append((chain, tuple(k.arg for k in n.keywords if k.arg),
                                       self._where(n)))
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) \
                    and n.func.id == "getattr" and len(n.args) >= 2:
                base = self.res(n.args[0], scopes)
                if base and base.split(".")[0] in FAMILY:
                    chain = self.res(n, scopes)
                    if not chain.endswith(".*"):
                        self._use(chain, n, record)
                    elif record:
                        self.dynamic.append((_typed(base), self._where(n),
                                             (self.rel, self._top)))
        for n in nested:
            inner = scopes + [{}] if not isinstance(node, ast.ClassDef) else scopes[:-1] + [{}]
            if len(scopes) == 1:
                self._top = getattr(n, "name", "")
            self._scope(n, inner, record)
            if len(scopes) == 1:
                self._top = ""
            if not record and isinstance(n, ast.FunctionDef) and len(scopes) == 1:
                rets = {self.res(r.value, inner) for r in _own(n)
                        if isinstance(r, ast.Return) and r.value is not None}
                if len(rets) == 1 and None not in rets:
                    self.returns[n.name] = rets.pop()

    def _shadow(self, target, scope):
        for n in ast.walk(target):
            if isinstance(n, ast.Name):
                self._bind(scope, n.id, None)

    def _use(self, chain, node, record):
        if record:
            self.uses.append(Use(chain, self._where(node), (self.rel, self._top)))


def _mark_assign_targets(tree):
    for n in ast.walk(tree):
        if isinstance(n, (ast.Assign, ast.AnnAssign)):
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                for x in ast.walk(t):
                    if isinstance(x, ast.Name):
                        x._hf_assign = True


def scan_module(rel: str, source: str) -> _Module:
    tree = ast.parse(source, rel)
    _mark_assign_targets(tree)
    return _Module(rel, tree).run()


def scan(root: Path = HIPFER) -> list:
    return [scan_module(p.relative_to(root).as_posix(), p.read_text())
            for p in sorted(root.rglob("*.py"))]


def load_surface(path: Path = SURFACE_FILE) -> set:
    return {ln.strip() for ln in path.read_text().splitlines()
            if ln.strip() and not ln.startswith("#")}


def _required(modules) -> dict:
    """chain -> [Use] of every chain hipfer needs: the scan's, the dynamic names' and
    UNSEEN's."""
    need: dict = {}
    for m in modules:
        for u in m.uses:
            need.setdefault(u.chain, []).append(u)
        for base, where, site in m.dynamic:
            names = DYNAMIC.get((m.rel, base))
            if names is None:
                raise AssertionError(
                    f"{where}: getattr({base}, <computed name>): add the names it can take "
                    f"to DYNAMIC in tests/test_cupy_api.py")
            for name in names():
                need.setdefault(f"{base}.{name}", []).append(Use(f"{base}.{name}", where, site))
    for chain, rel in UNSEEN.items():
        need.setdefault(chain, []).append(Use(chain, f"{rel} (UNSEEN)", (rel, "")))
    return need


@pytest.fixture(scope="module")
def modules():
    return scan()


@pytest.fixture(scope="module")
def surface():
    return load_surface()


# ------------------------------------------------------------------ 1a: static
def test_surface_file_is_13_3(surface):
    head = SURFACE_FILE.read_text().splitlines()[:2]
    assert head[0].startswith("# CuPy 13.3.0 public surface")
    assert "cupy_cuda12x-13.3.0-cp311" in head[1]
    assert "cupy.ndarray" in surface and "cupy.cuda.runtime.getDevice" in surface


def test_every_cupy_chain_exists_in_13_3(modules, surface):
    need = _required(modules)
    assert len(need) > 60  # the scan finds hipfer's CuPy calls at all
    missing = {}
    for chain, uses in need.items():
        sites = ALLOWED[chain][2] if chain in ALLOWED else ()
        bad = [u.where for u in uses if u.site not in sites]
        if chain not in surface and bad:
            missing[chain] = bad
    assert not missing, (
        "CuPy API that CuPy 13.3 lacks (guard it and list it, with its site, in ALLOWED; or "
        "regenerate tests/data/cupy_api_13.3.0.txt with tools/cupy_api.py if 13.3 has it):\n"
        + "\n".join(f"  {c}  <- {', '.join(w[:3])}" for c, w in sorted(missing.items())))


def test_allowed_chains_are_missing_and_used(modules, surface):
    need = _required(modules)
    for chain, (why, guard, sites) in ALLOWED.items():
        assert why and guard
        assert chain not in surface, f"{chain} is in CuPy 13.3: drop it from ALLOWED"
        used = {u.site for u in need.get(chain, ())}
        assert used == set(sites), f"{chain} is named at {used}, ALLOWED says {set(sites)}"


def test_unseen_chains_are_named_where_said():
    for chain, rel in UNSEEN.items():
        attrs = {n.attr for n in ast.walk(ast.parse((HIPFER / rel).read_text()))
                 if isinstance(n, ast.Attribute)}
        attr = chain.rsplit(".", 1)[1]
        assert attr in attrs or attr in ("__enter__",), f"{rel} reads no .{attr}"


def _gpu_code(rel: str) -> bool:
    """Whether hipfer/<rel> is CuPy backend code: backends/cupy/ or an nn topic's gpu.py."""
    return rel.startswith("backends/cupy/") or (rel.startswith("nn/_") and rel.endswith("/gpu.py"))


def test_array_attributes_of_the_cupy_backend_exist_in_13_3(surface):
    """Every attribute the CuPy backend reads that a NumPy array also has (the backend's
    arrays are CuPy's: inputs, out) must be one cupy.ndarray 13.3 has; likewise every
    .data.X and .flags.X read anywhere in hipfer, past what memoryview / NumPy's flags
    have (.flags.X in the backend only: elsewhere it may be a NumPy array's). A Tensor's
    ._data is either: what hipfer reads of it anywhere must be on cupy.ndarray too."""
    array_attrs = {c.split(".")[2] for c in surface if c.startswith("cupy.ndarray.")}
    np_attrs = set(dir(np.ndarray)) - {"__class_getitem__"}
    bad = []
    for p in sorted(HIPFER.rglob("*.py")):
        rel = p.relative_to(HIPFER).as_posix()
        for n in ast.walk(ast.parse(p.read_text())):
            if not isinstance(n, ast.Attribute):
                continue
            if _gpu_code(rel) and n.attr in np_attrs \
                    and n.attr not in array_attrs and n.attr not in HOST_ONLY:
                bad.append(f"{rel}:{n.lineno} .{n.attr}")
            if isinstance(n.value, ast.Attribute) and n.value.attr == "data" \
                    and n.attr not in dir(memoryview) \
                    and f"cupy.cuda.MemoryPointer.{n.attr}" not in surface:
                bad.append(f"{rel}:{n.lineno} .data.{n.attr}")
            if isinstance(n.value, ast.Attribute) and n.value.attr == "flags" \
                    and (_gpu_code(rel) or (ast.unparse(n.value).endswith(
                        "._data.flags") and n.attr not in HOST_ONLY_FLAGS)) \
                    and f"cupy._core.flags.Flags.{n.attr}" not in surface:
                bad.append(f"{rel}:{n.lineno} .flags.{n.attr}")
            # a Tensor's backend array (NumPy's or CuPy's), anywhere in hipfer
            if isinstance(n.value, ast.Attribute) and n.value.attr == "_data" \
                    and n.attr not in array_attrs:
                bad.append(f"{rel}:{n.lineno} ._data.{n.attr}")
    assert not bad, "array attributes CuPy 13.3 lacks:\n" + "\n".join(bad)


# the scanner itself, on planted sources
_PLANTED = '''
import cupy
import cupy as cp
from cupy.cuda import runtime
from cupy_backends.cuda.libs import cublas as cb

x = cupy.linalg.eigvals
rt = cupy.cuda.runtime
rt.not_in_13
cp.also_missing.deep
runtime.getDevice()
a, f = 1, cupy.cuda.get_current_stream
f().ptr_missing
cb.nope

def local():
    import cupyx
    cupyx.errstate_missing
    buf = cupy.empty(3)
    buf.data.ptr_missing
    getattr(cupy.linalg, "lit_missing")
    getattr(cupy.fft, name)

def shadow(cupy):
    cupy.param_is_cupy

def other(rt):
    rt.not_cupy  # a parameter called rt is not the module-level alias
'''


def test_scanner_finds_planted_chains():
    m = scan_module("planted.py", _PLANTED)
    chains = {u.chain for u in m.uses}
    for c in ("cupy.linalg.eigvals", "cupy.cuda.runtime.not_in_13", "cupy.also_missing.deep",
              "cupy.cuda.runtime.getDevice", "cupy.cuda.Stream.ptr_missing",
              "cupy_backends.cuda.libs.cublas.nope", "cupyx.errstate_missing",
              "cupy.cuda.MemoryPointer.ptr_missing", "cupy.linalg.lit_missing",
              "cupy.param_is_cupy"):
        assert c in chains, c
    assert not any(c.endswith("not_cupy") for c in chains)
    line = _PLANTED.splitlines().index("    getattr(cupy.fft, name)") + 1
    assert m.dynamic == [("cupy.fft", f"planted.py:{line}", ("planted.py", "local"))]
    assert {u.site for u in m.uses if u.chain == "cupy.linalg.eigvals"} == {("planted.py", "")}
    surface = load_surface()
    assert "cupy.linalg.eigvals" not in surface  # the regression this test is for


# ------------------------------------------------------------------ 1b / 2: CuPy 13.3
def _site():
    site = os.environ.get("HIPFER_CUPY13_SITE")
    if not site or not Path(site, "cupy", "__init__.py").is_file():
        if os.environ.get("HIPFER_REQUIRE_CUPY13") == "1":
            pytest.fail(f"HIPFER_REQUIRE_CUPY13=1 but HIPFER_CUPY13_SITE={site!r} holds no "
                        "CuPy (unzip cupy-cuda12x 13.3.0 and fastrlock there)")
        pytest.skip("HIPFER_CUPY13_SITE does not name a directory with CuPy 13.3")
    return site


def _run13(site: str, code: str, stdin: bytes = b"", timeout: int = 120):
    """Python code in a subprocess importing CuPy 13.3 from site (no GPU: CUDA calls fail)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([site, str(ROOT), str(ROOT / "tools"),
                                                       str(ROOT / "tests")]),
               CUDA_VISIBLE_DEVICES="", HIP_VISIBLE_DEVICES="")  # never a GPU, even on one
    env.pop("HIPFER_DISABLE_GPU", None)  # gpu_status is to ask CuPy 13.3
    r = subprocess.run([sys.executable, "-c", code], input=stdin, capture_output=True,
                       env=env, cwd=ROOT, timeout=timeout)
    assert r.returncode == 0, r.stderr.decode()[-4000:]
    return r.stdout


_RESOLVE = r'''
import importlib, json, pkgutil, sys
import cupy_api  # tools/cupy_api.py: imports with missing CUDA libraries stubbed
import cupy
import hipfer.backends.cupy as pkg
from hipfer.prims.fused_ops import TOPICS, topic_module
mods = [f"hipfer.backends.cupy.{m.name}" for m in pkgutil.iter_modules(pkg.__path__)]
mods += [topic_module(t, "gpu") for t in TOPICS]  # each hipfer.nn topic's GPU part
for name in mods:
    importlib.import_module(name)
def resolve(chain):
    parts = chain.split(".")
    obj = cupy_api.import_module(parts[0])
    for k, p in enumerate(parts[1:], 1):
        try:
            obj = getattr(obj, p)
        except AttributeError:
            if isinstance(obj, type):  # what instances set in __init__ (Stream.ptr)
                names = cupy_api._instance_names(".".join(parts[:k]), obj)
                return p in names and k == len(parts) - 1
            try:
                obj = cupy_api.import_module(".".join(parts[:k + 1]))
            except ImportError:
                return False
    return True
def obj_of(chain):
    parts = chain.split(".")
    obj = cupy_api.import_module(parts[0])
    for p in parts[1:]:
        obj = getattr(obj, p)
    return obj
import inspect
need, calls = json.load(sys.stdin)
def keywords(chain):
    """The keywords chain's callable takes (None: any, or no signature to read)."""
    try:
        ps = inspect.signature(obj_of(chain)).parameters.values()
    except (ValueError, TypeError, AttributeError):
        return None  # a ufunc, a cdef class
    if any(p.kind is p.VAR_KEYWORD for p in ps):
        return None
    return {p.name for p in ps if p.kind is not p.POSITIONAL_ONLY}
bad_kw, verified = [], 0
for cands, kws, where in calls:
    taken = [keywords(c) for c in cands]
    if any(t is None for t in taken):
        continue
    verified += 1  # each keyword taken by the callable (by one of them, for a computed name)
    bad_kw += [f"{where} {'|'.join(cands)}({k}=)" for k in kws if not any(k in t for t in taken)]
from hipfer.backends.cupy import linalg
from hipfer.prims import descriptors as d
fac = linalg.HANDLERS[d.Factorize]
guards = {k.name: linalg._missing(k) for k in d.FactorKind}
for k in d.FactorKind:  # Factorize.supports / why_not follow the guard
    assert fac.supports(d.Factorize(k), None) == (not guards[k.name]), k
    assert not guards[k.name] or fac.why_not(d.Factorize(k), None) == guards[k.name], k
# hipfer itself imports and reports on 13.3 (no GPU here: not usable, no exception)
import hipfer, hipfer.nn  # noqa: E401
from hipfer.backends.cupy import _engine
from hipfer.prims.registry import gpu_status
st = gpu_status()
assert not st.usable and st.versions.get("cupy") == "13.3.0", st
assert isinstance(_engine.fast_launch_status(), str)
json.dump({"version": cupy.__version__, "modules": mods, "guards": guards,
           "missing": sorted(c for c in need if not resolve(c)), "bad_kw": bad_kw,
           "verified": verified}, sys.stdout)
'''


def test_cupy13_resolves_every_chain(modules):
    site = _site()
    need = _required(modules)
    calls = []  # (candidate chains, keywords, where): a computed name, any of DYNAMIC's
    for m in modules:
        for chain, kws, where in m.calls:
            if chain.endswith(".*"):
                names = DYNAMIC[(m.rel, chain[:-2])]()
                cands = [f"{chain[:-1]}{n}" for n in sorted(names)]
            else:
                cands = [chain]
            cands = [c for c in cands if c not in ALLOWED]
            if cands:
                calls.append((cands, kws, where))
    out = json.loads(_run13(site, _RESOLVE, json.dumps([sorted(need), calls]).encode()))
    assert out["version"] == "13.3.0"
    # keyword arguments too, where 13.3's callable has a signature to read
    assert out["verified"] >= 10 and not out["bad_kw"], out["bad_kw"]
    assert {f"hipfer.backends.cupy.{m}" for m in ("_engine", "elementwise", "linalg", "semiring")
            } | {"hipfer.nn._conv.gpu", "hipfer.nn._blas.gpu"} <= set(out["modules"])
    assert set(out["missing"]) == set(ALLOWED), (
        "unexpected: " + ", ".join(sorted(set(out["missing"]) ^ set(ALLOWED))))
    # the guard of ALLOWED: on 13.3 the kinds needing eig / eigvals say so, the rest run
    guards = out["guards"]
    for kind in ("EIG", "EIGVALS"):
        assert "CuPy >= 14" in guards[kind] and "13.3.0" in guards[kind], guards[kind]
    assert not any(v for k, v in guards.items() if k not in ("EIG", "EIGVALS")), guards


def test_cupy13_surface_file_is_current():
    """The committed record is what tools/cupy_api.py reads from this CuPy 13.3 now."""
    site = _site()
    text = _run13(site, "import cupy_api, sys; sys.stdout.write(cupy_api.render("
                        "cupy_api.surface()))").decode()
    fresh = {ln for ln in text.splitlines() if ln and not ln.startswith("#")}
    recorded = load_surface()
    assert fresh == recorded, (f"regenerate {SURFACE_FILE.name}: + {sorted(fresh - recorded)[:10]}"
                               f" - {sorted(recorded - fresh)[:10]}")


# ------------------------------------------------------------------ 2: kernel arguments
_POINTER_TYPES = frozenset(np.dtype(c).type for c in "?bhilqBHILQefdFD")


class NullParameter(Exception):
    """CuPy 13.3 takes None without complaint but passes it as a NULL *parameter pointer*
    (CPointer()): the kernel then reads an undefined value (an H200 run: misaligned and
    illegal addresses). hipfer's RawLaunch sends 0 instead (_engine.RawLaunch)."""


def pointer13(x):
    """CuPy 13.3's _pointer (cupy/cuda/function.pyx) for host values: the bytes it passes
    by value; TypeError / OverflowError as it raises them, NullParameter for None.
    (cupy.ndarray, MemoryPointer, CPointer, textures: device objects, not modelled.)"""
    if x is None:
        raise NullParameter("None")
    if isinstance(x, np.ndarray):
        if x.size == 1:
            return x.nbytes  # CNumpyArray: the array's own bytes
        raise TypeError(f"You are trying to pass a numpy.ndarray of shape {x.shape}")
    if type(x) not in _POINTER_TYPES:
        if isinstance(x, int):  # bool too: it is an int, packed as int64
            x = np.int64(x)  # OverflowError beyond int64, as there
        elif isinstance(x, float):
            x = np.float64(x)
        elif isinstance(x, complex):
            x = np.complex128(x)
        else:
            raise TypeError(f"Unsupported type {type(x)}")
    if x.itemsize not in (1, 2, 4, 8, 16):
        raise TypeError(f"Unsupported type {type(x)}. (size={x.itemsize})")
    return x.itemsize


def _model(x) -> str:
    try:
        pointer13(x)
        return "ok"
    except (TypeError, OverflowError, NullParameter) as e:
        return type(e).__name__


def _launched(x):
    """An argument as RawLaunch hands it to CuPy (None -> 0), the only way hipfer's
    arguments reach CuPy's _pointer."""
    return 0 if x is None else x


def _kernel_args() -> dict:
    """tests/_kernel_args.py's collect() and battery(), from a subprocess (a stand-in
    cupy module when CuPy is not installed: hipfer.backends.cupy imports it)."""
    try:
        import cupy  # noqa: F401
        stub = ()
    except Exception:
        stub = ("--stub-cupy",)
    r = subprocess.run([sys.executable, str(ROOT / "tests" / "_kernel_args.py"), *stub],
                       capture_output=True, cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr.decode()[-4000:]
    return pickle.loads(r.stdout)


@pytest.fixture(scope="module")
def kernel_args():
    return _kernel_args()


def test_pointer_model_rules():
    struct = np.zeros((), np.dtype([("a", "<i8"), ("b", "<i4")], align=True))
    assert pointer13(struct) == 16  # a 0-d structured array: its bytes
    with pytest.raises(TypeError, match="Unsupported"):
        pointer13(struct[()])  # its np.void scalar: the CuPy 13 failure
    with pytest.raises(TypeError, match="Unsupported"):
        pointer13(np.longdouble(1))
    with pytest.raises(TypeError, match="shape"):
        pointer13(np.zeros(2))
    with pytest.raises(OverflowError):
        pointer13(2 ** 64)
    assert pointer13(True) == 8 and pointer13(np.bool_(True)) == 1 and pointer13(1j) == 16


def test_every_kernel_argument_packs_on_13_3_model(kernel_args):
    args = kernel_args["collect"]
    assert len(args) > 150
    bad = [(label, type(v).__name__, _model(_launched(v))) for label, v in args
           if _model(_launched(v)) != "ok"]
    assert not bad, f"kernel arguments CuPy 13.3 rejects: {bad}"
    assert any(v is None for _, v in args)  # the case RawLaunch must turn into 0


def test_raw_launch_sends_zero_for_none():
    """What a backend passes as a null pointer reaches CuPy as 0, on the RawKernel path
    and on the extension's retry of a refused launch (both go through RawLaunch)."""
    code = r'''
import sys
try:
    import cupy  # noqa: F401  (the real one where installed)
except Exception:
    import _kernel_args
    _kernel_args._stub_cupy()
from hipfer.backends.cupy import _engine as eng
got = []
raw = type("Raw", (), {"kernel": "fn", "__call__":
                       lambda self, g, b, args, shared_mem=0: got.append(args)})()
k = eng.RawLaunch(raw)
marker = object()
assert k((1,), (1,), (None, 5, marker)) is True and k.kernel == "fn"
assert got == [(0, 5, marker)], got
print("ok")
'''
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=ROOT / "tests", timeout=60,
                       env=dict(os.environ, PYTHONPATH=os.pathsep.join(
                           [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(
                               os.pathsep) if p])))
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-3000:]


def _struct_dtypes(path: Path) -> dict:
    """The module-level np.dtype constants of a module, evaluated from its source (pure
    NumPy lines, with the module's literal constants: MAX_NDIM) without importing it."""
    env, out = {"np": np}, {}
    for node in ast.parse(path.read_text()).body:
        if not (isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)):
            continue
        name = node.targets[0].id
        if isinstance(node.value, ast.Call) and ast.unparse(node.value.func) == "np.dtype":
            out[name] = env[name] = eval(compile(ast.Expression(node.value), str(path),
                                                 "eval"), env)
        else:
            try:
                env[name] = ast.literal_eval(node.value)
            except ValueError:
                pass
    return out


def test_kernel_args_cover_every_struct_dtype(kernel_args):
    """Each structured dtype a backend or kernels module defines is packed above."""
    packed = {v.dtype for _, v in kernel_args["collect"] if isinstance(v, np.ndarray)}
    defined = {f"{_rel(p)} {name}": dt
               for p in _arg_modules() for name, dt in _struct_dtypes(p).items()}
    assert len(defined) >= 7
    missing = [k for k, dt in defined.items() if dt.names and dt not in packed]
    assert not missing, f"struct dtypes never packed in tests/_kernel_args.py: {missing}"


def _arg_modules() -> list:
    """The modules that build kernel arguments: the CuPy backend, the kernel lists, the op
    table, and the same parts of each hipfer.nn topic's folder."""
    return (sorted((HIPFER / "backends" / "cupy").glob("*.py"))
            + sorted((HIPFER / "kernels").glob("*.py"))
            + sorted((HIPFER / "prims" / "fused_ops").glob("*.py"))
            + sorted(p for p in (HIPFER / "nn").glob("_*/*.py")
                     if p.stem in ("gpu", "kernels", "ops")))


def _rel(p: Path) -> str:
    return p.relative_to(HIPFER).as_posix()


_NP_SCALARS = {n for n in dir(np) if isinstance(getattr(np, n), type)
               and issubclass(getattr(np, n), np.generic)}


def test_kernel_args_cover_every_scalar_constructor(kernel_args):
    """Every NumPy scalar type the backend constructs (np.int64(...), aliases such as
    I64 = np.int64, dt.type(...)) is among the packed arguments' types: a new kind of
    argument must be added to tests/_kernel_args.py, and so is checked."""
    packed = {type(v) for _, v in kernel_args["collect"]}
    used, dtype_type = {}, False
    for p in _arg_modules():
        tree = ast.parse(p.read_text())
        alias = {}
        for node in tree.body:  # I64 = np.int64, I32, I64 = np.int32, np.int64
            if isinstance(node, ast.Assign):
                pairs = [(node.targets[0], node.value)]
                if isinstance(node.targets[0], ast.Tuple) and isinstance(node.value, ast.Tuple):
                    pairs = list(zip(node.targets[0].elts, node.value.elts))
                for t, v in pairs:
                    s = ast.unparse(v)
                    if isinstance(t, ast.Name) and s.startswith("np.") and s[3:] in _NP_SCALARS:
                        alias[t.id] = s[3:]
        for n in ast.walk(tree):
            if not isinstance(n, ast.Call):
                continue
            f = ast.unparse(n.func)
            name = f[3:] if f.startswith("np.") else alias.get(f)
            if name in _NP_SCALARS:
                used.setdefault(getattr(np, name), []).append(f"{_rel(p)}:{n.lineno}")
            if isinstance(n.func, ast.Attribute) and n.func.attr == "type":
                dtype_type = True  # dt.type(v): every CTYPE dtype is packed
    from hipfer.kernels import CTYPE
    assert dtype_type and {dt.type for dt in CTYPE} <= packed
    assert np.int64 in used and np.uintp in used
    missing = {t.__name__: w for t, w in used.items() if t not in packed}
    assert not missing, f"scalar kinds not in tests/_kernel_args.py: {missing}"


def test_struct_args_are_not_void_scalars():
    """shape_arg / struct_arg / tiling_arg give 0-d arrays, never their np.void."""
    src = "\n".join(p.read_text() for p in _arg_modules())
    assert "np.void(" not in src


_PACK = r'''
import pickle, sys, types
import _kernel_args as ka
from cupy.cuda import function
from cupy_backends.cuda.api.runtime import CUDARuntimeError
from cupy_backends.cuda.api.driver import CUDADriverError
# the real Function.__call__ packs every argument (_pointer) before it touches the
# driver: a rejected one raises TypeError, an accepted one then fails on the missing GPU
# (cooperative launch: an occupancy query of the null function, never a launch)
f = function.Function.__new__(function.Function)
stream = types.SimpleNamespace(ptr=0)
out = {}
for group in ("collect", "battery"):
    res = []
    for label, v in getattr(ka, group)():
        try:
            f((1,), (1,), (v,), stream=stream, enable_cooperative_groups=True)
            r = "launched"
        except (CUDARuntimeError, CUDADriverError):
            r = "ok"
        except (TypeError, OverflowError) as e:
            r = type(e).__name__
        res.append((label, v, r))
    out[group] = res
sys.stdout.buffer.write(pickle.dumps(out))
'''


def test_cupy13_packs_every_kernel_argument():
    site = _site()
    out = pickle.loads(_run13(site, _PACK))
    rejected = [(label, r) for label, _, r in out["collect"] if r != "ok"]
    assert len(out["collect"]) > 150 and not rejected, rejected
    # the model agrees with the real _pointer on both sides of its rules
    seen = {r for *_, r in out["battery"]}
    assert {"ok", "TypeError"} <= seen
    # None: 13.3 raises nothing but passes a NULL parameter pointer (NullParameter)
    differ = [(label, r, _model(v)) for label, v, r in out["battery"] + out["collect"]
              if r != _model(v) and not (v is None and r == "ok")]
    assert not differ, f"model != CuPy 13.3 (label, real, model): {differ}"


_GUARD = r'''
import sys, types
import _kernel_args
_kernel_args._stub_cupy()
cupy = sys.modules["cupy"]
cupy.__version__ = "13.3.0"
cupy.cuda = types.SimpleNamespace(runtime=types.SimpleNamespace(is_hip=False))
cupy.linalg = types.SimpleNamespace(**{f: len for f in (  # CuPy 13.3's: no eig, eigvals
    "cholesky", "inv", "det", "eigvalsh", "svd", "slogdet", "eigh", "qr", "solve")})
from hipfer.backends.cupy import linalg
from hipfer.prims import descriptors as d
K, fac = d.FactorKind, linalg.HANDLERS[d.Factorize]
for k in (K.EIG, K.EIGVALS):
    why = fac.why_not(d.Factorize(k), None)
    assert not fac.supports(d.Factorize(k), None)
    assert "CuPy >= 14" in why and "(13.3.0)" in why and f"cupy.linalg.{k.value}" in why, why
assert all(fac.supports(d.Factorize(k), None) for k in K if k not in (K.EIG, K.EIGVALS))
cupy.linalg.eig = cupy.linalg.eigvals = len  # CuPy 14: all kinds
assert all(fac.supports(d.Factorize(k), None) for k in K)
cupy.cuda.runtime.is_hip = True  # ROCm: no geev, at any version
assert "ROCm" in fac.why_not(d.Factorize(K.EIG), None)
'''


def test_eig_guard_names_the_cupy_version():
    """The guard of ALLOWED on a stand-in CuPy 13.3 (no CuPy needed): Factorize EIG and
    EIGVALS are unsupported there, why_not naming the version needed."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "tests")]))
    r = subprocess.run([sys.executable, "-c", _GUARD], capture_output=True, cwd=ROOT,
                       env=env, timeout=120)
    assert r.returncode == 0, r.stderr.decode()[-3000:]
