"""Pairwise steps of a contraction, planned once and replayed on Tensors.

Each step of a path becomes a small plan that only permutes, views and calls prims:

* an input operand is first *viewed* with one axis per distinct label: a repeated label
  takes the diagonal (its strides add up) and a size-1 axis broadcast against a larger
  size gets stride 0 -- no copy;
* labels that one operand holds alone (not in the other, not needed later) are summed
  first (SemiringCore.ReduceAdd; max/min under a tropical semiring);
* two operands that share no summed label are multiplied elementwise on broadcast views
  (batch and outer products: ElementwiseBinary Mul, or Add under MaxPlus/MinPlus);
* otherwise transpose-transpose-GEMM: each operand is viewed as (batch, rows, k) through
  a permutation and a reshape (a copy only when its axis groups cannot merge), one
  BatchedGemm runs over the semiring, and the (batch, m, n) result is viewed back. A
  conjugated operand keeps its flag, which the GEMM folds into its op (no extra pass).
  Two groups that would need a copy batch instead: a free group split by the summed one
  batches its outer labels, the other operand read at stride 0 (a broadcast matmul); a
  summed group split by a free label batches its outer labels, summed after the GEMM
  (GemmSum: a conv's weight gradient).

Plans see labels and layouts only (the order of each operand's axes by stride), so a
plan built for one call replays on any tensors with the same shapes, dtypes and layout.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Dict, Optional, Sequence, Tuple

from .. import _ops
from .._creation import full
from .._elementwise import add, multiply
from .._statistical import max as max_, min as min_
from .._tensor import Tensor, xp_of
from .._views import _view, permute_dims
from ..prims import descriptors as d
from ..prims.semiring import Semiring
from .parse import Labels


def layout_order(labels: Labels, strides: Sequence[int]) -> Labels:
    """labels from the outermost axis in memory to the innermost (by |stride|, stable)."""
    ranked = sorted(range(len(labels)), key=lambda i: -abs(strides[i]))
    return tuple(labels[i] for i in ranked)


# ------------------------------------------------------------------ input views
@dataclass(frozen=True)
class InputView:
    """One axis per distinct label: repeated labels -> diagonal, size-1 -> broadcast."""
    labels: Labels                 # the operand's labels (may repeat)
    unique: Labels                 # distinct labels, first appearance order
    shape: Tuple[int, ...]         # global size of each distinct label

    @staticmethod
    def make(labels: Labels, size_of: Dict[int, int]) -> Optional["InputView"]:
        unique = tuple(dict.fromkeys(labels))
        return InputView(labels, unique, tuple(size_of[x] for x in unique))

    def needed(self, t: Tensor) -> bool:
        return self.unique != self.labels or tuple(t.shape) != self.shape

    def apply(self, t: Tensor) -> Tensor:
        strides = dict.fromkeys(self.unique, 0)
        for x, n, s in zip(self.labels, t.shape, t.strides):
            if n != 1:  # a size-1 axis contributes nothing: broadcast (stride 0)
                strides[x] += s
        if 0 in self.shape:  # an empty view: any strides will do
            strides = dict.fromkeys(self.unique, 0)
        return _view(t, self.shape, tuple(strides[x] for x in self.unique))


# --------------------------------------------------------------------- reduction
@dataclass(frozen=True)
class Reduce:
    """Sum (or the tropical max/min) over labels of an operand: modes_a -> modes_c."""
    modes_a: Labels
    modes_c: Labels
    semiring: Semiring
    out_shape: Tuple[int, ...]
    empty: bool                    # a reduced label has size 0: the result is the zero

    def apply(self, be, t: Tensor) -> Tensor:
        sr = self.semiring
        if self.empty:
            return full(self.out_shape, sr.zero_for(t.dtype), dtype=t.dtype, device=t.device)
        if sr is Semiring.STANDARD:
            return Tensor(_site(self, d.ReduceAdd(self.modes_a, self.modes_c))(be, [t]))
        axes = tuple(i for i, x in enumerate(self.modes_a) if x not in self.modes_c)
        r = (max_ if sr.add == "max" else min_)(t, axis=axes)
        kept = tuple(x for x in self.modes_a if x in self.modes_c)
        return r if kept == self.modes_c else permute_dims(r, [kept.index(x) for x in self.modes_c])


def plan_reduce(labels: Labels, order: Labels, keep, size_of, semiring) -> Optional[Reduce]:
    """Reduce the labels not in keep; the result's labels follow the memory order."""
    if all(x in keep for x in labels):
        return None
    modes_c = tuple(x for x in order if x in keep)
    empty = any(size_of[x] == 0 for x in labels if x not in keep)
    return Reduce(tuple(labels), modes_c, semiring, tuple(size_of[x] for x in modes_c), empty)


