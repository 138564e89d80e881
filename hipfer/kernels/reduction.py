"""Reductions on the GPU: how an operand maps onto the kernels of reduction.cuh, and the
name expressions of every instantiation. Pure Python (no CuPy), shared by the CuPy
backend and the offline kernel dump, so the planning is testable on any machine.

A reduction over labelled axes becomes M outputs x K reduced elements. The kept axes keep
the output order (modes_c); the reduced axes may be visited in any order, so they are
sorted by stride (smallest innermost, broadcast ones outermost) and merged where
contiguous. Repeated labels
(Trace) first become one axis whose stride is the sum of the repeated axes' strides.

Launch geometry (block size, splits of K) comes from the shapes and strides only, never
from the device or from timing: a given call sums in the same order every time.

Paths (choose_path / plan_reduce):
  'vec'    -- one reduced run of stride 1 (a full reduction of a contiguous operand, the
              last axis of a C-contiguous one): red_vec reads 16-byte packs, 128 bytes in
              flight per thread; rows up to VEC_WARP_K elements take up to 32 lanes (a
              power of two; each lane folds a whole group of GROUP elements at least,
              several rows per block), longer ones a block of VEC_BLOCK threads per
              (row, split);
  'block'  -- other layouts whose reduced elements are neighbours (or M == 1);
  'thread' -- one thread per output when K is small or the outputs are the neighbours.
Whether red_vec's packs load as vectors (the pointer, the kept strides and the split
starts all 16-byte aligned) is decided at run time and does not change the order.
Measured on an H200 (2026-11-30, fraction of the 4177 GB/s copy bandwidth): sum of 2^26
float32 0.92, of 2^25 float64 0.93, sum / max over the last axis of 8192x8192 float32
0.98 / 0.97 (vec path); sum over axis 0 of it 0.80 (thread path).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Hashable, Optional, Sequence, Tuple

import numpy as np

from ..prims.infer import real_dtype
from ..prims.optable import ReduceOp, UnaryOp
from . import ctype, dtypes_of_kinds

FILE = "reduction.cuh"

#: bytes per split partial in the workspace (HF_RED_ACC_BYTES in reduction.cuh)
ACC_BYTES = 32
#: below this many reduced elements one thread per output beats one block per output
SMALL_K = 64
#: at most this many splits of K per output (partials the finish kernel merges)
MAX_SPLIT = 1024
#: split K until about this many blocks (block path) / threads (thread path) are busy
TARGET_BLOCKS = 2048
TARGET_THREADS = 1 << 18
#: fewest elements per thread in one split (smaller splits cost more than they give)
MIN_PER_THREAD_BLOCK = 32
MIN_PER_THREAD_SERIAL = 64
#: grid cap (kernels loop over their tasks)
MAX_GRID = 1 << 16
THREAD_BLOCK = 256
#: elements a thread folds per group (HF_RED_GROUP in reduction.cuh)
GROUP = 32
#: the vec path: VEC_BLOCK threads per block; rows of up to VEC_WARP_K elements take
#: VEC_WARP_LANES lanes each when there are at least VEC_WARP_MIN_M of them (several rows
#: per block, a shuffle merge), else a whole block per (row, split)
VEC_BLOCK = 256
VEC_WARP_LANES = 32
VEC_WARP_K = 16384
VEC_WARP_MIN_M = 256
#: split K until about this many lanes are busy (1024 blocks of VEC_BLOCK; at 128 bytes
#: in flight each, 32 MiB in flight: enough for any current GPU), but every split gives
#: each lane at least MIN_GROUPS_VEC groups of GROUP elements
TARGET_VEC_THREADS = 1 << 18
MIN_GROUPS_VEC = 2
#: the vec path's grid cap: its blocks loop over their tasks (a group of lanes takes a
#: task whole, so the grid changes no result). Measured on the H200, summing rows of 64
#: float32: 2^18 rows 0.0280 -> 0.0265 ms and 2^20 rows 0.0810 -> 0.0802 against one
#: block per 128 rows (2048-8192 short-lived blocks)
VEC_MAX_GRID = 2048
#: bytes of one vector load of red_vec (a pack)
PACK_BYTES = 16

# finalize variants (red_params.mode)
MODE_PLAIN, MODE_MEAN_OR_STD = 0, 1


# --------------------------------------------------------------------- geometry
def collapse(shape: Sequence[int], *strides: Sequence[int]):
    """Drop size-1 axes and merge neighbours that are contiguous in every stride list.
    Returns (shape, [strides, ...]) with at least one axis."""
    dims = [(n, [s[i] for s in strides]) for i, n in enumerate(shape) if n != 1]
    if not dims:
        return (1,), [(0,) for _ in strides]
    out_n, out_s = [dims[0][0]], [dims[0][1]]
    for n, ss in dims[1:]:
        if all(ps == s * n for ps, s in zip(out_s[-1], ss)):
            out_n[-1] *= n
            out_s[-1] = ss
        else:
            out_n.append(n)
            out_s.append(ss)
    return tuple(out_n), [tuple(s[k] for s in out_s) for k in range(len(strides))]


def c_strides(shape: Sequence[int]) -> Tuple[int, ...]:
    """Element strides of a C-contiguous array of this shape."""
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(out))


def elem_strides(byte_strides: Optional[Sequence[int]], shape: Sequence[int],
                 itemsize: int) -> Tuple[int, ...]:
    """Byte strides -> element strides (None: C-contiguous)."""
    if byte_strides is None:
        return c_strides(shape)
    if any(s % itemsize for s in byte_strides):
        raise ValueError(f"strides {tuple(byte_strides)} are not multiples of the item size {itemsize}")
    return tuple(s // itemsize for s in byte_strides)


def diagonal(modes: Sequence[Hashable], shape: Sequence[int], strides: Sequence[int]):
    """Merge repeated labels into one axis (the diagonal): its stride is the sum of the
    repeated axes' strides. Returns (labels, sizes, strides), first occurrences in order."""
    labels, sizes, st = [], {}, {}
    for m, n, s in zip(modes, shape, strides):
        if m in st:
            st[m] += s
        else:
            labels.append(m)
            sizes[m], st[m] = n, s
    return tuple(labels), tuple(sizes[m] for m in labels), tuple(st[m] for m in labels)


