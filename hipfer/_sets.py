"""Set functions: unique_all, unique_counts, unique_inverse, unique_values, isin.

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
from ._elementwise import bitwise_and, equal, greater, imag, not_equal, real
from ._indexing import index_put, take
from ._searching import searchsorted
from ._sorting import argsort, sort
from ._statistical import any as any_, cumulative_sum
from ._tensor import Tensor
from ._views import expand_dims

__all__ = ["isin", "unique_all", "unique_counts", "unique_inverse", "unique_values"]


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
    """Stable ascending argsort; complex: by real part, ties by imaginary part."""
    if flat.dtype.kind != "c":
        return argsort(flat, stable=True)
    by_imag = argsort(imag(flat), stable=True)
    return take(by_imag, argsort(take(real(flat), by_imag), stable=True))


class _Groups:
    """Sorted elements of a flat tensor and their groups of equal values."""

    def __init__(self, flat: Tensor, with_perm: bool):
        n, dev = flat.size, flat.device
        complex_ = flat.dtype.kind == "c"  # no complex Sort: order through the permutation
        self.perm = _stable_order(flat) if with_perm or complex_ else None
        self.sorted = take(flat, self.perm) if self.perm is not None else sort(flat)
        if n == 0:
            self.gid = zeros((0,), dtype=_dtypes.int64, device=dev)
            self.n_groups = 0
            self.starts = self.gid
            return
        s = self.sorted
        self.gid = cumulative_sum(not_equal(s[1:], s[:-1]), include_initial=True)
        self.n_groups = int(self.gid[n - 1]) + 1  # the one device -> host read
        pos = arange(n, dtype=_dtypes.int64, device=dev)
        self.starts = index_put(zeros((self.n_groups,), dtype=_dtypes.int64, device=dev),
                                (self.gid[::-1],), pos[::-1])

    def values(self) -> Tensor:
        return take(self.sorted, self.starts)

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


def isin(x1, x2, /, *, invert: bool = False) -> Tensor:
    """For each element of x1, whether it equals some element of x2 (bool, x1's shape);
    NaN is in nothing. invert=True gives the negation. x1 or x2 may be a Python int."""
    a, b, dt = operands(x1, x2)
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
