"""Parse einsum's two notations into one form: integer labels per operand.

* ``"ij,jk->ik"`` (NumPy's letters, ``...`` for broadcast axes, implicit output when
  ``->`` is missing: the labels seen once, in alphabetical order, after the ``...`` axes);
* the interleaved form ``einsum(a, [0, 1], b, [1, 2], [0, 2])`` (non-negative integers
  or ``Ellipsis`` as labels), for networks with more labels than letters.

A letter is labelled by its code point, an integer label by itself, and the k-th
broadcast axis from the right by ``-k``: so labels sort as NumPy orders an implicit
output (broadcast axes first, then letters in ASCII order).

Label sizes follow NumPy: a label's size is the same in every operand, except that a
size of 1 broadcasts against the others.
"""
from __future__ import annotations

from dataclasses import dataclass
import operator
from typing import Dict, List, Sequence, Tuple

Labels = Tuple[int, ...]


@dataclass(frozen=True)
class Spec:
    """A parsed einsum: each operand's labels (broadcast axes as -k), the output's labels,
    and each label's size (after size-1 broadcasting)."""
    inputs: Tuple[Labels, ...]
    output: Labels
    sizes: Tuple[Tuple[int, int], ...]  # sorted (label, size) pairs: hashable

    @property
    def size_of(self) -> Dict[int, int]:
        return dict(self.sizes)

    def subscripts(self) -> str:
        """The network written with letters (for reports and error messages)."""
        names = letter_names(self.inputs + (self.output,))
        ins = ",".join("".join(names[x] for x in t) for t in self.inputs)
        return ins + "->" + "".join(names[x] for x in self.output)


def letter_names(label_lists) -> Dict[int, str]:
    """A printable single character for every label: letters keep their own."""
    labels = sorted({x for t in label_lists for x in t})
    names, taken = {}, set()
    for x in labels:
        if x >= 0 and x < 0x110000 and chr(x).isalpha():
            names[x] = chr(x)
            taken.add(chr(x))
    spare = (chr(c) for c in range(0xC0, 0x110000) if chr(c).isalpha() and chr(c) not in taken)
    for x in labels:
        if x not in names:
            names[x] = next(spare)
    return names


# ------------------------------------------------------------------ the string form
def _letters(term: str, where: str) -> List:
    """One subscript term as a list of code points and (at most one) Ellipsis."""
    out: List = []
    i = 0
    while i < len(term):
        c = term[i]
        if c == ".":
            if term[i:i + 3] != "...":
                raise ValueError(f"einsum: {where} {term!r} has a '.' that is not part of '...'")
            if Ellipsis in out:
                raise ValueError(f"einsum: {where} {term!r} has more than one '...'")
            out.append(Ellipsis)
            i += 3
            continue
        if not (c.isascii() and c.isalpha()):
            raise ValueError(f"einsum: {where} {term!r} has the character {c!r}; "
                             "labels are the letters a-z and A-Z")
        out.append(ord(c))
        i += 1
    return out


def _split(subscripts: str, n_ops: int):
    s = subscripts.replace(" ", "")
    if s.count("->") > 1:
        raise ValueError(f"einsum: subscripts {subscripts!r} have more than one '->'")
    if "->" in s:
        lhs, rhs = s.split("->")
        if "-" in rhs or ">" in rhs or "-" in lhs or ">" in lhs:
            raise ValueError(f"einsum: subscripts {subscripts!r} have a stray '-' or '>'")
    else:
        if "-" in s or ">" in s:
            raise ValueError(f"einsum: subscripts {subscripts!r} have a stray '-' or '>'")
        lhs, rhs = s, None
    terms = lhs.split(",")
    if len(terms) != n_ops:
        raise ValueError(f"einsum: subscripts {subscripts!r} name {len(terms)} operand(s) "
                         f"but {n_ops} were given")
    ins = [_letters(t, f"operand {k}'s subscripts") for k, t in enumerate(terms)]
    out = None if rhs is None else _letters(rhs, "the output subscripts")
    return ins, out


# ------------------------------------------------------------- the interleaved form
def _int_labels(sub, where: str) -> List:
    if not isinstance(sub, (list, tuple)):
        raise TypeError(f"einsum: {where} must be a list of labels, got a {type(sub).__name__} "
                        "(the first argument is the subscripts string or an operand, and each "
                        "operand is followed by its labels)")
    items = list(sub)
    out: List = []
    for x in items:
        if x is Ellipsis:
            if Ellipsis in out:
                raise ValueError(f"einsum: {where} {sub!r} has more than one Ellipsis")
            out.append(Ellipsis)
            continue
        try:
            v = operator.index(x)
        except TypeError:
            shown = repr(x) if isinstance(x, (str, float, complex, type(None))) else type(x).__name__
            raise TypeError(f"einsum: {where} has the label {shown}; interleaved labels are "
                            "non-negative integers or Ellipsis") from None
        if v < 0:
            raise ValueError(f"einsum: {where} has the negative label {v}")
        out.append(v)
    return out


