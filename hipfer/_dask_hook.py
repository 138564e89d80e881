"""Register hipfer with Dask (hipfer.dask.register) whenever both are imported, in either
order, without ``import hipfer`` importing Dask.

``install()`` (run by ``import hipfer``) registers at once when ``dask.array`` is already
imported; otherwise it puts a finder on ``sys.meta_path`` that, when ``dask.array``
finishes importing, runs the registration. The same for ``distributed`` (Tensor's
serializers). A failing registration warns; it never breaks the user's import.
"""
from __future__ import annotations

import importlib
import importlib.abc
import sys
import warnings

#: module -> what to run once it is imported (hipfer.dask's functions, by name; importing
#: hipfer.dask registers, and a module still importing registers at its end)
_HOOKS = {"dask.array": "register", "distributed": "register_serialization"}


def _run(module: str) -> None:
    try:
        # by name, as hipfer.__getattr__ loads its lazy subpackages: hipfer.dask sits above
        # the namespace (it imports hipfer), and this hook only defers loading it
        hd = importlib.import_module("hipfer.dask")
        fn = getattr(hd, _HOOKS[module], None)
        if fn is not None:
            fn()
    except Exception as e:  # a broken Dask must not break anyone's import
        warnings.warn(f"hipfer could not register with {module}: {e}", RuntimeWarning,
                      stacklevel=2)


class _Loader(importlib.abc.Loader):
    """The real loader, then the hook."""

    def __init__(self, loader, module: str):
        self._loader, self._module = loader, module

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        _run(self._module)

    def __getattr__(self, name):  # get_resource_reader, is_package, ...
        return getattr(self._loader, name)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name not in _HOOKS or name in _pending_done:
            return None
        _pending_done.add(name)  # once: the finders below are asked without us
        try:
            import importlib.util
            spec = importlib.util.find_spec(name)
        finally:
            _pending_done.discard(name)
        if spec is None or spec.loader is None:
            return None
        spec.loader = _Loader(spec.loader, name)
        return spec


_pending_done: set = set()
_FINDER = _Finder()


def install() -> None:
    for module in _HOOKS:
        if module in sys.modules:
            _run(module)
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
