"""Reductions: sum, prod, max, min, mean, var, std, all, any over axes.

Axes become mode labels: modes_a names every axis, modes_c the kept ones.
Integers and bools reduce through MetadataReduce, floats and complex through
ScalarReduce / AnalyticReduce.
"""
from __future__ import annotations

import builtins

import numpy as np

from . import _dtypes, _ops
from ._core import cast
from ._elementwise import not_equal
from ._naming import public
from ._tensor import Tensor
from ._views import AxisError
from .prims import descriptors as d
from .prims.optable import ReduceOp

__all__ = ["all", "any", "max", "mean", "min", "prod", "std", "sum", "var"]


def _axes(axis, ndim) -> tuple:
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    out = []
    for a in axes:
        # a 0-d x takes axis 0 and -1 (as over no axis), as NumPy's reductions do
        if not -builtins.max(ndim, 1) <= a < builtins.max(ndim, 1):
            raise AxisError(f"axis {a} is out of range for a {ndim}-d tensor")
        out.append(a % builtins.max(ndim, 1))
    if len(set(out)) != len(out):
        raise ValueError(f"repeated axis in {axis}")
    return tuple(sorted(out)) if ndim else ()


_SITES: dict = {}  # (family, op, ndim, axis, extra...) -> (Site, normalized axes)
_SITES_MAX = 1024


def _site(desc_cls, op, ndim, axis, extra, fn):
    """The Site of one reduction and its axes, made once per (op, ndim, axis, extra, the
    public function): a warm call neither re-checks the axes nor builds and hashes a
    descriptor."""
    try:
        key = (desc_cls, op, ndim, axis, fn, *extra.values())
        hit = _SITES.get(key)
    except TypeError:  # an unhashable axis (a list): no caching
        key, hit = None, None
    if hit is None:
        axes = _axes(axis, ndim)
        modes_a = tuple(range(ndim))
        modes_c = tuple(i for i in modes_a if i not in axes)
        hit = (_ops.Site(desc_cls(op, modes_a, modes_c, **extra), fn=fn), axes)
        if key is not None:
            if len(_SITES) >= _SITES_MAX:
                _SITES.clear()
            _SITES[key] = hit
    return hit


def _reduce(x: Tensor, desc_cls, op, axis, keepdims, fn=None, **extra) -> Tensor:
    """op over axis; fn: the public function (its name in errors; op's by default)."""
    fn = fn or op.cname
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}() expected a hipfer Tensor, got {type(x).__name__}")
    site, axes = _site(desc_cls, op, x.ndim, axis, extra, fn)
    out = Tensor(site.run1(x))
    if keepdims:
        out = out.reshape(tuple(1 if i in axes else n for i, n in enumerate(x.shape)))
    return out


def _sum_dtype(dt):
    """The dtype sum and prod of dt values give by default (the standard's rule): the
    widest integer of its signedness, else dt itself."""
    if dt.kind in "bi":
        return _dtypes.int64
    if dt.kind == "u":
        return _dtypes.uint64
    return dt


def _accumulate_dtype(x, dtype):
    return _dtypes.as_dtype(dtype) if dtype is not None else _sum_dtype(x.dtype)


def _sum_like(op):
    # bool arithmetic, as NumPy does it with dtype=bool: a sum is an OR, a product an AND
    in_bool = ReduceOp.ANY if op is ReduceOp.SUM else ReduceOp.ALL

    def fn(x, /, *, axis=None, dtype=None, keepdims=False):
        dt = _accumulate_dtype(x, dtype)
        x = cast(x, dt)
        if dt.kind == "b":
            return _reduce(x, d.MetadataReduce, in_bool, axis, keepdims, fn=op.cname)
        cls = d.MetadataReduce if dt.kind in "biu" else d.ScalarReduce
        return _reduce(x, cls, op, axis, keepdims)
    return fn


sum = public("sum", _sum_like(ReduceOp.SUM))  # noqa: A001
sum.__doc__ = """Sum of x's elements over axis (an int, a tuple of ints, or None: every axis).

dtype: the accumulation and result dtype; by default the standard's: bool and signed
integers sum in int64, unsigned in uint64, floating and complex dtypes in their own.
keepdims keeps the reduced axes as size 1. An empty sum is 0.
"""
prod = public("prod", _sum_like(ReduceOp.PROD))
prod.__doc__ = """Product of x's elements over axis (an int, a tuple of ints, or None: every axis).

dtype: as in sum (integers multiply in int64 / uint64 by default, wrapping on overflow).
keepdims keeps the reduced axes as size 1. An empty product is 1.
"""


def _extreme(op):
    def fn(x, /, *, axis=None, keepdims=False):
        if x.dtype.kind == "c":
            raise TypeError(f"{op.cname}() is not defined for complex tensors")
        cls = d.MetadataReduce if x.dtype.kind in "biu" else d.ScalarReduce
        return _reduce(x, cls, op, axis, keepdims)
    return fn


max = public("max", _extreme(ReduceOp.MAX))  # noqa: A001
max.__doc__ = """Largest element of x over axis (an int, a tuple of ints, or None: every axis).

Real dtypes only (complex is a TypeError, as the standard leaves it undefined); NaN
propagates. The result has x's dtype; an empty reduction is a ValueError.
"""
min = public("min", _extreme(ReduceOp.MIN))  # noqa: A001
min.__doc__ = """Smallest element of x over axis (an int, a tuple of ints, or None: every axis).

Real dtypes only (complex is a TypeError); NaN propagates. The result has x's dtype; an
empty reduction is a ValueError.
"""

