"""NumPy's statistics over the device: average, ptp, median, percentile, quantile, cov,
corrcoef and correlate, with NumPy's signatures and semantics.

Order statistics sort along the reduced axes (moved last and flattened into one) and
gather the order statistics each method names: no data leaves the device. The nan
variants (hipfer/_nanfunctions.py) share the core here, with a per-slice count of the
non-NaN values in place of the slice length (NaN sorts last).
"""
from __future__ import annotations

import math
import operator
import warnings

import numpy as np

from . import _dtypes
from ._core import cast, store_out as _store_out
from ._creation import arange, asarray, full
from ._elementwise import (add, ceil, clip, conj, divide, equal, floor, greater_equal, imag,
                           isfinite, isnan, less, less_equal, logical_and, logical_not, logical_or,
                           multiply, real,
                           remainder, round as _round, sqrt, subtract, where)
from ._indexing import take, take_along_axis
from ._linear_algebra import matmul
from ._sorting import argsort, order_statistics
from ._statistical import (_axes, all as _all, any as _any, cumulative_sum, max as _max,
                           mean as _mean, min as _min, sum as _sum)
from ._manipulation import concat
from ._tensor import Tensor
from ._views import broadcast_to, diagonal, expand_dims, permute_dims, reshape

__all__ = ["average", "corrcoef", "correlate", "cov", "median", "percentile", "ptp",
           "quantile"]


# ------------------------------------------------------------------ shared helpers
def as_tensor(a, like: Tensor | None = None) -> Tensor:
    """a as a Tensor: a Tensor as it is, array_like host data (a list, a scalar, a NumPy
    array the caller passed) moved to like's device (the default device without like)."""
    if isinstance(a, Tensor):
        return a
    return asarray(a, device=None if like is None else like.device)


def store_out(res: Tensor, out, fn: str) -> Tensor:
    """res, or res written into out (NumPy's out= rules: _core.store_out) and out returned."""
    return _store_out(res, out, f"hipfer.{fn}")


def host_scalar(t: Tensor):
    """The one element of t as a NumPy scalar of t's dtype: an explicit sync of one
    value, for the functions whose result shape or errors depend on data."""
    return t._host().reshape(())[()]


def warn_if(cond: Tensor, message: str) -> None:
    """A RuntimeWarning when any element of the bool tensor cond is set (one sync)."""
    if cond.size and bool(_any(cond)):
        warnings.warn(message, RuntimeWarning, stacklevel=3)


def axes_last(a: Tensor, axis, fn: str):
    """(t, kept shape, keepdims shape): a with the axes of axis moved last and flattened
    into one (a 0-d a becomes shape (1,)), the shape of the other axes, and the result
    shape that keepdims=True asks for."""
    if axis is not None and not isinstance(axis, (int, np.integer, tuple, list)):
        raise TypeError(f"hipfer.{fn}: axis must be an int, a tuple of ints or None")
    axes = _axes(None if axis is None else
                 (operator.index(axis) if not isinstance(axis, (tuple, list))
                  else tuple(operator.index(x) for x in axis)), a.ndim)
    keep = [i for i in range(a.ndim) if i not in axes]
    rest = tuple(a.shape[i] for i in keep)
    n = math.prod(a.shape[i] for i in axes)
    t = reshape(permute_dims(a, tuple(keep) + axes), rest + (n,)) if a.ndim else reshape(a, (1,))
    kd = tuple(1 if i in axes else s for i, s in enumerate(a.shape))
    return t, rest, kd


