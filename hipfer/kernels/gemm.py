"""BatchedGemm planning in pure Python (no CuPy): the tropical kernel instantiations and
the choice of BLAS arguments for standard GEMM.

* ``tropical_expr(semiring, dtype)`` names the ``gemm_semiring`` instantiation of
  gemm.cuh; ``instances()`` lists them all for the offline compile check.
* ``plan_blas(...)`` turns operand layouts into the arguments of one
  ``?gemmStridedBatched`` call (column-major BLAS) -- a pure function, tested on the CPU
  by emulating the call with NumPy (tests/test_kernels_gemm_planning.py).

Strides here are in *elements* (not bytes) and may be zero or negative.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence, Tuple

from . import ctype, dtypes_of_kinds
from ..prims.descriptors import GemmOp
from ..prims.semiring import Semiring

FILE = "gemm.cuh"
#: threads per block and output tile of gemm_semiring (HF_GEMM_* in gemm.cuh)
THREADS = 256
TILE_M = 64
TILE_N = 64

_SEMIRING_STRUCT = {
    Semiring.MAX_PLUS: "hf::sr_max_plus",
    Semiring.MIN_PLUS: "hf::sr_min_plus",
    Semiring.MAX_MUL: "hf::sr_max_mul",
}
#: dtypes of the tropical kernel (BatchedGemm over a tropical semiring: kinds i, u, f)
TROPICAL_DTYPES = dtypes_of_kinds("iuf")


def tropical_expr(semiring: Semiring, dtype, argmax: bool = False) -> str:
    return (f"hf::gemm_semiring<{_SEMIRING_STRUCT[semiring]}, {ctype(dtype)}, "
            f"{'true' if argmax else 'false'}>")


def instances():
    """One kernel group per tropical semiring, holding every dtype, with and without
    the argmax output."""
    return [(f"gemm_{sr.cname}", FILE, [tropical_expr(sr, t, arg) for t in TROPICAL_DTYPES
                                        for arg in (False, True)])
            for sr in _SEMIRING_STRUCT]


# ===================================================================== BLAS planning
#: BLAS operation codes (CUBLAS_OP_N / _T / _C; CuPy maps them to hipBLAS on ROCm)
OP_N, OP_T, OP_C = 0, 1, 2
INT_MAX = 2**31 - 1


@dataclass(frozen=True)
class Matrix:
    """A batch of P x Q matrices as BLAS would read it: element (b, p, q) is at
    b*bs + p*rs + q*cs, conjugated when cj."""
    batch: int
    rows: int
    cols: int
    bs: int
    rs: int
    cs: int
    cj: bool

    @property
    def T(self) -> "Matrix":
        return Matrix(self.batch, self.cols, self.rows, self.bs, self.cs, self.rs, self.cj)

    @property
    def size(self) -> int:
        return self.batch * self.rows * self.cols


def conjugated(op: GemmOp, conj: bool, is_complex: bool) -> bool:
    """Whether op(x), x read with its lazy-conj flag, is conjugated: op C conjugates,
    and so does the flag; the two cancel."""
    return is_complex and ((op is GemmOp.C) != bool(conj))


def logical(shape: Sequence[int], strides: Sequence[int], op: GemmOp, conj: bool,
            is_complex: bool) -> Matrix:
    """The matrix an operand stands for after its op (N, T or C) and its lazy-conj flag."""
    b, r, c = shape
    s0, s1, s2 = strides
    cj = conjugated(op, conj, is_complex)
    if op is GemmOp.N:
        return Matrix(b, r, c, s0 if b != 1 else 0, s1, s2, cj)
    return Matrix(b, c, r, s0 if b != 1 else 0, s2, s1, cj)


def contiguous(mat: Matrix) -> Matrix:
    """The layout of a C-contiguous copy of mat with its conjugation resolved."""
    return Matrix(mat.batch, mat.rows, mat.cols, mat.rows * mat.cols if mat.batch != 1 else 0,
                  mat.cols, 1, False)


def blas_operand(z: Matrix) -> Optional[Tuple[int, int]]:
    """(op, ld) such that BLAS op(M) reads z, M column-major with leading dimension ld;
    None when no BLAS op can (no unit stride, ld too small, negative batch stride, or
    a conjugate without a transpose, which BLAS has no op for)."""
    if z.batch > 1 and z.bs < 0:
        return None
    p, q = z.rows, z.cols
    # op N: z[p, q] = M[p, q] at p + q*ld
    if not z.cj and (p <= 1 or z.rs == 1):
        ld = z.cs if q > 1 else max(1, p)
        if ld >= max(1, p):
            return OP_N, ld
    # op T / C: z[p, q] = M[q, p] (conjugated for C) at q + p*ld
    if q <= 1 or z.cs == 1:
        ld = z.rs if p > 1 else max(1, q)
        if ld >= max(1, q):
            return (OP_C if z.cj else OP_T), ld
    return None


def blas_output(o: Matrix) -> Optional[int]:
    """ldc such that BLAS writes o column-major (op N), else None."""
    res = blas_operand(o)
    if res is None or res[0] != OP_N:
        return None
    return res[1]


@dataclass(frozen=True)
class BlasCall:
    """Everything the run step needs for one ?gemmStridedBatched call.

    swap: the output is written transposed (C^T = B^T A^T, the row-major trick), so
      BLAS's A slot reads hipfer's b and its B slot hipfer's a.
    copy_a / copy_b: that hipfer operand is first copied to a C-contiguous array of its
      logical matrix (after op, conjugation resolved); ops and lds assume the copy.
    out_temp: None (BLAS writes out directly), 'row' (into a C-contiguous temporary)
      or 'col' (into a temporary whose last two axes are column-major); copied back after.
    """
    swap: bool
    transa: int
    transb: int
    m: int
    n: int
    k: int
    lda: int
    ldb: int
    ldc: int
    stride_a: int
    stride_b: int
    stride_c: int
    batch: int
    copy_a: bool
    copy_b: bool
    out_temp: Optional[str]


def temp_strides(kind: str, m: int, n: int) -> Tuple[int, int, int]:
    """Element strides of the (batch, m, n) view of an output temporary of that kind."""
    return (m * n, n, 1) if kind == "row" else (m * n, 1, m)


def _out_matrix(batch: int, m: int, n: int, strides) -> Matrix:
    return Matrix(batch, m, n, strides[0] if batch != 1 else 0, strides[1], strides[2], False)


def _slots(x: Matrix, y: Matrix, swap: bool):
    """The matrices BLAS's A and B slots read: op(A) op(B) = X Y, or Y^T X^T if swap."""
    return (y.T, x.T) if swap else (x, y)