# What the NumPy backend's compiled warm path (hipfer._warmpath.install) serves of these:
# fn(x) over every axis for the dtypes that reduce in their own dtype -- those whose
# default sum keeps the dtype, and every real dtype for max/min -- as the ufunc's reduce
# (with the dtype passed for sum and prod).
_OWN_SUM_DTYPES = [t for t in _dtypes.ALL_DTYPES if _sum_dtype(t) == t]
_OWN_EXTREME_DTYPES = [t for t in _dtypes.ALL_DTYPES if t.kind in "iuf"]
WARM = {"sum": (np.add, _OWN_SUM_DTYPES, True), "prod": (np.multiply, _OWN_SUM_DTYPES, True),
        "max": (np.maximum, _OWN_EXTREME_DTYPES, False),
        "min": (np.minimum, _OWN_EXTREME_DTYPES, False)}


def _in_float32_if_half(reduce):
    """reduce(x) for a floating x, float16 computed in float32 and rounded once at the
    end (NumPy's float16 mean/var/std: a float16 running sum overflows at 65504)."""
    def fn(x, *args, **kw):
        x = cast(x, _dtypes.float_for(x.dtype))
        if x.dtype != _dtypes.float16:
            return reduce(x, *args, **kw)
        return cast(reduce(cast(x, _dtypes.float32), *args, **kw), _dtypes.float16)
    return fn


def mean(x, /, *, axis=None, keepdims=False):
    """Arithmetic mean of x over axis (an int, a tuple of ints, or None: every axis).

    Floating and complex x keep their dtype (float16 accumulates in float32, rounded once);
    integer and bool x are averaged in the default float dtype (NumPy's float64). An empty
    mean is NaN. keepdims keeps the reduced axes as size 1.
    """
    return _mean(x, axis, keepdims)


@_in_float32_if_half
def _mean(x, axis, keepdims):
    return _reduce(x, d.ScalarReduce, ReduceOp.MEAN, axis, keepdims)


def _spread(op):
    @_in_float32_if_half
    def spread(x, axis, keepdims, correction):
        return _reduce(x, d.AnalyticReduce, op, axis, keepdims, correction=correction)

    def fn(x, /, *, axis=None, correction=0.0, keepdims=False):
        return spread(x, axis, keepdims, float(correction))
    return fn


var = public("var", _spread(ReduceOp.VAR))
var.__doc__ = """Variance of x over axis: sum(|x - mean|**2) / (N - correction).

correction=0 is the population variance, 1 the sample variance (NumPy's ddof). The result
has x's real dtype (float64 for complex128; integers in the default float dtype).
"""
std = public("std", _spread(ReduceOp.STD))
std.__doc__ = """Standard deviation of x over axis: sqrt(var(x, axis=, correction=)).

The result has x's real dtype (float64 for complex128; integers in the default float
dtype); correction as in var (NumPy's ddof).
"""


def _logical(op):
    def fn(x, /, *, axis=None, keepdims=False):
        if x.dtype.kind in "fc":
            x = not_equal(x, 0)
        return _reduce(x, d.MetadataReduce, op, axis, keepdims)
    return fn


all = public("all", _logical(ReduceOp.ALL))  # noqa: A001
all.__doc__ = """Whether every element of x over axis is nonzero (True for an empty reduction).

The result is bool; NaN counts as nonzero; keepdims keeps the reduced axes as size 1.
"""
any = public("any", _logical(ReduceOp.ANY))  # noqa: A001
any.__doc__ = """Whether any element of x over axis is nonzero (False for an empty reduction).

The result is bool; NaN counts as nonzero; keepdims keeps the reduced axes as size 1.
"""


# ------------------------------------------------------------- cumulative sums
def _cumulative(op, name):
    def fn(x, /, *, axis=None, dtype=None, include_initial=False):
        if not isinstance(x, Tensor):
            raise TypeError(f"{name}() expects a hipfer Tensor, got {type(x).__name__}")
        if x.ndim == 0:
            raise ValueError(f"{name}() needs at least one axis, got a 0-d tensor")
        if axis is None:
            if x.ndim > 1:
                raise ValueError(f"{name}(): axis is required for a {x.ndim}-d tensor")
            axis = 0
        axis = int(axis)
        if not -x.ndim <= axis < x.ndim:
            raise AxisError(f"axis {axis} is out of range for a {x.ndim}-d tensor")
        x = cast(x, _accumulate_dtype(x, dtype))
        return Tensor(_ops.run(d.Cumulative(op, axis % x.ndim, bool(include_initial)), [x],
                               called=name))
    fn.__name__ = name
    fn.__doc__ = (f"Running {op.value} along axis (optional for 1-d x), in dtype (default: x's, "
                  "with integers widened to 64 bits as in sum); include_initial prepends the "
                  "identity.")
    return fn


cumulative_sum = public("cumulative_sum", _cumulative(d.ScanOp.SUM, "cumulative_sum"))
cumulative_prod = public("cumulative_prod", _cumulative(d.ScanOp.PROD, "cumulative_prod"))
__all__ += ["cumulative_prod", "cumulative_sum"]