def weights_like(a: Tensor, w: Tensor, axis, fn: str) -> Tensor:
    """Weights of a's shape, or of the shape of a's axes in axis (broadcast over the
    others), as a tensor of a's shape."""
    if w.shape == a.shape:
        return w
    if axis is None:
        raise TypeError(f"hipfer.{fn}: axis must be specified when shapes of a and weights "
                        "differ.")
    axes = _axes(tuple(axis) if isinstance(axis, list) else axis, a.ndim)
    if w.shape != tuple(a.shape[i] for i in axes):
        raise ValueError(f"hipfer.{fn}: shape of weights must be consistent with shape of a "
                         "along specified axis.")
    shape = tuple(a.shape[i] if i in axes else 1 for i in range(a.ndim))
    return broadcast_to(reshape(w, shape), a.shape)


def weighted_quantile(a: Tensor, w, q: Tensor, axis, method: str, fn: str, nan_rows=False):
    """(result rows (kept shape + (Q,)), kept shape, keepdims shape): NumPy's weighted
    inverted_cdf: the first sorted value whose normalised cumulative weight reaches q.
    nan_rows: NaN values carry no weight (the nan variants). Checks: one sync each for
    negative weights and for weights that sum to zero or are not finite."""
    if method != "inverted_cdf":
        raise ValueError(f"hipfer.{fn}: Only method 'inverted_cdf' supports weights. "
                         f"Got: {method}.")
    w = weights_like(a, as_tensor(w, a), axis, fn)
    if bool(_any(less(w, 0))):
        raise ValueError(f"hipfer.{fn}: Weights must be non-negative.")
    t, rest, kd = axes_last(a, axis, fn)
    wt, _, _ = axes_last(w, axis, fn)
    if nan_rows and a.dtype.kind == "f":
        wt = where(isnan(t), 0, wt)
    order = argsort(t, axis=-1)
    s = take_along_axis(t, order, axis=-1)
    cdf = cumulative_sum(cast(take_along_axis(wt, order, axis=-1), _dtypes.float64), axis=-1)
    total = cdf[..., -1:]
    if bool(_any(logical_not(isfinite(total)) | equal(total, 0))):
        raise ValueError(f"hipfer.{fn}: Weights included NaN, inf or were all zero.")
    cdf = divide(cdf, total)
    cdf = cast(cdf, q.dtype) if q.dtype.kind == "f" else cdf
    cdf = where(equal(cdf, 0), -1, cdf)  # leading zero weights never count as reached
    # searchsorted(cdf, q, 'left') per row: how many cumulative weights are below q
    below = less(expand_dims(cdf, axis=-2), reshape(q, (-1, 1)))
    idx = clip(_sum(below, axis=-1), None, t.shape[-1] - 1)
    r = take_along_axis(s, idx, axis=-1)
    return (r if nan_rows else _nan_last(t, r, True)), rest, kd


def _real_input(a, fn):
    a = as_tensor(a)
    if a.dtype.kind == "c":
        raise TypeError(f"hipfer.{fn}: a must be an array of real numbers")
    return a


# ------------------------------------------------------------------ ptp, average
def ptp(a, axis=None, out=None, keepdims=False):
    """Range of values (max - min) over axis, in a's dtype (integers wrap as in NumPy).

    Bool input is a TypeError, as NumPy's boolean subtract is."""
    a = as_tensor(a)
    if a.dtype.kind == "b":
        raise TypeError("hipfer.ptp: the boolean subtract is not supported, use bitwise_xor")
    axis = tuple(axis) if isinstance(axis, list) else axis
    r = subtract(_max(a, axis=axis, keepdims=keepdims), _min(a, axis=axis, keepdims=keepdims))
    return store_out(r, out, "ptp")