# ------------------------------------------------------------------ pairwise steps
@dataclass(frozen=True)
class Product:
    """Elementwise (semiring) product of two operands broadcast to the result's labels."""
    labels_a: Labels
    labels_b: Labels
    result: Labels
    shape: Tuple[int, ...]
    semiring: Semiring

    def apply(self, be, a: Tensor, b: Tensor) -> Tensor:
        va, vb = _spread(a, self.labels_a, self.result), _spread(b, self.labels_b, self.result)
        op = add if self.semiring.mul == "add" else multiply
        return op(va, vb)


def _spread(t: Tensor, labels: Labels, result: Labels) -> Tensor:
    """t viewed with the result's axes: a missing label is a size-1 axis (broadcast)."""
    pos = {x: i for i, x in enumerate(labels)}
    st = t.strides
    shape = tuple(t.shape[pos[x]] if x in pos else 1 for x in result)
    strides = tuple(st[pos[x]] if x in pos else 0 for x in result)
    return _view(t, shape, strides)


@dataclass(frozen=True)
class Gemm:
    """Transpose-transpose-GEMM: a -> (batch, m, k), b -> (batch, k, n), one BatchedGemm."""
    perm_a: Tuple[int, ...]        # a's axes as batch + free-a + summed
    perm_b: Tuple[int, ...]        # b's axes as batch + summed + free-b
    groups: Tuple[int, int, int, int]  # how many labels are batch, free-a, summed, free-b
    shape_a: Tuple[int, int, int]
    shape_b: Tuple[int, int, int]
    out_shape: Tuple[int, ...]     # batch sizes + free-a sizes + free-b sizes
    semiring: Semiring

    swap: bool = False             # run as b x a: the result's free labels come b's first
    # "a" / "b": that operand lacks the batch labels (free labels of the other one) and
    # reads each batch at stride 0 -- the matrix of a broadcast matmul
    broadcast: str = ""

    def apply(self, be, a: Tensor, b: Tensor) -> Tensor:
        if self.swap:
            a, b = b, a
        nb, nfa, nk, nfb = self.groups
        copy = _site(self, _MAKE_CONTIGUOUS, "copy_a")
        a3 = as_3d(a, self.perm_a, (0 if self.broadcast == "a" else nb, nfa, nk), self.shape_a,
                   be, copy)
        copy = _site(self, _MAKE_CONTIGUOUS, "copy_b")
        b3 = as_3d(b, self.perm_b, (0 if self.broadcast == "b" else nb, nk, nfb), self.shape_b,
                   be, copy)
        out = _site(self, d.BatchedGemm(self.semiring))(be, [a3, b3])
        return Tensor(out.reshape(self.out_shape))  # a fresh contiguous array: a view


_MAKE_CONTIGUOUS = d.MakeContiguous()


def _site(step, desc, name="call") -> _ops.CallSite:
    """The step's CallSite for desc (made on first use; frozen dataclasses allow it)."""
    site = step.__dict__.get(name)
    if site is None:
        site = _ops.CallSite(desc)
        object.__setattr__(step, name, site)
    return site


