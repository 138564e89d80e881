"""CPU tests of hipfer.kernels.gemm: the layout -> BLAS-arguments planner and the tropical
kernel instance list.

The planner's answer is checked by emulating the column-major ?gemmStridedBatched call
with NumPy on the very strides and leading dimensions it chose (reading each operand's
memory through as_strided, bounds-checked against the buffer it lives in) and comparing
with op_a(a) @ op_b(b) over many layouts, ops, conjugation flags and output views.
"""
import itertools

import numpy as np
import pytest

from hipfer.kernels import gemm as kg
from hipfer.prims.descriptors import GemmOp
from hipfer.prims.semiring import Semiring

OPS = (GemmOp.N, GemmOp.T, GemmOp.C)


# ------------------------------------------------------------------ operand layouts
def _stored_shape(op, rows, cols):
    return (rows, cols) if op is GemmOp.N else (cols, rows)


def make_operand(rng, layout, batch, shape, dtype):
    """(view, base): a (batch, *shape) array with the named layout, inside base."""
    r, c = shape

    def rand(*s):
        x = rng.standard_normal(s)
        if np.dtype(dtype).kind == "c":
            x = x + 1j * rng.standard_normal(s)
        return x.astype(dtype)

    if layout == "c":
        base = rand(batch, r, c)
        return base, base
    if layout == "f":          # each matrix column-major
        base = rand(batch, c, r)
        return base.transpose(0, 2, 1), base
    if layout == "batch_last":  # batch stride 1: no BLAS batch layout fits
        base = rand(r, c, batch)
        return base.transpose(2, 0, 1), base
    if layout == "row_step":   # rows every other one: ld = 2 * cols
        base = rand(batch, 2 * r, c)
        return base[:, ::2, :], base
    if layout == "col_step":   # no unit stride at all
        base = rand(batch, r, 2 * c)
        return base[:, :, ::2], base
    if layout == "neg_rows":
        base = rand(batch, r, c)
        return base[:, ::-1, :], base
    if layout == "neg_batch":
        base = rand(batch, r, c)
        return base[::-1], base
    if layout == "bcast":      # batch stride 0 with batch > 1
        base = rand(1, r, c)
        return np.broadcast_to(base, (batch, r, c)), base
    if layout == "padded_f":   # column-major with a leading dimension > rows
        base = rand(batch, c, r + 3)
        return base[:, :, :r].transpose(0, 2, 1), base
    raise ValueError(layout)


LAYOUTS = ("c", "f", "batch_last", "row_step", "col_step", "neg_rows", "neg_batch", "bcast",
           "padded_f")


def make_out(layout, batch, m, n, dtype, fill):
    """(view, base) for the output; base is pre-filled so stray writes show."""
    if layout == "c":
        base = np.full((batch, m, n), fill, dtype)
        return base, base
    if layout == "f":
        base = np.full((batch, n, m), fill, dtype)
        return base.transpose(0, 2, 1), base
    if layout == "col_step":
        base = np.full((batch, m, 2 * n), fill, dtype)
        return base[:, :, ::2], base
    if layout == "row_step":
        base = np.full((batch, 2 * m, n), fill, dtype)
        return base[:, ::2, :], base
    if layout == "neg_batch":
        base = np.full((batch, m, n), fill, dtype)
        return base[::-1], base
    if layout == "batch_mid":
        base = np.full((m, batch, n), fill, dtype)
        return base.transpose(1, 0, 2), base
    raise ValueError(layout)


OUT_LAYOUTS = ("c", "f", "col_step", "row_step", "neg_batch", "batch_mid")


