"""Set functions: unique_all, unique_counts, unique_inverse, unique_values, isin, and
NumPy's unique (with axis=), union1d, intersect1d, setdiff1d, setxor1d.

Composed from prims, on the flattened input: a stable Argsort (or Sort) puts equal
values next to each other, ``s[i] != s[i - 1]`` marks where a new value starts (NaN
differs from everything, so each NaN is its own value; -0.0 == 0.0), and a Cumulative
sum of those marks gives each sorted element its group number. The number of groups is
read back once (the output size depends on the data). IndexPut then finds each group's
first position (writing positions in reverse: the last write, the lowest position,
wins) and counts its members; take gathers values and first-occurrence indices.
Complex inputs are ordered lexicographically (real part, then imaginary part) by two
stable argsorts of the free real/imag views, as NumPy orders them.
"""
from __future__ import annotations

from typing import NamedTuple

from . import _dtypes
from ._core import cast, operands
from ._creation import arange, ones, zeros
from ._creation import asarray
from ._elementwise import bitwise_and, equal, greater, imag, isnan, logical_and, not_equal, real
from ._indexing import index_put, take
from ._searching import searchsorted
from ._sorting import argsort, sort
from ._statistical import any as any_, cumulative_sum
from ._tensor import Tensor
from ._manipulation import concat
from ._views import AxisError, expand_dims, moveaxis

__all__ = ["intersect1d", "isin", "setdiff1d", "setxor1d", "union1d", "unique", "unique_all",
           "unique_counts", "unique_inverse", "unique_values"]


class UniqueAllResult(NamedTuple):
    values: Tensor
    indices: Tensor
    inverse_indices: Tensor
    counts: Tensor


class UniqueCountsResult(NamedTuple):
    values: Tensor
    counts: Tensor


class UniqueInverseResult(NamedTuple):
    values: Tensor
    inverse_indices: Tensor


def _flat(x, fn) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}() expects a hipfer Tensor, got {type(x).__name__}")
    return x.reshape(-1)


def _stable_order(flat: Tensor) -> Tensor:
    """Stable ascending argsort; complex: by real part, ties by imaginary part, with
    NumPy's places for NaNs: [R + Rj, R + nanj, nan + Rj, nan + nanj]."""
    if flat.dtype.kind != "c":
        return argsort(flat, stable=True)
    re, im = real(flat), imag(flat)
    order = argsort(im, stable=True)
    order = take(order, argsort(take(re, order), stable=True))
    # last, by NaN class: 0 none, 1 only the imaginary part NaN, 2 the real part NaN
    nan_re = isnan(re)
    cls = cast(nan_re, _dtypes.int8) * 2 + cast(bitwise_and(isnan(im), equal(nan_re, False)),
                                                 _dtypes.int8)
    return take(order, argsort(take(cls, order), stable=True))


def _rows_order(rows: Tensor) -> Tensor:
    """Stable lexicographic argsort of the rows of a 2-d tensor (first column first)."""
    perm = arange(rows.shape[0], dtype=_dtypes.int64, device=rows.device)
    for j in range(rows.shape[1] - 1, -1, -1):  # least significant column first
        perm = take(perm, _stable_order(take(rows[:, j], perm)))
    return perm


