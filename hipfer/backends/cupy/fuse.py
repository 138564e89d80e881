"""hipfer.fuse on the GPU: a fused graph lowered to a kernel spec (hipfer.kernels.fuse),
compiled once per graph and device, and launched once per call.

The graph comes from the namespace (hipfer._fuse); this module reads its nodes (kind,
dtype, args, the prims descriptor) and imports nothing above the backends. The vector
kernel runs when every operand the result reads is dense in C order with the output's
shape, or one element (splat), and 16-byte aligned; anything else takes the N-d kernel
with the axes merged (_engine.collapse). Scalar slots are kernel arguments.
"""
from __future__ import annotations

import threading

import cupy
import numpy as np

from ...kernels import fuse as K
from . import _engine as eng

_lock = threading.Lock()
_modules: dict = {}  # (spec key, reduction, device) -> the module's kernels


def _deps(graph) -> list:
    deps = []
    for n in graph.nodes:
        deps.append(frozenset((n.what,)) if n.kind == "input" else frozenset() if
                    n.kind == "scalar" else frozenset().union(*(deps[a] for a in n.args)))
    return sorted(deps[graph.out])


class Program:
    """A graph's GPU kernels (compiled on first use) and what a launch needs."""

    def __init__(self, graph, be, reduction=None):
        """reduction: the reduction the kernels compute themselves (op in
        hipfer.kernels.fuse.REDUCE_OPS; over every axis: ``whole``), else None
        (elementwise only)."""
        self.g, self.be, self.red = graph, be, reduction
        self.whole = reduction is not None and \
            tuple(reduction.axes) == tuple(range(reduction.ndim))
        self.spec = K.lower(graph)
        self.deps = _deps(graph)
        self.out_dtype = graph.nodes[graph.out].dtype
        self.scalar_dtypes = self.spec.scalars
        self.pack = K.pack_width(self.spec)
        # the kernels' cache key but the device, once: hashing the spec's text each call
        # cost ~140 of a warm call's 143 us host time on the H200's host (cProfile,
        # 2026-12-03), ten eager launches
        self._key = (self.spec.key(), reduction and (reduction.op, reduction.out_dtype,
                                                     self.whole))

    def kernels(self):
        """(vec, nd) -- plus (red1, red2) with a whole reduction, (thread, block) with one
        over some axes -- compiled once per device."""
        red = self.red
        key = (*self._key, cupy.cuda.runtime.getDevice())
        ks = _modules.get(key)
        if ks is None:
            with _lock:
                ks = _modules.get(key)
                if ks is None:
                    src, names = K.source(self.spec), list(K.names(self.spec))
                    if red is not None and self.whole:
                        src += K.reduce_source(self.spec, red.op, red.out_dtype)
                        names += K.reduce_names(self.spec, red.op)
                    elif red is not None:
                        src += K.axes_source(self.spec, red.op, red.out_dtype)
                        names += [K.axes_name(self.spec, red.op, p) for p in K.AXES_PATHS]
                    mod = cupy.RawModule(code=src, options=eng.OPTIONS + eng.contraction_off())
                    ks = _modules[key] = tuple(mod.get_function(n) for n in names)
        return ks


def _host_scalar(value, dt: np.dtype):
    """value as a kernel argument of dtype dt (the fill's conversion: an unsafe cast)."""
    try:
        return dt.type(value)
    except (OverflowError, TypeError, ValueError):
        return np.asarray(value).astype(dt)[()]


def _on_device(fn):
    """fn run with the program's device current (as the backend's execute does)."""
    def run(prog, *args):
        be = prog.be
        if cupy.cuda.runtime.getDevice() != be.index:
            with be.cuda_device:
                return fn(prog, *args)
        return fn(prog, *args)
    run.__doc__ = fn.__doc__
    return run


@_on_device
def evaluate(prog: Program, datas, conj, slot_values, shape):
    """The fused elementwise result (a new CuPy array of shape); one launch."""
    out = prog.be.empty(shape, prog.out_dtype)
    n = out.size
    if n == 0:
        return out
    vec, nd = prog.kernels()
    scal = [_host_scalar(v, dt) for v, dt in zip(slot_values, prog.scalar_dtypes)]
    cbits = np.int32(sum(1 << k for k, c in enumerate(conj) if c))
    dense = all((a.flags.c_contiguous and a.shape == shape) or a.size == 1 for a in datas) \
        and all(a.data.ptr % 16 == 0 for a in datas) and out.data.ptr % 16 == 0
    if dense:
        splat = np.int32(sum(1 << k for k, a in enumerate(datas) if a.shape != shape))
        grid = eng.grid_for(n, prog.pack * K.EW_UNROLL, max_waves=K.EW_WAVES)
        vec((grid,), (eng.BLOCK,), (np.int64(n), out, *datas, *scal, splat, cbits))
        return out
    grid = (eng.grid_for(n, 4),)
    so = eng.elem_strides(out.strides, out.itemsize)
    sts = [eng.broadcast_strides(a.shape, eng.elem_strides(a.strides, a.itemsize), shape)
           if prog_reads(prog, k) else (0,) * len(shape) for k, a in enumerate(datas)]
    cshape, cst = eng.collapse(shape, so, *sts)
    args = [np.int64(n), eng.shape_arg(cshape), out, eng.strides_arg(cst[0])]
    for a, st in zip(datas, cst[1:]):
        args += [a, eng.strides_arg(st)]
    nd(grid, (eng.BLOCK,), (*args, *scal, cbits))
    return out