def as_3d(t: Tensor, perm, groups, shape3, be=None, copy=None) -> Tensor:
    """t's axes in perm order, merged into three groups of groups[i] axes each: one
    strided view when each group's axes nest in memory, else a contiguous copy (through
    the CallSite copy when given). An empty group of a size above 1 (a batch the operand
    lacks) is read at stride 0."""
    data = t._data
    xp = xp_of(data)
    if 0 in shape3:
        return Tensor(xp.lib.stride_tricks.as_strided(data, shape3, (0, 0, 0)), t._conj)
    shp, st = data.shape, data.strides
    strides, k = [], 0
    for g in groups:
        axes = [ax for ax in perm[k:k + g] if shp[ax] != 1]  # size-1 axes nest anywhere
        k += g
        for outer, inner in zip(axes, axes[1:]):
            if st[outer] != st[inner] * shp[inner]:
                moved = Tensor(data.transpose(perm), t._conj)
                packed = _ops.run(_MAKE_CONTIGUOUS, [moved]) if copy is None else copy(be, [moved])
                own = tuple(n if g else 1 for n, g in zip(shape3, groups))
                return Tensor(xp.broadcast_to(packed.reshape(own), shape3))
        strides.append(st[axes[-1]] if axes else 0)
    return Tensor(xp.lib.stride_tricks.as_strided(data, shape3, tuple(strides)), t._conj)


@dataclass(frozen=True)
class LibraryContract:
    """One SemiringFastPath.Contract (hipTENSOR / cuTENSOR): the library reads both
    operands through their strides and conjugation flags; result labels as a Gemm's."""
    modes_a: Labels
    modes_b: Labels
    result: Labels

    def apply(self, be, a: Tensor, b: Tensor) -> Tensor:
        desc = d.Contract(self.modes_a, self.modes_b, self.result)
        return Tensor(_site(self, desc)(be, [a, b]))


def plan_pair(la: Labels, oa: Labels, lb: Labels, ob: Labels, keep, size_of, semiring,
              score=None, fast=None):
    """Plan contracting a (labels la, memory order oa) with b. Labels are distinct within
    each operand, and each label of one operand alone is in keep (already reduced).
    score(result order) rates a result layout for the step that consumes it (higher:
    fewer copies there); the GEMM may run as b x a to get the better one.
    fast(Contract) says whether the backend's contraction library takes the step; then
    it is one library call instead of the GEMM and any copies.
    Returns (plan, result labels, result memory order)."""
    sa, sb = set(la), set(lb)
    batch = [x for x in la if x in sb and x in keep]
    summed = [x for x in la if x in sb and x not in keep]
    if not summed:  # batch / outer product: elementwise on broadcast views
        result = tuple(x for x in oa if x in sb) + tuple(x for x in oa if x not in sb) \
            + tuple(x for x in ob if x not in sa)
        shape = tuple(size_of[x] for x in result)
        return Product(la, lb, result, shape, semiring), result, result
    # group orders: free labels in each operand's memory order; the shared groups in the
    # memory order of the larger operand, so that it is the one read in place
    big = oa if prod(size_of[x] for x in la) >= prod(size_of[x] for x in lb) else ob
    batch = tuple(x for x in big if x in batch)
    summed = tuple(x for x in big if x in summed)
    plan = _gemm(la, oa, lb, ob, batch, summed, size_of, semiring, False)
    if fast is not None and fast(d.Contract(tuple(la), tuple(lb), plan[1], semiring)):
        return LibraryContract(tuple(la), tuple(lb), plan[1]), plan[1], plan[1]
    if score is not None:
        swapped = _gemm(lb, ob, la, oa, batch, summed, size_of, semiring, True)
        if score(swapped[1]) > score(plan[1]):
            plan = swapped
    return plan[0], plan[1], plan[1]


def _outer_free(order, other, size_of) -> tuple:
    """The free labels (not in `other`) outside every shared label in an operand's memory
    order, when some free label also lies inside one: that free group cannot be one GEMM
    dimension without a copy, but its outer part can be the batch (the other operand
    reads it at stride 0, as a broadcast matmul's matrix). () otherwise."""
    order = [x for x in order if size_of[x] != 1]
    lead = []
    for x in order:
        if x in other:
            break
        lead.append(x)
    inner_free = any(x not in other for x in order[len(lead):])
    return tuple(lead) if lead and inner_free else ()