class _Groups:
    """Sorted elements of a flat tensor (or rows of a 2-d one: rows=True) and their
    groups of equal values; equal_nan puts all NaNs of a flat tensor in one group."""

    def __init__(self, flat: Tensor, with_perm: bool, equal_nan: bool = False, rows=False):
        n, dev = flat.shape[0], flat.device
        complex_ = flat.dtype.kind == "c"  # no complex Sort: order through the permutation
        if rows:
            self.perm = _rows_order(flat)
        else:
            self.perm = _stable_order(flat) if with_perm or complex_ else None
        self.sorted = take(flat, self.perm, axis=0) if self.perm is not None else sort(flat)
        if n == 0:
            self.gid = zeros((0,), dtype=_dtypes.int64, device=dev)
            self.n_groups = 0
            self.starts = self.gid
            return
        s = self.sorted
        new = not_equal(s[1:], s[:-1])
        if rows:
            new = any_(new, axis=1) if s.shape[1] else zeros((n - 1,), dtype=_dtypes.bool, device=dev)
        elif equal_nan and s.dtype.kind in "fc":
            new = bitwise_and(new, equal(logical_and(isnan(s[1:]), isnan(s[:-1])), False))
        self.gid = cumulative_sum(new, include_initial=True)
        self.n_groups = int(self.gid[n - 1]) + 1  # the one device -> host read
        pos = arange(n, dtype=_dtypes.int64, device=dev)
        self.starts = index_put(zeros((self.n_groups,), dtype=_dtypes.int64, device=dev),
                                (self.gid[::-1],), pos[::-1])

    def values(self) -> Tensor:
        return take(self.sorted, self.starts, axis=0)

    def counts(self) -> Tensor:
        dev = self.gid.device
        return index_put(zeros((self.n_groups,), dtype=_dtypes.int64, device=dev), (self.gid,),
                         ones(self.gid.shape, dtype=_dtypes.int64, device=dev), accumulate=True)

    def inverse(self, shape) -> Tensor:
        inv = index_put(zeros(self.gid.shape, dtype=_dtypes.int64, device=self.gid.device),
                        (self.perm,), self.gid)
        return inv.reshape(shape)

    def first_indices(self) -> Tensor:
        return take(self.perm, self.starts)


def unique_values(x: Tensor, /) -> Tensor:
    """The distinct values of x, ascending, 1-d (every NaN distinct; -0.0 == 0.0)."""
    return _Groups(_flat(x, "unique_values"), False).values()


def unique_counts(x: Tensor, /) -> UniqueCountsResult:
    """(values, counts): the distinct values of x and how often each occurs (int64)."""
    g = _Groups(_flat(x, "unique_counts"), False)
    return UniqueCountsResult(g.values(), g.counts())


def unique_inverse(x: Tensor, /) -> UniqueInverseResult:
    """(values, inverse_indices): values[inverse_indices] reconstructs x (x's shape)."""
    g = _Groups(_flat(x, "unique_inverse"), True)
    return UniqueInverseResult(g.values(), g.inverse(x.shape))


def unique_all(x: Tensor, /) -> UniqueAllResult:
    """(values, indices of first occurrences in flattened x, inverse_indices, counts)."""
    g = _Groups(_flat(x, "unique_all"), True)
    return UniqueAllResult(g.values(), g.first_indices(), g.inverse(x.shape), g.counts())


def _arr(x, device=None) -> Tensor:
    return x if isinstance(x, Tensor) else asarray(x, device=device)


def _pair(a, b):
    dev = a.device if isinstance(a, Tensor) else b.device if isinstance(b, Tensor) else None
    return _arr(a, dev), _arr(b, dev)


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
           equal_nan=True, sorted=True):
    """NumPy's unique: the sorted distinct values of the flattened ar (axis=None) or the
    distinct slices along axis, with first indices, inverse (ar's shape for axis=None,
    1-d otherwise) and counts on request (a tuple then). equal_nan=True gives all NaNs
    (complex: every value with a NaN part) one entry. The output is always sorted.
    Reads one size back (the output size depends on the data)."""
    x = _arr(ar)
    if axis is None:
        g = _Groups(x.reshape(-1), return_index or return_inverse, bool(equal_nan))
        values, inv_shape = g.values(), x.shape
    else:
        if not isinstance(axis, int) or isinstance(axis, bool):
            raise TypeError(f"hipfer.unique: axis must be an int, got {type(axis).__name__}")
        if not -x.ndim <= axis < x.ndim:
            raise AxisError(f"hipfer.unique: axis {axis} is out of bounds for array of "
                            f"dimension {x.ndim}")
        moved = moveaxis(x, axis, 0)
        g = _Groups(moved.reshape((moved.shape[0], -1)), True, rows=True)
        values = moveaxis(g.values().reshape((g.n_groups,) + moved.shape[1:]), 0, axis)
        inv_shape = (moved.shape[0],)
    out = [values]
    if return_index:
        out.append(g.first_indices())
    if return_inverse:
        out.append(g.inverse(inv_shape))
    if return_counts:
        out.append(g.counts())
    return out[0] if len(out) == 1 else tuple(out)


