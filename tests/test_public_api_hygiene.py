"""hipfer's public modules show only their API, document it, and type-check.

- every public name (no leading underscore) of hipfer, hipfer.linalg, hipfer.fft,
  hipfer.random and hipfer.nn is in the module's ``__all__``, is one of its submodules, or
  is listed in DOCUMENTED below with the reason; no other module object and no
  ``__future__`` feature leaks (``hipfer.annotations``, ``hipfer.fft.np`` once did);
- every public callable there has a docstring of its own;
- ``hipfer.nn``, ``hipfer.bench`` and ``hipfer.kernels`` are reachable after a plain
  ``import hipfer``, loaded on first use (``import hipfer`` does not load them);
- ``py.typed`` and the generated ``hipfer/_elementwise.pyi`` and ``hipfer/_tensor.pyi`` ship,
  and the stubs are current
  (tools/gen_stubs.py --check);
- mypy accepts tests/data/typed_user.py, a user's script (only where mypy is installed),
  and the script runs.
"""
from __future__ import annotations

import __future__
import importlib
import os
import subprocess
import sys
import tomllib
import types
from pathlib import Path

import pytest

import hipfer as hf

ROOT = Path(__file__).resolve().parent.parent
MODULES = ("hipfer", "hipfer.linalg", "hipfer.fft", "hipfer.random", "hipfer.nn")

#: public names outside __all__, and why each is there
DOCUMENTED = {
    "hipfer.linalg": {
        "LinAlgError": "the exception its functions raise (numpy.linalg.LinAlgError's role)",
        "EighResult": "the named tuple eigh returns", "EigResult": "the named tuple eig returns",
        "QRResult": "the named tuple qr returns", "SVDResult": "the named tuple svd returns",
        "SlogdetResult": "the named tuple slogdet returns",
        "Tensor": "the type its annotations name (typing.get_type_hints resolves it here)",
    },
    "hipfer.fft": {"Tensor": "the type its annotations name"},
    "hipfer.random": {"Tensor": "the type its annotations name"},
    "hipfer.nn": {"TOPICS": "the functions by topic (docs/gen_nn.py renders docs/nn.md)"},
}
LAZY = ("nn", "bench", "kernels")


def _env() -> dict:
    return {**os.environ, "HIPFER_DEVICE": "cpu",
            "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}


@pytest.mark.parametrize("modname", MODULES)
def test_public_names_are_the_api(modname):
    mod = importlib.import_module(modname)
    allowed = set(mod.__all__) | set(DOCUMENTED.get(modname, {}))
    assert len(set(mod.__all__)) == len(mod.__all__), "__all__ repeats a name"
    assert not [n for n in mod.__all__ if not hasattr(mod, n)], "__all__ names a missing name"
    stray = {}
    for name, obj in vars(mod).items():
        if name.startswith("_"):
            continue
        if isinstance(obj, types.ModuleType):
            if obj.__name__ != f"{modname}.{name}":  # a submodule is fine, numpy is not
                stray[name] = f"the module {obj.__name__}"
        elif isinstance(obj, __future__._Feature):
            stray[name] = "a __future__ feature"
        elif name not in allowed:
            stray[name] = type(obj).__name__
    assert not stray, f"{modname}: stray public names {stray}"


@pytest.mark.parametrize("modname", MODULES)
def test_every_public_callable_has_its_own_docstring(modname):
    mod = importlib.import_module(modname)
    names = set(mod.__all__) | set(DOCUMENTED.get(modname, {}))
    missing = []
    for name in sorted(names):
        obj = getattr(mod, name)
        if not callable(obj):
            continue
        doc = obj.__doc__ if isinstance(obj, type) else getattr(obj, "__wrapped__", obj).__doc__
        if isinstance(obj, type) and "__doc__" not in vars(obj):
            doc = None  # inherited: not its own
        if not (doc or "").strip():
            missing.append(name)
    assert not missing, f"{modname}: no docstring: {missing}"


def test_elementwise_docstrings_come_from_the_op_table():
    from hipfer import _elementwise
    for name in ("exp", "add", "less", "abs", "logical_not"):
        doc = getattr(hf, name).__doc__
        assert doc.startswith(f"{name}(x") and "Elementwise:" in doc
        assert getattr(_elementwise, name).__doc__ == doc  # the warm path shows the same
    assert "e ** x" in hf.exp.__doc__ and "swapped" in hf.less.__doc__


def test_subpackages_load_lazily():
    code = ("import sys, hipfer\n"
            f"lazy = {LAZY!r}\n"
            "assert not [m for m in lazy if 'hipfer.' + m in sys.modules], sys.modules.keys()\n"
            "assert set(lazy) <= set(dir(hipfer))\n"
            "assert hipfer.nn.relu is sys.modules['hipfer.nn'].relu\n"
            "assert hipfer.bench.main and hipfer.kernels.KERNEL_DIR\n"
            "try:\n    hipfer.no_such_name\nexcept AttributeError as e:\n"
            "    assert 'no_such_name' in str(e)\nelse:\n    raise SystemExit('no error')\n"
            "print('ok')")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=_env(), cwd=ROOT, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_typing_files_ship():
    assert (ROOT / "hipfer" / "py.typed").is_file()
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert {"py.typed", "*.pyi"} <= set(data["package-data"]["hipfer"])


def test_the_elementwise_stub_is_current():
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_stubs.py"), "--check"],
                       capture_output=True, text=True, env=_env(), cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr + "\nrun: python tools/gen_stubs.py --write"


def test_a_users_script_type_checks_and_runs():
    user = ROOT / "tests" / "data" / "typed_user.py"
    r = subprocess.run([sys.executable, str(user)], capture_output=True, text=True,
                       env=_env(), cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr
    pytest.importorskip("mypy", reason="mypy is not installed (tools/mypy_check.sh)")
    r = subprocess.run(["bash", str(ROOT / "tools" / "mypy_check.sh"), "user"],
                       capture_output=True, text=True, env=_env(), cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