@dataclass(frozen=True)
class ReduceGeometry:
    """M outputs x K reduced elements of one operand, and how the kernels cover them.

    keep_shape / keep_a: kept axes in output order (not merged: the output layout is
    only known at execute, see keep_layout). red_shape / red_a: reduced axes, merged.
    path 'block': one block of `block` threads per (output, split); 'thread': one thread
    per (output, split); 'vec': `lanes` threads per (output, split), block // lanes of them
    per block (red_a == (1,)). K is cut into n_split splits of `chunk` elements; n_split > 1
    needs the finish kernel (one block of `finish_block` threads per output)."""
    keep_shape: Tuple[int, ...]
    keep_a: Tuple[int, ...]
    red_shape: Tuple[int, ...]
    red_a: Tuple[int, ...]
    M: int
    K: int
    path: str
    block: int
    n_split: int
    chunk: int
    grid: int
    finish_block: int
    lanes: int

    def vec_aligned(self, itemsize: int) -> bool:
        """Whether every task of the vec path starts 16 bytes after a's first element
        times a whole number: kept strides and split starts are multiples of a pack.
        (The run also checks a's pointer.)"""
        if self.path != "vec":
            return False
        steps = [s for n, s in zip(self.keep_shape, self.keep_a) if n > 1]
        if self.n_split > 1:
            steps.append(self.chunk)
        return all(s * itemsize % PACK_BYTES == 0 for s in steps)