def union1d(ar1, ar2) -> Tensor:
    """The sorted distinct values found in either flattened input. Reads one size back."""
    a, b = _pair(ar1, ar2)
    return unique(concat([a.reshape(-1), b.reshape(-1)]))


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False):
    """The sorted values found in both flattened inputs; with return_indices, also the
    indices of their first occurrences in each. Reads one size back."""
    a, b = _pair(ar1, ar2)
    if not assume_unique:
        if return_indices:
            a, ind1 = unique(a, return_index=True)
            b, ind2 = unique(b, return_index=True)
        else:
            a, b = unique(a), unique(b)
    else:
        a, b = a.reshape(-1), b.reshape(-1)
    aux = concat([a, b])
    order = _stable_order(aux)
    aux = take(aux, order)
    mask = equal(aux[1:], aux[:-1])
    common = aux[:-1][mask]
    if not return_indices:
        return common
    i1 = order[:-1][mask]
    i2 = order[1:][mask] - a.shape[0]
    if not assume_unique:
        i1, i2 = take(ind1, i1), take(ind2, i2)
    return common, i1, i2


def setdiff1d(ar1, ar2, assume_unique=False) -> Tensor:
    """The values of ar1 (unique and sorted unless assume_unique) not in ar2. Reads one
    size back."""
    a, b = _pair(ar1, ar2)
    a = a.reshape(-1) if assume_unique else unique(a)
    return a[isin(a, b.reshape(-1) if assume_unique else unique(b), assume_unique=True,
                  invert=True)]


def setxor1d(ar1, ar2, assume_unique=False) -> Tensor:
    """The sorted values in exactly one of the inputs (each assumed free of repeats when
    assume_unique). Reads one size back."""
    a, b = _pair(ar1, ar2)
    if not assume_unique:
        a, b = unique(a), unique(b)
    aux = concat([a.reshape(-1), b.reshape(-1)])
    if aux.shape[0] == 0:
        return aux
    aux = take(aux, _stable_order(aux))
    edge = ones((1,), dtype=_dtypes.bool, device=aux.device)
    flag = concat([edge, not_equal(aux[1:], aux[:-1]), edge])
    return aux[bitwise_and(flag[1:], flag[:-1])]


def isin(x1, x2, /, *, invert=False, assume_unique=False, kind=None) -> Tensor:
    """For each element of x1, whether it equals some element of x2 (bool, x1's shape);
    NaN is in nothing. invert=True gives the negation. x1 or x2 may be array_like (the
    array API's isin and NumPy's). assume_unique is accepted (the result is the same);
    kind 'sort' or 'table' picks NumPy's method and here gives the same answer
    ('table' only for integer and bool inputs, as in NumPy)."""
    if kind not in (None, "sort", "table"):
        raise ValueError(f"hipfer.isin: Invalid kind: '{kind}'. Please use None, 'sort' or 'table'.")
    if not isinstance(x1, Tensor) and not isinstance(x2, Tensor):
        x1 = _arr(x1)
    a, b, dt = operands(x1, x2)
    if kind == "table" and dt.kind not in "biu":
        raise ValueError("hipfer.isin: The 'table' method is only supported for boolean or "
                         "integer arrays. Please select 'sort' or None for kind.")
    a, b = cast(a, dt), cast(b, dt)
    if dt.kind == "c":
        found = _isin_by_blocks(a, b.reshape(-1))
        return equal(found, False) if invert else found
    table = sort(b.reshape(-1))
    found = greater(searchsorted(table, a, side="right"), searchsorted(table, a, side="left"))
    if dt.kind == "f":  # NaN sorts as equal to NaN in the table, but NaN != NaN
        found = bitwise_and(found, equal(a, a))
    return equal(found, False) if invert else found


def _isin_by_blocks(a: Tensor, table: Tensor) -> Tensor:
    """isin without an order (complex): OR of a == table[j] over blocks of the table,
    each block one broadcast comparison of at most ~2^24 elements."""
    found = zeros(a.shape, dtype=_dtypes.bool, device=a.device)
    step = max(1, (1 << 24) // max(a.size, 1))
    col = expand_dims(a, axis=-1)
    for j in range(0, table.size, step):
        hit = any_(equal(col, table[j:j + step]), axis=-1)
        found = found | hit
    return found