# ------------------------------------------------------------------ the emulator
def elem_strides(x):
    return tuple(s // x.itemsize for s in x.strides)


def logical_ref(x, op, conj):
    """op(x) read with the lazy-conj flag, as NumPy values."""
    v = np.conj(x) if conj else x
    if op is GemmOp.N:
        return v
    v = v.transpose(0, 2, 1)
    return np.conj(v) if op is GemmOp.C else v


def materialise(x, op, conj):
    return np.ascontiguousarray(logical_ref(x, op, conj))


def blas_view(arr, base, batch, rows, cols, bstride, ld, writeable=False):
    """The column-major rows x cols matrices BLAS reads at arr's first element, after
    checking every address lies inside base (a wrong plan must not read stray memory)."""
    isz = arr.itemsize
    start = (arr.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // isz
    assert ld >= max(1, rows), f"ld={ld} < rows={rows}"
    assert bstride >= 0
    last = start + (batch - 1) * bstride + max(rows - 1, 0) + max(cols - 1, 0) * ld
    assert 0 <= start and last < base.size, "BLAS would read outside the operand"
    return np.lib.stride_tricks.as_strided(arr, (batch, rows, cols),
                                           (bstride * isz, isz, ld * isz),
                                           writeable=writeable)


def apply_op(mats, op, is_complex):
    if op == kg.OP_N:
        return mats
    assert op in (kg.OP_T, kg.OP_C)
    if op == kg.OP_C:
        assert is_complex, "op C chosen for a real dtype"
        mats = np.conj(mats)
    return mats.transpose(0, 2, 1)


def emulate(call, a, a_base, b, b_base, out, out_base, op_a, op_b, conj_a, conj_b,
            alpha, beta):
    """Run what semiring.py runs for this BlasCall, BLAS replaced by NumPy."""
    is_complex = a.dtype.kind == "c"
    if call.copy_a:
        a = a_base = materialise(a, op_a, conj_a)
    if call.copy_b:
        b = b_base = materialise(b, op_b, conj_b)
    if call.out_temp is None:
        c, c_base = out, out_base
    else:
        bt, m, n = out.shape
        c_base = np.full((bt, m, n) if call.out_temp == "row" else (bt, n, m), np.nan, out.dtype)
        c = c_base if call.out_temp == "row" else c_base.transpose(0, 2, 1)
        if beta != 0:
            c[...] = out
    (first, fb), (second, sb) = ((b, b_base), (a, a_base)) if call.swap else ((a, a_base), (b, b_base))
    ra, ca = (call.m, call.k) if call.transa == kg.OP_N else (call.k, call.m)
    rb, cb = (call.k, call.n) if call.transb == kg.OP_N else (call.n, call.k)
    A = apply_op(blas_view(first, fb, call.batch, ra, ca, call.stride_a, call.lda),
                 call.transa, is_complex)
    B = apply_op(blas_view(second, sb, call.batch, rb, cb, call.stride_b, call.ldb),
                 call.transb, is_complex)
    C = blas_view(c, c_base, call.batch, call.m, call.n, call.stride_c, call.ldc, True)
    prod = alpha * np.matmul(A, B)
    C[...] = prod if beta == 0 else prod + beta * C
    if c is not out:
        out[...] = c


def check(rng, dtype, op_a, op_b, conj_a, conj_b, la, lb, lo, batch_a=3, batch_b=3,
          m=4, n=5, k=3, alpha=1.5, beta=0.0):
    a, a_base = make_operand(rng, la, batch_a, _stored_shape(op_a, m, k), dtype)
    b, b_base = make_operand(rng, lb, batch_b, _stored_shape(op_b, k, n), dtype)
    batch = max(batch_a, batch_b)
    out, out_base = make_out(lo, batch, m, n, dtype, np.nan if beta == 0 else 0)
    if beta != 0:
        out[...] = rng.standard_normal(out.shape)
    before = out_base.copy()
    expect = alpha * np.matmul(logical_ref(a, op_a, conj_a), logical_ref(b, op_b, conj_b))
    if beta != 0:
        expect = expect + beta * out
    is_complex = np.dtype(dtype).kind == "c"
    call = kg.plan_blas(a.shape, elem_strides(a), op_a, conj_a,
                        b.shape, elem_strides(b), op_b, conj_b,
                        out.shape, elem_strides(out), is_complex)
    emulate(call, a, a_base, b, b_base, out, out_base, op_a, op_b, conj_a, conj_b, alpha, beta)
    np.testing.assert_allclose(out, expect, rtol=1e-12, atol=1e-12)
    # nothing outside the output view was written
    touched = np.zeros(out_base.shape, bool)
    _view_like(touched, out_base, out)[...] = True
    np.testing.assert_array_equal(out_base[~touched], before[~touched])
    return call


def _view_like(arr, base, view):
    """The view of arr (shaped like base) at the same offset and strides as view in base."""
    off = view.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    scale = arr.itemsize / base.itemsize
    flat = arr.reshape(-1)
    return np.lib.stride_tricks.as_strided(flat[int(off // base.itemsize):], view.shape,
                                           tuple(int(s * scale) for s in view.strides))


# ------------------------------------------------------------------ tests
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("op_a,op_b", list(itertools.product(OPS, OPS)))
def test_every_operand_layout(rng, dtype, op_a, op_b):
    conjs = (False, True) if np.dtype(dtype).kind == "c" else (False,)
    for la, lb in itertools.product(LAYOUTS, LAYOUTS):
        for conj_a, conj_b in itertools.product(conjs, conjs):
            check(rng, dtype, op_a, op_b, conj_a, conj_b, la, lb, "c")


@pytest.mark.parametrize("lo", OUT_LAYOUTS)
@pytest.mark.parametrize("beta", [0.0, 0.5])
def test_output_layouts(rng, lo, beta):
    for op_a, op_b, conj_a, conj_b in itertools.product(OPS, OPS, (False, True), (False, True)):
        for la, lb in (("c", "c"), ("f", "c"), ("c", "f"), ("col_step", "bcast")):
            check(rng, np.complex128, op_a, op_b, conj_a, conj_b, la, lb, lo, beta=beta)


@pytest.mark.parametrize("batch_a,batch_b", [(1, 4), (4, 1), (1, 1)])
def test_batch_broadcast(rng, batch_a, batch_b):
    for op_a, op_b in itertools.product(OPS, OPS):
        call = check(rng, np.complex128, op_a, op_b, False, True, "c", "f", "c",
                     batch_a=batch_a, batch_b=batch_b)
        if batch_a == 1:
            assert (call.stride_b if call.swap else call.stride_a) == 0
        if batch_b == 1:
            assert (call.stride_a if call.swap else call.stride_b) == 0


@pytest.mark.parametrize("m,n,k", [(1, 5, 3), (4, 1, 3), (4, 5, 1), (1, 1, 1), (1, 1, 6)])
def test_degenerate_sizes(rng, m, n, k):
    for op_a, op_b, la, lb, lo in itertools.product(OPS, OPS, ("c", "f", "col_step"),
                                                    ("c", "row_step"), ("c", "f", "col_step")):
        check(rng, np.complex128, op_a, op_b, True, False, la, lb, lo, m=m, n=n, k=k)


def test_plain_row_major_needs_nothing():
    """C-contiguous everything: the row-major trick, no copy, no temporary."""
    call = kg.plan_blas((2, 4, 3), (12, 3, 1), GemmOp.N, False, (2, 3, 5), (15, 5, 1),
                        GemmOp.N, False, (2, 4, 5), (20, 5, 1), False)
    assert call.swap and not (call.copy_a or call.copy_b) and call.out_temp is None
    assert (call.m, call.n, call.k) == (5, 4, 3)
    assert (call.transa, call.transb) == (kg.OP_N, kg.OP_N)
    assert (call.lda, call.ldb, call.ldc) == (5, 3, 5)


@pytest.mark.parametrize("op", [GemmOp.T, GemmOp.C])
def test_transposes_are_op_flags(op):
    """op T / op C (and conj with a transpose) of plain storage cost no copy."""
    for conj in (False, True):
        call = kg.plan_blas((2, 3, 4), (12, 4, 1), op, conj, (2, 5, 3), (15, 3, 1),
                            op, conj, (2, 4, 5), (20, 5, 1), True)
        assert not (call.copy_a or call.copy_b) and call.out_temp is None


def test_conj_without_transpose_picks_cheaper_fix():
    """conj(a) @ b on row-major data has no BLAS op in the row-major trick: either a is
    copied conjugated (m*k elements) or the product is written column-major to a
    temporary, where conj(a) reads as op C (m*n elements); the smaller wins."""
    big_k = kg.plan_blas((1, 4, 50), (200, 50, 1), GemmOp.N, True, (1, 50, 4), (200, 4, 1),
                         GemmOp.N, False, (1, 4, 4), (16, 4, 1), True)
    assert big_k.out_temp == "col" and not big_k.copy_a and big_k.transa == kg.OP_C
    small_k = kg.plan_blas((1, 40, 2), (80, 2, 1), GemmOp.N, True, (1, 2, 40), (80, 40, 1),
                           GemmOp.N, False, (1, 40, 40), (1600, 40, 1), True)
    assert small_k.copy_a and small_k.out_temp is None


def test_sizes_beyond_int32_are_refused():
    with pytest.raises(ValueError, match="int32"):
        kg.plan_blas((1, 2**31, 1), (2**31, 1, 1), GemmOp.N, False, (1, 1, 1), (1, 1, 1),
                     GemmOp.N, False, (1, 2**31, 1), (2**31, 1, 1), False)


def test_tropical_instances():
    groups = kg.instances()
    assert [g[0] for g in groups] == ["gemm_max_plus", "gemm_min_plus", "gemm_max_mul"]
    for _, file, exprs in groups:
        assert file == "gemm.cuh" and len(exprs) == 2 * len(kg.TROPICAL_DTYPES) == 22
    assert kg.tropical_expr(Semiring.MAX_PLUS, np.float32) == \
        "hf::gemm_semiring<hf::sr_max_plus, float, false>"
    assert kg.tropical_expr(Semiring.MIN_PLUS, np.int64, argmax=True) == \
        "hf::gemm_semiring<hf::sr_min_plus, long long, true>"
