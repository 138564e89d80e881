"""NumPy's histograms and binning over the device: histogram, histogram_bin_edges,
histogram2d, histogramdd, bincount and digitize.

Unweighted histograms count with the Histogram prim: one read of the data, a binary search
of the edges per value in the data's and edges' result type, integer counts (no index
array). Other counting is the Bincount prim (deterministic run to run: integer counts; float64 weight
sums added in the data's order, as NumPy's bincount adds them; no float atomics): each
value's bin index comes from a binary search (searchsorted) of the edges, with one outlier
bin at each end. Integer, bool and complex weights of histogram keep the sort-based
composition, which sums them exactly in their own kind: the values are sorted once and
each bin's sum is the difference of two binary searches of its edges in the running sum
(int64 / complex128) of the weights in sorted order.

Syncs (reads of a few scalars), where NumPy's result depends on the data: the range of
the data when no range= is given, the string bin estimators' statistics, bincount's
output size (max(x) + 1) and its negative-value check, and the monotonicity checks of
array bins.
"""
from __future__ import annotations

import math
import operator
import warnings

import numpy as np

from . import _dtypes, _ops
from ._core import cast
from ._creation import asarray, zeros
from ._elementwise import (add, divide, equal, greater, less, less_equal, logical_and, multiply,
                           subtract, where)
from ._indexing import take
from ._manipulation import concat, stack
from ._numpy_statistics import as_tensor, host_scalar, quantile
from ._searching import searchsorted
from ._sorting import argsort, sort
from ._statistical import (all as _all, any as _any, cumulative_sum, max as _max, mean as _mean,
                           min as _min, std as _std, sum as _sum)
from ._tensor import Tensor
from ._utility import diff
from ._views import flip, permute_dims, reshape
from .prims import descriptors as d

__all__ = ["bincount", "digitize", "histogram", "histogram2d", "histogram_bin_edges",
           "histogramdd"]


# ------------------------------------------------------------------ counting core
def _acc_dtype(dt):
    """The dtype weights are summed in: 64 bits of their kind."""
    return {"c": _dtypes.complex128, "f": _dtypes.float64}.get(dt.kind, _dtypes.int64)


def _count_sorted(sv: Tensor, edges: Tensor, last_closed: bool, order=None, weights=None):
    """Per-bin counts (or sums of weights) of the sorted 1-d sv between consecutive
    edges: [e_i, e_i+1), the last bin closed when last_closed (NumPy's histogram).
    order: the permutation that sorted the values (to line weights up with sv)."""
    if last_closed:
        cum = concat([searchsorted(sv, edges[:-1], side="left"),
                      searchsorted(sv, edges[-1:], side="right")])
    else:
        cum = searchsorted(sv, edges, side="left")
    if weights is None:
        return diff(cum)
    sw = take(weights, order)
    cw = cumulative_sum(cast(sw, _acc_dtype(sw.dtype)), include_initial=True)
    return diff(take(cw, cum))


#: the comparison path's limit: (edges x values) elements compared per call
_COMPARE_LIMIT = 1 << 25
_COMPARE_EDGES = 65


def _count_compared(v: Tensor, edges: Tensor, weights=None):
    """histogram's per-bin counts (or weight sums) of v with few edges, in one pass per
    edge and no sort: the count below each edge (at or below the last), differenced.
    Deterministic as the reductions are."""
    below = less(reshape(v, (1, -1)), reshape(edges[:-1], (-1, 1)))
    at_last = less_equal(v, edges[-1])
    if weights is None:
        per_edge = [_sum(below, axis=1), reshape(_sum(at_last), (1,))]
    else:
        w = cast(weights, _acc_dtype(weights.dtype))
        per_edge = [_sum(where(below, reshape(w, (1, -1)), 0), axis=1),
                    reshape(_sum(where(at_last, w, 0)), (1,))]
    return diff(concat(per_edge))


def _bin_counts(idx: Tensor, size: int, weights=None, fn: str = "bincount") -> Tensor:
    """How many of the integer indices idx (all in [0, size)) equal each of 0..size-1
    (int64), or the sums of the float64 weights per index (float64, added in idx's
    order): the Bincount prim."""
    ops = [idx] if weights is None else [idx, weights]
    return Tensor(_ops.run(d.Bincount(int(size), weights is not None), ops, called=fn))


