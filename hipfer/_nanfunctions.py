"""NumPy's NaN-ignoring reductions: nansum, nanprod, nanmin, nanmax, nanargmin, nanargmax,
nanmean, nanvar, nanstd, nancumsum, nancumprod, nanmedian, nanquantile, nanpercentile.

nansum, nanprod, nanmax, nanmin, nanmean, nanvar and nanstd of floating and complex
input are one pass over the data: reductions that skip NaN elements (ReduceOp.NANSUM, ...;
one kernel on the GPU). Their RuntimeWarnings (all-NaN slices, too few values) read one
bool of the result back (any NaN in it); only when it has a NaN does a second pass count
the non-NaN values, so that the warning is NumPy's exactly. Integer and bool inputs have no
NaN and take the plain reductions. The scans and nanargmin / nanargmax replace NaN by an
identity (where(isnan(x), id, x)) first; the order statistics sort (NaN sorts last) and use
each slice's count of non-NaN values.
"""
from __future__ import annotations

import warnings

import numpy as np

from . import _dtypes
from ._core import cast
from ._statistical import _reduce
from ._tensor import Tensor
from ._elementwise import (divide, floor_divide, isnan, less_equal, logical_not, sqrt,
                           subtract, where)
from ._manipulation import concat
from ._naming import public
from ._numpy_statistics import (as_tensor, axes_last, median, quantile_q, quantile_result,
                                quantile_rows, store_out, warn_if, weighted_quantile,
                                _float_of)
from ._searching import argmax as _argmax, argmin as _argmin
from ._sorting import order_statistics
from ._statistical import (all as _all, any as _any, cumulative_prod, cumulative_sum,
                           max as _max, mean as _mean, min as _min, prod as _prod, sum as _sum,
                           var as _var)
from ._views import reshape
from .prims import descriptors as d
from .prims.optable import ReduceOp

__all__ = ["nanargmax", "nanargmin", "nancumprod", "nancumsum", "nanmax", "nanmean",
           "nanmedian", "nanmin", "nanpercentile", "nanprod", "nanquantile", "nanstd",
           "nansum", "nanvar"]


def _has_nan(a) -> bool:
    """Whether a's dtype holds NaN (floating or complex)."""
    return a.dtype.kind in "fc"


def _replace_nan(a, value):
    """(a with NaN replaced by value, the NaN mask or None for dtypes without NaN)."""
    if not _has_nan(a):
        return a, None
    mask = isnan(a)
    return where(mask, value, a), mask


def _axis(axis):
    return tuple(axis) if isinstance(axis, list) else axis


# ------------------------------------------------------------------ sums, products
def _one_pass(a: Tensor, dtype) -> bool:
    """Whether the one-pass NaN reductions take a (with dtype=): floating or complex, in
    a floating or complex dtype."""
    return _has_nan(a) and (dtype is None or np.dtype(dtype).kind in "fc")


def _nan_reduce(x: Tensor, op: ReduceOp, axis, keepdims, fn: str, **extra) -> Tensor:
    family = d.AnalyticReduce if op in (ReduceOp.NANVAR, ReduceOp.NANSTD) else d.ScalarReduce
    return _reduce(x, family, op, _axis(axis), keepdims, fn=fn, **extra)


def _warn_counts(r: Tensor, a: Tensor, axis, keepdims, least: int, message: str) -> None:
    """NumPy's RuntimeWarning where a slice has fewer than `least` non-NaN values: one
    bool read (any NaN in r); only if r has a NaN, a second pass counts the values."""
    if not r.size or not bool(_any(isnan(r))):
        return
    cnt = _sum(logical_not(isnan(a)), axis=_axis(axis), keepdims=keepdims)
    if bool(_any(cnt < least)):
        warnings.warn(message, RuntimeWarning, stacklevel=3)


# ------------------------------------------------------------------ sums, products
def nansum(a, axis=None, dtype=None, out=None, keepdims=False):
    """Sum over axis treating NaN as zero (an all-NaN or empty slice sums to 0); dtype as
    in sum (integers accumulate in 64 bits). One pass for floating and complex input."""
    a = as_tensor(a)
    if _one_pass(a, dtype):
        x = a if dtype is None else cast(a, dtype)
        return store_out(_nan_reduce(x, ReduceOp.NANSUM, axis, keepdims, "nansum"), out,
                         "nansum")
    x, _ = _replace_nan(a, 0)
    return store_out(_sum(x, axis=_axis(axis), dtype=dtype, keepdims=keepdims), out, "nansum")


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False):
    """Product over axis treating NaN as one; dtype as in prod. One pass for floating and
    complex input."""
    a = as_tensor(a)
    if _one_pass(a, dtype):
        x = a if dtype is None else cast(a, dtype)
        return store_out(_nan_reduce(x, ReduceOp.NANPROD, axis, keepdims, "nanprod"), out,
                         "nanprod")
    x, _ = _replace_nan(a, 1)
    return store_out(_prod(x, axis=_axis(axis), dtype=dtype, keepdims=keepdims), out, "nanprod")


