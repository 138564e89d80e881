"""BatchedGemm (SemiringCore) and Contract (SemiringFastPath) on the GPU.

BatchedGemm, by semiring and dtype:
* standard, float32/64 and complex64/128: one hipBLAS/cuBLAS ``?gemmStridedBatched``
  call through CuPy's bindings. Transposes and conjugate-transposes are BLAS op flags
  and broadcast batches a zero batch stride; ``hipfer.kernels.gemm.plan_blas`` picks
  the layout (pure Python, tested on the CPU) and copies an operand only when BLAS
  cannot read it in place.
* standard, float16: the float32 call on float32 copies, rounded once into out.
* standard, integer and bool: ``cupy.matmul``, then alpha/beta in the result dtype.
* tropical (MAX_PLUS, MIN_PLUS, MAX_MUL): our tiled kernel ``hf::gemm_semiring``
  (kernels/gemm.cuh), which reads any strides, so nothing is ever copied.

Contract is one hipTENSOR/cuTENSOR contraction through the ctypes bindings of
``tensorlib``, once such a library is loaded; without one (or for a case it cannot do)
the handler says why and einsum plans the contraction as BatchedGemm steps.
"""
from __future__ import annotations

import functools

import cupy
import numpy as np

from ...kernels import CTYPE
from ...kernels import gemm as kg
from ...prims import descriptors as d
from . import _engine, tensorlib

_BLAS_FUNCS = {"f": "sgemmStridedBatched", "d": "dgemmStridedBatched",
               "F": "cgemmStridedBatched", "D": "zgemmStridedBatched"}
_MAX_GRID_Y = 65535


@functools.lru_cache(maxsize=None)
def _cublas():
    """CuPy's cuBLAS bindings (hipBLAS under ROCm), imported on first use."""
    from cupy_backends.cuda.libs import cublas
    return cublas


# ------------------------------------------------------------------ scalars
def _blas_scalar(v, dt: np.dtype, name: str) -> np.ndarray:
    """alpha/beta as a host value of the GEMM's dtype (BLAS reads it through a pointer)."""
    if np.iscomplexobj(v) and dt.kind != "c":
        if np.imag(v) != 0:
            raise TypeError(f"BatchedGemm: complex {name}={v!r} for a real {dt} GEMM")
        v = np.real(v)
    return np.array(v, dtype=dt)


def _int_scalar(v, dt: np.dtype, name: str):
    """alpha/beta in an integer or bool dtype; integers wrap as the arithmetic does."""
    if dt.kind == "b":
        return np.bool_(v != 0)
    try:
        iv = int(v)
    except (TypeError, ValueError, OverflowError):  # complex, NaN, inf
        iv = None
    if iv is None or iv != v:
        raise TypeError(f"BatchedGemm: {name}={v!r} is not an integer, as a {dt} GEMM needs")
    return np.array(iv & 0xFFFF_FFFF_FFFF_FFFF, dtype=np.uint64).astype(dt)[()]


def _empty_sum(out, beta):
    """out = alpha * 0 + beta * out for k == 0 (standard semiring); beta == 0 never reads out."""
    if beta == 0:
        out.fill(0)
    elif beta != 1:
        cupy.multiply(out, beta, out=out)


