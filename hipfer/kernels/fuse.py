"""The source of a fused expression kernel (hipfer.fuse), generated from a plain spec.

A spec (``Spec``) lists the tensor inputs' dtypes, the scalar slots' dtypes (the values
are kernel arguments), and the steps in evaluation order, each ``(kind, name, dtype,
args)``: kind "op" calls ``hf::op_<name>`` (the op table's functor), "cast" converts
with ``hf::cast_op<R>``, "where" selects; args refer to ("x", k) input k (its conj bit
folded at load), ("s", k) scalar k or ("t", k) an earlier step. Each step is computed as
the eager kernels compute it -- ``op_call<Op>(...)`` on the operands' own C types,
assigned to the op's output type (float16 rounds at every op) -- and the kernels are
compiled with floating-point contraction off, as the eager ones are, so no multiply-add
fuses across ops: the results are the eager chain's, bit for bit.

Two kernels per spec, as the elementwise templates have (kernels/elementwise.cuh):
``<name>_vec``, every full-size operand dense in C order and 16-byte aligned (vector
loads of V elements a thread; one-element operands splat, bitmask ``splat``), and
``<name>_nd``, any layout: hf::Shape plus hf::Strides (elements) per operand, output
first, 64-bit offsets. ``extern "C"`` names need no name expression lookup.
A full reduction tail adds two kernels (``reduce_source``): fixed element ranges to
partials, then one block over the partials, in a fixed order (no atomics).
``SAMPLES`` are specs the test suite traces (tests/test_fuse_kernels.py checks that the
tracer still produces them); ``instances()`` lists their groups for ``hipfer dump-kernels``.
"""
from __future__ import annotations

import hashlib
from typing import List, NamedTuple, Tuple

import numpy as np

from . import ctype, module_source

FILE = "fuse.cuh"  # the header every fused source includes (elementwise.cuh, shuffles)

#: packs of the vector kernel a thread loads before computing any (loads in flight), and
#: the most waves of blocks its launch takes (hipfer.backends.cupy.fuse; grid-stride beyond).
#: The H200's 5-op chain on 5 x 64M float32 (tools/probe_fuse_kernels.py, 2026-12-03,
#: medians of interleaved rounds): 0.3845 ms at 1 pack a thread and no cap (a block per
#: 256 packs, as Inductor launches), 0.3873 at 2 packs, 0.401 / 0.398 capped at 32 / 64
#: waves (a grid-stride loop)
EW_UNROLL = 1
EW_WAVES = 1 << 20


class Spec(NamedTuple):
    inputs: Tuple[np.dtype, ...]
    scalars: Tuple[np.dtype, ...]
    steps: Tuple[tuple, ...]        # (kind, name, dtype, args)
    out: tuple                      # the ref of the result

    def key(self) -> str:
        text = repr((tuple(str(t) for t in self.inputs), tuple(str(t) for t in self.scalars),
                     tuple((k, n, str(dt), a) for k, n, dt, a in self.steps), self.out))
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def _dtype_of(spec: Spec, ref) -> np.dtype:
    kind, k = ref
    return {"x": spec.inputs, "s": spec.scalars}[kind][k] if kind != "t" else spec.steps[k][2]


def _ref(ref) -> str:
    return {"x": "x", "s": "s", "t": "t"}[ref[0]] + str(ref[1])


def _step(i: int, step) -> str:
    kind, name, dt, args = step
    r = ctype(dt)
    a = [_ref(x) for x in args]
    if kind == "op":
        rhs = f"hf::op_call<hf::op_{name}>({', '.join(a)})"
    elif kind == "cast":
        rhs = f"hf::op_call<hf::cast_op<{r}> >({a[0]})"
    elif kind == "where":
        rhs = f"({a[0]} ? {a[1]} : {a[2]})"
    else:
        raise ValueError(f"unknown fused step kind {kind!r}")
    return f"  {r} t{i};\n  t{i} = {rhs};\n"