def _needs_copy(x: Matrix, y: Matrix, swap: bool) -> Tuple[bool, bool]:
    """Whether hipfer's a and b (in that order) must be copied for this output layout."""
    za, zb = _slots(x, y, swap)
    ca, cb = blas_operand(za) is None, blas_operand(zb) is None
    return (cb, ca) if swap else (ca, cb)


#: (output temporary, swap) in order of preference when costs tie
_CANDIDATES = ((None, True), (None, False), ("row", True), ("col", False))


def plan_blas(a_shape, a_strides, op_a: GemmOp, conj_a: bool,
              b_shape, b_strides, op_b: GemmOp, conj_b: bool,
              out_shape, out_strides, is_complex: bool) -> BlasCall:
    """Choose the cheapest way to run out = op_a(a) op_b(b) as one strided-batched BLAS
    call: write out directly as row-major (swap) or column-major, or through a
    temporary, and copy an operand only when BLAS cannot read it in place. The cost
    counted is the number of elements copied (operands and output temporary)."""
    x = logical(a_shape, a_strides, op_a, conj_a, is_complex)
    y = logical(b_shape, b_strides, op_b, conj_b, is_complex)
    batch, m, n = out_shape
    o = _out_matrix(batch, m, n, out_strides)
    if max(m, n, x.cols, batch) > INT_MAX:
        raise ValueError(f"BatchedGemm: sizes (batch={batch}, m={m}, n={n}, k={x.cols}) "
                         f"exceed the BLAS int32 limit")
    best = None
    for temp, swap in _CANDIDATES:
        dst = o if temp is None else _out_matrix(batch, m, n, temp_strides(temp, m, n))
        if blas_output(dst.T if swap else dst) is None:
            continue
        ca, cb = _needs_copy(x, y, swap)
        cost = (x.size if ca else 0) + (y.size if cb else 0) + (o.size if temp else 0)
        if best is None or cost < best[0]:
            best = (cost, temp, swap, dst, ca, cb)
    _, temp, swap, dst, ca, cb = best
    return _call(contiguous(x) if ca else x, contiguous(y) if cb else y, dst, swap,
                 ca, cb, temp)


def _call(x: Matrix, y: Matrix, o: Matrix, swap: bool, ca: bool, cb: bool,
          temp: Optional[str]) -> BlasCall:
    za, zb = _slots(x, y, swap)
    zc = o.T if swap else o
    (transa, lda), (transb, ldb) = blas_operand(za), blas_operand(zb)
    ldc = blas_output(zc)
    if max(lda, ldb, ldc) > INT_MAX:
        raise ValueError(f"BatchedGemm: leading dimensions ({lda}, {ldb}, {ldc}) exceed "
                         f"the BLAS int32 limit")
    return BlasCall(swap, transa, transb, zc.rows, zc.cols, za.cols, lda, ldb, ldc,
                    za.bs, zb.bs, zc.bs, o.batch, ca, cb, temp)
