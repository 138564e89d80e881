"""NumPy's functional programming routines on tensors: apply_along_axis,
apply_over_axes, piecewise.

They call Python functions on tensors (slices, whole tensors, masked selections), so the
work stays on the tensors' device; the loop itself runs in Python, as NumPy's does.
"""
from __future__ import annotations

import itertools

import numpy as np

from . import _creation, _elementwise, _manipulation, _views
from ._tensor import Tensor

__all__ = ["apply_along_axis", "apply_over_axes", "piecewise"]


def _tensor(x, name: str) -> Tensor:
    return x if isinstance(x, Tensor) else _creation.asarray(x)


def apply_along_axis(func1d, axis: int, arr, *args, **kwargs) -> Tensor:
    """func1d(a_1d, *args, **kwargs) for every 1-d slice of arr along axis; the results
    (all of one shape, scalars allowed) replace that axis (NumPy's apply_along_axis:
    arr.shape[:axis] + result.shape + arr.shape[axis+1:])."""
    arr = _tensor(arr, "apply_along_axis")
    axis = _views._axis(axis, arr.ndim, "hipfer.apply_along_axis(): axis")
    moved = _views.moveaxis(arr, axis, -1)
    outer = moved.shape[:-1]
    if 0 in outer:
        raise ValueError("hipfer.apply_along_axis: cannot apply_along_axis when any "
                         "iteration dimensions are 0")
    results = []
    for index in itertools.product(*(range(n) for n in outer)):
        r = func1d(moved[index], *args, **kwargs)
        results.append(r if isinstance(r, Tensor) else _creation.asarray(r, device=arr.device))
    if any(r.shape != results[0].shape for r in results):
        raise ValueError("hipfer.apply_along_axis: func1d returned results of different "
                         "shapes")
    res_shape = results[0].shape
    out = _manipulation.stack(results).reshape(outer + res_shape) if len(outer) else results[0]
    # the result's axes stand where the applied axis stood
    k = len(res_shape)
    return _views.permute_dims(out, tuple(range(axis)) + tuple(range(len(outer), len(outer) + k))
                               + tuple(range(axis, len(outer))))


def apply_over_axes(func, a, axes) -> Tensor:
    """func(a, axis) (or func(a, axis=axis), the standard's form) applied for each axis in turn, each result keeping a's ndim (an axis
    func drops is put back with length 1), as NumPy's apply_over_axes."""
    val = _tensor(a, "apply_over_axes")
    n = val.ndim
    for ax in np.atleast_1d(np.asarray(axes)).tolist():  # axes are host ints
        ax = ax + n if ax < 0 else ax
        try:
            res = func(val, ax)
        except TypeError:  # hipfer's reductions take axis by keyword only
            res = func(val, axis=ax)
        if not isinstance(res, Tensor):
            res = _creation.asarray(res, device=val.device)
        if res.ndim == n - 1:
            res = _views.expand_dims(res, ax)
        if res.ndim != n:
            raise ValueError("hipfer.apply_over_axes: function is not returning a tensor of "
                             "the correct shape")
        val = res
    return val


def piecewise(x, condlist, funclist, *args, **kw) -> Tensor:
    """NumPy's piecewise: where condlist[i] holds, funclist[i](x[condlist[i]], *args, **kw)
    (or the value funclist[i]); an extra last entry of funclist covers where no condition
    holds; elsewhere 0. Later conditions win where several hold. A callable receives
    x's masked elements, as in NumPy: one sync per callable for their count; scalar
    values sync nothing."""
    x = _tensor(x, "piecewise")
    # NumPy's reading of condlist: one bare condition, or a sequence (the rows of an n-d
    # array) of conditions, each broadcast against x
    if isinstance(condlist, (Tensor, np.ndarray)):
        if condlist.ndim == 0 or (condlist.ndim == 1 and x.ndim != 0):
            condlist = [condlist]
        else:
            condlist = list(condlist)
    elif np.isscalar(condlist) or (len(condlist) and x.ndim != 0 and not isinstance(
            condlist[0], (list, tuple, Tensor, np.ndarray))):
        condlist = [condlist]
    conds = [c if isinstance(c, Tensor) else _creation.asarray(c, device=x.device)
             for c in condlist]
    conds = [_views.broadcast_to(c.astype(bool), x.shape) if c.shape != x.shape
             else c.astype(bool) for c in conds]
    n = len(conds)
    if len(funclist) not in (n, n + 1):
        raise ValueError(f"hipfer.piecewise: with {n} condition(s), either {n} or {n + 1} "
                         f"functions are expected, got {len(funclist)}")
    if len(funclist) == n + 1:  # "otherwise": where no condition holds
        none = conds[0] if n else _creation.zeros(x.shape, dtype=bool, device=x.device)
        for c in conds[1:]:
            none = _elementwise.logical_or(none, c)
        conds.append(_elementwise.logical_not(none) if n else
                     _creation.ones(x.shape, dtype=bool, device=x.device))
    y = _creation.zeros(x.shape, dtype=x.dtype, device=x.device)
    for cond, func in zip(conds, funclist):
        if callable(func):
            vals = x[cond]
            if vals.size:
                y[cond] = func(vals, *args, **kw)
        else:
            y = _elementwise.where(cond, _creation.asarray(func, dtype=x.dtype,
                                                           device=x.device), y)
    return y