@_on_device
def reduce_all(prog: Program, datas, conj, slot_values, shape):
    """The fused full reduction: the partials of fixed element ranges (vector loads
    where every operand is dense and aligned), then one block over the partials (two
    launches, no temporary of the elementwise result)."""
    red = prog.red
    n = 1
    for k in shape:
        n *= k
    vec, nd, red1, red2 = prog.kernels()
    scal = [_host_scalar(v, dt) for v, dt in zip(slot_values, prog.scalar_dtypes)]
    cbits = np.int32(sum(1 << k for k, c in enumerate(conj) if c))
    dense = all((a.flags.c_contiguous and a.shape == shape) or a.size == 1 for a in datas)
    aligned = dense and all(a.data.ptr % 16 == 0 for a in datas)
    splat = np.int32(sum(1 << k for k, a in enumerate(datas) if a.shape != shape))
    blocks, chunk = K.reduce_geometry(prog.spec, n)  # from n alone: the order repeats
    c_strides, acc = [], 1
    for k in reversed(shape):
        c_strides.insert(0, acc)
        acc *= k
    sts = [eng.broadcast_strides(a.shape, eng.elem_strides(a.strides, a.itemsize), shape)
           if prog_reads(prog, k) else (0,) * len(shape) for k, a in enumerate(datas)]
    cshape, cst = eng.collapse(shape, tuple(c_strides), *sts)
    acc_dt = np.dtype(np.float32) if prog.out_dtype == np.float16 else prog.out_dtype
    part = prog.be.empty((blocks,), acc_dt)
    args = [np.int64(n), np.int64(chunk), eng.shape_arg(cshape), eng.strides_arg(cst[0]), part]
    for a, st in zip(datas, cst[1:]):
        args += [a, eng.strides_arg(st)]
    mode = np.int32(2 if aligned else 1 if dense else 0)  # how to load, not what
    red1((blocks,), (K.RED_BLOCK,), (*args, *scal, mode, splat, cbits))
    out = prog.be.empty((), red.out_dtype)
    red2((1,), (K.RED_BLOCK,), (np.int64(blocks), part, out, np.int64(n)))
    return out.reshape((1,) * len(shape)) if red.keepdims else out


@_on_device
def reduce_axes(prog: Program, datas, conj, slot_values, shape):
    """The fused reduction over some axes: each output folds its reduced elements
    straight from the inputs (no temporary of the elementwise result); one launch, two
    when few outputs split their elements (a thread per split, then one per output)."""
    red = prog.red
    axes = set(red.axes)
    keep = [d for d in range(len(shape)) if d not in axes]
    kshape = tuple(shape[d] for d in keep)
    out = prog.be.empty(kshape, red.out_dtype)
    sts = [eng.broadcast_strides(a.shape, eng.elem_strides(a.strides, a.itemsize), shape)
           if prog_reads(prog, k) else (0,) * len(shape) for k, a in enumerate(datas)]
    so = eng.elem_strides(out.strides, out.itemsize)
    kc, kst = eng.collapse(kshape, so, *[[st[d] for d in keep] for st in sts])
    rdims = sorted(axes)
    rc, rst = eng.collapse([shape[d] for d in rdims], *[[st[d] for d in rdims] for st in sts])
    M, K_ = out.size, 1
    for d in rdims:
        K_ *= shape[d]
    _, _, thread, block, group, finish = prog.kernels()
    scal = [_host_scalar(v, dt) for v, dt in zip(slot_values, prog.scalar_dtypes)]
    cbits = np.int32(sum(1 << k for k, c in enumerate(conj) if c))
    args = [np.int64(M), np.int64(K_), eng.shape_arg(kc), eng.shape_arg(rc), out,
            eng.strides_arg(kst[0])]
    for a, ks, rs in zip(datas, kst[1:], rst):
        args += [a, eng.strides_arg(ks), eng.strides_arg(rs)]
    path = K.axes_path(M, K_, len(shape) - 1 in axes)
    if path == "block":
        block((min(M, 65536),), (K.RED_BLOCK,), (*args, *scal, cbits))
    elif path == "group":
        # 32 lanes an output, RED_BLOCK // 32 outputs a block
        group((eng.grid_for(M * 32, block=K.RED_BLOCK, max_waves=K.AXES_WAVES),),
              (K.RED_BLOCK,), (*args, *scal, cbits))
    else:
        n_split, chunk = K.axes_split(M, K_)  # from the shape alone: the order repeats
        acc_dt = np.dtype(np.float32) if prog.out_dtype == np.float16 else prog.out_dtype
        part = prog.be.empty((n_split * M if n_split > 1 else 1,), acc_dt)
        thread((eng.grid_for(M * n_split),), (eng.BLOCK,),
               (*args, *scal, cbits, np.int64(n_split), np.int64(chunk), part))
        if n_split > 1:
            finish((eng.grid_for(M),), (eng.BLOCK,),
                   (np.int64(M), np.int64(K_), eng.shape_arg(kc), out, eng.strides_arg(kst[0]),
                    np.int64(n_split), part))
    if red.keepdims:
        out = out.reshape(tuple(1 if d in axes else n for d, n in enumerate(shape)))
    return out


def prog_reads(prog: Program, k: int) -> bool:
    """Whether the result reads input k (an unread input gets zero strides)."""
    return k in prog.deps
