"""Contraction order: which pairs of operands to contract, in which order.

Cost model (the one opt_einsum and numpy.einsum_path use, so paths compare directly):
contracting two tensors costs ``size(all labels of both) * (2 if a label is summed
away else 1)``; a path costs the sum of its steps. ``memory_limit`` bounds the size of
every intermediate (not the final output).

* ``greedy``: repeatedly contract the pair that shrinks the network most (result size
  minus the sizes of the two operands), among pairs that share a label; outer products
  only when no pair shares one. Any number of operands.
* ``optimal``: exact dynamic programming over subsets of operands (``best[S]`` = cheapest
  way to reduce the operands in S to one tensor). 3**n / 2 splits, so for up to
  ``OPTIMAL_MAX`` operands; splits that share no label are tried only where no other
  split exists (a disconnected subset) or the network is small.
* ``auto``: optimal up to ``AUTO_OPTIMAL_MAX`` operands, greedy beyond.

Paths are in NumPy's linear form: each step lists positions in the current operand list;
those operands are removed and the result is appended at the end.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import inf, prod
from typing import Dict, List, Optional, Sequence, Tuple

from .parse import Labels, Spec, letter_names

OPTIMAL_MAX = 16
AUTO_OPTIMAL_MAX = 12
_OUTER_ALWAYS_MAX = 6   # below this many operands the DP also tries outer products


class _Sizes:
    """size(mask) for label bitmasks: a product table per 8 labels."""

    def __init__(self, sizes: Sequence[int]):
        self.tables = []
        for c in range(0, len(sizes), 8):
            chunk = sizes[c:c + 8]
            t = [1] * 256
            for m in range(1, 256):
                low = (m & -m).bit_length() - 1
                t[m] = t[m & (m - 1)] * (chunk[low] if low < len(chunk) else 1)
            self.tables.append(t)

    def __call__(self, mask: int) -> int:
        r = 1
        for t in self.tables:
            if mask & 255:
                r *= t[mask & 255]
            mask >>= 8
            if not mask:
                break
        return r


class Network:
    """Operands as label bitmasks (bit b = the b-th label), plus the output mask."""

    def __init__(self, inputs: Sequence[Labels], output: Labels, size_of: Dict[int, int]):
        labels = sorted({x for t in inputs for x in t})
        self.bit = {x: 1 << b for b, x in enumerate(labels)}
        self.labels = labels
        self.masks = [self.mask(t) for t in inputs]
        self.out = self.mask(output)
        self.size = _Sizes([size_of[x] for x in labels])

    def mask(self, labels) -> int:
        m = 0
        for x in labels:
            m |= self.bit[x]
        return m

    def pair_cost(self, la: int, lb: int, keep: int) -> int:
        both = la | lb
        return self.size(both) * (2 if both & ~keep else 1)


# ------------------------------------------------------------------------ greedy
def greedy(net: Network, memory_limit: Optional[int] = None) -> List[Tuple[int, ...]]:
    live: List[int] = list(net.masks)
    counts: Dict[int, int] = {}
    for m in live + [net.out]:
        for b in _bits(m):
            counts[b] = counts.get(b, 0) + 1
    path = []
    while len(live) > 1:
        best = None
        for i in range(len(live)):
            for j in range(i + 1, len(live)):
                li, lj = live[i], live[j]
                if not li & lj:
                    continue
                keep = _kept(li, lj, counts)
                rsize = net.size(keep)
                if memory_limit is not None and len(live) > 2 and rsize > memory_limit:
                    continue
                key = (rsize - net.size(li) - net.size(lj), net.pair_cost(li, lj, keep), i, j)
                if best is None or key < best[0]:
                    best = (key, i, j, keep)
        if best is None:  # no pair shares a label: the two smallest, as an outer product
            order = sorted(range(len(live)), key=lambda k: (net.size(live[k]), k))
            i, j = sorted(order[:2])
            keep = _kept(live[i], live[j], counts)
        else:
            _, i, j, keep = best
        for m in (live[i], live[j]):
            for b in _bits(m):
                counts[b] -= 1
        for b in _bits(keep):
            counts[b] += 1
        path.append((i, j))
        del live[j], live[i]
        live.append(keep)
    return path


def _bits(m: int):
    while m:
        low = m & -m
        yield low
        m ^= low


def _kept(li: int, lj: int, counts: Dict[int, int]) -> int:
    """Labels of li|lj still needed by another operand or the output."""
    keep = 0
    for b in _bits(li | lj):
        if counts[b] - (1 if li & b else 0) - (1 if lj & b else 0) > 0:
            keep |= b
    return keep


# ----------------------------------------------------------------------- optimal
def optimal(net: Network, memory_limit: Optional[int] = None) -> List[Tuple[int, ...]]:
    n = len(net.masks)
    if n > OPTIMAL_MAX:
        raise ValueError(f"einsum: optimize='optimal' searches 3**n orders and takes at most "
                         f"{OPTIMAL_MAX} operands, got {n}; use 'greedy'")
    if n == 1:
        return [(0,)]
    full = (1 << n) - 1
    union = [0] * (full + 1)
    for s in range(1, full + 1):
        low = s & -s
        union[s] = union[s ^ low] | net.masks[low.bit_length() - 1]
    legs = [0] * (full + 1)
    for s in range(1, full + 1):
        if s & (s - 1):
            legs[s] = union[s] & (union[full ^ s] | net.out)
        else:
            legs[s] = union[s]
    size = net.size
    best = [inf] * (full + 1)
    split = [0] * (full + 1)
    for i in range(n):
        best[1 << i] = 0
    adj = [0] * n  # operands sharing a label with operand i
    for i in range(n):
        for j in range(n):
            if i != j and net.masks[i] & net.masks[j]:
                adj[i] |= 1 << j
    outer_always = n <= _OUTER_ALWAYS_MAX
    for s in range(3, full + 1):
        if not s & (s - 1):
            continue
        keep = legs[s]
        if memory_limit is not None and s != full and size(keep) > memory_limit:
            continue
        low = s & -s
        rest = s ^ low
        # a connected subset is split into two parts that share a label; a disconnected
        # one needs an outer product somewhere, so every split is tried there
        outer = outer_always or not _connected(s, low, adj)
        b_s, a_s = inf, 0
        sub = rest
        while True:
            a = sub | low
            if a != s:
                cost = best[a] + best[s ^ a]
                if cost < b_s:
                    la, lb = legs[a], legs[s ^ a]
                    if outer or la & lb:
                        both = la | lb
                        cost += size(both) * (2 if both & ~keep else 1)
                        if cost < b_s:
                            b_s, a_s = cost, a
            if not sub:
                break
            sub = (sub - 1) & rest
        best[s], split[s] = b_s, a_s
    if best[full] == inf:  # the memory limit excludes every order: ignore it
        return optimal(net, None)
    return _tree_to_path(split, full, n)


def _connected(s: int, low: int, adj: List[int]) -> bool:
    reach, frontier = low, low
    while frontier:
        nxt = 0
        for b in _bits(frontier):
            nxt |= adj[b.bit_length() - 1]
        frontier = nxt & s & ~reach
        reach |= frontier
    return reach == s


def _tree_to_path(split: List[int], full: int, n: int) -> List[Tuple[int, ...]]:
    """Post-order walk of the split tree as a linear path."""
    steps: List[Tuple[int, int]] = []  # pairs of subset masks, in execution order

    def walk(s: int):
        if not s & (s - 1):
            return
        a = split[s]
        walk(a)
        walk(s ^ a)
        steps.append((a, s ^ a))

    walk(full)
    live = [1 << i for i in range(n)]
    path = []
    for a, b in steps:
        i, j = sorted((live.index(a), live.index(b)))
        path.append((i, j))
        del live[j], live[i]
        live.append(a | b)
    return path


# ------------------------------------------------------------------ path handling
def check_path(path, n: int) -> List[Tuple[int, ...]]:
    """An explicit path (NumPy's form, optionally led by 'einsum_path') as tuples."""
    steps = list(path)
    if steps and isinstance(steps[0], str):
        if steps[0] != "einsum_path":
            raise ValueError(f"einsum: an explicit path starts with 'einsum_path' or a tuple, "
                             f"got {steps[0]!r}")
        steps = steps[1:]
    out, live = [], n
    for st in steps:
        try:
            t = tuple(int(i) for i in st)
        except (TypeError, ValueError):
            raise ValueError(f"einsum: path step {st!r} is not a tuple of operand positions") from None
        if not t or len(set(t)) != len(t) or any(not 0 <= i < live for i in t):
            raise ValueError(f"einsum: path step {st!r} does not name distinct operands "
                             f"among the {live} present")
        out.append(t)
        live -= len(t) - 1
    if live != 1:
        raise ValueError(f"einsum: the path leaves {live} operands, not one")
    return out


def find_path(spec: Spec, optimize, memory_limit: Optional[int]) -> List[Tuple[int, ...]]:
    n = len(spec.inputs)
    net = Network(spec.inputs, spec.output, spec.size_of)
    if optimize is True:
        optimize = "auto"
    if isinstance(optimize, (list, tuple)) and not isinstance(optimize, str):
        return check_path(optimize, n)
    if n == 1:
        return [(0,)]
    if optimize is False or optimize is None:
        return [(0, 1)] + [(0, 1)] * (n - 2)  # left to right
    if optimize == "auto":
        optimize = "optimal" if n <= AUTO_OPTIMAL_MAX else "greedy"
    if optimize == "greedy":
        return greedy(net, memory_limit)
    if optimize == "optimal":
        return optimal(net, memory_limit)
    raise ValueError(f"einsum: optimize must be False, True, 'greedy', 'optimal', 'auto' or "
                     f"a path, got {optimize!r}")


# ------------------------------------------------------------------------ report
@dataclass(frozen=True)
class Step:
    """One contraction: the operand positions, their labels, the result's labels and cost."""
    positions: Tuple[int, ...]
    operands: Tuple[Labels, ...]
    result: Labels
    flops: int


def steps_of(spec: Spec, path) -> List[Step]:
    """The path's steps with the labels each result keeps. A pairwise result lists its
    labels as the pairwise engine produces them; the last step gives the output."""
    live: List[Labels] = list(spec.inputs)
    size_of = spec.size_of
    out = []
    for k, pos in enumerate(path):
        ops = tuple(live[i] for i in pos)
        rest = [live[i] for i in range(len(live)) if i not in pos]
        if k == len(path) - 1:
            result = spec.output
        else:
            needed = {x for t in rest for x in t} | set(spec.output)
            result = tuple(dict.fromkeys(x for t in ops for x in t if x in needed))
        both = {x for t in ops for x in t}
        summed = both - set(result)
        flops = prod(size_of[x] for x in both) * (max(1, len(ops) - 1) + (1 if summed else 0))
        out.append(Step(tuple(pos), ops, result, flops))
        live = rest + [result]
    return out


def report(spec: Spec, steps: List[Step]) -> str:
    """numpy.einsum_path's printout for this path."""
    size_of = spec.size_of
    names = letter_names(spec.inputs + (spec.output,))

    def word(t):
        return "".join(names[x] for x in t)

    all_labels = {x for t in spec.inputs for x in t}
    n = len(spec.inputs)
    naive = prod(size_of[x] for x in all_labels) * (max(1, n - 1) + (1 if all_labels - set(spec.output) else 0))
    opt = sum(s.flops for s in steps) or 1
    largest = max([prod(size_of[x] for x in s.result) for s in steps] or [1])
    lines = [f"  Complete contraction:  {spec.subscripts()}",
             f"         Naive scaling:  {len(all_labels)}",
             f"     Optimized scaling:  {max([len({x for t in s.operands for x in t}) for s in steps] or [0])}",
             f"      Naive FLOP count:  {naive:.3e}",
             f"  Optimized FLOP count:  {opt:.3e}",
             f"   Theoretical speedup:  {naive / opt:.3f}",
             f"  Largest intermediate:  {largest:.3e} elements",
             "-" * 74,
             f"{'scaling':>7}{'current':>24}{'remaining':>43}",
             "-" * 74]
    live = [word(t) for t in spec.inputs]
    for s in steps:
        cur = ",".join(word(t) for t in s.operands) + "->" + word(s.result)
        live = [w for i, w in enumerate(live) if i not in s.positions] + [word(s.result)]
        remaining = ",".join(live) + "->" + word(spec.output)
        scaling = len({x for t in s.operands for x in t})
        lines.append(f"{scaling:>4}{cur:>27} {remaining:>42}")  # a space even when long
    return "\n".join(lines)
