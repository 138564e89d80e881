"""Reductions on NumPy: Sum/Prod/Mean/Max/Min/All/Any, Var/Std, the complex -> real
fused reductions, and the SemiringCore reductions (ReduceAdd, Trace and its adjoints).

Mode labels: labels of modes_a missing from modes_c are reduced; the result is written
through ``out.transpose(perm)`` so modes_c may order the kept axes freely.
"""
from __future__ import annotations

import warnings
from math import prod

import numpy as np

from ...prims import descriptors as d
from ...prims.infer import real_dtype
from ...prims.optable import ReduceOp, UnaryOp
from ._common import Handler, conj_flags, fp_ignore, fp_restore, letters, reduce_layout, scaled

# the ufuncs' own reduce, which np.sum / np.max / np.all call after a Python-level wrapper
# (a third of a 10-element sum's host time)
_NUMPY_REDUCE = {ReduceOp.SUM: np.add.reduce, ReduceOp.PROD: np.multiply.reduce}
_NUMPY_EXTREMUM = {ReduceOp.MAX: np.maximum.reduce, ReduceOp.MIN: np.minimum.reduce,
                   ReduceOp.ALL: np.logical_and.reduce, ReduceOp.ANY: np.logical_or.reduce}


_NUMPY_NAN = {ReduceOp.NANSUM: np.nansum, ReduceOp.NANPROD: np.nanprod,
              ReduceOp.NANMEAN: np.nanmean, ReduceOp.NANMAX: np.nanmax,
              ReduceOp.NANMIN: np.nanmin, ReduceOp.NANVAR: np.nanvar, ReduceOp.NANSTD: np.nanstd}


def reducer(op: ReduceOp, modes_a, modes_c, shape, dt: np.dtype, correction=0.0):
    """compute(x, out): out (modes_c order, dtype dt) = op over the reduced labels of x."""
    axes, perm = reduce_layout(modes_a, modes_c)
    n = prod(shape[i] for i in axes)

    same = perm == tuple(range(len(perm)))  # out needs no transposed view
    if op in _NUMPY_REDUCE:  # accumulate in the output dtype: ints wrap, bool SUM counts
        fn = _NUMPY_REDUCE[op]

        def compute(x, out):
            fn(x, axis=axes, dtype=dt, out=out if same else out.transpose(perm))
    elif op in _NUMPY_EXTREMUM:
        fn = _NUMPY_EXTREMUM[op]

        def compute(x, out):
            fn(x, axis=axes, out=out if same else out.transpose(perm))
    elif op in _NUMPY_NAN:
        fn = _NUMPY_NAN[op]

        def compute(x, out):  # NumPy's nan-functions (their warnings: the namespace's)
            view = out.transpose(perm)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                if op in (ReduceOp.NANVAR, ReduceOp.NANSTD):
                    view[...] = fn(x, axis=axes, ddof=correction)
                elif op in (ReduceOp.NANMAX, ReduceOp.NANMIN):
                    view[...] = fn(x, axis=axes)
                else:
                    view[...] = fn(x, axis=axes, dtype=dt)
    elif op is ReduceOp.MEAN:
        def compute(x, out):  # empty -> 0 / 0 = NaN
            view = out.transpose(perm)
            np.sum(x, axis=axes, dtype=dt, out=view)
            np.divide(view, n, out=view)
    else:
        compute = _variance(op, axes, perm, n, correction)
    return compute


def _variance(op, axes, perm, n, correction):
    """VAR / STD: sum(|x - mean|^2) / max(n - correction, 0) (NumPy's)."""
    denom = max(n - correction, 0)

    def compute(x, out):
        view = out.transpose(perm)
        dev = np.asarray(x - np.sum(x, axis=axes, keepdims=True) / n)  # 0-d: not a scalar
        if dev.dtype.kind == "c":
            sq = np.square(dev.real)
            sq += np.square(dev.imag)
        else:
            sq = np.square(dev, out=dev)
        np.sum(sq, axis=axes, out=view)
        np.divide(view, denom, out=view)
        if op is ReduceOp.STD:
            np.sqrt(view, out=view)
    return compute


