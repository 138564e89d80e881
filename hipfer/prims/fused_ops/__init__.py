"""The op table of FusedPrims: one ``FusedOpDef`` per op of hipfer.nn.

Each topic of hipfer.nn keeps all of its parts in one folder, ``hipfer/nn/_<topic>/``:
``ops.py`` (its rows: shape/dtype rules, backend independent), ``reference.py`` (the
NumPy reference), ``kernels.py`` + ``fused_<topic>.cuh`` (the HIP C++ and its
instantiations), ``gpu.py`` (the CuPy implementation) and ``__init__.py`` (the public
functions); docs/architecture.md, "Adding a fused op". This module is what the core
knows of them: the topic list, the row type, the rule helpers the rows share, and the
Handler through which each backend finds its makers. Topics keep the files small:

    blas        gemm_ex, axpby, dot, sum, column_sums, accumulate_rows, add_row_vector,
                add_channel_vector, adam_step
    activation  relu/tanh/sigmoid/silu/exp/neg forward, elementwise_backward, dropout,
                bce_with_logits (+ gradient)
    norm        softmax_rows (+ backward), logsumexp_rows, layer_norm, rms_norm
                (forward and backward)
    batchnorm   batch_norm (training and eval, forward and backward, running
                statistics), group_norm (forward and backward)
    movement    rope (+ inverse), permute_0213, copy_2d, gather_rows, scatter_add_rows,
                top_k_rows
    conv        im2col, col2im_add, max_pool, max_unpool, avg_pool (+ backward); conv2d
                is composed in hipfer.nn from im2col + gemm_ex
    lrp         epsilon-rule layer-wise relevance propagation passes
    logic       soft logic (t-norms), power-mean aggregator, tanh-Gaussian policy, RL rows
    recurrent   LSTM/GRU cells, state-space scans (Mamba selective scan, RWKV WKV, RetNet)

Conventions for every op: floating operands are float32 or float64 and share one dtype;
index operands are int64; inputs are C-contiguous (hipfer.nn copies others first);
outputs are fresh C-contiguous arrays unless the op says it works in place (then the
caller passes ``out`` aliasing an input). ``infer`` validates everything it can from
dtypes and shapes and raises TypeError / ValueError naming the problem; runtime scalars
are validated by the backends' ``run`` (ValueError).
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Callable, Dict, Tuple

import numpy as np

#: the topics of hipfer.nn, each a folder hipfer/nn/_<topic>/ (topic_package); the core
#: finds every part of them through this list alone
TOPICS = ("blas", "activation", "norm", "batchnorm", "movement", "conv", "lrp", "logic",
          "recurrent")

FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
INDEX = np.dtype(np.int64)


@dataclass(frozen=True, eq=False)
class FusedOpDef:
    """One fused op: infer(desc, dtypes, shapes) -> ((shape, dtype), ...) validates and
    gives the outputs; probe(desc) -> input shapes that satisfy its rules (for
    has_fused_support, which knows no shapes); runtime: the keyword arguments execute
    takes (name -> default). A row is its op: the one place its name is written (a
    topic's ops.py binds it to a constant, which the reference, the GPU maker and the
    public function use), compared and hashed by identity (a key of ``makers``)."""
    name: str
    n_inputs: int
    infer: Callable
    probe: Callable
    runtime: Dict[str, object] = field(default_factory=dict)
    doc: str = ""


def topic_package(topic: str) -> str:
    """The package of a topic's folder, hipfer/nn/_<topic>/ (its public functions)."""
    return f"hipfer.nn._{topic}"


def topic_module(topic: str, part: str) -> str:
    """One part of a topic's folder: ops, reference, gpu or kernels."""
    return f"{topic_package(topic)}.{part}"


_table: Dict[str, FusedOpDef] = {}


def _load() -> Dict[str, FusedOpDef]:
    # imported on first use (a topic's ops.py imports this module); built aside and then
    # published, so that a lookup made while a topic imports never sees half a table
    if not _table:
        table: Dict[str, FusedOpDef] = {}
        for topic in TOPICS:
            for op in importlib.import_module(topic_module(topic, "ops")).OPS:
                if op.name in table:
                    raise RuntimeError(f"fused op {op.name!r} is defined twice")
                table[op.name] = op
        _table.update(table)
    return _table


def op_def(name: str) -> FusedOpDef:
    try:
        return _load()[name]
    except KeyError:
        raise TypeError(f"unknown fused op {name!r}") from None


def names() -> Tuple[str, ...]:
    return tuple(sorted(_load()))


def infer(desc, dtypes, shapes):
    op = op_def(desc.op)
    if len(dtypes) != op.n_inputs or len(shapes) != op.n_inputs:
        raise ValueError(f"{desc!r} takes {op.n_inputs} operand(s), got {len(dtypes)}")
    return tuple(op.infer(desc, tuple(dtypes), tuple(shapes)))


def probe_shapes(desc) -> tuple:
    return tuple(op_def(desc.op).probe(desc))


def makers(rows, table: dict) -> Dict[str, Callable]:
    """A topic's MAKERS, ``{op name: make}``, from ``{row: make}``: table must give a
    make for each of rows (the topic's OPS) and for nothing else, so that the reference
    and the GPU maker of a topic, both built this way, cannot drift apart."""
    missing = [r.name for r in rows if r not in table]
    extra = [getattr(r, "name", r) for r in table if r not in rows]
    if missing or extra:
        raise RuntimeError(f"makers: rows without a make {missing}, makes of no row {extra}")
    return {r.name: table[r] for r in rows}


class Handler:
    """A backend's FusedPrims handler: the MAKERS of every topic's module ``part``
    (reference for NumPy, gpu for CuPy: ``{op name: make(desc, dtypes, shapes, outs) ->
    run(inputs, out, **runtime)}``), imported on first use."""

    def __init__(self, part: str):
        self.part = part
        self._makers: dict = {}

    def makers(self) -> dict:
        if not self._makers:
            found: dict = {}
            for topic in TOPICS:
                found.update(importlib.import_module(topic_module(topic, self.part)).MAKERS)
            self._makers.update(found)
        return self._makers

    def supports(self, desc, dtypes) -> bool:
        return desc.op in self.makers()

    def make(self, desc, dtypes, shapes, outs, strides, conj):
        return self.makers()[desc.op](desc, dtypes, shapes, outs)


# ------------------------------------------------------------ rules shared by the topics
def floats(desc, dtypes, *which) -> np.dtype:
    """The common float32/float64 dtype of the operands at positions which (all if none)."""
    idx = which or tuple(range(len(dtypes)))
    dts = {dtypes[i] for i in idx}
    for dt in dts:
        if dt not in FLOATS:
            raise TypeError(f"{desc!r}: operands must be float32 or float64, got {dt}")
    if len(dts) > 1:
        raise TypeError(f"{desc!r}: operand dtypes differ ({', '.join(sorted(map(str, dts)))})")
    return dts.pop()


def index(desc, dtypes, i: int, what: str = "index") -> None:
    if dtypes[i] != INDEX:
        raise TypeError(f"{desc!r}: the {what} operand must be int64, got {dtypes[i]}")


def ndim(desc, shape, n: int, what: str) -> None:
    if len(shape) != n:
        raise ValueError(f"{desc!r}: {what} must be {n}-d, got shape {shape}")


def same(desc, a, b, what: str) -> None:
    if tuple(a) != tuple(b):
        raise ValueError(f"{desc!r}: {what} shapes differ ({tuple(a)} and {tuple(b)})")