def eval_source(spec: Spec) -> str:
    """``hf::fx_<key>::eval(inputs..., scalars...)``: the steps of spec on one element
    (each step's result stored in its eager output type), as C++ that also compiles on
    the host (tests/test_fuse_kernels.py runs it there against the NumPy backend)."""
    out_t = ctype(_dtype_of(spec, spec.out))
    params = ([f"{ctype(t)} x{k}" for k, t in enumerate(spec.inputs)]
              + [f"{ctype(t)} s{k}" for k, t in enumerate(spec.scalars)])
    body = "".join(_step(i, s) for i, s in enumerate(spec.steps))
    return (f"\nnamespace hf {{ namespace fx_{spec.key()} {{\n"
            f"__device__ __forceinline__ {out_t} eval({', '.join(params)}) {{\n{body}"
            f"  return {_ref(spec.out)};\n}}\n}} }}  // namespace hf::fx_{spec.key()}\n\n")


def kernel_name(spec: Spec) -> str:
    return f"hf_fused_{spec.key()}"


def names(spec: Spec) -> Tuple[str, str]:
    """The (vector, N-d) kernel names of spec."""
    base = kernel_name(spec)
    return f"{base}_vec", f"{base}_nd"


def source(spec: Spec) -> str:
    """The complete kernel source of spec (our headers inlined)."""
    base = kernel_name(spec)
    out_t = ctype(_dtype_of(spec, spec.out))
    ins = [ctype(t) for t in spec.inputs]
    scs = [ctype(t) for t in spec.scalars]
    sc_args = "".join(f", {t} s{k}" for k, t in enumerate(scs))
    sc_pass = [f"s{k}" for k in range(len(scs))]
    ptrs = "".join(f", const {t}* p{k}" for k, t in enumerate(ins))
    # the vector kernel: EW_UNROLL packs a thread a pass, every load issued first
    U = EW_UNROLL
    vw = f"hf::vec_width<{', '.join(ins + [out_t])}>::value"

    def packs(u: int, at: str) -> str:
        return "".join(f"    const hf::pack<{t}, V> v{k}_{u} = hf::load_vec<V>(p{k}, {at}, (splat >> {k}) & 1);\n"
                       for k, t in enumerate(ins))

    def compute(u: int, at: str) -> str:
        args = ", ".join([f"hf::maybe_conj(v{k}_{u}.v[j], (conj >> {k}) & 1)" for k in range(len(ins))]
                         + sc_pass)
        return (f"    hf::pack<{out_t}, V> r{u};\n#pragma unroll\n"
                f"    for (int j = 0; j < V; ++j) r{u}.v[j] = hf::fx_{spec.key()}::eval({args});\n"
                f"    hf::store_pack<V>(out, {at}, r{u});\n")
    at = ["k"] + [f"k + {u} * step" for u in range(1, U)]
    vec_body = (f"  for (; k + {U - 1} * step < packs; k += {U} * step) {{\n"
                + "".join(packs(u, at[u]) for u in range(U))
                + "".join(compute(u, at[u]) for u in range(U)) + "  }\n")
    if U > 1:  # the last packs, fewer than U a thread
        vec_body += "  for (; k < packs; k += step) {\n" + packs(0, "k") + compute(0, "k") + "  }\n"
    tail_args = ", ".join([f"hf::load(p{k}, ((splat >> {k}) & 1) ? 0 : t, (conj >> {k}) & 1)"
                           for k in range(len(ins))] + sc_pass)
    # the N-d kernel
    nd_ptrs = "".join(f", const {t}* p{k}, hf::Strides st{k}" for k, t in enumerate(ins))
    st_list = ", ".join(["so"] + [f"st{k}" for k in range(len(ins))])
    nd_args = ", ".join([f"hf::load(p{k}, off[{k + 1}], (conj >> {k}) & 1)"
                         for k in range(len(ins))] + sc_pass)
    return (
        f'// hipfer.fuse kernel {base}: {len(ins)} input(s), {len(scs)} scalar(s), '
        f'{len(spec.steps)} op(s)\n'
        + module_source(FILE) + eval_source(spec) +
        f'extern "C" __global__ void {base}_vec(long long n, {out_t}* out{ptrs}{sc_args}, '
        f"int splat, int conj) {{\n"
        f"  const int V = {vw};\n"
        f"  const long long packs = n / V, step = (long long)blockDim.x * gridDim.x;\n"
        f"  long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
        + vec_body +
        f"  for (hf::i64 t = n / V * V + (hf::i64)blockIdx.x * blockDim.x + threadIdx.x; t < n;\n"
        f"       t += (hf::i64)blockDim.x * gridDim.x)\n"
        f"    out[t] = hf::fx_{spec.key()}::eval({tail_args});\n}}\n\n"
        f'extern "C" __global__ void {base}_nd(long long n, hf::Shape shape, {out_t}* out, '
        f"hf::Strides so{nd_ptrs}{sc_args}, int conj) {{\n"
        f"  HF_GRID_LOOP(i, n) {{\n"
        f"    hf::i64 off[{len(ins) + 1}];\n"
        f"    hf::nd_offsets_outer(i, shape, shape.ndim, off, {st_list});\n"
        f"    out[off[0]] = hf::fx_{spec.key()}::eval({nd_args});\n  }}\n}}\n")