def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """Weighted average over axis: sum(a * weights) / sum(weights).

    weights of a's shape, or 1-d (a tuple axis: the shape of those axes) along axis.
    Weights that sum to zero raise ZeroDivisionError (one sync of a bool). returned=True
    also gives the sum of the weights, broadcast to the average's shape."""
    a = as_tensor(a)
    axis = tuple(axis) if isinstance(axis, list) else axis
    if weights is None:
        avg = _mean(_float_of(a), axis=axis, keepdims=keepdims)
        # NumPy's count: the number of elements averaged into each result
        scl = full(avg.shape, a.size / avg.size if avg.size else 0, dtype=avg.dtype,
                   device=a.device)
        return (avg, scl) if returned else avg
    w = as_tensor(weights, a)
    rdt = np.result_type(a.dtype, w.dtype, *(("f8",) if a.dtype.kind in "biu" else ()))
    w = cast(weights_like(a, w, axis, "average"), rdt)
    scl = _sum(w, axis=axis, keepdims=keepdims)
    if bool(_any(equal(scl, 0))):
        raise ZeroDivisionError("hipfer.average: weights sum to zero, can't be normalized")
    avg = divide(_sum(multiply(cast(a, rdt), w), axis=axis, keepdims=keepdims), scl)
    if returned:
        return avg, broadcast_to(scl, avg.shape) if scl.shape != avg.shape else scl
    return avg


def _float_of(a: Tensor) -> Tensor:
    """a, or a in NumPy's default float64 when integer or bool (NumPy's mean)."""
    return cast(a, _dtypes.default_float) if a.dtype.kind in "biu" else a


# ------------------------------------------------------------------ quantiles
#: (alpha, beta) of the continuous methods (Hyndman & Fan): the virtual index of q in n
#: values is n*q + alpha + q*(1 - alpha - beta) - 1
_CONTINUOUS = {"linear": (1.0, 1.0), "hazen": (0.5, 0.5), "weibull": (0.0, 0.0),
               "median_unbiased": (1 / 3, 1 / 3), "normal_unbiased": (3 / 8, 3 / 8),
               "interpolated_inverted_cdf": (0.0, 1.0)}
_DISCRETE = ("inverted_cdf", "closest_observation", "lower", "higher", "nearest")
METHODS = tuple(_CONTINUOUS) + _DISCRETE + ("averaged_inverted_cdf", "midpoint")


def quantile_q(q, a: Tensor, fn: str, scale=None):
    """(q as a Tensor on a's device checked to lie in [0, 1], whether q is weak).

    Integer q stays integer for quantile (exact 0 and 1), else becomes float64.
    scale=100: q in percents. A Python int or float q is weak (NumPy 2.4's rule): the
    interpolation weight then takes a's floating dtype instead of promoting to float64.
    Host q is checked on the host, a Tensor q with one sync of a bool."""
    weak = type(q) in (int, float)
    qt = as_tensor(q, a)
    if qt.dtype.kind not in "biuf":
        raise TypeError(f"hipfer.{fn}: q must be real numbers")
    if qt.dtype.kind == "b" or (scale is not None and qt.dtype.kind != "f"):
        qt = cast(qt, _dtypes.float64)  # integer q stays (exact) for quantile's 'linear'
    if scale is not None:
        qt = divide(qt, scale)
    if isinstance(q, Tensor):
        bad = qt.size and not bool(_all_in_unit(qt))
    else:  # host q: checked where it is, in qt's dtype, with no sync
        hq = np.asarray(q).astype(qt.dtype) if qt.dtype.kind == "f" else np.asarray(q)
        hq = hq if scale is None else np.divide(hq, scale, dtype=qt.dtype)
        bad = hq.size and not bool(np.all((hq >= 0) & (hq <= 1)))
    if bad:
        raise ValueError(f"hipfer.{fn}: " + ("Percentiles must be in the range [0, 100]"
                                             if scale else "Quantiles must be in the range [0, 1]"))
    return qt, weak


def _all_in_unit(q: Tensor) -> Tensor:
    return _all(logical_and(greater_equal(q, 0), less_equal(q, 1)))


def _lerp(a, b, t, dt):
    """NumPy's lerp in dtype dt: a + (b - a) t below t = 0.5, b - (b - a)(1 - t) from
    there (exact at both ends); t and 1 - t are formed in t's dtype, then rounded to dt."""
    diff = subtract(b, a)
    lo = add(a, multiply(diff, cast(t, dt)))
    hi = subtract(b, multiply(diff, cast(subtract(1, t), dt)))
    return cast(where(greater_equal(t, 0.5), hi, lo), dt)