# ------------------------------------------------------------------ bincount, digitize
def bincount(x, weights=None, minlength=0):
    """Counts of each value 0..max(x) in the non-negative 1-d integer x (at least
    minlength of them), or the sums of weights (as float64) per value.

    The output size depends on the data: one sync reads min(x) and max(x)."""
    x = as_tensor(x, weights if isinstance(weights, Tensor) else None)
    if x.ndim != 1:
        raise ValueError("hipfer.bincount: object of too small depth for desired array"
                         if x.ndim == 0 else "hipfer.bincount: object too deep for desired array")
    if x.dtype.kind not in "biu" or x.dtype == _dtypes.uint64:
        raise TypeError(f"hipfer.bincount: cannot cast array data from {x.dtype} to int64 "
                        "according to the rule 'safe'")
    if minlength is None:
        raise TypeError("hipfer.bincount: minlength must be an integer, not None")
    minlength = operator.index(minlength)
    if minlength < 0:
        raise ValueError("hipfer.bincount: 'minlength' must not be negative")
    w = None
    if weights is not None:
        w = as_tensor(weights, x)
        if w.shape != x.shape:
            raise ValueError("hipfer.bincount: The weights and list don't have the same length.")
        if w.dtype.kind == "c":
            raise TypeError(f"hipfer.bincount: cannot cast array data from {w.dtype} to "
                            "float64 according to the rule 'safe'")
        w = cast(w, _dtypes.float64)
    if x.dtype.kind == "b":
        x = cast(x, _dtypes.int64)
    size = minlength
    if x.size:
        lo, hi = (int(v) for v in host_scalar_pair(_min(x), _max(x)))
        if lo < 0:
            raise ValueError("hipfer.bincount: 'list' argument must have no negative elements")
        size = max(size, hi + 1)
    if size == 0 or not x.size:
        return zeros((size,), dtype=_dtypes.float64 if w is not None else _dtypes.int64,
                     device=x.device)
    return _bin_counts(x, size, w)


def host_scalar_pair(a: Tensor, b: Tensor):
    """Two 0-d tensors of one dtype as NumPy scalars: one sync."""
    both = stack([a, b])._host()
    return both[0], both[1]


def _monotonic(bins: Tensor, fn: str) -> int:
    """1 for non-decreasing bins, -1 for non-increasing (one sync), else ValueError."""
    if bins.shape[0] < 2:
        return 1
    d = diff(bins)
    up, down = host_scalar_pair(_all(d >= 0), _all(d <= 0))
    if up:
        return 1
    if down:
        return -1
    raise ValueError(f"hipfer.{fn}: bins must be monotonically increasing or decreasing")


def digitize(x, bins, right=False):
    """Indices of the bins of 1-d monotonic bins that x's values fall in (int64, x's
    shape): bins[i-1] <= x < bins[i] (right=True: bins[i-1] < x <= bins[i]), mirrored
    for decreasing bins. The monotonicity check is one sync."""
    x = as_tensor(x, bins if isinstance(bins, Tensor) else None)
    bins = as_tensor(bins, x)
    if x.dtype.kind == "c":
        raise TypeError("hipfer.digitize: x may not be complex")
    if bins.ndim != 1:
        raise ValueError("hipfer.digitize: object too deep for desired array"
                         if bins.ndim > 1 else
                         "hipfer.digitize: object of too small depth for desired array")
    dt = np.result_type(x.dtype, bins.dtype)  # NumPy's (uint64 with int64: float64)
    x, bins = cast(x, dt), cast(bins, dt)
    side = "left" if right else "right"
    if _monotonic(bins, "digitize") == -1:
        return subtract(bins.shape[0], searchsorted(flip(bins, axis=0), x, side=side))
    return searchsorted(bins, x, side=side)


# ------------------------------------------------------------------ bin edges
def _outer_edges(a: Tensor, range, fn: str):
    """(first, last) edge as NumPy scalars: range's, or the data's (one sync), widened by
    0.5 either side when equal."""
    if range is not None:
        first, last = range
        if first > last:
            raise ValueError(f"hipfer.{fn}: max must be larger than min in range parameter.")
        if not (np.isfinite(first) and np.isfinite(last)):
            raise ValueError(f"hipfer.{fn}: supplied range of [{first}, {last}] is not finite")
    elif a.size == 0:
        first, last = 0, 1
    else:
        first, last = host_scalar_pair(_min(a), _max(a))
        if not (np.isfinite(first) and np.isfinite(last)):
            raise ValueError(f"hipfer.{fn}: autodetected range of [{first}, {last}] is not "
                             "finite")
    if first == last:
        first, last = first - 0.5, last + 0.5
    return first, last


def _unsigned_range(first, last):
    """last - first without integer overflow (NumPy's _unsigned_subtract)."""
    dt = np.result_type(first, last)
    if dt.kind == "i":
        u = np.dtype(f"u{dt.itemsize}")
        return np.subtract(np.asarray(last, dt), np.asarray(first, dt), casting="unsafe", dtype=u)
    return np.subtract(last, first, dtype=dt)


