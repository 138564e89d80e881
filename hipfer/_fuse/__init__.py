"""hipfer.fuse: a chain of elementwise ops (optionally ending in one reduction) traced
once into an expression graph and run as one pass -- one kernel on the GPU, cache-sized
blocks on the CPU -- with the eager chain's results (docs/fuse.md).

    @hipfer.fuse
    def damped(a, b, c, w, t):
        return a * hipfer.exp(-b * t) + c * hipfer.sin(w * t)

The package: _graph (nodes and the eager dtype rules), _trace (the proxies and the
namespace during a trace), _cpu (the block evaluator); the GPU kernel source comes from
hipfer.kernels.fuse and runs through hipfer.backends.cupy.fuse.
"""
from __future__ import annotations

import functools

import numpy as np

from .. import _dtypes, _ops
from .._core import scalar_operand
from .._tensor import Tensor
from . import _cpu
from ._graph import Graph
from ._trace import trace

__all__ = ["fuse"]

#: input-shape combinations whose program and output shape a fused function keeps
_CALLS_KEPT = 64


def _slot_values(slots, args, dtypes) -> list:
    """The scalar slots' values for this call (values are arguments, not the graph)."""
    vals = []
    for src, dt in zip(slots, dtypes):
        value = args[src[1]] if src[0] == "arg" else src[1]
        if src[0] == "arg" and type(value) is not src[2]:
            raise TypeError(f"hipfer.fuse: argument {src[1]} changed type")  # not in the key
        if dt.kind in "iu" and type(value) is int:
            _dtypes.scalar_type(dt, value)  # OverflowError out of dt's range, as eagerly
        vals.append(value)
    return vals


class Fused:
    """A fused function: call it as the function itself. ``stats`` counts the traces and
    the compiled programs (both are cached: a second call of the same kind does neither)."""

    def __init__(self, fn):
        self.fn = fn
        functools.update_wrapper(self, fn)
        # (dtype, ndim | scalar type per argument) -> (graph, slots, their dtypes, programs:
        # (broadcast pattern, conj flags, backend) -> the compiled program, calls: (input
        # shapes, conj flags, backend) -> (program, output shape), the warm call's lookup)
        self._traces: dict = {}
        self.stats = {"traces": 0, "compiles": 0}

    def __repr__(self):
        return f"<hipfer.fuse of {getattr(self.fn, '__qualname__', self.fn)!r}>"

    def _trace(self, args):
        key = tuple((a.dtype, a.ndim) if isinstance(a, Tensor) else type(a) for a in args)
        hit = self._traces.get(key)
        if hit is None:
            for i, a in enumerate(args):
                if not isinstance(a, (Tensor, bool, int, float, complex, np.bool_,
                                      np.number)):
                    raise TypeError(f"hipfer.fuse: argument {i} is a {type(a).__name__}; a "
                                    "fused function takes hipfer Tensors and Python scalars")
            tensors = [a for a in args if isinstance(a, Tensor)]
            if not tensors:
                raise TypeError("hipfer.fuse: a fused function needs at least one Tensor "
                                "argument")
            graph, slots, _ = trace(self.fn, args, tensors[0].device)
            dts = [None] * len(slots)
            for n in graph.nodes:
                if n.kind == "scalar":
                    dts[n.what] = n.dtype
            hit = self._traces[key] = (graph, slots, tuple(dts), {}, {})
            self.stats["traces"] += 1
        return hit

    def _prepare(self, graph, programs, datas, conj, be):
        """(program, broadcast output shape) for a call on these arrays."""
        pattern = tuple(tuple(n == 1 for n in a.shape) for a in datas)
        key = (pattern, conj, be)  # the graph is the trace's (programs: its own table)
        prog = programs.get(key)
        if prog is None:
            prog = programs[key] = _program(graph, be)
            self.stats["compiles"] += 1
        try:
            shape = tuple(np.broadcast_shapes(*(datas[k].shape for k in prog.deps)))
        except ValueError:
            raise ValueError("hipfer.fuse: shapes " + ", ".join(
                str(datas[k].shape) for k in prog.deps) + " cannot be broadcast together") \
                from None
        return prog, shape

    def __call__(self, *args):
        graph, slots, slot_dts, programs, calls = self._trace(args)
        tensors = [a for a in args if isinstance(a, Tensor)]
        if graph.nodes[graph.out].kind == "input" and graph.reduction is None:
            return tensors[graph.nodes[graph.out].what]  # fn returned its argument
        be = _ops.backend_of(tensors)
        datas = [t._data for t in tensors]
        conj = tuple(t._conj for t in tensors)
        call_key = (tuple(a.shape for a in datas), conj, be)
        hit = calls.get(call_key)
        if hit is None:
            hit = self._prepare(graph, programs, datas, conj, be)
            if len(calls) >= _CALLS_KEPT:
                calls.clear()
            calls[call_key] = hit
        prog, shape = hit
        vals = _slot_values(slots, args, slot_dts)
        if isinstance(prog, _cpu.Program):
            arrays = [scalar_operand(v, dt, tensors[0])._data for v, dt in zip(vals, slot_dts)]
            return Tensor(_cpu.evaluate(prog, datas, conj, arrays, shape))
        from ..backends.cupy import fuse as gpu
        red = graph.reduction
        if prog.red is not None and 0 not in shape:  # one fused elementwise+reduce pass
            run = gpu.reduce_all if prog.whole else gpu.reduce_axes
            return Tensor(run(prog, datas, conj, vals, shape))
        res = Tensor(gpu.evaluate(prog, datas, conj, vals, shape))
        if red is None:
            return res
        # the GPU reduces the fused elementwise result with the eager reduction (a second
        # launch over one temporary; docs/fuse.md); the graph cast it to the reduction's dtype
        return _reduce_eagerly(res, red)


def _reduce_eagerly(x: Tensor, red) -> Tensor:
    from .. import _data_type_functions, _statistical
    fn = {"sum": _statistical.sum, "prod": _statistical.prod, "max": _statistical.max,
          "min": _statistical.min, "mean": _statistical.mean, "any": _statistical.any,
          "all": _statistical.all}[red.op]
    out = fn(x, axis=red.axes, keepdims=red.keepdims)
    return _data_type_functions.astype(out, red.out_dtype, copy=False)


def _program(graph: Graph, be):
    if isinstance(be.empty((0,), np.float32), np.ndarray):  # the NumPy backend
        return _cpu.Program(graph, be)
    from ..backends.cupy import fuse as gpu
    from ..kernels.fuse import REDUCE_OPS
    red = graph.reduction
    fused = red is not None and red.op in REDUCE_OPS
    return gpu.Program(Graph(graph.nodes, graph.out, graph.n_inputs), be,
                       red if fused else None)


def fuse(fn=None):
    """Fuse fn, a function of Tensors and Python scalars built from hipfer's elementwise
    functions and operators (where, astype, clip, comparisons, the math functions,
    broadcasting), optionally ending in one sum/prod/max/min/mean: traced once per kind
    of call and run as one pass over memory, with results bitwise equal to the eager
    chain (a reduction: within its rounding bound, deterministic). Use as ``@fuse`` or
    ``fuse(fn)(*args)``. What cannot be fused raises TypeError at trace time naming the
    op. Differs from eager: a function returning one of its arguments returns it itself."""
    if fn is None:
        return fuse
    if not callable(fn):
        raise TypeError(f"hipfer.fuse expects a function, got {type(fn).__name__}")
    return Fused(fn)
