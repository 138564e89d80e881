"""Reverse mode for einsum: each operand's gradient is itself an einsum.

For ``out[O] = sum prod_j x_j[L_j]`` and an output cotangent ``ct[O]``, the gradient of
operand i is the einsum of ``ct`` with the other operands onto the distinct labels of
``L_i`` that occur in ``O`` or in another operand (``U_i``), then placed into ``x_i``'s
shape by SemiringCore.AntiTrace(U_i -> L_i): a repeated label of ``L_i`` writes onto that
diagonal (zeros elsewhere), and a label only ``x_i`` holds (summed by the forward einsum)
is broadcast. An axis of ``x_i`` that NumPy broadcast from size 1 is summed back.

The convention is the transpose of the linear map (JAX's ``vjp``): no conjugation.
``conjugate=True`` conjugates the other operands instead (PyTorch's convention for
complex gradients); both are O(1) conjugation flags folded into the GEMMs.
"""
from __future__ import annotations

from typing import List, Tuple

from .. import _ops
from .._statistical import sum as sum_
from .._tensor import Tensor
from ..prims import descriptors as d
from .engine import _operands, _spec_of, run_spec
from .parse import Labels, Spec, _split, letter_names, parse


def vjp_specs(spec: Spec) -> List[Tuple[Spec, Labels]]:
    """For each operand i: the einsum (cotangent, others...) -> U_i, and L_i."""
    out = []
    for i, li in enumerate(spec.inputs):
        others = spec.inputs[:i] + spec.inputs[i + 1:]
        avail = set(spec.output).union(*others) if others else set(spec.output)
        u = tuple(x for x in dict.fromkeys(li) if x in avail)
        out.append((Spec((spec.output,) + others, u, spec.sizes), li))
    return out


def vjp_subscripts(spec: Spec) -> List[str]:
    """The gradient einsums in letters: 'ct,others->U_i' and, where AntiTrace is needed,
    '=> L_i' (e.g. 'ij,jk->ik' gives ['ik,jk->ij', 'ik,ij->jk'])."""
    res = []
    for g, li in vjp_specs(spec):
        s = g.subscripts()
        if g.output != li:
            names = letter_names(spec.inputs + (spec.output,))
            s += " => " + "".join(names[x] for x in li)
        res.append(s)
    return res


def _place(g: Tensor, u: Labels, li: Labels, spec: Spec, shape) -> Tensor:
    """AntiTrace(u -> li) at the global sizes, then sum axes broadcast from size 1."""
    size_of = spec.size_of
    full = tuple(size_of[x] for x in li)
    if u != li:
        g = Tensor(_ops.run(d.AntiTrace(u, li), [g], out_shape=full))
    axes = tuple(k for k, (n, m) in enumerate(zip(shape, full)) if n == 1 and m != 1)
    if axes:
        g = sum_(g, axis=axes, keepdims=True, dtype=g.dtype)
    return g


def einsum_vjp(*args, cotangent, optimize="auto", conjugate: bool = False):
    """Gradients of ``einsum(*args)`` for the output cotangent: a tuple with one Tensor per
    operand, each of its operand's shape (dtype: the einsum's result dtype).

    ``einsum_vjp("ij,jk->ik", a, b, cotangent=g)`` returns ``(g @ b.T, a.T @ g)``. The
    subscripts of each gradient einsum are ``hipfer.einsum_vjp_subscripts(subscripts)``.
    """
    if not args:
        raise TypeError("einsum_vjp() needs subscripts and at least one operand")
    raw = _operands(args)
    for k, t in enumerate(list(raw) + [cotangent]):
        if not isinstance(t, Tensor):
            what = "the cotangent" if k == len(raw) else f"operand {k}"
            raise TypeError(f"einsum_vjp: {what} is a {type(t).__name__}, not a hipfer Tensor")
    _ops.device_of(list(raw) + [cotangent])
    tensors, spec = _spec_of(args, tuple(tuple(t.shape) for t in raw))
    want = tuple(spec.size_of[x] for x in spec.output)
    if tuple(cotangent.shape) != want:
        raise ValueError(f"einsum_vjp: the cotangent has shape {tuple(cotangent.shape)}, "
                         f"the output {want}")
    grads = []
    for i, (g_spec, li) in enumerate(vjp_specs(spec)):
        others = tensors[:i] + tensors[i + 1:]
        if conjugate:
            others = [t.conj() for t in others]
        g = run_spec(g_spec, [cotangent] + list(others), optimize)
        grads.append(_place(g, g_spec.output, li, spec, tensors[i].shape))
    return tuple(grads)


def einsum_vjp_subscripts(subscripts: str) -> List[str]:
    """The gradient einsum of each operand of ``subscripts`` (explicit output needed for
    '...' networks only through shapes, so here: letters and '->' only)."""
    n = subscripts.split("->")[0].count(",") + 1
    ins, out = _split(subscripts, n)
    if any(Ellipsis in t for t in ins):
        raise ValueError("einsum_vjp_subscripts: '...' needs operand shapes; use einsum_vjp")
    shapes = [(1,) * len(t) for t in ins]
    return vjp_subscripts(parse(ins, out, shapes))
