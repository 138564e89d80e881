"""The einsum engine: parse (parse.py) -> contraction path (path.py) -> pairwise plans
(pairwise.py), and the public einsum / einsum_path.

A call is planned once per (subscripts, shapes, dtypes, input layouts, optimize,
semiring): the plan -- path, input views, and every pairwise step's permutations and
prims descriptors -- is cached, so a repeated call only replays it.
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

from .. import _dtypes
from .._core import cast
from .._elementwise import not_equal
from .._ops import device_of
from .._tensor import Tensor
from .._views import permute_dims
from ..prims.registry import contraction_library, get_backend
from ..prims.semiring import Semiring
from . import parse as _parse, path as _path
from .argmax import einsum_argmax
from .pairwise import InputView, layout_order, nesting_score, plan_pair, plan_reduce

_CACHE_SIZE = 512


def as_semiring(semiring) -> Semiring:
    if isinstance(semiring, Semiring):
        return semiring
    if isinstance(semiring, str):
        for s in Semiring:
            if semiring.lower() in (s.cname, s.name.lower()):
                return s
    raise ValueError(f"einsum: unknown semiring {semiring!r}; use one of "
                     f"{[s.cname for s in Semiring]} or a hipfer.prims.semiring.Semiring")


# ------------------------------------------------------------------------ the plan
@dataclass(frozen=True)
class _Step:
    positions: Tuple[int, ...]
    pre: Tuple[object, ...]        # per operand: a Reduce of its lone labels, or None
    pairs: Tuple[object, ...]      # Product | Gemm, folded left to right


@dataclass(frozen=True)
class _Program:
    views: Tuple[Optional[InputView], ...]
    steps: Tuple[_Step, ...]
    final_perm: Optional[Tuple[int, ...]]

    def run(self, tensors: List[Tensor]) -> Tensor:
        be = get_backend(tensors[0].device)
        live = [v.apply(t) if v is not None else t for v, t in zip(self.views, tensors)]
        for st in self.steps:
            ops = [live[i] for i in st.positions]
            for i in sorted(st.positions, reverse=True):
                del live[i]
            ops = [r.apply(be, t) if r is not None else t for r, t in zip(st.pre, ops)]
            cur = ops[0]
            for pair, nxt in zip(st.pairs, ops[1:]):
                cur = pair.apply(be, cur, nxt)
            live.append(cur)
        (res,) = live
        if self.final_perm is not None:
            res = permute_dims(res, self.final_perm)
        return res


def _consumers(spec: _parse.Spec, path) -> List[Optional[tuple]]:
    """For each step: (partner labels, labels needed after) of the pairwise step that
    consumes its result, or None (the last step, or a step of 1 or 3+ operands)."""
    live = [(set(t), None) for t in spec.inputs]  # (labels, producing step)
    out = [None] * len(path)
    for s, pos in enumerate(path):
        group = [live[i] for i in pos]
        live = [e for i, e in enumerate(live) if i not in pos]
        later = set(spec.output).union(*(labels for labels, _ in live))
        if len(pos) == 2:
            for k in (0, 1):
                if group[k][1] is not None:
                    out[group[k][1]] = (group[1 - k][0], later)
        live.append((set().union(*(g for g, _ in group)) & later, s))
    return out


def _plan(spec: _parse.Spec, path, tensors: Sequence[Tensor], semiring: Semiring) -> _Program:
    size_of = spec.size_of
    views, live = [], []  # live: (labels, memory order) of each operand
    for labels, t in zip(spec.inputs, tensors):
        v = InputView.make(labels, size_of)
        if v.needed(t):
            views.append(v)
            strides = v.apply(t).strides
        else:
            views.append(None)
            strides = t.strides
        live.append((v.unique, layout_order(v.unique, strides)))
    consumer = _consumers(spec, path)
    fast = None
    if contraction_library() is not None:  # hipTENSOR / cuTENSOR loaded: ask the backend
        be = get_backend(tensors[0].device)
        dts = (tensors[0].dtype,) * 2
        fast = lambda desc: be.has_fast_path_support(desc, dts)  # noqa: E731
    steps = []
    for s, pos in enumerate(path):
        group = [live[i] for i in pos]
        live = [e for i, e in enumerate(live) if i not in pos]
        later = {x for labels, _ in live for x in labels} | set(spec.output)
        pre, pairs = [], []
        for k, (labels, order) in enumerate(group):  # lone labels are reduced first
            others = later | {x for j, (lj, _) in enumerate(group) if j != k for x in lj}
            r = plan_reduce(labels, order, others, size_of, semiring)
            pre.append(r)
            if r is not None:
                group[k] = (r.modes_c, r.modes_c)
        cur = group[0]
        for k in range(1, len(group)):
            keep = later | {x for lj, _ in group[k + 1:] for x in lj}
            nxt = group[k]
            score = None
            if k == len(group) - 1 and consumer[s] is not None:
                score = nesting_score(*consumer[s], size_of)
            pair, labels, order = plan_pair(cur[0], cur[1], nxt[0], nxt[1], keep, size_of,
                                            semiring, score, fast)
            pairs.append(pair)
            cur = (labels, order)
        steps.append(_Step(tuple(pos), tuple(pre), tuple(pairs)))
        live.append(cur)
    (labels, _), = live
    perm = tuple(labels.index(x) for x in spec.output)
    return _Program(tuple(views), tuple(steps), None if perm == tuple(range(len(perm))) else perm)


# ------------------------------------------------------------------------ caches
class _LRU(OrderedDict):
    def get_or(self, key, make):
        if key in self:
            self.move_to_end(key)
            return self[key]
        value = self[key] = make()
        if len(self) > _CACHE_SIZE:
            self.popitem(last=False)
        return value


_SPECS = _LRU()
_PROGRAMS = _LRU()


def _hashable_optimize(optimize):
    if isinstance(optimize, (list, tuple)) and not isinstance(optimize, str):
        return tuple(x if isinstance(x, str) else tuple(x) for x in optimize)
    if not isinstance(optimize, (bool, str)) and optimize is not None:
        raise ValueError(f"einsum: optimize must be False, True, 'greedy', 'optimal', "
                         f"'auto' or a path, got {optimize!r}")
    return optimize


def _spec_of(args, shapes):
    """(operands, Spec); a subscripts string is parsed once per (string, shapes)."""
    if args and isinstance(args[0], str):
        key = (args[0], shapes)
        spec = _SPECS.get(key)
        if spec is None:
            _, ins, out = _parse.parse_args(args)
            spec = _SPECS.get_or(key, lambda: _parse.parse(ins, out, shapes))
        return list(args[1:]), spec
    ops, ins, out = _parse.parse_args(args)
    key = (tuple(tuple(x) for x in ins), None if out is None else tuple(out), tuple(shapes))
    return ops, _SPECS.get_or(key, lambda: _parse.parse(ins, out, shapes))


def _operands(args):
    """The operand list of einsum's positional arguments, in either notation."""
    if args and isinstance(args[0], str):
        return list(args[1:])
    return list(args[0::2]) if len(args) % 2 == 0 else list(args[:-1][0::2])