def quantile_rows(s: Tensor, n, q: Tensor, method: str, fn: str, weak: bool) -> Tensor:
    """The q-quantiles (q: 1-d) of the rows of s (along its last axis), shape
    s.shape[:-1] + q.shape: the order statistics they need (order_statistics, no sort
    where a select pays), interpolated. n: the count of values per row (an int, or an int
    tensor of shape s.shape[:-1] + (1,) for the nan variants, whose NaNs rank last)."""
    if method not in METHODS:
        raise ValueError(f"hipfer.{fn}: {method!r} is not a valid method. Use one of: "
                         f"{', '.join(METHODS)}")
    per_row = isinstance(n, Tensor)
    if per_row:  # NumPy computes with a Python int n: in q's dtype
        n = cast(n, q.dtype)
    last = (n - 1)  # the index of the last valid value
    if q.dtype.kind in "iu":  # integer q (0 or 1): 'linear' takes values, no interpolation
        if method == "linear":
            return _values_at(s, [multiply(last, q)], per_row, fn)[0]
        q = cast(q, _dtypes.float64)
    if method in _DISCRETE:
        idx = _discrete_index(n, q, method)
        idx = clip(idx, 0, None)
        if per_row:
            idx = where(less(last, idx), last, idx)
            idx = where(less(idx, 0), 0, idx)
        return _values_at(s, [idx], per_row, fn)[0]
    if s.dtype.kind == "b":
        raise TypeError(f"hipfer.{fn}: method {method!r} interpolates, which bool input "
                        "does not support (the boolean subtract)")
    if method in _CONTINUOUS:
        alpha, beta = _CONTINUOUS[method]
        if method == "linear":
            vi = multiply((n - 1), q)
        else:
            vi = subtract(add((n * q), add(alpha, multiply(q, 1 - alpha - beta))), 1)
    elif method == "averaged_inverted_cdf":
        vi = subtract((n * q), 1)
    else:  # midpoint
        vq = multiply((n - 1), q)
        vi = multiply(0.5, add(floor(vq), ceil(vq)))
    prev = floor(vi)
    # NumPy's bounds: at or above the last value both neighbours are the last (index -1,
    # which also enters gamma), below 0 both are the first
    above = logical_or(greater_equal(vi, last), isnan(vi))
    below = less(vi, 0)
    prev = where(above, -1.0, where(below, 0.0, prev))
    gamma = cast(subtract(vi, prev), vi.dtype)
    if method == "averaged_inverted_cdf":
        gamma = subtract(1, multiply(0.5, cast(equal(gamma, 0), vi.dtype)))
    elif method == "midpoint":
        gamma = multiply(0.5, cast(remainder(vi, 1) != 0, vi.dtype))
    nxt = where(above, -1.0, where(below, 0.0, add(prev, 1)))
    lo, hi = _values_at(s, [_index_of(prev, last), _index_of(nxt, last)], per_row, fn)
    # the result dtype: a's (floating) with a weak q, else the promotion of a and q
    dt = np.result_type(s.dtype, np.float64 if weak else q.dtype)
    dt = s.dtype if weak and s.dtype.kind == "f" else dt
    return _lerp(lo, hi, gamma, dt)


def _index_of(i: Tensor, last) -> Tensor:
    """Float indices as int64, -1 meaning the last valid value."""
    return cast(where(less(i, 0), last, i), _dtypes.int64)