def _nan_scan(scan, identity, name):
    def fn(a, axis=None, dtype=None, out=None):
        a = as_tensor(a)
        x, _ = _replace_nan(a, identity)
        if axis is None:  # NumPy scans the flattened input
            x, axis = reshape(x, (-1,)), 0
        return store_out(scan(x, axis=int(axis), dtype=dtype), out, name)
    fn.__name__ = name
    fn.__doc__ = (f"Running {'sum' if identity == 0 else 'product'} along axis (the flattened "
                  f"input when None) treating NaN as {identity}; dtype as in cumsum.")
    return fn


nancumsum = public("nancumsum", _nan_scan(cumulative_sum, 0, "nancumsum"))
nancumprod = public("nancumprod", _nan_scan(cumulative_prod, 1, "nancumprod"))


# ------------------------------------------------------------------ extremes
def _nan_extreme(reduce, op, name):
    def fn(a, axis=None, out=None, keepdims=False):
        a = as_tensor(a)
        if a.dtype.kind == "c":
            raise TypeError(f"hipfer.{name}: complex tensors have no order on the device")
        if not _has_nan(a):
            return store_out(reduce(a, axis=_axis(axis), keepdims=keepdims), out, name)
        r = _nan_reduce(a, op, axis, keepdims, name)
        warn_if(isnan(r), "All-NaN slice encountered")
        return store_out(r, out, name)
    fn.__name__ = name
    fn.__doc__ = (f"{'Smallest' if reduce is _min else 'Largest'} element over axis ignoring "
                  "NaN, in one pass; an all-NaN slice gives NaN with a RuntimeWarning (one "
                  "sync of a bool). Complex input is a TypeError (NumPy orders it "
                  "lexicographically).")
    return fn


nanmin = public("nanmin", _nan_extreme(_min, ReduceOp.NANMIN, "nanmin"))
nanmax = public("nanmax", _nan_extreme(_max, ReduceOp.NANMAX, "nanmax"))


def _nan_arg(reduce, fill, name):
    def fn(a, axis=None, out=None, *, keepdims=False):
        a = as_tensor(a)
        if a.dtype.kind == "c":
            raise TypeError(f"hipfer.{name}: complex tensors have no order on the device")
        x, mask = _replace_nan(a, fill)
        if mask is not None and mask.size and bool(_any(_all(mask, axis=axis))):
            raise ValueError(f"hipfer.{name}: All-NaN slice encountered")
        return store_out(reduce(x, axis=axis, keepdims=keepdims), out, name)
    fn.__name__ = name
    fn.__doc__ = (f"Index of the {'smallest' if reduce is _argmin else 'largest'} element over "
                  "axis (flat index when None) ignoring NaN; an all-NaN slice is a ValueError "
                  "(one sync of a bool), as NumPy's.")
    return fn


nanargmin = public("nanargmin", _nan_arg(_argmin, np.inf, "nanargmin"))
nanargmax = public("nanargmax", _nan_arg(_argmax, -np.inf, "nanargmax"))


# ------------------------------------------------------------------ moments
def _counts(mask, axis, keepdims, dt):
    return cast(_sum(logical_not(mask), axis=axis, keepdims=keepdims), dt)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False):
    """Mean over axis ignoring NaN (integers as mean: float64), in one pass; an all-NaN
    slice gives NaN with a RuntimeWarning (one sync of a bool; a second pass only when the
    result has a NaN)."""
    a = as_tensor(a)
    axis = _axis(axis)
    if not _has_nan(a):
        x = cast(a, dtype) if dtype is not None else _float_of(a)
        return store_out(_mean(x, axis=axis, keepdims=keepdims), out, "nanmean")
    if _one_pass(a, dtype):
        x = a if dtype is None else cast(a, dtype)
        r = _nan_reduce(x, ReduceOp.NANMEAN, axis, keepdims, "nanmean")
        _warn_counts(r, a, axis, keepdims, 1, "Mean of empty slice")
        return store_out(r, out, "nanmean")
    x, mask = _replace_nan(a, 0)
    tot = _sum(x, axis=axis, dtype=dtype, keepdims=keepdims)
    cnt = _counts(mask, axis, keepdims, _dtypes.int64)
    warn_if(cnt == 0, "Mean of empty slice")
    return store_out(cast(divide(tot, cnt), tot.dtype), out, "nanmean")


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """Variance over axis ignoring NaN, divided by (count - ddof), in one pass; a slice
    with count <= ddof gives NaN with a RuntimeWarning (one sync of a bool; a second pass
    only when the result has a NaN). Complex input gives its real dtype, or a complex
    dtype= (zero imaginary part), as NumPy's."""
    return store_out(_nanvar(a, axis, dtype, ddof, keepdims, "nanvar"), out, "nanvar")


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """Standard deviation over axis ignoring NaN: sqrt(nanvar(...)), with its warnings."""
    return store_out(_nanvar(a, axis, dtype, ddof, keepdims, "nanstd"), out, "nanstd")


