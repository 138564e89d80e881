"""Shared internals of the namespace topics: casting, materialising, operand promotion
and the scalar fills. Every topic module may import this one; it imports only the
Tensor, the op path (_ops) and prims, so nothing here can close an import circle.

- ``cast(x, dt)``: x in dtype dt (itself if it has it), by PointwiseCast, keeping x's
  layout as NumPy's astype does; ``cast_site(dt)`` is that cast's Site;
- ``materialize(x)``: a C-contiguous copy with the conjugation flag resolved;
- ``operands(a, b)``: a pair of operands (Tensors, Python or NumPy scalars, NumPy
  arrays, lists, tuples) promoted to Tensors of one dtype; anything else raises
  ``NotAnOperand`` (an operator then returns NotImplemented);
- ``fill(shape, value, dt, device)``: a new tensor holding value everywhere (full()
  without its checks), ``scalar_like`` and ``scalar_operand``: 0-d tensors holding a
  scalar on an operand's device, the latter cached for operands that are only read.
"""
from __future__ import annotations

import math

import numpy as np

from . import _dtypes, _ops
from ._tensor import Tensor
from .prims import descriptors as d


class NotAnOperand(TypeError):
    """Raised by operand conversion so operators can return NotImplemented."""


# ------------------------------------------------------------------------- casting
_CASTS: dict = {}  # dtype -> Site(PointwiseCast(dtype))


def cast_site(dt) -> _ops.Site:
    """The Site of PointwiseCast(dt) (astype keeps the operand's layout, as NumPy's does)."""
    site = _CASTS.get(dt)
    if site is None:
        site = _CASTS[dt] = _ops.Site(d.PointwiseCast(dt), keep_layout=True)
    return site


def cast(x: Tensor, dt) -> Tensor:
    """x in dtype dt: x itself when it has it, else one PointwiseCast pass."""
    if x.dtype == dt:
        return x
    return Tensor(cast_site(dt).run1(x))


def materialize(x: Tensor) -> Tensor:
    """Contiguous copy with the conjugation flag resolved."""
    return Tensor(_ops.run(d.MakeContiguous(), [x]))


# ------------------------------------------------------------------------- scalars
_CONSTANT = d.Generate(d.GenerateKind.CONSTANT)
_FILL = _ops.Site(_CONSTANT)


def fill(shape: tuple, value, dt, device) -> Tensor:
    """A new tensor of shape and dtype dt on device holding value (a Python scalar that
    dt takes): full() once its arguments are checked."""
    return Tensor(_ops.generate(_CONSTANT, shape, dt, device, value=value))


def scalar_like(value, dt, t: Tensor) -> Tensor:
    """A 0-d tensor of dtype dt holding value, on t's device: what
    ``full((), value, dtype=dt, device=t.device)`` gives for the scalars operands passes
    (a supported dt; a complex value only with a complex dt), without its checks and
    device lookup."""
    return Tensor(_FILL.generate(_ops.backend_of_data(t._data), (), dt, value=value))


_SCALARS: dict = {}  # (backend, dtype, type, value, signs) -> a cached 0-d device Tensor
_SCALARS_MAX = 256


def scalar_operand(value, dt, t: Tensor) -> Tensor:
    """scalar_like for an operand that is only read: the 0-d array is made once per
    (backend, dtype, value) and reused, since making it is an allocation and a fill (a
    launch on a device) -- as much host time as the op itself. NumPy's are made
    read-only, so a stray write would raise instead of changing the cached value."""
    be = _ops.backend_of_data(t._data)
    if not be.caches_scalars:
        return scalar_like(value, dt, t)
    tv = type(value)
    # -0.0 == 0.0 (and hashes alike): the signs keep them apart; a NaN never equals
    # itself, so it is only found again as the same object
    signs = ((math.copysign(1.0, value),) if tv is float else
             (math.copysign(1.0, value.real), math.copysign(1.0, value.imag))
             if tv is complex else ())
    key = (be, dt, tv, value, signs)
    s = _SCALARS.get(key)
    if s is None:
        if len(_SCALARS) >= _SCALARS_MAX:
            _SCALARS.clear()
        s = scalar_like(value, dt, t)
        if isinstance(s._data, np.ndarray):
            s._data.flags.writeable = False
        be.synchronize()  # later users may run on another stream
        _SCALARS[key] = s
    return s


#: the foreign arrays that never convert implicitly (their data may live on a GPU)
_FOREIGN = ("__dlpack__", "__cuda_array_interface__", "__array_namespace__")