def _discrete_index(n, q, method):
    if method == "lower":
        return cast(floor(multiply((n - 1), q)), _dtypes.int64)
    if method == "higher":
        return cast(ceil(multiply((n - 1), q)), _dtypes.int64)
    if method == "nearest":
        return cast(_round(multiply((n - 1), q)), _dtypes.int64)
    # inverted_cdf / closest_observation: to the boundaries of the empirical CDF
    idx = subtract((n * q), 1.5 if method == "closest_observation" else 1)
    prev = floor(idx)
    at_prev = equal(subtract(idx, prev), 0)
    if method == "closest_observation":  # round to the nearest even order statistic
        at_prev = logical_and(at_prev, equal(remainder(prev, 2), 1))
    return cast(where(at_prev, prev, add(prev, 1)), _dtypes.int64)


def _values_at(s: Tensor, idxs: list, per_row: bool, fn: str) -> list:
    """The values of rank idx along s's last axis for each idx of idxs, in one Select:
    each idx of q's shape (shared by the rows) or per row (s.shape[:-1] + q.shape)."""
    q = idxs[0].shape[-1]
    k = concat([cast(i, _dtypes.int64) for i in idxs], axis=-1) if len(idxs) > 1 \
        else cast(idxs[0], _dtypes.int64)
    if not per_row:
        k = reshape(k, (1,) * (s.ndim - 1) + k.shape)
    v = order_statistics(s, k, fn)
    return [v[..., j * q:(j + 1) * q] for j in range(len(idxs))]


def _nan_last(t: Tensor, r: Tensor, keep: bool) -> Tensor:
    """r with NaN where t's row (last axis) holds a NaN, as NumPy's quantiles give it."""
    if t.dtype.kind != "f":
        return r
    top = _max(t, axis=-1, keepdims=keep)  # NaN propagates
    return where(isnan(top), top, r)


def quantile_result(r: Tensor, qshape: tuple, rest: tuple, kd: tuple, keepdims: bool):
    """r (rest + (Q,)) as NumPy lays it out: q's axes first, then the kept axes."""
    r = permute_dims(r, (r.ndim - 1,) + tuple(range(r.ndim - 1)))
    return reshape(r, qshape + (kd if keepdims else rest))