def _nanvar(a, axis, dtype, ddof, keepdims, name):
    a = as_tensor(a)
    axis = _axis(axis)
    complex_dt = dtype is not None and np.dtype(dtype).kind == "c"  # the result's dtype
    if not _has_nan(a):
        x = cast(a, dtype) if dtype is not None else _float_of(a)
        r = _var(x, axis=axis, correction=ddof, keepdims=keepdims)
        r = sqrt(r) if name == "nanstd" else r
        return cast(r, dtype) if complex_dt else r
    x = a if dtype is None or np.dtype(dtype).kind not in "fc" else cast(a, dtype)
    # NumPy's float16 moments: in float32, rounded once
    result_dt = x.dtype if x.dtype == _dtypes.float16 or complex_dt else None
    if x.dtype == _dtypes.float16:
        x = cast(x, _dtypes.float32)
    op = ReduceOp.NANSTD if name == "nanstd" else ReduceOp.NANVAR
    r = _nan_reduce(x, op, axis, keepdims, name, correction=float(ddof))
    r = r if result_dt is None else cast(r, result_dt)
    if r.size and bool(_any(isnan(r))):  # rare: say where, as NumPy does
        cnt = _sum(logical_not(isnan(a)), axis=axis, keepdims=keepdims)
        if bool(_any(less_equal(subtract(cnt, ddof), 0))):
            warnings.warn("Degrees of freedom <= 0 for slice.", RuntimeWarning, stacklevel=3)
    return r


# ------------------------------------------------------------------ order statistics
def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """Median over axis ignoring NaN (integers as median); an all-NaN slice gives NaN with
    a RuntimeWarning (one sync of a bool)."""
    a = as_tensor(a)
    if not _has_nan(a):
        return median(a, axis=axis, out=out, keepdims=keepdims)
    if a.dtype.kind == "c":
        raise TypeError("hipfer.nanmedian: complex tensors have no order on the device")
    t, rest, kd = axes_last(a, axis, "nanmedian")
    if t.shape[-1] == 0:
        warnings.warn("Mean of empty slice", RuntimeWarning, stacklevel=2)
        return store_out(_mean(t, axis=-1, keepdims=False).reshape(kd if keepdims else rest),
                         out, "nanmedian")
    n = _counts(isnan(t), -1, True, _dtypes.int64)
    lo = where(n == 0, 0, floor_divide(subtract(n, 1), 2))
    mid = order_statistics(t, concat([lo, floor_divide(n, 2)], axis=-1), "nanmedian")
    r = _mean(mid, axis=-1)
    warn_if(n == 0, "All-NaN slice encountered")
    return store_out(reshape(r, kd if keepdims else rest), out, "nanmedian")


def _nanquantile(a, q, axis, out, method, keepdims, fn, scale=None, weights=None):
    a = as_tensor(a)
    if a.dtype.kind == "c":
        raise TypeError(f"hipfer.{fn}: a must be an array of real numbers")
    qt, weak = quantile_q(q, a, fn, scale)
    if weights is not None:
        r, rest, kd = weighted_quantile(a, weights, qt, axis, method, fn, nan_rows=True)
        return store_out(quantile_result(r, qt.shape, rest, kd, keepdims), out, fn)
    t, rest, kd = axes_last(a, axis, fn)
    if t.shape[-1] == 0:
        raise IndexError(f"hipfer.{fn}: cannot take a {fn[3:]} of an empty slice")
    n = _counts(isnan(t), -1, True, _dtypes.int64) if _has_nan(a) else t.shape[-1]
    r = quantile_rows(t, n, reshape(qt, (-1,)), method, fn, weak)
    if isinstance(n, Tensor):  # all-NaN slices: NaN, as NumPy's, with its warning
        r = where(n == 0, np.nan, r)
        warn_if(n == 0, "All-NaN slice encountered")
    return store_out(quantile_result(r, qt.shape, rest, kd, keepdims), out, fn)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None):
    """quantile(a, q, ...) of the non-NaN values of each slice (q in [0, 1], any of the 13
    methods); an all-NaN slice gives NaN with a RuntimeWarning (one sync of a bool).
    weights as in quantile (NaN values weigh nothing); the deprecated interpolation= is
    not taken."""
    return _nanquantile(a, q, axis, out, method, keepdims, "nanquantile", weights=weights)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, weights=None):
    """nanquantile(a, q / 100, ...): percentiles (q in [0, 100]) ignoring NaN."""
    return _nanquantile(a, q, axis, out, method, keepdims, "nanpercentile", scale=100,
                        weights=weights)