def _is_array(bins) -> bool:
    """Whether bins is an array of edges (not a count)."""
    return bins.ndim > 0 if isinstance(bins, Tensor) else np.ndim(bins) > 0


def _edges(a: Tensor, bins, range, weights, fn: str) -> Tensor:
    """The bin edges NumPy's histogram uses for a (1-d), on a's device."""
    n = None
    if isinstance(bins, str):
        if bins not in _ESTIMATORS:
            raise ValueError(f"hipfer.{fn}: {bins!r} is not a valid estimator for `bins`")
        if weights is not None:
            raise TypeError(f"hipfer.{fn}: Automated estimation of the number of bins is not "
                            "supported for weighted data")
        first, last = _outer_edges(a, range, fn)
        if range is not None:  # the estimators see only the data in range
            # compared in float64 for integers: a Python range may lie outside a's dtype
            af = _as_float(a)
            keep = logical_and(af >= first, af <= last)
            if not bool(_all(keep)):
                a = a[keep]
        n = 1
        if a.size:
            width = _ESTIMATORS[bins](a, range)
            if width:
                if a.dtype.kind in "iu" and width < 1:
                    width = 1
                n = int(np.ceil(_unsigned_range(first, last) / width))
    elif not _is_array(bins):
        try:
            n = operator.index(bins)
        except TypeError as e:
            raise TypeError(f"hipfer.{fn}: `bins` must be an integer, a string, or an array") from e
        if n < 1:
            raise ValueError(f"hipfer.{fn}: `bins` must be positive, when an integer")
        first, last = _outer_edges(a, range, fn)
    else:
        edges = as_tensor(bins, a)
        if edges.ndim != 1:
            raise ValueError(f"hipfer.{fn}: `bins` must be 1d, when an array")
        if edges.shape[0] > 1 and bool(_any(greater(edges[:-1], edges[1:]))):
            raise ValueError(f"hipfer.{fn}: `bins` must increase monotonically, when an array")
        return edges
    # n equal bins from Python/NumPy scalars: the edges are NumPy's own linspace
    bin_type = np.result_type(first, last, np.empty(0, a.dtype))
    if bin_type.kind in "biu":
        bin_type = np.result_type(bin_type, float)
    host = np.linspace(first, last, n + 1, endpoint=True, dtype=bin_type)
    if np.any(host[:-1] >= host[1:]):
        raise ValueError(f"hipfer.{fn}: Too many bins for data range. Cannot create {n} "
                         "finite-sized bins.")
    return asarray(host, device=a.device)


def _flat_data(a, weights, fn):
    a = reshape(as_tensor(a, weights if isinstance(weights, Tensor) else None), (-1,))
    w = None
    if weights is not None:
        w = as_tensor(weights, a)
        if w.size != a.size:
            raise ValueError(f"hipfer.{fn}: weights should have the same shape as a.")
        w = reshape(w, (-1,))
    if a.dtype.kind == "c":
        raise TypeError(f"hipfer.{fn}: complex data has no order on the device")
    return a, w


def histogram_bin_edges(a, bins=10, range=None, weights=None):
    """The bin edges histogram(a, bins, range, weights) uses: equal bins from an int or a
    string estimator ('auto', 'fd', 'doane', 'scott', 'stone', 'rice', 'sturges', 'sqrt';
    they read a few statistics of the data: syncs), or the 1-d array bins itself."""
    a, w = _flat_data(a, weights, "histogram_bin_edges")
    return _edges(a, bins, range, w, "histogram_bin_edges")


