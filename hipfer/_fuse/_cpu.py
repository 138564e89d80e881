"""The CPU evaluator of a fused graph: cache-sized blocks, no full-size temporaries.

The broadcast output is cut into blocks of about ``BLOCK_BYTES`` of live data (whole
trailing axes, a chunk of one axis, single indices of the axes before it). Each block
evaluates the nodes in order into small per-node buffers, each op through the NumPy
backend's own plan for its descriptor (the function eager runs, ``out=`` a block
buffer), so every element is computed by the same code in the same order as eagerly:
bitwise equal by construction. The last op writes straight into the output. Blocks run
on a small thread pool (NumPy's loops release the GIL). A reduction tail reduces each
block with the backend's ufunc and combines the partials in block order (fixed, so the
result repeats run to run).
"""
from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..backends.numpy._common import fp_ignore, fp_restore
from ..backends.numpy.elementwise import numpy_impl

#: blocks below this many elements in all run on the calling thread
THREAD_MIN = 1 << 18
THREADS = max(1, min(8, os.cpu_count() or 1))


def _block_bytes(threads: int) -> int:
    """Bytes a block (its elements times the itemsizes of every node): half the
    last-level cache's share of one evaluator thread (Linux sysfs), within 1-8 MiB; 2
    MiB where the cache is not known. The blocks stay cache-resident, and each costs
    ~25 us of Python a call (a few us an op), so they should be no smaller than that.
    A 5-op chain on 16M float32, 2 threads of a 2-core EPYC with 16 MiB of L3 (L2 512
    KiB): 1 MiB blocks 93 ms, 2 MiB 65, 4 MiB 56, 8 MiB 55."""
    base = "/sys/devices/system/cpu/cpu0/cache"
    try:
        best = (0, 0, 1)
        for name in os.listdir(base):
            d = os.path.join(base, name)
            if not name.startswith("index"):
                continue
            with open(os.path.join(d, "type")) as f:
                if f.read().strip() == "Instruction":
                    continue
            with open(os.path.join(d, "level")) as f:
                level = int(f.read())
            with open(os.path.join(d, "size")) as f:
                text = f.read().strip()
            size = int(text.rstrip("KMG")) << {"K": 10, "M": 20, "G": 30}.get(text[-1:], 0)
            with open(os.path.join(d, "shared_cpu_list")) as f:
                cpus = sum(int(b) - int(a) + 1 for a, _, b in
                           (r.partition("-") if "-" in r else (r, "", r)
                            for r in f.read().strip().split(",")))
            best = max(best, (level, size, cpus))
        _, size, cpus = best
        if size == 0:
            return 1 << 21
        share = size // max(1, min(threads, cpus))
        return max(1 << 20, min(1 << 23, share // 2))
    except (OSError, ValueError):
        return 1 << 21


BLOCK_BYTES = _block_bytes(THREADS)
_pool: list = []

_REDUCE = {"sum": np.add, "mean": np.add, "prod": np.multiply, "max": np.maximum,
           "min": np.minimum, "any": np.logical_or, "all": np.logical_and}
_IDENTITY = {"sum": 0, "prod": 1, "any": False, "all": True}


def _executor():
    if not _pool:
        _pool.append(ThreadPoolExecutor(THREADS, thread_name_prefix="hipfer-fuse"))
    return _pool[0]


class Program:
    """A graph prepared for the NumPy backend: which nodes are per-call scalars, which
    inputs the result depends on, and the backend plans per block shape."""

    def __init__(self, graph, be):
        self.g, self.be = graph, be
        nodes = graph.nodes
        self.small = []           # node -> computed once per call (0-d: scalars only)
        deps = []                 # node -> the inputs it reads
        for n in nodes:
            if n.kind == "input":
                self.small.append(False)
                deps.append(frozenset((n.what,)))
            elif n.kind == "scalar":
                self.small.append(True)
                deps.append(frozenset())
            else:
                self.small.append(all(self.small[a] for a in n.args))
                deps.append(frozenset().union(*(deps[a] for a in n.args)))
        self.deps = sorted(deps[graph.out])
        self.live = _live(graph)  # the nodes the result reads (a dead op is not run)
        self.itemsize = sum(n.dtype.itemsize for n in nodes if n.kind != "scalar")
        self._plans: dict = {}
        self._whole: dict = {}  # input shapes -> the step list of _whole (_whole_steps)

    def runs(self, shapes_of) -> list:
        """Per node, fn(*args, out=dst) for the operand shapes shapes_of(node): an op of
        the table is the backend's own implementation (numpy_impl: what the plan of its
        descriptor runs, here without the error-state wrapper the caller already holds),
        called directly; the casts and wheres run their plan."""
        key = tuple(shapes_of(i) if n.kind == "op" else None for i, n in enumerate(self.g.nodes))
        hit = self._plans.get(key)
        if hit is None:
            hit = []
            for i, n in enumerate(self.g.nodes):
                if n.kind != "op" or i not in self.live:
                    hit.append(None)
                elif hasattr(n.what, "op"):
                    hit.append(numpy_impl(n.what.op.row.name, self.g.nodes[n.args[0]].dtype))
                else:
                    run = self.plan(i, key[i]).run
                    hit.append(lambda *args, out, run=run: run(args, out))
            self._plans[key] = hit
        return hit

    def plan(self, i: int, shapes):
        key = (i, shapes)
        p = self._plans.get(key)
        if p is None:
            n = self.g.nodes[i]
            p = self._plans[key] = self.be.plan(
                n.what, tuple(self.g.nodes[a].dtype for a in n.args), shapes)
        return p


def _live(graph) -> frozenset:
    live, todo = set(), [graph.out]
    while todo:
        i = todo.pop()
        if i not in live:
            live.add(i)
            todo.extend(graph.nodes[i].args)
    return frozenset(live)


def _scalars(prog: Program, slot_values) -> dict:
    """Every per-call scalar node as a 0-d array (the ops among them run once)."""
    be, nodes, vals = prog.be, prog.g.nodes, {}
    for i, n in enumerate(nodes):
        if not prog.small[i]:
            continue
        if n.kind == "scalar":
            vals[i] = slot_values[n.what]
        else:
            out = be.empty((), n.dtype)
            be.execute(prog.plan(i, tuple(() for _ in n.args)), [vals[a] for a in n.args], out)
            vals[i] = out
    return vals


def _blocks(shape, itemsize: int):
    """(k, chunk, [(outer index, start, count)]) covering shape in C order."""
    per = max(1, BLOCK_BYTES // max(itemsize, 1))
    n = len(shape)
    k, inner = n - 1, 1
    while k > 0 and inner * shape[k] <= per:
        inner *= shape[k]
        k -= 1
    if inner * shape[k] <= per:  # everything fits (k == 0)
        chunk = shape[k]
    else:
        chunk = max(1, per // inner)
    blocks = [(outer, j, min(chunk, shape[k] - j)) for outer in np.ndindex(*shape[:k])
              for j in range(0, shape[k], chunk)]
    return k, chunk, inner, blocks


def evaluate(prog: Program, arrays, conj, slot_values, shape):
    """The graph on NumPy arrays (broadcast to shape); returns the result array."""
    g, be = prog.g, prog.be
    nodes = g.nodes
    red = g.reduction
    if red is None and math.prod(shape) * prog.itemsize <= BLOCK_BYTES:
        return _whole(prog, arrays, conj, slot_values, shape)
    used = prog.deps
    # a C-contiguous problem runs flat (one axis): the blocks are plain slices
    flat = len(shape) != 1 and all(
        arrays[k].flags.c_contiguous and (arrays[k].shape == shape or arrays[k].size == 1)
        for k in used) and (red is None or red.axes == tuple(range(len(shape))))
    work_shape = (math.prod(shape),) if flat else shape
    views = [None] * len(arrays)
    for k in used:
        a = arrays[k]
        if not flat:
            views[k] = np.broadcast_to(a, shape)
        elif a.shape == shape:
            views[k] = a.reshape(work_shape)
        else:  # one element, broadcast
            views[k] = np.broadcast_to(a.reshape(()), work_shape)
    tok = fp_ignore()
    try:
        small = _scalars(prog, slot_values)
    finally:
        fp_restore(tok)
    out_node = nodes[g.out]
    if red is None:
        out = be.empty(shape, out_node.dtype)
        if out.size == 0:
            return out
        if prog.small[g.out]:
            out[...] = small[g.out]
            return out
        target = out.reshape(work_shape)
        axes = ()
    else:
        axes = red.axes if not flat else (0,)
        target = None
    if math.prod(work_shape) == 0:
        return _empty_reduction(be, red, shape)
    k, chunk, inner, blocks = _blocks(work_shape, prog.itemsize)
    run = _block_runner(prog, views, conj, small, work_shape, k, chunk, target, axes)
    total = math.prod(work_shape)
    if total >= THREAD_MIN and THREADS > 1 and len(blocks) > 1:
        per = -(-len(blocks) // THREADS)
        parts = [blocks[i:i + per] for i in range(0, len(blocks), per)]
        results = [r for f in [_executor().submit(run, p) for p in parts] for r in f.result()]
    else:
        results = run(blocks)
    if red is None:
        return out
    return _combine(be, red, results, work_shape, shape, k, axes, flat)


def _whole(prog: Program, arrays, conj, slot_values, shape):
    """A problem of one block: every node on the arrays as they are (NumPy broadcasts),
    each into a new array of its own broadcast shape -- eager's steps, without the
    blocks' views (the warm per-call cost of a small call: a flat list of steps over
    the live nodes, prepared once per input shapes)."""
    key = tuple(a.shape for a in arrays)
    steps = prog._whole.get(key)
    if steps is None:
        steps = prog._whole[key] = _whole_steps(prog, key)
    vals = [None] * len(prog.g.nodes)
    tok = fp_ignore()
    try:
        for i, kind, what, args, shp, dt, run in steps:
            if kind == 0:
                a = arrays[what]
                vals[i] = np.conjugate(a) if conj[what] else a
            elif kind == 1:
                vals[i] = slot_values[what]
            else:
                dst = vals[i] = np.empty(shp, dt)
                run(*[vals[a] for a in args], out=dst)
    finally:
        fp_restore(tok)
    out = vals[prog.g.out]
    if out.shape != shape:  # the result is a scalar node (it reads no input)
        full = prog.be.empty(shape, out.dtype)
        full[...] = out
        return full
    return out


def _whole_steps(prog: Program, in_shapes) -> list:
    """(node, kind 0 input / 1 scalar / 2 op, what, args, shape, dtype, run) per live
    node, in graph order."""
    g = prog.g
    shapes = []
    for n in g.nodes:
        shapes.append(in_shapes[n.what] if n.kind == "input" else () if n.kind == "scalar"
                      else tuple(np.broadcast_shapes(*(shapes[a] for a in n.args))))
    runs = prog.runs(lambda i: tuple(shapes[a] for a in g.nodes[i].args))
    kinds = {"input": 0, "scalar": 1, "op": 2}
    return [(i, kinds[n.kind], n.what, n.args, shapes[i], n.dtype, runs[i])
            for i, n in enumerate(g.nodes) if i in prog.live]


def _block_runner(prog, views, conj, small, work_shape, k, chunk, target, axes):
    """run(blocks) -> partials (reduction) for one worker: its own buffers."""
    g = prog.g
    nodes = g.nodes
    rest = tuple(work_shape[k + 1:])
    inner = math.prod(rest)
    red = g.reduction
    block_axes = tuple(a - k for a in axes if a >= k)
    ufunc = _REDUCE[red.op] if red is not None else None
    live = prog.live

    def run(blocks):
        bufs = {i: np.empty(chunk * inner, n.dtype) for i, n in enumerate(nodes)
                if i in live and not prog.small[i] and (n.kind == "op" or conj[n.what])}
        results = []
        last_shape, runs = None, None
        tok = fp_ignore()
        try:
            for outer, j, cnt in blocks:
                idx = outer + (slice(j, j + cnt),)
                bshape = (cnt,) + rest
                if bshape != last_shape:
                    runs = prog.runs(lambda i: tuple(() if prog.small[a] else bshape
                                                     for a in nodes[i].args))
                    last_shape = bshape
                vals = {}
                for i, n in enumerate(nodes):
                    if i not in live:
                        continue
                    if prog.small[i]:
                        vals[i] = small[i]
                        continue
                    if n.kind == "input":
                        v = views[n.what][idx]
                        if conj[n.what]:
                            v = np.conjugate(v, out=bufs[i][:cnt * inner].reshape(bshape))
                        vals[i] = v
                        continue
                    if i == g.out and target is not None:
                        dst = target[idx]
                    else:
                        dst = bufs[i][:cnt * inner].reshape(bshape)
                    runs[i](*[vals[a] for a in n.args], out=dst)
                    vals[i] = dst
                if red is not None:
                    v = vals[g.out]
                    if red.op in ("any", "all", "max", "min"):
                        part = ufunc.reduce(v, axis=block_axes, keepdims=True)
                    else:
                        part = ufunc.reduce(v, axis=block_axes, dtype=v.dtype, keepdims=True)
                    results.append((outer, j, cnt, part))
        finally:
            fp_restore(tok)
        return results
    return run


def _empty_reduction(be, red, shape):
    keep = tuple(1 if i in red.axes else n for i, n in enumerate(shape))
    if any(shape[i] == 0 for i in red.axes):
        if red.op in ("max", "min"):
            raise ValueError(f"hipfer.fuse: {red.op}(): zero-size reduction has no identity")
        value = np.nan if red.op == "mean" else _IDENTITY[red.op]
    else:
        value = 0
    out = be.empty(keep, red.out_dtype)
    out[...] = value
    return out if red.keepdims else out.reshape(tuple(n for i, n in enumerate(shape)
                                                      if i not in red.axes))


def _combine(be, red, results, work_shape, shape, k, axes, flat):
    """The reduction's output from the blocks' partials, combined in block order."""
    ufunc = _REDUCE[red.op]
    dt = results[0][3].dtype
    keep_work = tuple(1 if i in axes else n for i, n in enumerate(work_shape))
    acc = np.empty(keep_work, dt)
    groups: dict = {}
    for outer, j, cnt, part in results:  # blocks meeting the same destination, in order
        dest = tuple(0 if a in axes else outer[a] for a in range(k))
        if k in axes:
            key = dest + (slice(0, 1),)
        else:
            key = dest + (slice(j, j + cnt),)
        groups.setdefault((dest, key[-1].start, key[-1].stop), (key, []))[1].append(part)
    tok = fp_ignore()
    try:
        for key, parts in groups.values():
            if len(parts) == 1:
                acc[key] = parts[0]
            elif red.op in ("any", "all", "max", "min"):
                acc[key] = ufunc.reduce(np.stack(parts), axis=0)
            else:
                acc[key] = ufunc.reduce(np.stack(parts), axis=0, dtype=dt)
        if red.op == "mean":
            n = math.prod(work_shape[a] for a in axes)
            np.divide(acc, n, out=acc)
        res = acc.astype(red.out_dtype, copy=False)
    finally:
        fp_restore(tok)
    keep = tuple(1 if i in red.axes else n for i, n in enumerate(shape))
    res = res.reshape(keep)
    if not red.keepdims:
        res = res.reshape(tuple(n for i, n in enumerate(shape) if i not in red.axes))
    out = be.empty(res.shape, red.out_dtype)
    out[...] = res
    return out