def lower(graph) -> Spec:
    """The spec of a fused graph's elementwise part (hipfer._fuse._graph.Graph, read by
    its fields: node kind, dtype, args and the prims descriptor -- an op descriptor has
    ``op`` (its table row names the functor), PointwiseCast ``dtype``, the wheres
    neither)."""
    refs, steps, inputs, scalars = {}, [], {}, {}
    for i, n in enumerate(graph.nodes):
        if n.kind == "input":
            inputs[n.what] = n.dtype
            refs[i] = ("x", n.what)
        elif n.kind == "scalar":
            scalars[n.what] = n.dtype
            refs[i] = ("s", n.what)
        else:
            args = tuple(refs[a] for a in n.args)
            if hasattr(n.what, "op"):
                steps.append(("op", n.what.op.row.name, n.dtype, args))
            elif hasattr(n.what, "dtype"):
                steps.append(("cast", "", n.dtype, args))
            else:
                steps.append(("where", "", n.dtype, args))
            refs[i] = ("t", len(steps) - 1)
    return Spec(tuple(inputs[k] for k in range(graph.n_inputs)),
                tuple(scalars[k] for k in range(len(scalars))), tuple(steps), refs[graph.out])


#: the reductions a fused kernel computes itself: functor, identity (of the accumulator;
#: None: the dtype's lowest / highest value, _identity)
REDUCE_OPS = {"sum": ("op_add", "0"), "mean": ("op_add", "0"), "prod": ("op_multiply", "1"),
              "any": ("op_logical_or", "0"), "all": ("op_logical_and", "1"),
              "max": ("op_maximum", None), "min": ("op_minimum", None)}


def _identity(op: str, dt: np.dtype) -> str:
    """The accumulator's start value of op on dtype dt, as C++: max starts at -inf (floats:
    op_maximum still propagates a NaN) or the lowest integer, min at the highest."""
    fixed = REDUCE_OPS[op][1]
    if fixed is not None:
        return f"A({fixed})"
    low = op == "max"
    if dt.kind == "f":
        return "-hf::fm::inf<A>()" if low else "hf::fm::inf<A>()"
    if dt.kind == "b":
        return "A(false)" if low else "A(true)"
    info = np.iinfo(dt)
    v = int(info.min if low else info.max)
    if v == -(1 << 63):
        return "A(-9223372036854775807LL - 1)"
    return f"A({v}{'ULL' if dt.kind == 'u' else 'LL'})"
#: threads a block of the reduction kernels (a power of two: the tree halves it)
RED_BLOCK = 256
#: partials of a fused full reduction: up to this many blocks, each at least
#: RED_BLOCK * RED_PER_THREAD elements (a function of n only: the order repeats). The
#: H200's sum chain of 5 x 64M float32 (tools/probe_fuse_geometry.py): 0.349 ms with
#: 1024 blocks of at least 8 elements a thread, 0.330 with 8192 of at least 2
RED_MAX_BLOCKS = 8192
RED_PER_THREAD = 2
#: packs a thread of red1 loads (of every input) before folding them: the sum chain
#: 0.367 ms at 2, 0.336 at 4 (tools/probe_fuse_kernels.py, 2026-12-03)
RED_UNROLL = 4


def _block_tree(fn: str, pad: str) -> str:
    """C++: the block's values a folded by hf::{fn} pairwise in shared memory, in a fixed
    tree (the same order every run, on warps of 32 or 64 lanes alike), the result in sh[0]
    (sh: the block's scratch, _tree_scratch). A shuffle tree down each 32 lanes then over
    the groups lost on the H200 in both uses (the sum chain 0.386 against 0.367 ms, the
    row sums' block path 0.519 against 0.458: tools/probe_fuse_kernels.py, 2026-12-03)."""
    return (f"{pad}sh[threadIdx.x] = a;\n{pad}__syncthreads();\n"
            f"{pad}for (int w = {RED_BLOCK} / 2; w > 0; w >>= 1) {{\n"
            f"{pad}  if ((int)threadIdx.x < w) sh[threadIdx.x] = hf::{fn}()(sh[threadIdx.x], sh[threadIdx.x + w]);\n"
            f"{pad}  __syncthreads();\n{pad}}}\n")