def host_operand(v, t: Tensor) -> Tensor:
    """A NumPy array, list or tuple next to the tensor t, as a tensor on t's device: the
    user passed host data explicitly, so it moves (NumPy arrays keep their dtype; lists
    take NumPy's default dtypes, which are asarray's). Raises NotAnOperand for what is
    none of these, TypeError naming the remedy for an array of another library."""
    if isinstance(v, (list, tuple)):
        try:
            h = np.asarray(v)
        except (TypeError, ValueError) as e:
            raise NotAnOperand(f"a {type(v).__name__} operand that is not an array: {e}") \
                from None
    elif type(v) is np.ndarray or (isinstance(v, np.ndarray) and
                                   not isinstance(v, np.ma.MaskedArray)):  # a mask: lost
        h = np.asarray(v)
    else:
        if any(hasattr(type(v), a) for a in _FOREIGN):
            raise TypeError(f"cannot mix a hipfer Tensor with a {type(v).__module__}."
                            f"{type(v).__name__} implicitly; convert it first with "
                            "hipfer.asarray(x) (or hipfer.from_dlpack(x))")
        raise NotAnOperand(f"unsupported operand type {type(v).__name__}")
    if h.dtype not in _dtypes.ALL_DTYPES:
        raise TypeError(f"an operand of dtype {h.dtype} (hipfer has no such dtype)")
    return Tensor(_ops.backend_of_data(t._data).asarray(h))


def operands(a, b, read_only: bool = False):
    """Promote a pair of operands to Tensors of one dtype.

    The rule for mixed operands (docs/numpy.md, "Mixed operands"): at least one of the
    pair is a Tensor; the other may be

    - a Tensor: they promote by hipfer._dtypes.result_type (the standard's tables;
      NumPy's rules across kinds);
    - a Python scalar: weak, it takes the tensor's dtype where its kind fits (an int out
      of its range raises OverflowError) -- see hipfer._dtypes;
    - a NumPy scalar: a 0-d tensor of its dtype, as in NumPy 2;
    - a NumPy array, a list or a tuple: host data the user passed explicitly, moved to
      the tensor's device as a tensor (a NumPy array keeps its dtype, a list takes
      asarray's default dtypes) and then strong like any tensor, as NumPy 2 treats
      arrays. So ``t == [1, 2, 3]`` is elementwise, never a Python bool;
    - an array of another library (CuPy, torch, ...: it has __dlpack__, ...): TypeError
      naming the remedy, hipfer.asarray -- nothing foreign converts implicitly;
    - anything else: NotAnOperand (a TypeError), so an operator returns NotImplemented
      and Python tries the other side.

    read_only: the caller only reads the operands (never returns or writes one), so a
    Python scalar's 0-d array may be a cached one (scalar_operand).
    """
    ta, tb = isinstance(a, Tensor), isinstance(b, Tensor)
    if not (ta or tb):
        for v in (a, b):
            if not isinstance(v, (bool, int, float, complex, np.generic)):
                raise NotAnOperand(f"unsupported operand type {type(v).__name__}")
        raise TypeError("at least one operand must be a hipfer Tensor")
    if not (ta and tb):
        t, s = (a, b) if ta else (b, a)
        if not isinstance(s, (bool, int, float, complex, np.generic)):
            s = host_operand(s, t)
            a, b = (t, s) if ta else (s, t)
            ta = tb = True
    if ta and tb:
        return a, b, _dtypes.result_type(a.dtype, b.dtype)
    t, s = (a, b) if ta else (b, a)
    if isinstance(s, np.generic):
        dt = _dtypes.result_type(t.dtype, s.dtype)
    else:
        dt = _dtypes.scalar_type(t.dtype, s)
    if read_only and not isinstance(s, np.generic):
        s = scalar_operand(s, dt, t)
    else:
        s = scalar_like(s, dt, t)
    return (t, s, dt) if ta else (s, t, dt)


def store_out(res, out, who: str, *, allow_broadcast: bool = False):
    """res, or res written into out under NumPy's rules for out= (a Tensor of res's shape
    -- or one res broadcasts to, for ufuncs -- and 'same_kind' casting) and out returned.
    who: the function as the user called it, for the messages ("hipfer.nansum",
    "numpy.add()", "ndarray.sum()"). A 1-tuple out (NumPy's ufunc spelling) is its item."""
    if out is None:
        return res
    if isinstance(out, tuple) and len(out) == 1:
        out = out[0]
    if not isinstance(out, Tensor):
        raise TypeError(f"{who}: out must be a hipfer Tensor, got {type(out).__name__}")
    if not isinstance(res, Tensor):
        raise TypeError(f"{who}: out= is not supported for this function")
    if res.shape != out.shape and not (
            allow_broadcast and np.broadcast_shapes(res.shape, out.shape) == out.shape):
        raise ValueError(f"{who}: out has shape {out.shape}, the result has shape {res.shape}")
    if not np.can_cast(res.dtype, out.dtype, "same_kind"):
        raise TypeError(f"{who}: cannot cast the result from {res.dtype} to {out.dtype} with "
                        "casting rule 'same_kind'")
    out[...] = cast(res, out.dtype)
    return out