def histogram(a, bins=10, range=None, density=None, weights=None):
    """(hist, bin_edges) of the flattened a: counts (int64), or sums of weights (in the
    weights' dtype), per bin [e_i, e_i+1), the last bin closed; density=True divides by
    the total and the bin widths (float64). Edges as in histogram_bin_edges."""
    a, w = _flat_data(a, weights, "histogram")
    edges = _edges(a, bins, range, w, "histogram")
    if w is None and a.dtype.kind in "iuf" and edges.dtype.kind in "iuf":
        # one read of a; equal bins (an int or an estimator) start from the interpolated bin
        hist = d.Histogram(uniform=not _is_array(bins))
        n = Tensor(_ops.run(hist, [a, edges], called="histogram"))
    elif w is None or w.dtype.kind == "f":  # NumPy's bincount dtypes (float64 sums)
        # bin j - 1 for edges[j-1] <= a < edges[j] (a == edges[-1] in the last bin); 0 and
        # E for the values below and above (NaN included) the E edges, dropped after
        idx = searchsorted(edges, a, side="right")
        idx = subtract(idx, cast(equal(a, edges[-1]), _dtypes.int64))
        n = _bin_counts(idx, edges.shape[0] + 1, None if w is None else
                        cast(w, _dtypes.float64), "histogram")[1:-1]
    elif edges.shape[0] <= _COMPARE_EDGES and edges.shape[0] * a.size <= _COMPARE_LIMIT:
        n = _count_compared(a, edges, w)  # few bins: a pass per edge beats a sort
    else:
        order = argsort(a) if w is not None else None
        sv = take(a, order) if order is not None else sort(a)
        n = _count_sorted(sv, edges, True, order, w)
    if w is not None:
        n = cast(n, w.dtype)
    if density:
        db = cast(diff(edges), _dtypes.float64)
        return divide(divide(n, db), _sum(n)), edges
    return n, edges


# ------------------------------------------------------------------ estimators
def _ptp(x: Tensor):
    lo, hi = host_scalar_pair(_min(x), _max(x))
    return _unsigned_range(lo, hi)


def _bin_sqrt(x, range):
    return _ptp(x) / np.sqrt(x.size)


def _bin_sturges(x, range):
    return _ptp(x) / (np.log2(x.size) + 1.0)


def _bin_rice(x, range):
    return _ptp(x) / (2.0 * x.size ** (1.0 / 3))


def _bin_scott(x, range):
    return (24.0 * np.pi ** 0.5 / x.size) ** (1.0 / 3.0) * host_scalar(_std(_as_float(x)))


def _bin_fd(x, range):
    p = quantile(x, asarray([0.75, 0.25], device=x.device))
    hi, lo = host_scalar_pair(p[0], p[1])
    return 2.0 * (hi - lo) * x.size ** (-1.0 / 3.0)


def _bin_doane(x, range):
    if x.size > 2:
        sg1 = np.sqrt(6.0 * (x.size - 2) / ((x.size + 1.0) * (x.size + 3)))
        xf = _as_float(x)
        sigma = host_scalar(_std(xf))
        if sigma > 0.0:
            z = divide(subtract(xf, _mean(xf)), sigma)
            g1 = host_scalar(_mean(multiply(multiply(z, z), z)))
            return _ptp(x) / (1.0 + np.log2(x.size) + np.log2(1.0 + np.absolute(g1) / sg1))
    return 0.0


def _bin_stone(x, range):
    """Stone's estimator: one histogram per candidate bin count (each a sync)."""
    n = x.size
    ptp_x = _ptp(x)
    if n <= 1 or ptp_x == 0:
        return 0
    first, last = _outer_edges(x, range, "histogram")
    sv = sort(x)

    def jhat(nbins):
        edges = asarray(np.linspace(first, last, nbins + 1), device=x.device)
        p_k = divide(cast(_count_sorted(sv, edges, True), _dtypes.float64), n)
        return (2 - (n + 1) * host_scalar(_sum(multiply(p_k, p_k)))) / (ptp_x / nbins)
    upper = max(100, int(np.sqrt(n)))
    nbins = min(builtin_range(1, upper + 1), key=jhat)
    if nbins == upper:
        warnings.warn("The number of bins estimated may be suboptimal.", RuntimeWarning,
                      stacklevel=4)
    return ptp_x / nbins


def _bin_auto(x, range):
    fd_bw = _bin_fd(x, range)
    sturges_bw = _bin_sturges(x, range)
    sqrt_bw = _bin_sqrt(x, range)
    return min(max(fd_bw, sqrt_bw / 2), sturges_bw)


builtin_range = range


def _as_float(x):
    return cast(x, _dtypes.float64) if x.dtype.kind in "biu" else x


_ESTIMATORS = {"stone": _bin_stone, "auto": _bin_auto, "doane": _bin_doane, "fd": _bin_fd,
               "rice": _bin_rice, "scott": _bin_scott, "sqrt": _bin_sqrt,
               "sturges": _bin_sturges}


# ------------------------------------------------------------------ histogramdd
def _sample(sample) -> Tensor:
    """sample as an (N, D) tensor: a 2-d tensor as it is, a 1-d one as D = 1, a sequence
    of D 1-d arrays as the columns."""
    if isinstance(sample, Tensor) or isinstance(sample, np.ndarray):
        s = as_tensor(sample)
        if s.ndim > 2:
            raise ValueError("hipfer.histogramdd: sample must be 2-d (N, D) or a sequence of "
                             "D arrays")
        return s if s.ndim == 2 else reshape(s, (-1, 1))
    like = next((v for v in sample if isinstance(v, Tensor)), None)
    cols = [reshape(as_tensor(v, like), (-1,)) for v in sample]
    return permute_dims(stack(cols), (1, 0))