def split_interleaved(args: Sequence):
    """(operands, input label lists, output label list or None) of einsum(a, la, b, lb, [out])."""
    args = list(args)
    out = None
    if len(args) % 2 == 1:
        out = _int_labels(args.pop(), "the output labels")
    ops, ins = args[0::2], [_int_labels(s, f"operand {k}'s labels") for k, s in enumerate(args[1::2])]
    return ops, ins, out


# --------------------------------------------------------------------- both forms
def _expand(lists, shapes) -> Tuple[List[Labels], int]:
    """Replace each operand's Ellipsis by its broadcast labels (-k for the k-th from the
    right); returns the label tuples and the widest broadcast rank."""
    out, width = [], 0
    for k, (labels, shape) in enumerate(zip(lists, shapes)):
        explicit = [x for x in labels if x is not Ellipsis]
        if Ellipsis not in labels:
            if len(explicit) != len(shape):
                raise ValueError(f"einsum: operand {k} has {len(shape)} axes (shape {shape}) "
                                 f"but {len(explicit)} labels")
            out.append(tuple(explicit))
            continue
        e = len(shape) - len(explicit)
        if e < 0:
            raise ValueError(f"einsum: operand {k} has {len(shape)} axes (shape {shape}) "
                             f"but {len(explicit)} labels besides '...'")
        width = max(width, e)
        pos = labels.index(Ellipsis)
        out.append(tuple(labels[:pos]) + tuple(range(-e, 0)) + tuple(labels[pos + 1:]))
    return out, width


def parse(lists, out_list, shapes: Sequence[Tuple[int, ...]]) -> Spec:
    """Spec from label lists (code points / integers / Ellipsis) and operand shapes."""
    if not lists:
        raise ValueError("einsum: at least one operand is needed")
    inputs, width = _expand(lists, shapes)
    counts: Dict[int, int] = {}
    for t in inputs:
        for x in t:
            counts[x] = counts.get(x, 0) + 1
    if out_list is None:  # implicit: broadcast axes, then the labels seen once, sorted
        output = tuple(range(-width, 0)) + tuple(sorted(x for x, c in counts.items()
                                                        if c == 1 and x >= 0))
    else:
        if Ellipsis in out_list:
            pos = out_list.index(Ellipsis)
            output = tuple(out_list[:pos]) + tuple(range(-width, 0)) + tuple(out_list[pos + 1:])
        else:
            if width:
                raise ValueError("einsum: the operands have broadcast ('...') axes but the "
                                 "output subscripts have no '...' to put them in")
            output = tuple(out_list)
    names = letter_names(inputs + [output])
    seen = set()
    for x in output:
        if x in seen:
            raise ValueError(f"einsum: output label {names[x]!r} appears more than once")
        seen.add(x)
        if x not in counts:
            raise ValueError(f"einsum: output label {names[x]!r} is not in any operand")
    sizes: Dict[int, int] = {}
    owner: Dict[int, int] = {}
    for k, (t, shape) in enumerate(zip(inputs, shapes)):
        for x in set(t):  # a repeated label takes a diagonal: its axes must agree
            ns = {n for y, n in zip(t, shape) if y == x}
            if len(ns) > 1:
                raise ValueError(f"einsum: label {names[x]!r} is repeated in operand {k} "
                                 f"with different sizes {sorted(ns)}")
        for x, n in zip(t, shape):
            if x not in sizes or (sizes[x] == 1 and n != 1):
                sizes[x], owner[x] = n, k
            elif n != sizes[x] and n != 1:
                what = "broadcast axis" if x < 0 else f"label {names[x]!r}"
                raise ValueError(f"einsum: {what} has size {sizes[x]} in operand {owner[x]} "
                                 f"but {n} in operand {k}")
    return Spec(tuple(inputs), output, tuple(sorted(sizes.items())))


def parse_args(args: Sequence):
    """(operands, Spec-less label lists, output list) from einsum's positional arguments."""
    if not args:
        raise TypeError("einsum() needs subscripts and at least one operand")
    if isinstance(args[0], str):
        ops = list(args[1:])
        if not ops:
            raise ValueError("einsum: at least one operand is needed after the subscripts")
        ins, out = _split(args[0], len(ops))
        return ops, ins, out
    return split_interleaved(args)
