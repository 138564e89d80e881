"""ArgReduce, Cumulative and SearchSorted on NumPy (the reference).

NumPy's argmax / argmin already return the first extreme with NaN as the extreme;
cumsum / cumprod run in the input dtype (ints wrap, bool is or / and); searchsorted
orders NaN last, as sort does.
"""
from __future__ import annotations

import numpy as np

from ...prims import descriptors as d
from ...prims.optable import ReduceOp
from ._common import Handler, conj_loader


def _make_arg(desc, dtypes, shapes, outs, strides, conj):
    axis = desc.axis % len(shapes[0])
    fn = np.argmax if desc.op is ReduceOp.MAX else np.argmin

    def run(inputs, out):
        if out.size:
            np.copyto(out, fn(inputs[0], axis=axis))
    return run


def _scan(x, op, axis, dt):
    if dt == np.bool_:  # running or / and
        acc = np.logical_or.accumulate if op is d.ScanOp.SUM else np.logical_and.accumulate
        return acc(x, axis=axis)
    fn = np.cumsum if op is d.ScanOp.SUM else np.cumprod
    # float16 runs in float32 and each output rounds once, as the GPU scan does (NumPy's
    # float16 cumsum rounds every step: 2048 + 1 == 2048)
    return fn(x, axis=axis, dtype=np.float32 if dt == np.float16 else dt)


def _make_cumulative(desc, dtypes, shapes, outs, strides, conj):
    dt = dtypes[0]
    axis = desc.axis % len(shapes[0])
    load = conj_loader(dtypes, conj)
    nd = len(shapes[0])
    first = tuple(slice(0, 1) if i == axis else slice(None) for i in range(nd))
    rest = tuple(slice(1, None) if i == axis else slice(None) for i in range(nd))
    identity = dt.type(0 if desc.op is d.ScanOp.SUM else 1)

    def run(inputs, out):
        if out.size == 0:
            return
        (x,) = load(inputs)
        with np.errstate(all="ignore"):
            if desc.include_initial:
                out[first] = identity
                if x.size:
                    np.copyto(out[rest], _scan(x, desc.op, axis, dt))
            else:
                np.copyto(out, _scan(x, desc.op, axis, dt))
    return run


def _make_searchsorted(desc, dtypes, shapes, outs, strides, conj):
    def run(inputs, out):
        if out.size:
            np.copyto(out, np.searchsorted(inputs[0], inputs[1], side=desc.side))
    return run


HANDLERS = {
    d.ArgReduce: Handler(_make_arg),
    d.Cumulative: Handler(_make_cumulative),
    d.SearchSorted: Handler(_make_searchsorted),
}