def _tree_scratch(pad: str) -> str:
    """C++: the shared scratch sh of _block_tree."""
    return (f"{pad}__shared__ hf::raw_of<A> sh_raw[{RED_BLOCK}];\n"
            f"{pad}A* sh = reinterpret_cast<A*>(sh_raw);\n")


def pack_width(spec: Spec) -> int:
    """Elements per pack of the fused kernels (vec_width in elementwise.cuh over the
    inputs and the elementwise result): a 16-byte access for the narrowest operand, at
    most 32 bytes of the widest."""
    sizes = [np.dtype(t).itemsize for t in spec.inputs] + [_dtype_of(spec, spec.out).itemsize]
    return min(16 // min(sizes), 32 // max(sizes))


def reduce_geometry(spec: Spec, n: int) -> Tuple[int, int]:
    """(blocks, chunk) of red1 for n elements: block b folds packs [b chunk, (b + 1)
    chunk) of pack_width(spec) elements; a function of n and the spec only."""
    v = pack_width(spec)
    packs = -(-n // v)
    want = max(1, min(RED_MAX_BLOCKS, -(-n // (RED_BLOCK * RED_PER_THREAD))))
    chunk = -(-packs // want)
    return -(-packs // chunk), chunk


def reduce_names(spec: Spec, op: str) -> Tuple[str, str]:
    """The (partials, final) kernel names of spec's elementwise result reduced by op."""
    base = kernel_name(spec)
    return f"{base}_red1_{op}", f"{base}_red2_{op}"


def reduce_source(spec: Spec, op: str, out_dtype) -> str:
    """The two kernels of a fused full reduction (every element; op in REDUCE_OPS),
    appended to source(spec). The elements (C order of the broadcast shape) are cut into
    packs of V = pack_width(spec); ``red1``: block b takes packs [b chunk, (b + 1) chunk),
    thread t every RED_BLOCK-th of them from the t-th, folding each pack's elements in
    order, then a fixed tree in shared memory gives part[b]; ``red2``: one block folds the
    partials the same way and writes out[0] (mean: divided by count). Accumulation is in
    calc_of<T>. How elements are loaded (mode 2: 16-byte vector loads of two packs per
    input at once, every operand dense and aligned; 1: dense element loads; 0: N-d
    strided) never changes which element is folded when, so the result repeats bit for
    bit for a given n, whatever the layout or alignment. No atomics."""
    base = kernel_name(spec)
    fn = REDUCE_OPS[op][0]
    ident = _identity(op, _dtype_of(spec, spec.out))
    t = ctype(_dtype_of(spec, spec.out))
    acc = f"hf::calc_of<{t}>::type"
    out_t = ctype(out_dtype)
    ins = [ctype(x) for x in spec.inputs]
    scs = [ctype(x) for x in spec.scalars]
    sc_args = "".join(f", {x} s{k}" for k, x in enumerate(scs))
    sc_pass = [f"s{k}" for k in range(len(scs))]
    nd_ptrs = "".join(f", const {x}* p{k}, hf::Strides st{k}" for k, x in enumerate(ins))
    st_list = ", ".join(["so"] + [f"st{k}" for k in range(len(ins))])
    ev = f"hf::fx_{spec.key()}::eval"
    dense = ", ".join([f"hf::load(p{k}, ((splat >> {k}) & 1) ? 0 : i, (conj >> {k}) & 1)"
                       for k in range(len(ins))] + sc_pass)
    strided = ", ".join([f"hf::load(p{k}, off[{k + 1}], (conj >> {k}) & 1)"
                         for k in range(len(ins))] + sc_pass)
    U = RED_UNROLL
    loads = "".join(f"      const hf::pack<{x}, V> u{k}_{u} = hf::load_vec<V>(p{k}, q + {u * RED_BLOCK}, "
                    f"(splat >> {k}) & 1);\n" for u in range(U) for k, x in enumerate(ins))

    def folds(u: int) -> str:
        args = ", ".join([f"hf::maybe_conj(u{k}_{u}.v[j], (conj >> {k}) & 1)"
                          for k in range(len(ins))] + sc_pass)
        return f"#pragma unroll\n      for (int j = 0; j < V; ++j) a = hf::{fn}()(a, (A){ev}({args}));\n"
    tree = _tree_scratch("  ") + _block_tree(fn, "  ")
    final = ("hf::op_call<hf::op_divide>(sh[0], hf::cast<A>((hf::f64)count))" if op == "mean"
             else "sh[0]")
    return (
        f"\n// the fused reduction ({op}) of {base}\n"
        f'extern "C" __global__ void __launch_bounds__({RED_BLOCK}) {base}_red1_{op}('
        f"long long n, long long chunk, hf::Shape shape, hf::Strides so, "
        f"hf::calc_of<{t}>::type* part{nd_ptrs}{sc_args}, int mode, int splat, int conj) {{\n"
        f"  typedef {acc} A;\n"
        f"  const int V = {pack_width(spec)};\n"
        f"  const long long packs = (n + V - 1) / V, whole = n / V;\n"
        f"  const long long lo = (long long)blockIdx.x * chunk;\n"
        f"  const long long hi = lo + chunk < packs ? lo + chunk : packs;\n"
        f"  A a = {ident};\n"
        f"  for (long long q = lo + threadIdx.x; q < hi; q += {U * RED_BLOCK}) {{\n"
        f"    const long long q_last = q + {(U - 1) * RED_BLOCK};\n"
        f"    if (mode == 2 && q_last < hi && q_last < whole) {{  // {U} whole packs: loads first\n"
        + loads + "".join(folds(u) for u in range(U)) +
        f"      continue;\n    }}\n"
        f"    for (long long r = q; r <= q_last && r < hi; r += {RED_BLOCK}) {{\n"
        f"      for (int j = 0; j < V; ++j) {{\n"
        f"        const long long i = r * V + j;\n"
        f"        if (i >= n) break;\n"
        f"        {t} v;\n"
        f"        if (mode) {{\n          v = {ev}({dense});\n        }} else {{\n"
        f"          hf::i64 off[{len(ins) + 1}];\n"
        f"          hf::nd_offsets_outer(i, shape, shape.ndim, off, {st_list});\n"
        f"          v = {ev}({strided});\n        }}\n"
        f"        a = hf::{fn}()(a, (A)v);\n      }}\n    }}\n  }}\n"
        + tree +
        f"  if (threadIdx.x == 0) part[blockIdx.x] = sh[0];\n}}\n\n"
        f'extern "C" __global__ void __launch_bounds__({RED_BLOCK}) {base}_red2_{op}('
        f"long long m, const hf::calc_of<{t}>::type* part, {out_t}* out, long long count) {{\n"
        f"  typedef {acc} A;\n"
        f"  A a = {ident};\n"
        f"  for (long long i = threadIdx.x; i < m; i += {RED_BLOCK}) a = hf::{fn}()(a, part[i]);\n"
        + tree +
        f"  if (threadIdx.x == 0) out[0] = hf::cast<{out_t}>({final});\n}}\n")


#: fewest reduced elements per output for one block per output (fewer: one thread each)
AXES_BLOCK_K = 256
#: outputs enough to fill the GPU with a group of 32 lanes each (fewer, and long
#: rows: one block per output)
AXES_GROUP_M = 4096
#: fewest reduced elements per output for a group of 32 lanes
AXES_GROUP_K = 32
#: the thread path splits K until about this many threads are busy, each folding at
#: least AXES_MIN_CHUNK elements (a second launch folds the splits' partials in order)
AXES_TARGET_THREADS = 1 << 18
AXES_MIN_CHUNK = 64
#: reduced elements a thread loads before folding them (every path)
AXES_UNROLL = 4
#: the most waves of blocks the group path launches (grid-stride beyond)
AXES_WAVES = 32


def axes_path(M: int, K: int, last_reduced: bool) -> str:
    """How a reduction over some axes runs, from the shapes alone (so a given call folds
    in the same order every time). Where the reduced elements are the innermost of the
    C-order shape: 'group' (32 lanes per output, neighbouring lanes reading neighbouring
    elements) when there are outputs enough to fill the GPU, else 'block' (one block per
    output) for long rows; otherwise 'thread' (threads per output folding in order, K
    split when outputs are few: neighbouring threads read neighbouring outputs)."""
    if last_reduced and K >= AXES_GROUP_K and (M >= AXES_GROUP_M or K < AXES_BLOCK_K):
        return "group"
    return "block" if last_reduced and K >= AXES_BLOCK_K else "thread"


def axes_split(M: int, K: int) -> Tuple[int, int]:
    """(n_split, chunk) of the thread path: K cut into n_split runs of chunk elements."""
    want = max(1, min(-(-AXES_TARGET_THREADS // max(M, 1)), K // AXES_MIN_CHUNK))
    chunk = -(-K // want)
    return -(-K // chunk), chunk


def axes_name(spec: Spec, op: str, path: str) -> str:
    """path: 'thread', 'block', 'group' or 'finish' (the thread path's fold of its splits)."""
    return f"{kernel_name(spec)}_axes_{path}_{op}"


AXES_PATHS = ("thread", "block", "group", "finish")


def axes_source(spec: Spec, op: str, out_dtype) -> str:
    """The kernels of a fused reduction over some axes (op in REDUCE_OPS), appended to
    source(spec): M outputs (the kept axes, N-d ``keep`` with the output's and each
    input's strides) of K reduced elements (N-d ``red`` with each input's strides); no
    temporary of the elementwise result. ``_thread``: task (s, m) -- m fastest, so
    neighbouring threads read neighbouring outputs -- folds k in [s chunk, (s + 1) chunk)
    in order, into out (n_split == 1) or part[s M + m]; ``_finish`` folds output m's
    n_split partials in order. ``_block``: thread t of output m's block folds k = t,
    t + RED_BLOCK, ..., then the block's fixed tree. ``_group``: lane l of output m's 32
    folds k = l, l + 32, ..., then a shuffle tree down the 32 lanes. Every path loads
    AXES_UNROLL elements before folding them, in the order it folds them. Accumulation
    in calc_of<T>; mean divides by K."""
    base = kernel_name(spec)
    fn = REDUCE_OPS[op][0]
    ident = _identity(op, _dtype_of(spec, spec.out))
    t = ctype(_dtype_of(spec, spec.out))
    out_t = ctype(out_dtype)
    acc = f"hf::calc_of<{t}>::type"
    ins = [ctype(x) for x in spec.inputs]
    scs = [ctype(x) for x in spec.scalars]
    sc_args = "".join(f", {x} s{k}" for k, x in enumerate(scs))
    sc_pass = [f"s{k}" for k in range(len(scs))]
    n = len(ins)
    ptrs = "".join(f", const {x}* p{k}, hf::Strides ks{k}, hf::Strides rs{k}"
                   for k, x in enumerate(ins))
    keep_st = ", ".join(["so"] + [f"ks{k}" for k in range(n)])
    red_st = ", ".join(f"rs{k}" for k in range(n))
    U = AXES_UNROLL

    def unrolled(k0: str, step: str, end: str) -> str:
        """C++: elements k0, k0 + step, ... below end folded into a in order, U at a time:
        the U loads (at offsets clamped to the last element, so every one is valid and
        none waits on a branch) issued before the first fold."""
        body = ""
        for u in range(U):
            body += (f"      hf::i64 o{u}[{n}];\n"
                     f"      hf::nd_offsets_outer(k + {u} * {step} < {end} ? k + {u} * {step} : {end} - 1, "
                     f"red, red.ndim, o{u}, {red_st});\n")
            body += "".join(f"      const {x} x{j}_{u} = hf::load(p{j}, base[{j + 1}] + o{u}[{j}], "
                            f"(conj >> {j}) & 1);\n" for j, x in enumerate(ins))
        for u in range(U):
            args = ", ".join([f"x{j}_{u}" for j in range(n)] + sc_pass)
            fold = f"a = hf::{fn}()(a, (A)hf::fx_{spec.key()}::eval({args}));"
            body += f"      {fold}\n" if u == 0 else f"      if (k + {u} * {step} < {end}) {fold}\n"
        return f"    for (long long k = {k0}; k < {end}; k += {U} * {step}) {{\n{body}    }}\n"

    def final(x: str) -> str:
        r = f"hf::op_call<hf::op_divide>({x}, hf::cast<A>((hf::f64)K))" if op == "mean" else x
        return f"hf::cast<{out_t}>({r})"
    head = (f"long long M, long long K, hf::Shape keep, hf::Shape red, {out_t}* out, "
            f"hf::Strides so{ptrs}{sc_args}, int conj")
    offsets = (f"    hf::i64 base[{n + 1}];\n"
               f"    hf::nd_offsets_outer(m, keep, keep.ndim, base, {keep_st});\n")
    tree = (_block_tree(fn, "    ")
            + "    a = sh[0];\n    __syncthreads();  // sh is read before the next output's tree\n")
    group_tree = "".join(f"    a = hf::{fn}()(a, hf::fuse_shfl_down(a, {o}));\n" for o in (16, 8, 4, 2, 1))
    return (
        f"\n// the fused reduction ({op}) of {base} over some axes\n"
        f'extern "C" __global__ void {axes_name(spec, op, "thread")}({head}, '
        f"long long n_split, long long chunk, {acc}* part) {{\n"
        f"  typedef {acc} A;\n"
        f"  HF_GRID_LOOP(task, M * n_split) {{\n"
        f"    const long long m = task % M, s = task / M;\n"
        + offsets +
        f"    const long long hi = (s + 1) * chunk < K ? (s + 1) * chunk : K;\n"
        f"    A a = {ident};\n"
        + unrolled("s * chunk", "1", "hi") +
        f"    if (n_split == 1) out[base[0]] = {final('a')};\n"
        f"    else part[task] = a;\n  }}\n}}\n\n"
        f'extern "C" __global__ void {axes_name(spec, op, "finish")}(long long M, long long K, '
        f"hf::Shape keep, {out_t}* out, hf::Strides so, long long n_split, const {acc}* part) {{\n"
        f"  typedef {acc} A;\n"
        f"  HF_GRID_LOOP(m, M) {{\n"
        f"    hf::i64 base[1];\n"
        f"    hf::nd_offsets_outer(m, keep, keep.ndim, base, so);\n"
        f"    A a = {ident};\n"
        f"    for (long long s = 0; s < n_split; ++s) a = hf::{fn}()(a, part[s * M + m]);\n"
        f"    out[base[0]] = {final('a')};\n  }}\n}}\n\n"
        f'extern "C" __global__ void __launch_bounds__({RED_BLOCK}) '
        f'{axes_name(spec, op, "block")}({head}) {{\n'
        f"  typedef {acc} A;\n"
        + _tree_scratch("  ") +
        f"  for (long long m = blockIdx.x; m < M; m += gridDim.x) {{\n"
        + offsets +
        f"    A a = {ident};\n"
        + unrolled("threadIdx.x", str(RED_BLOCK), "K")
        + tree +
        f"    if (threadIdx.x == 0) out[base[0]] = {final('a')};\n  }}\n}}\n\n"
        f'extern "C" __global__ void __launch_bounds__({RED_BLOCK}) '
        f'{axes_name(spec, op, "group")}({head}) {{\n'
        f"  typedef {acc} A;\n"
        f"  const int lane = threadIdx.x & 31;\n"
        f"  const long long groups = (long long)gridDim.x * ({RED_BLOCK} / 32);\n"
        f"  // the 32 lanes of a group share m, so they loop together (the shuffle tree\n"
        f"  // reads only its own group's lanes)\n"
        f"  for (long long m = (long long)blockIdx.x * ({RED_BLOCK} / 32) + (threadIdx.x >> 5); "
        f"m < M; m += groups) {{\n"
        + offsets +
        f"    A a = {ident};\n"
        + unrolled("lane", "32", "K")
        + group_tree +
        f"    if (lane == 0) out[base[0]] = {final('a')};\n  }}\n}}\n")


def _f(t):
    return np.dtype(t)


#: specs of chains the tests trace (kept equal to the tracer's output by the tests): the
#: 5-op damped oscillation in float32, a float16 chain with a weak scalar, a where/compare
#: chain on int32 -> float64, a conj-flagged complex64 product
SAMPLES = {
    "damped_f32": Spec(
        (_f("f4"),) * 5, (),
        (("op", "negative", _f("f4"), (("x", 1),)),
         ("op", "multiply", _f("f4"), (("t", 0), ("x", 4))),
         ("op", "exp", _f("f4"), (("t", 1),)),
         ("op", "multiply", _f("f4"), (("x", 0), ("t", 2))),
         ("op", "multiply", _f("f4"), (("x", 3), ("x", 4))),
         ("op", "sin", _f("f4"), (("t", 4),)),
         ("op", "multiply", _f("f4"), (("x", 2), ("t", 5))),
         ("op", "add", _f("f4"), (("t", 3), ("t", 6)))),
        ("t", 7)),
    "half_scale": Spec(
        (_f("f2"),), (_f("f2"), _f("f2")),
        (("op", "multiply", _f("f2"), (("x", 0), ("s", 0))),
         ("op", "tanh", _f("f2"), (("t", 0),)),
         ("op", "add", _f("f2"), (("t", 1), ("s", 1)))),
        ("t", 2)),
    "where_i32": Spec(
        (_f("i4"), _f("f8")), (_f("i4"),),
        (("op", "greater", _f("?"), (("x", 0), ("s", 0))),
         ("cast", "", _f("f8"), (("x", 0),)),
         ("where", "", _f("f8"), (("t", 0), ("t", 1), ("x", 1))),
         ("op", "sqrt", _f("f8"), (("t", 2),))),
        ("t", 3)),
    "conj_c64": Spec(
        (_f("c8"), _f("c8")), (),
        (("op", "multiply", _f("c8"), (("x", 0), ("x", 1))),
         ("op", "absolute", _f("f4"), (("t", 0),))),
        ("t", 1)),
}


def _result(row, dt: np.dtype) -> np.dtype:
    if row.result == "bool":
        return np.dtype(np.bool_)
    if row.result == "real" and dt.kind == "c":
        return np.dtype(dt.char.lower())
    return dt


def row_spec(dt) -> Spec:
    """One spec calling every op row that takes dt (unary on x0, binary on x0 and x1, as
    a fused graph calls them): what a graph of any of them compiles to."""
    from ..prims.optable import BinaryOp, UnaryOp
    dt = np.dtype(dt)
    steps = tuple(("op", op.row.name, _result(op.row, dt), (("x", 0),) * op.row.arity
                   if op.row.arity == 1 else (("x", 0), ("x", 1)))
                  for op in (*UnaryOp, *BinaryOp) if dt.kind in op.row.kinds)
    steps += (("cast", "", np.dtype(np.float32), (("x", 0),)),
              ("where", "", dt, (("s", 0), ("x", 0), ("x", 1))))
    return Spec((dt, dt), (np.dtype(np.bool_),), steps, ("t", len(steps) - 1))


#: the samples' fused reductions (sample, op, output dtype) dumped and compiled too
REDUCE_SAMPLES = (("damped_f32", "sum", "float32"), ("half_scale", "mean", "float16"),
                  ("where_i32", "prod", "float64"), ("conj_c64", "mean", "float32"),
                  ("damped_f32", "max", "float32"), ("half_scale", "min", "float16"))


def instances() -> List[Tuple[str, str, List[str]]]:
    """(group, source text, kernel names) of the samples, their fused reductions and every
    row on every dtype (one group per dtype), for hipfer dump-kernels and the tests."""
    from . import DTYPES
    specs = dict(SAMPLES)
    specs.update({f"rows_{t.name}": row_spec(t) for t in DTYPES})
    out = [(f"fuse_{name}", source(spec), list(names(spec))) for name, spec in specs.items()]
    for name, op, dt in REDUCE_SAMPLES:
        spec = SAMPLES[name]
        out.append((f"fuse_{name}_{op}", source(spec) + reduce_source(spec, op, np.dtype(dt)),
                    list(names(spec)) + list(reduce_names(spec, op))))
        out.append((f"fuse_{name}_{op}_axes", source(spec) + axes_source(spec, op, np.dtype(dt)),
                    list(names(spec)) + [axes_name(spec, op, p) for p in AXES_PATHS]))
    return out


def dump(outdir, only: str = "") -> list:
    """Write each sample's source (with its instantiation list) into outdir as .hip
    (``only``: the groups whose name contains it)."""
    from pathlib import Path
    from . import instance_list
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for group, text, exprs in instances():
        if only and only not in group:
            continue
        p = out / f"{group}.hip"
        p.write_text(text + instance_list(exprs))
        paths.append(p)
    return paths