# ------------------------------------------------------------------ layout helpers
def _elem_strides(arr) -> tuple:
    item = arr.itemsize
    if any(s % item for s in arr.strides):
        raise ValueError(f"BatchedGemm: strides {arr.strides} are not multiples of the "
                         f"item size {item}")
    return tuple(s // item for s in arr.strides)


def _op_view(x, op: d.GemmOp):
    """op(x) as a view, without the conjugation of op C."""
    return x if op is d.GemmOp.N else x.transpose(0, 2, 1)


def _materialise(x, op: d.GemmOp, cj: bool):
    """C-contiguous copy of op(x), conjugated when cj: one pass (plan_blas asked for it)."""
    view = _op_view(x, op)
    dst = cupy.empty(view.shape, dtype=view.dtype)
    if cj:
        cupy.conjugate(view, out=dst)
    else:
        dst[...] = view
    return dst


def _out_temp(kind: str, out, beta):
    """The (batch, m, n) view of a temporary that BLAS can write, holding out if beta reads it."""
    b, m, n = out.shape
    tmp = cupy.empty((b, m, n), out.dtype) if kind == "row" else \
        cupy.empty((b, n, m), out.dtype).transpose(0, 2, 1)
    if beta != 0:
        tmp[...] = out
    return tmp


# ------------------------------------------------------------------ handlers
class _BatchedGemm:
    def supports(self, desc, dtypes) -> bool:
        if dtypes is None:
            return True
        dt = dtypes[0]
        if desc.semiring.is_tropical:
            return dt in kg.TROPICAL_DTYPES
        return dt in CTYPE

    def make(self, desc, dtypes, shapes, outs, strides, conj):
        dt = dtypes[0]
        if desc.semiring.is_tropical:
            return _tropical_run(desc, dt, shapes, outs[0][0])
        if dt.char in _BLAS_FUNCS:
            return _blas_run(desc, dt, shapes, outs[0][0], conj)
        if dt == np.float16:
            return _half_run(desc, shapes, outs[0][0], conj)
        return _matmul_run(desc, dt, shapes)


def _blas_run(desc, dt, shapes, out_shape, conj):
    """Standard float/complex GEMM: one ?gemmStridedBatched call per execute."""
    func_name = _BLAS_FUNCS[dt.char]
    k = shapes[0][2] if desc.op_a is d.GemmOp.N else shapes[0][1]
    is_complex = dt.kind == "c"
    cj_a = kg.conjugated(desc.op_a, conj[0], is_complex)
    cj_b = kg.conjugated(desc.op_b, conj[1], is_complex)
    calls: dict = {}  # (a.strides, b.strides, out.strides) -> kg.BlasCall

    def call_for(a, b, out) -> kg.BlasCall:
        key = (a.strides, b.strides, out.strides)
        call = calls.get(key)
        if call is None:
            call = calls[key] = kg.plan_blas(
                a.shape, _elem_strides(a), desc.op_a, conj[0],
                b.shape, _elem_strides(b), desc.op_b, conj[1],
                out_shape, _elem_strides(out), is_complex)
        return call

    def run(inputs, out, alpha=1, beta=0):
        alpha_h, beta_h = _blas_scalar(alpha, dt, "alpha"), _blas_scalar(beta, dt, "beta")
        if out.size == 0:
            return
        if k == 0:  # done here: BLAS libraries differ on k == 0 quick returns
            _empty_sum(out, beta_h[()])
            return
        a, b = inputs
        call = call_for(a, b, out)
        if call.copy_a:
            a = _materialise(a, desc.op_a, cj_a)
        if call.copy_b:
            b = _materialise(b, desc.op_b, cj_b)
        c = out if call.out_temp is None else _out_temp(call.out_temp, out, beta_h)
        _gemm_strided_batched(func_name, call, a, b, c, alpha_h, beta_h)
        if c is not out:
            out[...] = c

    return run


def _half_run(desc, shapes, out_shape, conj):
    """Standard float16 GEMM: sgemm on float32 copies (exact), one rounding into out.
    hipBLAS and cuBLAS spell their mixed-precision gemmEx differently; this path is the
    same on both and rounds no partial sum to half."""
    f32 = np.dtype(np.float32)
    gemm = _blas_run(desc, f32, shapes, out_shape, conj)

    def run(inputs, out, alpha=1, beta=0):
        if out.size == 0:
            return
        c = cupy.empty(out.shape, f32) if beta == 0 else out.astype(f32)
        gemm(tuple(x.astype(f32) for x in inputs), c, alpha, beta)
        out[...] = c

    return run


def _gemm_strided_batched(func_name, call: kg.BlasCall, a, b, c, alpha_h, beta_h):
    """One BLAS call, scalars by host pointer. CuPy's binding puts the handle on the
    current stream; the pointer mode is set to host for the call and restored."""
    cublas = _cublas()
    handle = cupy.cuda.device.get_cublas_handle()
    first, second = (b, a) if call.swap else (a, b)
    mode = cublas.getPointerMode(handle)
    if mode != cublas.CUBLAS_POINTER_MODE_HOST:
        cublas.setPointerMode(handle, cublas.CUBLAS_POINTER_MODE_HOST)
    try:
        getattr(cublas, func_name)(
            handle, call.transa, call.transb, call.m, call.n, call.k, alpha_h.ctypes.data,
            first.data.ptr, call.lda, call.stride_a,
            second.data.ptr, call.ldb, call.stride_b,
            beta_h.ctypes.data, c.data.ptr, call.ldc, call.stride_c, call.batch)
    finally:
        if mode != cublas.CUBLAS_POINTER_MODE_HOST:
            cublas.setPointerMode(handle, mode)


def _matmul_run(desc, dt, shapes):
    """Standard integer/bool GEMM: cupy.matmul (ints wrap, bool is or-of-and)."""
    k = shapes[0][2] if desc.op_a is d.GemmOp.N else shapes[0][1]

    def run(inputs, out, alpha=1, beta=0):
        al, be = _int_scalar(alpha, dt, "alpha"), _int_scalar(beta, dt, "beta")
        if out.size == 0:
            return
        if k == 0:
            _empty_sum(out, be)
            return
        a, b = inputs
        r = cupy.matmul(_op_view(a, desc.op_a), _op_view(b, desc.op_b))
        if be == 0:
            if al == 1:
                out[...] = r
            else:
                cupy.multiply(r, al, out=out)
            return
        if al != 1:
            cupy.multiply(r, al, out=r)
        if be != 1:
            cupy.multiply(out, be, out=out)
        cupy.add(out, r, out=out)

    return run


def _tropical_run(desc, dt, shapes, out_shape):
    """MAX_PLUS / MIN_PLUS / MAX_MUL through hf::gemm_semiring, reading every operand
    through its strides (op T is a stride swap, a broadcast batch stride 0)."""
    kernel = _engine.get_kernel(kg.FILE, kg.tropical_expr(desc.semiring, dt, desc.argmax))
    batch, m, n = out_shape
    k = shapes[0][2] if desc.op_a is d.GemmOp.N else shapes[0][1]
    tiles_n = -(-n // kg.TILE_N)
    grid = (max(1, -(-m // kg.TILE_M) * tiles_n), max(1, min(batch, _MAX_GRID_Y)))
    sizes = (np.int64(batch), np.int64(m), np.int64(n), np.int64(k), np.int64(tiles_n))
    strides_of: dict = {}  # (a.strides, b.strides, out.strides) -> kernel stride args

    def stride_args(a, b, out):
        key = (a.strides, b.strides, out.strides)
        st = strides_of.get(key)
        if st is None:
            ab, am, ak = _matrix_strides(a, desc.op_a)
            bb, bk, bn = _matrix_strides(b, desc.op_b)
            cb, cm, cn = _elem_strides(out)
            st = strides_of[key] = tuple(np.int64(s) for s in (ab, am, ak, bb, bk, bn, cb, cm, cn))
        return st

    def run(inputs, out, alpha=1, beta=0):
        desc.semiring.check_scale(alpha, beta)
        idx = None
        if desc.argmax:
            if beta != 0:
                raise ValueError("BatchedGemm with argmax takes beta=0 (the winner of "
                                 "out (+) result is not an index of this product)")
            out, idx = out
        if out.size == 0:
            return
        a, b = inputs
        ab, am, ak, bb, bk, bn, cb, cm, cn = stride_args(a, b, out)
        if idx is None:  # no argmax output: a null pointer the kernel never touches
            idx_args = (np.uintp(0), np.int64(0), np.int64(0), np.int64(0))
        else:
            idx_args = (idx, *(np.int64(s) for s in _elem_strides(idx)))
        kernel(grid, (kg.THREADS,),
               (a, ab, am, ak, b, bb, bk, bn, out, cb, cm, cn, *idx_args, *sizes, np.int32(beta)))

    return run


def _matrix_strides(x, op: d.GemmOp):
    """(batch, row, col) element strides of op(x); batch stride 0 for a batch of 1."""
    s0, s1, s2 = _elem_strides(x)
    if x.shape[0] == 1:
        s0 = 0
    return (s0, s1, s2) if op is d.GemmOp.N else (s0, s2, s1)


class _Contract:
    """One hipTENSOR (ROCm) / cuTENSOR (CUDA) contraction through hipfer's ctypes
    bindings (tensorlib). Supported only while a library of the right kind is loaded
    (hipfer.load_hiptensor / load_cutensor) and it handles the dtype, the standard
    semiring and the mode structure at that version; why_not says otherwise."""

    def supports(self, desc, dtypes) -> bool:
        return not tensorlib.why_not(desc, dtypes)

    def why_not(self, desc, dtypes) -> str:
        return tensorlib.why_not(desc, dtypes)

    def make(self, desc, dtypes, shapes, outs, strides, conj):
        return tensorlib.make_contract(desc, dtypes, shapes, outs, conj)


HANDLERS = {d.BatchedGemm: _BatchedGemm(), d.Contract: _Contract()}
