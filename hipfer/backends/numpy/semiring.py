"""BatchedGemm and Contract on NumPy, over all four semirings.

Standard (+, x) runs on ``np.matmul`` (BLAS for floats). The tropical semirings
(max/min, +/x) broadcast the product over a block of the inner dimension and reduce it,
block by block, so the temporary stays near ``_BLOCK`` elements whatever k is.

Contract is transpose-transpose-GEMM-transpose: labels only in one operand are reduced
first, then each operand is laid out as (batch, free, contracted) and multiplied.
"""
from __future__ import annotations

from math import prod

import numpy as np

from ...prims import descriptors as d
from ...prims.semiring import Semiring
from ._common import Handler, conj_flags, scaled, tropical_scaled

_BLOCK = 1 << 22  # elements of the broadcast (batch, m, kc, n) temporary

_UFUNC = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}


def _tropical_matmul(semiring: Semiring, dt: np.dtype):
    """mm(A, B, out): out = A (x) B over a tropical semiring, A (Ba, m, k), B (Bb, k, n)."""
    add, mul = _UFUNC[semiring.add], _UFUNC[semiring.mul]
    zero = semiring.zero_for(dt)

    def mm(A, B, out):
        k = A.shape[2]
        if k == 0:
            out[...] = zero
            return
        kc = max(1, _BLOCK // max(1, out.size))
        for k0 in range(0, k, kc):
            t = mul(A[:, :, k0:k0 + kc, None], B[:, None, k0:k0 + kc, :])
            if k0 == 0:
                add.reduce(t, axis=2, out=out)
            else:
                add(out, add.reduce(t, axis=2), out=out)
    return mm


def _tropical_argmatmul(semiring: Semiring, dt: np.dtype):
    """mm(A, B, (out, idx)): the tropical product and the k of each winning term (the
    first of equal ones; a NaN beats any number, as in np.argmax). Blocks of k as in
    _tropical_matmul; a later block wins only when strictly better."""
    mul = _UFUNC[semiring.mul]
    arg = np.argmax if semiring.add == "max" else np.argmin
    strictly = np.greater if semiring.add == "max" else np.less
    zero = semiring.zero_for(dt)

    def mm(A, B, outs):
        out, idx = outs
        k = A.shape[2]
        if k == 0:
            out[...] = zero
            idx[...] = -1
            return
        kc = max(1, _BLOCK // max(1, out.size))
        for k0 in range(0, k, kc):
            t = mul(A[:, :, k0:k0 + kc, None], B[:, None, k0:k0 + kc, :])
            t = np.broadcast_to(t, out.shape[:2] + t.shape[2:])
            j = arg(t, axis=2)
            v = np.take_along_axis(t, j[:, :, None, :], axis=2)[:, :, 0, :]
            if k0 == 0:
                out[...], idx[...] = v, j
            else:
                win = strictly(v, out) | ((v != v) & (out == out))
                out[win], idx[win] = v[win], j[win] + k0
    return mm


def _standard_matmul(flip_a: bool, flip_b: bool):
    """mm(A, B, out) = A @ B with A and/or B read conjugated."""
    if flip_a and flip_b:  # conj(A) conj(B) == conj(A B)
        def mm(A, B, out):
            np.matmul(A, B, out=out)
            np.conjugate(out, out=out)
    elif flip_a or flip_b:
        def mm(A, B, out):
            np.matmul(np.conjugate(A) if flip_a else A, np.conjugate(B) if flip_b else B, out=out)
    else:
        def mm(A, B, out):
            np.matmul(A, B, out=out)
    return mm


def _wrap(compute, dt, semiring):
    if semiring.is_tropical:
        return tropical_scaled(compute, dt, semiring)
    return scaled(compute, dt)


# ---------------------------------------------------------------- BatchedGemm
def _make_gemm(desc, dtypes, shapes, outs, strides, conj):
    dt = outs[0][1]
    ca, cb = conj_flags(dtypes, conj)
    complex_ = dtypes[0].kind == "c"
    # op C on a complex operand is a conjugated read; a conj flag toggles it
    flip_a = ca ^ (desc.op_a is d.GemmOp.C and complex_)
    flip_b = cb ^ (desc.op_b is d.GemmOp.C and complex_)
    ta, tb = desc.op_a is not d.GemmOp.N, desc.op_b is not d.GemmOp.N
    if desc.argmax:
        mm = _tropical_argmatmul(desc.semiring, dt)
    elif desc.semiring.is_tropical:
        mm = _tropical_matmul(desc.semiring, dt)
    else:
        mm = _standard_matmul(flip_a, flip_b)

    def compute(inputs, out):
        a, b = inputs
        mm(a.transpose(0, 2, 1) if ta else a, b.transpose(0, 2, 1) if tb else b, out)
    if desc.argmax:
        return _with_argmax(compute, desc.semiring)
    return _wrap(compute, dt, desc.semiring)


def _with_argmax(compute, semiring):
    """run(inputs, (out, idx), alpha=1, beta=0): an argmax has no meaning for beta 1."""
    def run(inputs, outs, alpha=1, beta=0):
        semiring.check_scale(alpha, beta)
        if beta != 0:
            raise ValueError("BatchedGemm with argmax takes beta=0 (the winner of "
                             "out (+) result is not an index of this product)")
        if outs[0].size:
            with np.errstate(all="ignore"):
                compute(inputs, outs)
    return run


# ------------------------------------------------------------------- Contract
def _operand_prep(modes, shape, groups, reduce_labels, semiring, dt, flip):
    """prep(x): x reduced (semiring sum) over reduce_labels, permuted to the label
    order of the three groups and reshaped to one axis per group (batch, rows, cols)."""
    red = tuple(i for i, m in enumerate(modes) if m in reduce_labels)
    kept = [m for m in modes if m not in reduce_labels]
    perm = tuple(kept.index(m) for g in groups for m in g)
    size = dict(zip(modes, shape))
    dims = tuple(prod(size[m] for m in g) for g in groups)
    if semiring.is_tropical:
        add, zero = _UFUNC[semiring.add], semiring.zero_for(dt)

        def reduce_(x):
            return add.reduce(x, axis=red, initial=zero)
    else:
        def reduce_(x):
            return np.sum(x, axis=red, dtype=dt)

    def prep(x):
        if red:
            x = reduce_(x)
        x = x.transpose(perm)
        if flip:
            x = np.conjugate(x)
        return x.reshape(dims)
    return prep


def _make_contract(desc, dtypes, shapes, outs, strides, conj):
    ma, mb, mc = desc.modes_a, desc.modes_b, desc.modes_c
    sr, dt = desc.semiring, outs[0][1]
    batch = [m for m in mc if m in ma and m in mb]
    free_a = [m for m in mc if m in ma and m not in mb]
    free_b = [m for m in mc if m in mb and m not in ma]
    inner = [m for m in ma if m in mb and m not in mc]
    only_a = {m for m in ma if m not in mb and m not in mc}
    only_b = {m for m in mb if m not in ma and m not in mc}
    ca, cb = conj_flags(dtypes, conj)
    both = ca and cb  # conj(a) conj(b) == conj(a b): conjugate the result instead
    prep_a = _operand_prep(ma, shapes[0], (batch, free_a, inner), only_a, sr, dt, ca and not both)
    prep_b = _operand_prep(mb, shapes[1], (batch, inner, free_b), only_b, sr, dt, cb and not both)

    size = {**dict(zip(ma, shapes[0])), **dict(zip(mb, shapes[1]))}
    order = batch + free_a + free_b
    perm = tuple(mc.index(m) for m in order)
    res_shape = tuple(size[m] for m in order)
    gemm_shape = (prod(size[m] for m in batch), prod(size[m] for m in free_a),
                  prod(size[m] for m in free_b))
    mm = _tropical_matmul(sr, dt) if sr.is_tropical else _standard_matmul(both, both)

    def compute(inputs, out):
        A, B = prep_a(inputs[0]), prep_b(inputs[1])
        view = out.transpose(perm)
        # a (batch, m, n) view of out when its layout allows one, else a scratch copy
        target = view.reshape(gemm_shape)
        mm(A, B, target)
        if not np.may_share_memory(target, out):
            np.copyto(view, target.reshape(res_shape))
    return _wrap(compute, dt, sr)


HANDLERS = {
    d.BatchedGemm: Handler(_make_gemm),
    d.Contract: Handler(_make_contract),
}