def _outer_summed(oa, ob, summed, size_of) -> tuple:
    """The summed labels outermost in both operands' memory orders, in the same order,
    when other summed labels lie past a free label in one of them: the summed group does
    not nest there (a copy), but its outer part can be a batch summed afterwards. ()
    otherwise."""
    na, nb = ([x for x in o if size_of[x] != 1] for o in (oa, ob))
    lead = []
    for x, y in zip(na, nb):
        if x != y or x not in summed:
            break
        lead.append(x)
    rest = [x for x in summed if x not in lead and size_of[x] != 1]
    return tuple(lead) if lead and rest else ()


@dataclass(frozen=True)
class GemmSum:
    """A Gemm batched over summed labels, then their sum (a Reduce). For dW = sum over
    (n, l) of g[n, c, l] x[n, k, l] (a convolution's weight gradient) the summed group
    nests in neither operand: one GEMM would copy both, and its k = n * l with a small
    c x k result leaves most of the GPU idle; per-n GEMMs into a (n, c, k) temporary and
    one sum do neither. Planned when the temporary is no larger than the larger operand."""
    gemm: Gemm
    reduce: Reduce

    def apply(self, be, a: Tensor, b: Tensor) -> Tensor:
        return self.reduce.apply(be, self.gemm.apply(be, a, b))


def _gemm(la, oa, lb, ob, batch, summed, size_of, semiring, swap):
    sa, sb = set(la), set(lb)
    free_a = tuple(x for x in oa if x not in sb)
    free_b = tuple(x for x in ob if x not in sa)
    broadcast, summed_batch = "", ()
    if not batch:  # a free group split by the summed one: its outer labels batch instead
        lead_a, lead_b = _outer_free(oa, sb, size_of), _outer_free(ob, sa, size_of)
        if lead_b and (not lead_a or prod(size_of[x] for x in lb) >= prod(size_of[x] for x in la)):
            batch, free_b, broadcast = lead_b, tuple(x for x in free_b if x not in lead_b), "a"
        elif lead_a:
            batch, free_a, broadcast = lead_a, tuple(x for x in free_a if x not in lead_a), "b"
    if not batch:  # a summed group split by free labels: its outer labels batch, then a sum
        lead = _outer_summed(oa, ob, summed, size_of)
        temp = prod(size_of[x] for x in lead + free_a + free_b)
        if lead and temp <= max(prod(size_of[x] for x in la), prod(size_of[x] for x in lb)):
            batch, summed_batch = lead, lead
            summed = tuple(x for x in summed if x not in lead)
    nb, m, k, n = (prod(size_of[x] for x in g) for g in (batch, free_a, summed, free_b))
    perm_a = tuple(la.index(x) for x in batch + free_a + summed if x in sa)
    perm_b = tuple(lb.index(x) for x in batch + summed + free_b if x in sb)
    result = batch + free_a + free_b
    groups = (len(batch), len(free_a), len(summed), len(free_b))
    gemm = Gemm(perm_a, perm_b, groups, (nb, m, k), (nb, k, n),
                tuple(size_of[x] for x in result), semiring, swap, broadcast)
    if not summed_batch:
        return gemm, result
    kept = free_a + free_b
    return GemmSum(gemm, plan_reduce(result, result, set(kept), size_of, semiring)), kept


def nesting_score(partner, keep, size_of):
    """score(order) for an operand that will meet `partner` (label set) with `keep` needed
    afterwards: how many of its groups there (batch, summed, free) sit together in memory,
    so that the GEMM reads it without a copy."""
    def score(order):
        mine = [x for x in order if (x in partner or x in keep) and size_of[x] != 1]
        kind = ["b" if x in partner and x in keep else "s" if x in partner else "f" for x in mine]
        runs = [k for i, k in enumerate(kind) if i == 0 or kind[i - 1] != k]
        return -(len(runs) - len(set(runs)))  # 0 when every group is one run
    return score