def _quantile(a, q, axis, out, method, keepdims, fn, scale=None, weights=None):
    a = _real_input(a, fn)
    qt, weak = quantile_q(q, a, fn, scale)
    if weights is not None:
        r, rest, kd = weighted_quantile(a, weights, qt, axis, method, fn)
        return store_out(quantile_result(r, qt.shape, rest, kd, keepdims), out, fn)
    t, rest, kd = axes_last(a, axis, fn)
    if t.shape[-1] == 0:
        raise IndexError(f"hipfer.{fn}: cannot take a {fn} of an empty slice")
    r = quantile_rows(t, t.shape[-1], reshape(qt, (-1,)), method, fn, weak)
    r = _nan_last(t, r, True)  # NaN propagates: a slice with a NaN gives NaN
    return store_out(quantile_result(r, qt.shape, rest, kd, keepdims), out, fn)


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None):
    """The q-th quantiles (q in [0, 1], a scalar or an array: its axes lead the result) of
    a over axis, by one of NumPy's 13 methods; NaN propagates.

    Sorts on the device (overwrite_input is accepted and ignored). weights (method
    'inverted_cdf' only): a's shape or the reduced axes' shape. The deprecated
    interpolation= is not taken. A Tensor q is range-checked with one sync."""
    return _quantile(a, q, axis, out, method, keepdims, "quantile", weights=weights)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None):
    """The q-th percentiles (q in [0, 100]) of a over axis: quantile(a, q / 100, ...)."""
    return _quantile(a, q, axis, out, method, keepdims, "percentile", scale=100,
                     weights=weights)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """Median of a over axis: the middle value, or the mean of the two middle values, of
    each sorted slice (dtype as mean's: integers give float64). NaN propagates; an empty
    slice gives NaN with a RuntimeWarning."""
    a = as_tensor(a)
    if a.dtype.kind == "c":
        raise TypeError("hipfer.median: complex tensors have no order on the device")
    t, rest, kd = axes_last(a, axis, "median")
    n = t.shape[-1]
    if n == 0:
        warnings.warn("Mean of empty slice.", RuntimeWarning, stacklevel=2)
        r = full(kd if keepdims else rest, np.nan, dtype=_float_of(a).dtype, device=a.device)
        return store_out(r, out, "median")
    mid = order_statistics(t, asarray(sorted({(n - 1) // 2, n // 2}), device=a.device),
                           "median")
    r = _nan_last(t, _mean(_float_of(mid), axis=-1), False)
    return store_out(reshape(r, kd if keepdims else rest), out, "median")


# ------------------------------------------------------------------ cov, corrcoef
def _rows(x: Tensor, transpose: bool, dtype) -> Tensor:
    """x as a 2-d matrix of variables (rows) by observations, in dtype."""
    if x.ndim > 2:
        raise ValueError("hipfer.cov: m has more than 2 dimensions")
    x = cast(reshape(x, (1, -1)) if x.ndim < 2 else x, dtype)
    return permute_dims(x, (1, 0)) if transpose else x


def _int_weights(w, like, n, fn, name):
    w = as_tensor(w, like)
    if w.ndim > 1:
        raise RuntimeError(f"hipfer.{fn}: cannot handle multidimensional {name}")
    if w.shape[0] != n:
        raise RuntimeError(f"hipfer.{fn}: incompatible numbers of samples and {name}")
    return w


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
        dtype=None):
    """Covariance matrix of the variables (rows of m, and of y, with rowvar=True),
    NumPy's estimator with ddof, bias, integer fweights and float aweights.

    Negative weights and non-integer fweights are checked with one sync each. A result of
    a single variable is 0-d, as NumPy's."""
    if ddof is not None and ddof != int(ddof):
        raise ValueError("hipfer.cov: ddof must be integer")
    m = as_tensor(m)
    if dtype is None:
        dtype = np.result_type(m.dtype, *(() if y is None else (as_tensor(y, m).dtype,)),
                               np.float64)
    X = _rows(m, not rowvar and m.ndim != 1, dtype)
    if X.shape[0] == 0:
        return full((0, 0), 0, dtype=dtype, device=m.device)
    if y is not None:
        y = as_tensor(y, m)
        Y = _rows(y, not rowvar and (y.ndim == 2 and y.shape[0] != 1), dtype)
        if Y.shape[1] != X.shape[1]:
            raise ValueError("hipfer.cov: m and y must have the same number of observations")
        X = concat([X, Y], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    nobs = X.shape[1]
    w = None
    if fweights is not None:
        f = _int_weights(fweights, m, nobs, "cov", "fweights")
        if f.dtype.kind not in "biu":
            f64 = cast(f, _dtypes.float64)
            if bool(_any(subtract(f64, floor(f64)) != 0)):
                raise TypeError("hipfer.cov: fweights must be integer")
        if bool(_any(less(f, 0))):
            raise ValueError("hipfer.cov: fweights cannot be negative")
        w = cast(f, _dtypes.float64)
    if aweights is not None:
        aw = _int_weights(aweights, m, nobs, "cov", "aweights")
        if bool(_any(less(aw, 0))):
            raise ValueError("hipfer.cov: aweights cannot be negative")
        aw = cast(aw, _dtypes.float64)
        w = aw if w is None else multiply(w, aw)
    if w is None:
        avg = _mean(X, axis=1, keepdims=True)
        fact = nobs - ddof
        wsum = None
    else:
        wsum = _sum(w)
        avg = divide(_sum(multiply(X, w), axis=1, keepdims=True), wsum)
        if aweights is None or ddof == 0:
            fact = subtract(wsum, ddof)
        else:
            fact = subtract(wsum, divide(multiply(ddof, _sum(multiply(w, aw))), wsum))
    if not isinstance(fact, Tensor) and fact <= 0:
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=2)
        fact = 0.0
    elif isinstance(fact, Tensor):
        fact = where(less(fact, 0) | equal(fact, 0), 0.0, fact)
    Xc = subtract(X, avg)
    Xw = Xc if w is None else multiply(Xc, w)
    c = matmul(Xc, permute_dims(conj(Xw) if Xw.dtype.kind == "c" else Xw, (1, 0)))
    c = cast(divide(c, fact), c.dtype)
    return reshape(c, ()) if c.shape == (1, 1) else c


def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    """Pearson correlation coefficients: cov(x, y, rowvar) / sqrt(diag outer diag), real
    parts clipped to [-1, 1] as NumPy does (the deprecated bias/ddof are not taken)."""
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return divide(c, c)
    dg = diagonal(c)
    sd = sqrt(real(dg)) if dg.dtype.kind == "c" else sqrt(dg)
    c = divide(divide(c, expand_dims(sd, axis=1)), expand_dims(sd, axis=0))
    if c.dtype.kind == "c":
        re = clip(real(c), -1, 1)
        return add(cast(re, c.dtype), multiply(cast(imag(c), c.dtype), 1j))
    return clip(c, -1, 1)


# ------------------------------------------------------------------ correlate
def correlate(a, v, mode="valid"):
    """Cross-correlation of two 1-d sequences: z[k] = sum_n a[n + k] * conj(v[n]), over
    'valid' (full overlap), 'same' (max(M, N) values) or 'full' lags.

    Built as a gather of a's sliding windows (zero-padded) and a matrix product with
    conj(v): memory grows as output length x len(v)."""
    a = as_tensor(a, v if isinstance(v, Tensor) else None)
    v = as_tensor(v, a)
    if a.ndim != 1 or v.ndim != 1:
        a = reshape(a, (-1,)) if a.ndim == 0 else a
        v = reshape(v, (-1,)) if v.ndim == 0 else v
        if a.ndim != 1 or v.ndim != 1:
            raise ValueError("hipfer.correlate: object too deep for desired array")
    n, m = a.shape[0], v.shape[0]
    if n == 0:
        raise ValueError("hipfer.correlate: a cannot be empty")
    if m == 0:
        raise ValueError("hipfer.correlate: v cannot be empty")
    modes = {"valid": "valid", "same": "same", "full": "full", 0: "valid", 1: "same", 2: "full",
             "v": "valid", "s": "same", "f": "full"}
    if mode not in modes:
        raise ValueError(f"hipfer.correlate: mode must be one of 'valid', 'same', or 'full' "
                         f"(got {mode!r})")
    mode = modes[mode]
    dt = np.result_type(a.dtype, v.dtype)
    # lags k from -(m - 1) to n - 1 are the full output; the modes keep a window of them
    if mode == "full":
        lo, hi = -(m - 1), n - 1
    elif mode == "valid":
        lo, hi = (0, n - m) if n >= m else (n - m, 0)
    else:
        # centred on the longer input, NumPy's way (found against np.correlate)
        lo = -(m // 2) if n >= m else n // 2 - (m - 1)
        hi = lo + max(n, m) - 1
    k = arange(lo, hi + 1, device=a.device, dtype=_dtypes.int64)
    j = arange(m, device=a.device, dtype=_dtypes.int64)
    idx = add(expand_dims(k, axis=1), expand_dims(j, axis=0))
    inside = logical_and(greater_equal(idx, 0), less(idx, n))
    win = reshape(take(a, reshape(clip(idx, 0, n - 1), (-1,))), idx.shape)
    win = where(inside, cast(win, dt), cast(asarray(0, device=a.device), dt))
    vc = cast(v, dt)
    if dt.kind == "c":
        vc = conj(vc)
    if dt.kind == "b":  # a product of bools is AND, their sum OR (NumPy's dot)
        return _any(logical_and(win, expand_dims(vc, axis=0)), axis=1)
    return matmul(win, vc)