def histogramdd(sample, bins=10, range=None, density=None, weights=None):
    """(hist, edges): the D-dimensional histogram (float64) of N points (sample: (N, D),
    or a sequence of D coordinate arrays). bins: an int, D ints, or D 1-d edge arrays;
    range: D (min, max) pairs or None. A point on the last edge counts in the last bin."""
    s = _sample(sample)
    N, D = s.shape
    if s.dtype.kind == "c":
        raise TypeError("hipfer.histogramdd: complex data has no order on the device")
    w = None
    if weights is not None:
        w = as_tensor(weights, s)
        if w.shape != (N,):
            raise ValueError("hipfer.histogramdd: weights must be 1-d, one per sample")
    if isinstance(bins, (int, np.integer)) and not isinstance(bins, bool):
        bins = D * [bins]
    else:
        try:
            if len(bins) != D:
                raise ValueError
        except (TypeError, ValueError):
            raise ValueError("hipfer.histogramdd: The dimension of bins must be equal to the "
                             "dimension of the sample x.") from None
    if range is None:
        range = (None,) * D
    elif len(range) != D:
        raise ValueError("hipfer.histogramdd: range argument must have one entry per dimension")
    edges, nbin = [], []
    flat = zeros((N,), dtype=_dtypes.int64, device=s.device)
    cols = [s[:, i] for i in builtin_range(D)]
    for i in builtin_range(D):
        e = _dim_edges(cols[i], bins[i], range[i], i)
        edges.append(e)
        nbin.append(e.shape[0] + 1)  # an outlier bin at each end
    strides = [math.prod(nbin[i + 1:]) for i in builtin_range(D)]
    for i in builtin_range(D):
        idx = searchsorted(edges[i], cols[i], side="right")
        idx = subtract(idx, cast(equal(cols[i], edges[i][-1]), _dtypes.int64))
        flat = add(flat, multiply(idx, strides[i]))
    if w is not None:
        if w.dtype.kind == "c":
            raise TypeError("hipfer.histogramdd: complex weights do not cast to float64")
        w = cast(w, _dtypes.float64)  # NumPy's bincount of the flat bin indices
    hist = _bin_counts(flat, math.prod(nbin), w, "histogramdd")
    hist = reshape(cast(hist, _dtypes.float64), tuple(nbin))
    hist = hist[(slice(1, -1),) * D]
    if density:
        total = _sum(hist)
        for i in builtin_range(D):
            shape = [1] * D
            shape[i] = nbin[i] - 2
            hist = divide(hist, reshape(cast(diff(edges[i]), _dtypes.float64), tuple(shape)))
        hist = divide(hist, total)
    return hist, edges


def _dim_edges(col: Tensor, bins, rng, i: int) -> Tensor:
    if _is_array(bins):
        e = as_tensor(bins, col)
        if e.ndim != 1:
            raise ValueError(f"hipfer.histogramdd: `bins[{i}]` must be a scalar or 1d array")
        if e.shape[0] > 1 and bool(_any(greater(e[:-1], e[1:]))):
            raise ValueError(f"hipfer.histogramdd: `bins[{i}]` must be monotonically "
                             "increasing, when an array")
        return e
    if isinstance(bins, Tensor):
        raise ValueError(f"hipfer.histogramdd: `bins[{i}]` must be a scalar or 1d array")
    if bins < 1:
        raise ValueError(f"hipfer.histogramdd: `bins[{i}]` must be positive, when an integer")
    try:
        n = operator.index(bins)
    except TypeError as e:
        raise TypeError(f"hipfer.histogramdd: `bins[{i}]` must be an integer, when a scalar") from e
    first, last = _outer_edges(col, rng, "histogramdd")
    return asarray(np.linspace(first, last, n + 1), device=col.device)


def histogram2d(x, y, bins=10, range=None, density=None, weights=None):
    """(hist, xedges, yedges): histogramdd of the points (x, y); bins: an int, two ints,
    one edge array for both, or two edge arrays."""
    try:
        N = len(bins)
    except TypeError:
        N = 1
    if N != 1 and N != 2:
        edges = as_tensor(bins, x if isinstance(x, Tensor) else None)
        bins = [edges, edges]
    hist, edges = histogramdd([x, y], bins, range, density, weights)
    return hist, edges[0], edges[1]