def _round_up(n: int, m: int) -> int:
    return -(-n // m) * m


def _cdiv(n: int, m: int) -> int:
    return -(-n // m)


def choose_path(M: int, K: int, red_inner: int, keep_inner: int) -> str:
    """'block' (threads of a block read neighbouring reduced elements) or 'thread'
    (neighbouring threads read neighbouring outputs). red_inner / keep_inner: the
    smallest |stride| of the reduced / the innermost kept axes (0 when absent)."""
    if K == 0:
        return "thread"
    if M == 1:
        return "block"
    if K < SMALL_K:
        return "thread"
    if red_inner == 1:
        return "block"
    if keep_inner == 1 and M >= 32:
        return "thread"
    return "block" if red_inner <= keep_inner else "thread"


def vec_lanes(M: int, K: int) -> int:
    """Threads per (output, split) of the vec path: a block for few or long rows, else
    up to VEC_WARP_LANES, fewer for short rows so that each lane folds at least one
    whole group of GROUP elements (its vector loads in flight at once). With 32 lanes on
    64-element rows, half the lanes idled and the rest loaded element by element: sum
    over the last axis of 2^20 x 64 float32 took 0.64 ms on the H200 (torch 0.24)."""
    if K > VEC_WARP_K or M < VEC_WARP_MIN_M:
        return VEC_BLOCK
    return min(VEC_WARP_LANES, 1 << (max(1, K // GROUP).bit_length() - 1))


def _split(M: int, K: int, per_split_min: int, want: int) -> Tuple[int, int]:
    """(n_split, chunk): enough splits of K to make `want` tasks in all, each split at
    least per_split_min elements, at most MAX_SPLIT."""
    n = max(1, min(_cdiv(want, M), _cdiv(K, per_split_min), MAX_SPLIT))
    chunk = _cdiv(K, n)
    return _cdiv(K, chunk), chunk


def launch_geometry(M: int, K: int, path: str):
    """(block, n_split, chunk, grid, finish_block) for M outputs of K elements."""
    if M == 0 or K == 0:  # nothing to read: one task per output finalizes the identity
        block = 64 if path in ("block", "vec") else THREAD_BLOCK  # vec: lanes == block
        grid = M if path in ("block", "vec") else _cdiv(M, block)
        return block, 1, 0, max(1, min(grid, MAX_GRID)), 64
    if path == "vec":
        # a split is whole rounds of the lanes' groups (lanes * GROUP elements, a multiple
        # of every pack width), so each split starts on a pack
        lanes = vec_lanes(M, K)
        block, per_block, rnd = VEC_BLOCK, VEC_BLOCK // lanes, lanes * GROUP
        n_split, chunk = _split(M, K, rnd * MIN_GROUPS_VEC, _cdiv(TARGET_VEC_THREADS, lanes))
        chunk = _round_up(chunk, rnd)
        n_split = _cdiv(K, chunk)
        grid = min(_cdiv(M * n_split, per_block), VEC_MAX_GRID)
    elif path == "block":
        block = min(256, max(64, _round_up(_cdiv(K, 8), 64)))
        n_split, chunk = _split(M, K, block * MIN_PER_THREAD_BLOCK, TARGET_BLOCKS)
        chunk = _round_up(chunk, block)  # every split starts on a whole block stride
        n_split = _cdiv(K, chunk)
        grid = min(M * n_split, MAX_GRID)
    else:
        block = THREAD_BLOCK
        n_split, chunk = _split(M, K, MIN_PER_THREAD_SERIAL, TARGET_THREADS)
        grid = min(_cdiv(M * n_split, block), MAX_GRID)
    finish_block = min(256, _round_up(n_split, 64))
    return block, n_split, chunk, grid, finish_block


def plan_reduce(modes_a: Sequence[Hashable], modes_c: Sequence[Hashable],
                shape: Sequence[int], strides: Sequence[int],
                path: Optional[str] = None) -> ReduceGeometry:
    """Map a(modes_a) with element strides onto M x K (repeated labels: the diagonal).
    path forces 'block', 'thread' or 'vec' (tests; 'vec' needs one reduced run of
    stride 1); None picks one from the layout, 'vec' where that holds and choose_path
    says 'block'."""
    labels, sizes, st = diagonal(modes_a, shape, strides)
    by_label = dict(zip(labels, zip(sizes, st)))
    keep_shape = tuple(by_label[m][0] for m in modes_c)
    keep_a = tuple(by_label[m][1] for m in modes_c)
    kept = set(modes_c)
    # broadcast (stride 0) axes outermost, then by decreasing |stride|; stable sort
    red = sorted(((n, s) for m, (n, s) in by_label.items() if m not in kept),
                 key=lambda ns: (ns[1] != 0, -abs(ns[1])))
    red_shape, (red_a,) = collapse([n for n, _ in red], [s for _, s in red])
    M = int(np.prod(keep_shape, dtype=np.int64)) if keep_shape else 1
    K = int(np.prod(red_shape, dtype=np.int64))
    contiguous = red_a == (1,)  # collapse leaves one axis: K elements in a row
    if path is None:
        _, (ka,) = collapse(keep_shape, keep_a)
        keep_inner = abs(ka[-1]) if M > 1 else 0
        path = choose_path(M, K, abs(red_a[-1]), keep_inner)
        if path == "block" and contiguous:
            path = "vec"
    elif path not in ("block", "thread", "vec"):
        raise ValueError(f"path must be 'block', 'thread' or 'vec', got {path!r}")
    elif path == "vec" and not contiguous:
        raise ValueError(f"path 'vec' needs one reduced axis of stride 1, got strides {red_a}")
    block, n_split, chunk, grid, finish_block = launch_geometry(M, K, path)
    lanes = {"thread": 1, "block": block}.get(path) or (vec_lanes(M, K) if M and K else block)
    return ReduceGeometry(keep_shape, keep_a, red_shape, red_a, M, K, path, block, n_split,
                          chunk, grid, finish_block, lanes)


def keep_layout(g: ReduceGeometry, out_strides: Sequence[int]):
    """(shape, a strides, out strides) of the kept axes merged for this output layout."""
    shape, (ka, ko) = collapse(g.keep_shape, g.keep_a, out_strides)
    return shape, ka, ko


@dataclass(frozen=True)
class AntiGeometry:
    """AntiTrace / AntiDiag over the output: its axes permuted so that equal labels are
    neighbours (perm), a's strides per permuted axis (one axis per label, 0 elsewhere),
    and same_next (bit d: axis d has the label of axis d + 1)."""
    perm: Tuple[int, ...]
    shape: Tuple[int, ...]
    a_strides: Tuple[int, ...]
    same_next: int
    n: int


def plan_anti(modes_a: Sequence[Hashable], modes_c: Sequence[Hashable],
              a_strides: Sequence[int], out_shape: Sequence[int]) -> AntiGeometry:
    a_st = dict(zip(modes_a, a_strides))
    order = list(dict.fromkeys(modes_c))
    perm = tuple(i for m in order for i, c in enumerate(modes_c) if c == m)
    labels = [modes_c[i] for i in perm]
    st, mask = [], 0
    for d, m in enumerate(labels):
        first = d == 0 or labels[d - 1] != m
        st.append(a_st.get(m, 0) if first else 0)
        if d + 1 < len(labels) and labels[d + 1] == m:
            mask |= 1 << d
    shape = tuple(out_shape[i] for i in perm)
    n = int(np.prod(shape, dtype=np.int64)) if shape else 1
    return AntiGeometry(perm, shape, tuple(st), mask, n)


# ------------------------------------------------------------ name expressions
_PRE = {None: "hf::pre_none", UnaryOp.ABS: "hf::pre_abs", UnaryOp.REAL: "hf::pre_real",
        UnaryOp.IMAG: "hf::pre_imag"}


@dataclass(frozen=True)
class Reducer:
    """One C++ reducer instantiation, how to finalize it, and its kernel group."""
    expr: str          # e.g. hf::red_sum<hf::f32, hf::f32, hf::pre_none>
    mode: int          # MODE_PLAIN or MODE_MEAN_OR_STD
    out_dtype: np.dtype
    group: str         # kernel group of the offline dump, e.g. red_sum

    @property
    def kernels(self) -> Tuple[str, str, str, str]:
        """(block, thread, finish, vec) kernel name expressions."""
        return tuple(f"hf::red_{k}<{self.expr} >" for k in ("block", "thread", "finish", "vec"))


def reducer(op: ReduceOp, dtype, pre: Optional[UnaryOp] = None, out_dtype=None) -> Reducer:
    """The reducer computing op over dtype (after the pre-op of ComplexRealReduce).
    MEAN runs SUM's kernels and STD VAR's, with mode 1. out_dtype defaults to what
    infer() gives; Trace passes the operand dtype (a bool trace is an or)."""
    dt = np.dtype(dtype)
    t_in = ctype(dt)
    mode = MODE_MEAN_OR_STD if op in (ReduceOp.MEAN, ReduceOp.STD, ReduceOp.NANSTD) \
        else MODE_PLAIN
    if op in (ReduceOp.ALL, ReduceOp.ANY):
        return Reducer(f"hf::red_{op.cname}<{t_in}>", mode, np.dtype(np.bool_), f"red_{op.cname}")
    if op in (ReduceOp.VAR, ReduceOp.STD, ReduceOp.NANVAR, ReduceOp.NANSTD):
        out = real_dtype(dt)
        name, group = ("nanvar", "red_nan") if op in NAN_OPS else ("var", "red_var")
        return Reducer(f"hf::red_{name}<{t_in}, {ctype(out)}>", mode, out, group)
    if op in NAN_OPS:  # one group for the nan-functions' reducers
        return Reducer(f"hf::red_{op.cname}<{t_in}, {t_in}, hf::pre_none>", mode, dt, "red_nan")
    if out_dtype is not None:
        out = np.dtype(out_dtype)
    elif pre is not None:
        out = real_dtype(dt)
    elif op is ReduceOp.SUM and dt == np.bool_:
        out = np.dtype(np.int64)
    else:
        out = dt
    name = "sum" if op is ReduceOp.MEAN else op.cname
    group = "red_complex_real" if pre is not None else f"red_{name}"
    return Reducer(f"hf::red_{name}<{t_in}, {ctype(out)}, {_PRE[pre]}>", mode, out, group)


def anti_kernel(dtype) -> str:
    return f"hf::red_anti<{ctype(dtype)}>"


# ---------------------------------------- what the CuPy handlers accept (dtype kinds)
SCALAR_KINDS = {ReduceOp.SUM: "biufc", ReduceOp.PROD: "biufc", ReduceOp.MEAN: "fc",
                ReduceOp.MAX: "biuf", ReduceOp.MIN: "biuf",
                ReduceOp.NANSUM: "fc", ReduceOp.NANPROD: "fc", ReduceOp.NANMEAN: "fc",
                ReduceOp.NANMAX: "f", ReduceOp.NANMIN: "f"}
ANALYTIC_KINDS = {ReduceOp.VAR: "fc", ReduceOp.STD: "fc", ReduceOp.NANVAR: "fc",
                  ReduceOp.NANSTD: "fc"}
#: NumPy's nan-functions (reducers that skip NaN elements)
NAN_OPS = (ReduceOp.NANSUM, ReduceOp.NANPROD, ReduceOp.NANMEAN, ReduceOp.NANMAX,
           ReduceOp.NANMIN, ReduceOp.NANVAR, ReduceOp.NANSTD)
METADATA_KINDS = {op: "biu" for op in (ReduceOp.SUM, ReduceOp.PROD, ReduceOp.MAX,
                                       ReduceOp.MIN, ReduceOp.ALL, ReduceOp.ANY)}
#: ReduceAdd, Trace, AntiTrace, AntiDiag
SCALED_KINDS = "biufc"
COMPLEX_PRE = (UnaryOp.ABS, UnaryOp.REAL, UnaryOp.IMAG)
COMPLEX_REDUCE = (ReduceOp.SUM, ReduceOp.MAX, ReduceOp.MIN, ReduceOp.MEAN)


def all_reducers():
    """Every reducer the CuPy handlers can ask for."""
    for table in (SCALAR_KINDS, ANALYTIC_KINDS, METADATA_KINDS):
        for op, kinds in table.items():
            for dt in dtypes_of_kinds(kinds):
                yield reducer(op, dt)
    for dt in dtypes_of_kinds(SCALED_KINDS):
        yield reducer(ReduceOp.SUM, dt)                 # ReduceAdd
        yield reducer(ReduceOp.SUM, dt, out_dtype=dt)   # Trace
    for pre in COMPLEX_PRE:
        for op in COMPLEX_REDUCE:
            for dt in dtypes_of_kinds("c"):
                yield reducer(op, dt, pre=pre)


def instances():
    """[(group, file, exprs)]: one group per reducer template (MEAN shares SUM's
    kernels, STD VAR's), one for the complex -> real pre-ops, one for AntiTrace/AntiDiag."""
    groups: dict = {}
    for r in all_reducers():
        groups.setdefault(r.group, {}).update(dict.fromkeys(r.kernels))
    groups["red_anti"] = dict.fromkeys(anti_kernel(dt) for dt in dtypes_of_kinds(SCALED_KINDS))
    return [(name, FILE, list(exprs)) for name, exprs in groups.items()]