# ------------------------------------------------------------------------ public
def einsum(*args, optimize="auto", semiring=Semiring.STANDARD, memory_limit=None,
           argmax=False):
    """Einstein summation over hipfer Tensors, NumPy's notation (see numpy.einsum).

    ``einsum("ij,jk->ik", a, b)`` or interleaved ``einsum(a, [0, 1], b, [1, 2], [0, 2])``.
    ``optimize``: 'auto' (default: exact search up to 12 operands, greedy beyond),
    'optimal', 'greedy', True (= 'auto'), False (left to right) or an explicit path as
    ``einsum_path`` returns. ``memory_limit`` caps the elements of any intermediate.
    ``semiring``: 'standard' (+, x), or for real dtypes 'max_plus', 'min_plus', 'max_mul'
    (sum replaced by max/min, product by + or x). The result may be a view of an operand
    when nothing is summed (as in NumPy).
    ``argmax=True`` (tropical semirings): return ``(values, index)``, index the winning
    term of each output element as a flat C-order int64 index over the summed labels in
    their order of first appearance (ties: smallest; -1 when there is no term); see
    hipfer/_einsum/argmax.py.
    """
    if not args:
        raise TypeError("einsum() needs subscripts and at least one operand")
    raw = _operands(args)
    if not raw:
        raise ValueError("einsum: at least one operand is needed")
    for k, t in enumerate(raw):
        if not isinstance(t, Tensor):
            raise TypeError(f"einsum: operand {k} is a {type(t).__name__}, not a hipfer Tensor")
    device_of(raw)  # one device for all, or a clear error
    shapes = tuple(tuple(t.shape) for t in raw)
    tensors, spec = _spec_of(args, shapes)
    sr = as_semiring(semiring)
    if argmax:
        if not sr.is_tropical:
            raise ValueError("einsum: argmax=True needs a tropical semiring "
                             "('max_plus', 'min_plus' or 'max_mul')")
        return einsum_argmax(spec, _promote(tensors, sr)[0], sr)
    return run_spec(spec, tensors, optimize, memory_limit, sr)