def _plain(compute):
    """run(inputs, out) for an unscaled reduction."""
    def run(inputs, out):
        if out.size == 0:
            return
        tok = fp_ignore()  # np.errstate(all="ignore"), at a third of its cost
        try:
            compute(inputs[0], out)
        finally:
            fp_restore(tok)
    return run


def _conj_after(compute, flip):
    """Sums, products and means commute with conjugation: conjugate the (small) result."""
    if not flip:
        return compute

    def conj_compute(x, out):
        compute(x, out)
        np.conjugate(out, out=out)
    return conj_compute


# ------------------------------------------------------------------ handlers
def _make_reduce(desc, dtypes, shapes, outs, strides, conj):
    op = desc.op
    compute = reducer(op, desc.modes_a, desc.modes_c, shapes[0], outs[0][1],
                      getattr(desc, "correction", 0.0))
    commutes = op in (ReduceOp.SUM, ReduceOp.PROD, ReduceOp.MEAN, ReduceOp.NANSUM,
                      ReduceOp.NANPROD, ReduceOp.NANMEAN)  # VAR/STD ignore conj
    return _plain(_conj_after(compute, commutes and conj_flags(dtypes, conj)[0]))


def _make_complex_real_reduce(desc, dtypes, shapes, outs, strides, conj):
    rdt = real_dtype(dtypes[0])
    negate_imag = conj_flags(dtypes, conj)[0]
    if desc.unary is UnaryOp.ABS:
        unary = np.abs
    elif desc.unary is UnaryOp.REAL:
        def unary(x):
            return x.real
    elif negate_imag:
        def unary(x):
            return np.negative(x.imag)
    else:
        def unary(x):
            return x.imag
    red = reducer(desc.reduce, desc.modes_a, desc.modes_c, shapes[0], rdt)

    def compute(x, out):
        red(unary(x), out)
    return _plain(compute)


def _make_reduce_add(desc, dtypes, shapes, outs, strides, conj):
    compute = reducer(ReduceOp.SUM, desc.modes_a, desc.modes_c, shapes[0], outs[0][1])
    compute = _conj_after(compute, conj_flags(dtypes, conj)[0])
    return scaled(lambda inputs, out: compute(inputs[0], out), outs[0][1])


def _make_trace(desc, dtypes, shapes, outs, strides, conj):
    sa, sc = letters(desc.modes_a, desc.modes_c)
    spec = f"{sa}->{sc}"

    def trace(x, out):
        np.einsum(spec, x, out=out)
    compute = _conj_after(trace, conj_flags(dtypes, conj)[0])
    return scaled(lambda inputs, out: compute(inputs[0], out), outs[0][1])


def _make_anti(desc, dtypes, shapes, outs, strides, conj):
    """AntiTrace / AntiDiag: zero the output, then write a through the writable einsum
    view of out's diagonals (one axis per distinct label of modes_c), broadcasting a
    over the labels it lacks."""
    modes_a, modes_c = desc.modes_a, desc.modes_c
    uniq = tuple(dict.fromkeys(modes_c))
    sc, su = letters(modes_c, uniq)
    diag = f"{sc}->{su}"
    perm = tuple(modes_a.index(m) for m in uniq if m in modes_a)
    expand = tuple(slice(None) if m in modes_a else None for m in uniq)
    flip = conj_flags(dtypes, conj)[0]
    repeats = len(uniq) != len(modes_c)  # else every element of out is written

    def compute(inputs, out):
        view = out
        if repeats:
            out[...] = 0
            view = np.einsum(diag, out)
        src = inputs[0].transpose(perm)[expand]
        if flip:
            np.conjugate(src, out=view)
        else:
            np.copyto(view, src)
    return scaled(compute, outs[0][1])


_REDUCE = Handler(_make_reduce)

HANDLERS = {
    d.ScalarReduce: _REDUCE, d.AnalyticReduce: _REDUCE, d.MetadataReduce: _REDUCE,
    d.ComplexRealReduce: Handler(_make_complex_real_reduce),
    d.ReduceAdd: Handler(_make_reduce_add),
    d.Trace: Handler(_make_trace),
    d.AntiTrace: Handler(_make_anti),
    d.AntiDiag: Handler(_make_anti),
}
