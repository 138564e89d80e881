"""The NumPy backend's compiled warm path: hipfer._warm (hipfer/_warm.c) wired in.

A tiny call's host time on the CPU is mostly hipfer's Python layers, not NumPy's work.
``install(namespace)`` -- the last step of ``import hipfer`` -- puts a ``_warm.Warm`` in
front of each elementwise function and of sum/prod/max/min in the namespace; the Tensor
operators get theirs from hipfer._array_methods through ``elementwise``. A Warm serves
the plain case in C -- C-contiguous NumPy arrays of a dtype that the backend computes
with the bare ufunc, same shapes or a Python scalar -- with that ufunc's own 1-d loop (a
reduction: the backend's ufunc.reduce call), and hands every other call to the function
unchanged. The topic modules keep their plain functions, so no module below imports
this one. The dtype tables are derived from the backend's own choice
(``numpy_impl(name, dt)`` is the ufunc), so the two paths cannot drift apart; the tests run
both on every table entry and compare them bit for bit.

Without the extension (no compiler at install), on NumPy 1.x (no error-state context
variable) or with HIPFER_WARM_PATH=0, each function returns what it was given.
"""
from __future__ import annotations

import contextvars
import os

import numpy as np

from . import _dtypes, _elementwise, _statistical
from ._core import scalar_operand
from ._tensor import Tensor
from .backends.numpy import _common
from .backends.numpy.elementwise import numpy_impl
from .prims.infer import real_dtype

try:
    from . import _warm
    STATUS = "hipfer._warm"
except ImportError as e:  # the optional extension is not built
    _warm, STATUS = None, f"off (the C extension hipfer._warm is not built: {e})"
if _warm is not None and os.environ.get("HIPFER_WARM_PATH") == "0":
    _warm, STATUS = None, "off (HIPFER_WARM_PATH=0)"
if _warm is not None and _common._FP_STATE is None:  # pragma: no cover - NumPy 1.x
    _warm, STATUS = None, "off (NumPy 1.x has no error-state context variable)"

UNARY, BINARY, REDUCE = 0, 1, 2


def _start() -> None:
    # the Context the ufuncs' reductions run in: NumPy's error state, every error ignored
    ignoring = contextvars.Context()
    ignoring.run(_common._FP_STATE.set, _common._make_extobj(all="ignore"))
    _warm.init(Tensor, np.ufunc, np.conjugate, ignoring, _scalar_for)


def enabled() -> bool:
    return _warm is not None


def _result(row, dt):
    if row.result == "bool":
        return np.dtype(np.bool_)
    if row.result == "real":
        return real_dtype(dt)
    return dt


def _table(row, kinds=None):
    """(in dtype, out dtype, quiet) for each dtype the backend runs as the bare ufunc, of
    the kinds the function takes as they are (default: the row's)."""
    ufunc = getattr(np, row.name, None)
    if not isinstance(ufunc, np.ufunc):
        return None, ()
    kinds = row.kinds if kinds is None else kinds
    return ufunc, tuple((dt, _result(row, dt), dt.kind in "biu") for dt in _dtypes.ALL_DTYPES
                        if dt.kind in kinds and dt.kind in row.kinds
                        and _is_bare(numpy_impl(row.name, dt), ufunc))


def _is_bare(impl, ufunc) -> bool:
    """The backend computes with ufunc itself (maybe wrapped only to ignore the errors
    that integer x // 0 raises, which the warm path ignores as well)."""
    return impl is ufunc or getattr(impl, "ufunc", None) is ufunc


def elementwise(fn, op, swap: bool = False, kinds=None):
    """fn (the namespace function of op, unary or binary) with the warm path in front;
    kinds: the dtype kinds fn takes as they are, when not all of the row's (fabs)."""
    if _warm is None:
        return fn
    ufunc, table = _table(op.row, kinds)
    if not table:
        return fn
    return _warm.Warm(op.row.arity - 1, ufunc, fn, table, swap)


def reduction(fn, ufunc, dtypes, with_dtype: bool):
    """fn (sum, prod, max, min) with the warm path in front for fn(x) over every axis,
    for the dtypes (those fn reduces in their own dtype). with_dtype: the backend passes
    the accumulation dtype to ufunc.reduce (sum, prod)."""
    if _warm is None:
        return fn
    table = tuple((dt, dt, dt.kind in "biu") for dt in dtypes)
    return _warm.Warm(REDUCE, ufunc.reduce, fn, table, False, with_dtype)


def _scalar_for(value, t):
    """The weak scalar's cached 0-d array for an op with tensor t, when value takes t's
    dtype (else None: the Python path decides); the same rule and cache as the Python
    warm path in hipfer._elementwise._binary."""
    dt = t._data.dtype
    if _dtypes.scalar_type(dt, value) is not dt:
        return None
    return scalar_operand(value, dt, t)._data


def install(namespace: dict) -> None:
    """Put the warm path in front of the namespace's elementwise functions and
    reductions (a no-op without the extension)."""
    if _warm is None:
        return
    for table, swap in ((_elementwise._UNARY, False), (_elementwise._BINARY, False),
                        (_elementwise._SWAPPED, True)):
        for name, op in table.items():
            _place(namespace, name, elementwise(namespace[name], op, swap))
    # NumPy's names (hipfer._elementwise.NUMPY_UNARY, ...): the same tables, then the
    # names that are another function point at its warm one
    for name, (op, kinds, _) in _elementwise.NUMPY_UNARY.items():
        _place(namespace, name, elementwise(namespace[name], op, kinds=kinds))
    for name, op in _elementwise.NUMPY_BINARY.items():
        _place(namespace, name, elementwise(namespace[name], op))
    for name, same in _elementwise.NUMPY_SAME.items():
        namespace[name] = namespace[same]
    for name, (ufunc, dtypes, with_dtype) in _statistical.WARM.items():
        _place(namespace, name, reduction(namespace[name], ufunc, dtypes, with_dtype))


def _place(namespace: dict, name: str, fn) -> None:
    """namespace[name] = fn; a Warm learns where it lives, so that pickle finds it there
    by module and name (hipfer.exp), as it finds a plain function."""
    if _warm is not None and isinstance(fn, _warm.Warm):
        fn.__module__, fn.__qualname__ = namespace["__name__"], name
    namespace[name] = fn


if _warm is not None:
    _start()
