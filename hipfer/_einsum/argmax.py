"""The winning term of a tropical einsum (``einsum(..., semiring=..., argmax=True)``).
Imported on first use (it needs the whole namespace).

For each output element the index of the term that won the max (or min): a flat C-order
index over the summed labels, in their order of first appearance in the subscripts
(ties: the smallest index; -1 when a summed label has size 0; 0 when nothing is summed).

Two operands whose summed labels are all shared run as one BatchedGemm with its argmax
output (the tropical GEMM kernel keeps the winning k next to each accumulator). Any other
network is evaluated as the broadcast product over all its labels, then arg-reduced --
exact, but its memory grows with the product of every label's size.
"""
from __future__ import annotations

from math import prod
from typing import Sequence, Tuple

from .. import _dtypes, _ops
from .._core import cast
from .._creation import full
from .._elementwise import add, multiply
from .._searching import argmax, argmin
from .._statistical import max as max_, min as min_
from .._tensor import Tensor
from .._views import broadcast_to, permute_dims, reshape
from ..prims import descriptors as d
from ..prims.semiring import Semiring
from .pairwise import InputView, _spread, as_3d
from .parse import Spec


def summed_labels(spec: Spec) -> Tuple[int, ...]:
    out = set(spec.output)
    return tuple(dict.fromkeys(x for t in spec.inputs for x in t if x not in out))


def einsum_argmax(spec: Spec, tensors: Sequence[Tensor], sr: Semiring):
    size_of = spec.size_of
    views = [InputView.make(t, size_of) for t in spec.inputs]
    tensors = [v.apply(t) if v.needed(t) else t for v, t in zip(views, tensors)]
    labels = [v.unique for v in views]
    summed = summed_labels(spec)
    if len(tensors) == 2 and all(x in labels[0] and x in labels[1] for x in summed):
        return _by_gemm(spec, tensors, labels, summed, sr)
    return _by_product(spec, tensors, labels, summed, sr)


def _by_gemm(spec, tensors, labels, summed, sr):
    size_of = spec.size_of
    la, lb = labels
    batch = tuple(x for x in spec.output if x in la and x in lb)
    free_a = tuple(x for x in la if x not in lb)
    free_b = tuple(x for x in lb if x not in la)
    nb, m, k, n = (prod(size_of[x] for x in g) for g in (batch, free_a, summed, free_b))
    a3 = as_3d(tensors[0], tuple(la.index(x) for x in batch + free_a + summed),
               (len(batch), len(free_a), len(summed)), (nb, m, k))
    b3 = as_3d(tensors[1], tuple(lb.index(x) for x in batch + summed + free_b),
               (len(batch), len(summed), len(free_b)), (nb, k, n))
    vals, idx = _ops.run(d.BatchedGemm(sr, argmax=True), [a3, b3])
    result = batch + free_a + free_b
    shape = tuple(size_of[x] for x in result)
    return _to_output(spec, result, Tensor(vals.reshape(shape)), Tensor(idx.reshape(shape)))


def _by_product(spec, tensors, labels, summed, sr):
    size_of = spec.size_of
    result = spec.output + summed
    combine = add if sr.mul == "add" else multiply
    total = None
    for t, lt in zip(tensors, labels):
        v = _spread(t, lt, result)
        total = v if total is None else combine(total, v)
    shape = tuple(size_of[x] for x in spec.output)
    k = prod(size_of[x] for x in summed)
    dev, dt = tensors[0].device, tensors[0].dtype
    if k == 0:
        return (full(shape, sr.zero_for(dt), dtype=dt, device=dev),
                full(shape, -1, dtype="int64", device=dev))
    total = reshape(broadcast_to(total, shape + tuple(size_of[x] for x in summed)), shape + (k,))
    pick, best = (argmax, max_) if sr.add == "max" else (argmin, min_)
    return best(total, axis=-1), cast(pick(total, axis=-1), _dtypes.int64)


def _to_output(spec, result, vals, idx):
    if result == spec.output:
        return vals, idx
    perm = [result.index(x) for x in spec.output]
    return permute_dims(vals, perm), permute_dims(idx, perm)