def _promote(tensors, sr):
    """(tensors cast to the compute dtype, result dtype): bool counts in int64."""
    dt = _dtypes.result_type(*tensors)
    compute = dt
    if sr.is_tropical:
        if dt.kind not in "iuf":
            raise TypeError(f"einsum: the {sr.cname} semiring takes real (integer or float) "
                            f"operands, not {dt}")
    elif dt.kind == "b":
        compute = _dtypes.int64  # count the products; != 0 gives NumPy's bool einsum
    return [cast(t, compute) for t in tensors], dt


def run_spec(spec: _parse.Spec, tensors: Sequence[Tensor], optimize="auto",
             memory_limit=None, sr: Semiring = Semiring.STANDARD) -> Tensor:
    """Evaluate a parsed einsum on Tensors (one device): promote, plan (cached), run."""
    tensors, dt = _promote(tensors, sr)
    opt = _hashable_optimize(optimize)
    key = (spec, tensors[0].dtype, tuple(t.strides for t in tensors), opt, memory_limit, sr,
           tensors[0].device, contraction_library())

    def make():
        return _plan(spec, _path.find_path(spec, opt, memory_limit), tensors, sr)

    res = _PROGRAMS.get_or(key, make).run(tensors)
    if dt.kind == "b":
        res = not_equal(res, 0)
    return res


def contract(tensors: Sequence[Tensor], label_lists, out_list, sr=Semiring.STANDARD) -> Tensor:
    """einsum from label lists (integers, at most one Ellipsis each): how matmul,
    tensordot and vecdot enter the engine without writing subscripts."""
    shapes = tuple(tuple(t.shape) for t in tensors)
    key = (tuple(tuple(x) for x in label_lists), tuple(out_list), shapes)
    spec = _SPECS.get_or(key, lambda: _parse.parse([list(x) for x in label_lists],
                                                   list(out_list), shapes))
    return run_spec(spec, tensors, "auto", None, sr)


def einsum_path(*args, optimize="greedy", memory_limit=None):
    """(path, report) as numpy.einsum_path: the path starts with 'einsum_path'; operands
    may be hipfer Tensors or anything with a ``shape``. ``optimize`` may also be a
    (strategy, memory_limit) pair, as in NumPy."""
    if isinstance(optimize, tuple) and len(optimize) == 2 and isinstance(optimize[0], str):
        optimize, memory_limit = optimize
    raw = _operands(args)
    for k, t in enumerate(raw):
        if not hasattr(t, "shape"):
            raise TypeError(f"einsum_path: operand {k} ({type(t).__name__}) has no shape")
    _, spec = _spec_of(args, tuple(tuple(t.shape) for t in raw))
    path = _path.find_path(spec, _hashable_optimize(optimize), memory_limit)
    steps = _path.steps_of(spec, path)
    return ["einsum_path", *path], _path.report(spec, steps)
