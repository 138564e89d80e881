"""hipfer.linalg: the array API linalg extension (2025.12), on every backend.

Decompositions, inverses and solves are one LinalgPrims.Factorize descriptor each: the
backend's solver library (LAPACK through NumPy on the CPU; cuSOLVER / hipSOLVER through
CuPy on the GPU). Everything else is composed from the namespace's own prims: tensordot
and matrix_power on BatchedGemm (matmul), vecdot / trace / the norms on elementwise ops
and reductions, pinv on svd + matmul, the upper Cholesky factor as a lazily conjugated
transpose of the lower one (a view, nothing copied).

numpy.linalg's own functions (norm, cond, lstsq, multi_dot, tensorinv, tensorsolve) and
NumPy's keywords of the shared ones (svd's compute_uv / hermitian, pinv's rcond /
hermitian, matrix_rank's tol / hermitian, eigh's UPLO, qr's mode='r') are compositions of
the same pieces. Where the standard has a function, its signature is the standard's and
NumPy's extra parameters are keyword-only (np.linalg.<name>(t, ...) binds NumPy's
positional arguments to them). Operands may be Tensors or array_likes (lists, NumPy arrays, scalars: the
host data the caller passed moves to the device of the Tensor operand, else to the
default device).

Integer and bool operands of the factorizations are computed in float64. A singular
matrix (inv, solve), a matrix that is not positive-definite (cholesky), or a solver that
does not converge raises ``hipfer.linalg.LinAlgError``, a ValueError subclass, on every
backend; so do operands that are not (square) matrices where those are needed, as in
NumPy.
"""
from __future__ import annotations

import builtins as _builtins
import math as _math
import operator as _operator
from typing import NamedTuple as _NamedTuple

import numpy as _np

from . import _dtypes, _ops, _views
from ._core import cast as _cast
from ._core import NotAnOperand as _NotAnOperand, host_operand as _host_operand
from ._creation import asarray as _asarray, empty as _empty, zeros as _zeros
from ._einsum import contract as _contract
from ._elementwise import (abs as _abs, divide as _divide, greater as _greater,
                           imag as _imag, isfinite as _isfinite, isnan as _isnan,
                           logical_and as _logical_and, logical_not as _logical_not,
                           multiply as _multiply, not_equal as _not_equal, pow as _pow,
                           real as _real, reciprocal as _reciprocal, sign as _sign,
                           sqrt as _sqrt, square as _square, subtract as _subtract,
                           where as _where)
from ._indexing import take_along_axis as _take_along_axis
from ._sorting import argsort as _argsort
from ._linear_algebra import matmul
from ._statistical import all as _all, any as _any, max as _max, min as _min, sum as _sum
from ._tensor import Tensor
from ._views import (broadcast_to as _broadcast_to, diagonal, matrix_transpose, moveaxis as _moveaxis,
                     permute_dims as _permute_dims, reshape as _reshape)
from .prims import descriptors as _d
from .prims.descriptors import LinAlgError  # noqa: F401 - part of this module's API
from .prims.infer import real_dtype as _real_dtype

__all__ = [
    "cholesky", "cond", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh",
    "inv", "lstsq", "matmul", "matrix_norm", "matrix_power", "matrix_rank",
    "matrix_transpose", "multi_dot", "norm", "outer", "pinv", "qr", "slogdet", "solve",
    "svd", "svdvals", "tensordot", "tensorinv", "tensorsolve", "trace", "vecdot",
    "vector_norm",
]

_K = _d.FactorKind


class EighResult(_NamedTuple):
    eigenvalues: Tensor
    eigenvectors: Tensor


class EigResult(_NamedTuple):
    eigenvalues: Tensor
    eigenvectors: Tensor


class QRResult(_NamedTuple):
    Q: Tensor
    R: Tensor


class SlogdetResult(_NamedTuple):
    sign: Tensor
    logabsdet: Tensor


class SVDResult(_NamedTuple):
    U: Tensor
    S: Tensor
    Vh: Tensor


# ------------------------------------------------------------------ helpers
_HOST = (list, tuple, _np.ndarray, _np.generic, int, float, complex)


def _tensor(x, name: str, like=None) -> Tensor:
    """x as a Tensor: host data the caller passed (lists, NumPy arrays, scalars) moves to
    like's device (the other operand's), else to the default device."""
    if isinstance(x, Tensor):
        return x
    if not isinstance(x, _HOST):
        raise TypeError(f"{name}() expects a hipfer Tensor or an array_like, got "
                        f"{type(x).__module__}.{type(x).__name__} (convert it with "
                        "hipfer.asarray)")
    if like is not None and not isinstance(x, (int, float, complex, _np.generic)):
        try:
            return _host_operand(x, like)
        except _NotAnOperand as e:
            raise TypeError(f"{name}(): {e}") from None
    try:
        return _asarray(x, device=None if like is None else like.device)
    except (TypeError, ValueError) as e:
        raise type(e)(f"{name}(): {e}") from None


def _floating(x: Tensor) -> Tensor:
    """x in a floating dtype: integers and bool compute in float64."""
    return _cast(x, _dtypes.float_for(x.dtype))


def _matrices(x, name: str, square=False, solver=True) -> Tensor:
    """x checked as a stack of (square) matrices, in a floating dtype; solver: for a
    solver library, which takes no float16."""
    x = _tensor(x, name)
    if x.ndim < 2:  # LinAlgError (a ValueError), as NumPy raises
        raise LinAlgError(f"{name}() needs a (..., M, N) tensor, got shape {x.shape}")
    if square and x.shape[-1] != x.shape[-2]:
        raise LinAlgError(f"{name}() needs square matrices, got shape {x.shape}")
    return _solvable(_floating(x), name) if solver else _floating(x)


def _solvable(x: Tensor, name: str) -> Tensor:
    """x, refused for float16 as NumPy's LAPACK does: checked here, so that an empty x
    (which no solver sees) is refused as well."""
    if x.dtype == _dtypes.float16:
        raise TypeError(f"{name}() does not support float16 (no solver library takes it); "
                        "cast to float32 first")
    return x


def _pair(x1, x2, name: str):
    """Two operands as Tensors, host data going to the Tensor operand's device."""
    x1 = _tensor(x1, name, like=x2 if isinstance(x2, Tensor) else None)
    return x1, _tensor(x2, name, like=x1)


def _numeric(x: Tensor, name: str) -> Tensor:
    if x.dtype == _dtypes.bool:
        raise TypeError(f"{name}() needs a numeric tensor, got bool")
    return x


def _numeric_pair(x1, x2, name: str):
    x1, x2 = _pair(x1, x2, name)
    return _numeric(x1, name), _numeric(x2, name)


def _factor(kind: _d.FactorKind, inputs, full=False, called=None):
    """Factorize kind of the inputs; its errors name `called` (default: the kind's name)."""
    out = _ops.run(_d.Factorize(kind, full), inputs, called=called or kind.value)
    return tuple(Tensor(o) for o in out) if isinstance(out, tuple) else Tensor(out)


def _finite(x: Tensor, name: str) -> Tensor:
    """x, checked to hold no inf or NaN: the iterative solvers (SVD, the eigensolvers)
    can loop for ever or return garbage on them (OpenBLAS's gesdd never returns for a
    matrix holding inf). One reduction and one read-back, which the solver's own info
    read pays on the GPU anyway."""
    if x.size and not bool(_all(_isfinite(x))):
        raise LinAlgError(f"{name}(): the matrix holds inf or NaN, which {name} cannot "
                          "decompose")
    return x


def _eps_tol(x: Tensor, rtol, name: str = "matrix_rank"):
    """rtol as a Python float or a tensor broadcasting against the (..., K) singular values
    (None: max(M, N) * eps of x's precision)."""
    if rtol is None:
        return max(x.shape[-2:]) * float(_np.finfo(_real_dtype(x.dtype)).eps)
    return _per_matrix(rtol, x, name)


def _per_matrix(v, x: Tensor, name: str):
    """A scalar, or an array_like of one value per matrix of x (broadcasting against the
    batch axes), shaped to broadcast against the (..., K) singular values."""
    if isinstance(v, (int, float, _np.integer, _np.floating)) and not isinstance(v, bool):
        return float(v)
    v = _tensor(v, name, like=x)
    return _reshape(v, v.shape + (1,))


def _identity(shape, dt, device) -> Tensor:
    """Identity matrices of shape (..., M, M)."""
    eye = _zeros(shape, dtype=dt, device=device)
    diagonal(eye)[...] = 1
    return eye


# ------------------------------------------------------------ factorizations
def cholesky(x: Tensor, /, *, upper: bool = False) -> Tensor:
    """Lower factor L (x = L L^H); upper=True gives U = L^H as a lazily conjugated view."""
    lower = _factor(_K.CHOLESKY, [_matrices(x, "cholesky", square=True)])
    return matrix_transpose(lower.conj()) if upper else lower


def det(x: Tensor, /) -> Tensor:
    """Determinant of each matrix in x (..., M, M); the result is (...,) of x's dtype."""
    return _factor(_K.DET, [_matrices(x, "det", square=True)])


def slogdet(x: Tensor, /) -> SlogdetResult:
    """(sign, logabsdet) of each matrix's determinant: det = sign * exp(logabsdet).
    sign is 0 and logabsdet -inf for a singular matrix; logabsdet has x's real dtype.
    """
    return SlogdetResult(*_factor(_K.SLOGDET, [_matrices(x, "slogdet", square=True)]))


def inv(x: Tensor, /) -> Tensor:
    """Inverse of each matrix in x (..., M, M); LinAlgError for a singular matrix."""
    return _factor(_K.INV, [_matrices(x, "inv", square=True)])


def _hermitian(x, UPLO: str, name: str) -> Tensor:
    """x checked for the Hermitian solvers, with the triangle UPLO names in the lower one
    they read: the upper triangle of x is the lower one of x^H, a lazily conjugated view."""
    if UPLO not in ("L", "U"):
        raise ValueError(f"{name}(): UPLO must be 'L' or 'U', got {UPLO!r}")
    x = _finite(_matrices(x, name, square=True), name)
    return matrix_transpose(x.conj()) if UPLO == "U" else x


def eigh(x: Tensor, /, *, UPLO: str = "L") -> EighResult:
    """(eigenvalues, eigenvectors) of each Hermitian / symmetric matrix in x, read from
    its lower (UPLO='L') or upper ('U') triangle. The eigenvalues ascend and have x's real
    dtype; x is assumed Hermitian (not checked).
    """
    return EighResult(*_factor(_K.EIGH, [_hermitian(x, UPLO, "eigh")]))


def eigvalsh(x: Tensor, /, *, UPLO: str = "L") -> Tensor:
    """Eigenvalues (ascending, x's real dtype) of each Hermitian / symmetric matrix, read
    from its lower (UPLO='L') or upper ('U') triangle."""
    return _factor(_K.EIGVALSH, [_hermitian(x, UPLO, "eigvalsh")])


def _real_if_real(x: Tensor, w: Tensor, *more: Tensor):
    """NumPy's eig rule: a real x whose eigenvalues all have zero imaginary part gets real
    results (the dtype depends on the data: one read-back of one bool)."""
    if x.dtype.kind == "c" or bool(_any(_not_equal(_imag(w), 0))):
        return (w,) + more
    return tuple(_real(t) for t in (w,) + more)


def _general_eig(kind: _d.FactorKind, a: Tensor, name: str):
    """Factorize EIG / EIGVALS, refused with the reason where the backend has no general
    eigensolver (CuPy's needs CuPy >= 14, CUDA's Xgeev, and is not on ROCm)."""
    be = _ops.backend_of([a])
    if not be.has_linalg_support(_d.Factorize(kind), (a.dtype,)):
        raise TypeError(f"{name}(): general (non-Hermitian) eigenvalues are not available on "
                        f"{a.device} with the {be.name} backend: they need CuPy >= 14 on CUDA "
                        "(cupy.linalg.eig, cuSOLVER's Xgeev); CuPy on ROCm has none. "
                        "eigh / eigvalsh serve Hermitian matrices everywhere")
    return _factor(kind, [a])


def eig(x: Tensor, /) -> EigResult:
    """Eigenvalues and right eigenvectors of each general square matrix in x: complex, or
    real (NumPy's rule) when x is real and every eigenvalue is real, which one read-back
    decides. Not on ROCm (CuPy has no geev there) nor on CuPy < 14 (no cupy.linalg.eig):
    those raise an error saying so."""
    a = _finite(_matrices(x, "eig", square=True), "eig")
    return EigResult(*_real_if_real(a, *_general_eig(_K.EIG, a, "eig")))


def eigvals(x: Tensor, /) -> Tensor:
    """Eigenvalues of each general square matrix in x, complex or (as eig) real; the same
    backends as eig."""
    a = _finite(_matrices(x, "eigvals", square=True), "eigvals")
    return _real_if_real(a, _general_eig(_K.EIGVALS, a, "eigvals"))[0]


def qr(x: Tensor, /, *, mode: str = "reduced"):
    """(Q, R) with x = Q @ R for each matrix (..., M, N); mode "reduced" gives Q
    (..., M, K), R (..., K, N) with K = min(M, N); "complete" gives Q (..., M, M); "r"
    gives R (..., K, N) alone; "raw" gives NumPy's (h, tau), LAPACK's Householder form
    (h (..., N, M), tau (..., K)). NumPy's deprecated "full" / "economic" are refused.
    """
    if mode not in ("reduced", "complete", "r", "raw"):
        raise ValueError(f"qr(): mode must be 'reduced', 'complete', 'r' or 'raw', got {mode!r}")
    if mode == "raw":
        return _factor(_K.QR_RAW, [_matrices(x, "qr")], called="qr")
    q, r = _factor(_K.QR, [_matrices(x, "qr")], full=mode == "complete")
    return r if mode == "r" else QRResult(q, r)


def svd(x: Tensor, /, *, full_matrices: bool = True, compute_uv: bool = True,
        hermitian: bool = False):
    """(U, S, Vh) with x = U @ diag(S) @ Vh for each matrix (..., M, N).

    S descends and has x's real dtype; full_matrices=True gives square U and Vh, False the
    reduced K = min(M, N) ones; compute_uv=False gives S alone. hermitian=True takes x as
    Hermitian and computes from its eigendecomposition (lower triangle), as NumPy does.
    Non-finite input is a LinAlgError.
    """
    a = _finite(_matrices(x, "svd"), "svd")
    if hermitian:
        return _hermitian_svd(a, bool(compute_uv), "svd")
    if not compute_uv:
        return _factor(_K.SVDVALS, [a])
    return SVDResult(*_factor(_K.SVD, [a], full=bool(full_matrices)))


def _hermitian_svd(a: Tensor, compute_uv: bool, name: str = "svd"):
    """NumPy's svd(hermitian=True): s = |eigenvalues| descending; U the eigenvectors in
    that order, Vh = (U * sign(eigenvalues))^H."""
    if a.shape[-1] != a.shape[-2]:
        raise LinAlgError(f"{name}(): hermitian=True needs square matrices, got shape "
                          f"{a.shape}")
    if not compute_uv:
        w = _abs(_factor(_K.EIGVALSH, [a]))
        return _take_along_axis(w, _argsort(w, axis=-1, descending=True), axis=-1)
    w, u = _factor(_K.EIGH, [a])
    order = _argsort(_abs(w), axis=-1, descending=True)
    w = _take_along_axis(w, order, axis=-1)
    u = _take_along_axis(u, _reshape(order, order.shape[:-1] + (1, order.shape[-1])), axis=-1)
    sgn = _cast(_sign(w), u.dtype)
    vh = matrix_transpose(_multiply(u, _reshape(sgn, sgn.shape[:-1] + (1, sgn.shape[-1]))).conj())
    return SVDResult(u, _abs(w), vh)


def svdvals(x: Tensor, /) -> Tensor:
    """Singular values (descending, x's real dtype) of each matrix (..., M, N)."""
    return _svdvals(_matrices(x, "svdvals"), "svdvals")


def _svdvals(x: Tensor, name: str) -> Tensor:
    """The singular values of checked matrices, for the function `name` (its errors)."""
    return _factor(_K.SVDVALS, [_finite(_solvable(x, name), name)])


def solve(x1: Tensor, x2: Tensor, /) -> Tensor:
    """x with x1 @ x = x2. A 1-d x2 of shape (M,) is one right-hand side for every matrix
    (the result is (..., M)); otherwise x2 is (..., M, K) and the batch axes broadcast."""
    x1, x2 = _pair(x1, x2, "solve")
    dt = _dtypes.float_for(_dtypes.result_type(x1.dtype, x2.dtype))
    a = _matrices(_cast(x1, dt), "solve", square=True)
    b = _cast(x2, dt)
    m = a.shape[-1]
    vector = b.ndim == 1
    if vector:
        b = _reshape(b, (b.shape[0], 1))
    if b.ndim < 2 or b.shape[-2] != m:
        raise ValueError(f"solve(): x2 of shape {x2.shape} does not fit x1 of shape {x1.shape}")
    try:
        batch = tuple(_np.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    except ValueError:
        raise ValueError(f"solve(): batch shapes of {x1.shape} and {x2.shape} do not broadcast") from None
    a = _broadcast_to(a, batch + a.shape[-2:])
    b = _broadcast_to(b, batch + b.shape[-2:])
    out = _factor(_K.SOLVE, [a, b])
    return _reshape(out, batch + (m,)) if vector else out


# --------------------------------------------------- built on singular values
def matrix_rank(x: Tensor, /, *, rtol=None, tol=None, hermitian: bool = False) -> Tensor:
    """Count of singular values > tol (absolute), or > rtol * the largest (default rtol:
    max(M, N) * eps); tol and rtol may hold one value per matrix. A 0-d or 1-d x has rank
    1 unless all zero (NumPy's rule). The result is int64 (a 0-d tensor for one matrix)."""
    if tol is not None and rtol is not None:
        raise ValueError("matrix_rank(): tol and rtol cannot both be given")
    x = _tensor(x, "matrix_rank")
    if x.ndim < 2:
        return _cast(_any(_not_equal(x, 0)), _dtypes.int64)
    x = _matrices(x, "matrix_rank")
    s = _singular_values(x, hermitian, "matrix_rank")
    if s.shape[-1] == 0:
        return _zeros(x.shape[:-2], dtype=_dtypes.int64, device=x.device)
    if tol is None:
        tol = _multiply(_max(s, axis=-1, keepdims=True), _eps_tol(x, rtol))
    else:
        tol = _per_matrix(tol, x, "matrix_rank")
    return _sum(_greater(s, tol), axis=-1, dtype=_dtypes.int64)


def _singular_values(x: Tensor, hermitian: bool, name: str) -> Tensor:
    """The singular values (descending) of checked matrices; hermitian: from eigvalsh."""
    if hermitian:
        return _hermitian_svd(_finite(_solvable(x, name), name), False, name)
    return _svdvals(x, name)


def pinv(x: Tensor, /, *, rtol=None, rcond=None, hermitian: bool = False) -> Tensor:
    """Moore-Penrose pseudo-inverse: V diag(1/s, s > cutoff * max(s)) U^H from the SVD.

    The cutoff is rcond (NumPy's name) or rtol, either possibly one value per matrix;
    neither given: the standard's max(M, N) * eps. np.linalg.pinv(t) with neither keeps
    NumPy's own default, 1e-15 (hipfer._numpy_dispatch passes it). hermitian=True takes
    the SVD from the eigendecomposition."""
    x = _matrices(x, "pinv")
    if rcond is not None and rtol is not None:
        raise ValueError("pinv(): rcond and rtol cannot both be given")
    cut = _eps_tol(x, rtol if rcond is None else rcond, "pinv")
    m, n = x.shape[-2:]
    if m == 0 or n == 0:
        return _zeros(x.shape[:-2] + (n, m), dtype=x.dtype, device=x.device)
    a = _finite(_solvable(x, "pinv"), "pinv")
    u, s, vh = _hermitian_svd(a, True, "pinv") if hermitian else _factor(_K.SVD, [a], full=False)
    keep = _greater(s, _multiply(_max(s, axis=-1, keepdims=True), cut))
    s_inv = _where(keep, _reciprocal(_where(keep, s, 1.0)), 0.0)
    v_scaled = _multiply(matrix_transpose(vh.conj()),
                         _reshape(s_inv, s_inv.shape[:-1] + (1, s.shape[-1])))
    return matmul(v_scaled, matrix_transpose(u.conj()))


def cond(x, p=None) -> Tensor:
    """Condition number of each matrix (..., M, N) in the norm p: None / 2 / -2 from the
    singular values (any shape), 'fro', 'nuc', 1, -1, inf, -inf as norm(x) * norm(inv(x))
    (square). A singular matrix gives inf (NumPy's NaN-to-inf rule), unless x holds NaN."""
    x = _tensor(x, "cond")
    if x.ndim >= 2 and x.size == 0 and 0 in x.shape[-2:]:
        raise LinAlgError("cond(): cond is not defined on empty arrays")
    if p is None or (not isinstance(p, str) and p in (2, -2)):
        s = _svdvals(_matrices(x, "cond"), "cond")
        hi, lo = s[..., 0], s[..., -1]
        r = _divide(lo, hi) if p == -2 else _divide(hi, lo)
    else:
        a = _matrices(x, "cond", square=True)
        _solvable(a, "cond")
        # singular or non-finite matrices: inv would raise for the whole batch, NumPy
        # gives them NaN (made inf below): they are inverted as identities, then masked
        sign, _ = _factor(_K.SLOGDET, [a])
        bad = _logical_not(_logical_and(_not_equal(sign, 0), _all(_isfinite(a), axis=(-2, -1))))
        eye = _identity(a.shape, a.dtype, a.device)
        safe = _where(_reshape(bad, bad.shape + (1, 1)), eye, a)
        r = _multiply(_norm2(a, p, "cond"), _norm2(_factor(_K.INV, [safe]), p, "cond"))
        r = _where(bad, _math.nan, r)
    # NumPy: NaN from a zero singular value becomes inf, unless x itself held NaN
    nan_in_x = _any(_isnan(x), axis=(-2, -1))
    return _where(_logical_and(_isnan(r), _logical_not(nan_in_x)), _math.inf, r)


def lstsq(a, b, rcond=None):
    """Least-squares solution x of a @ x = b for a (M, N), b (M,) or (M, K): NumPy's
    (x, residuals, rank, s), by the SVD. Singular values <= rcond * the largest count as
    zero (default rcond: max(M, N) * eps). residuals (K,) are the squared residual norms
    when rank == N < M, else empty (0,): this size depends on the data, so lstsq reads
    the rank back (one sync). rank is a 0-d int32 tensor, s the singular values."""
    a, b = _pair(a, b, "lstsq")
    vector = b.ndim == 1
    if a.ndim != 2 or b.ndim not in (1, 2):
        raise LinAlgError(f"lstsq(): needs a 2-d a and a 1-d or 2-d b, got shapes {a.shape} "
                          f"and {b.shape}")
    m, n = a.shape
    if b.shape[0] != m:
        raise LinAlgError(f"lstsq(): incompatible dimensions {a.shape} and {b.shape}")
    dt = _dtypes.float_for(_dtypes.result_type(a.dtype, b.dtype))
    a = _solvable(_cast(a, dt), "lstsq")
    b2 = _solvable(_cast(_reshape(b, (m, 1)) if vector else b, dt), "lstsq")
    real = _real_dtype(dt)
    if rcond is None:
        rcond = max(m, n) * float(_np.finfo(real).eps)
    elif float(rcond) < 0:  # LAPACK's gelsd: a negative rcond means machine precision
        rcond = float(_np.finfo(real).eps)
    k = b2.shape[1]
    if m == 0 or n == 0:
        x = _zeros((n, k), dtype=dt, device=a.device)
        s = _zeros((0,), dtype=real, device=a.device)
        rank = _zeros((), dtype=_dtypes.int32, device=a.device)
    else:
        u, s, vh = _factor(_K.SVD, [_finite(a, "lstsq")], full=False)
        keep = _greater(s, _multiply(s[..., :1], float(rcond)))
        s_inv = _where(keep, _reciprocal(_where(keep, s, 1.0)), 0.0)
        uhb = matmul(matrix_transpose(u.conj()), b2)  # (K_s, k)
        x = matmul(matrix_transpose(vh.conj()), _multiply(_reshape(s_inv, (-1, 1)), uhb))
        rank = _cast(_sum(keep, dtype=_dtypes.int64), _dtypes.int32)
    if m > n and n > 0 and int(rank) == n:  # the one read-back
        resid = _sum(_square(_abs(_subtract(b2, matmul(a, x)))), axis=0)
    elif m > n and n == 0:  # NumPy: the residuals of x = 0 are |b|^2
        resid = _sum(_square(_abs(b2)), axis=0)
    else:
        resid = _zeros((0,), dtype=real, device=a.device)
    return (_reshape(x, (n,)) if vector else x), resid, rank, s


# ------------------------------------------------------------ composed ops
def matrix_power(x: Tensor, n: int, /) -> Tensor:
    """x ** n by repeated squaring on matmul; n == 0 gives identities, n < 0 powers of inv(x)."""
    x = _tensor(x, "matrix_power")
    try:
        n = _operator.index(n)
    except TypeError:
        raise TypeError(f"matrix_power(): the exponent must be an integer, got {n!r}") from None
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise LinAlgError(f"matrix_power() needs square matrices, got shape {x.shape}")
    if n == 0:
        return _identity(x.shape, x.dtype, x.device)
    if n < 0:
        x, n = _factor(_K.INV, [_matrices(x, "matrix_power", square=True)]), -n
    result, base = None, x
    while True:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if not n:
            return result
        base = matmul(base, base)


def multi_dot(arrays, *, out=None) -> Tensor:
    """The product of two or more matrices in the cheapest order (the classic chain-order
    dynamic program on the shapes). The first may be 1-d (a row vector), the last 1-d (a
    column vector), the others are 2-d; out, if given, must have the result's shape and
    dtype (NumPy's dot rule)."""
    arrays = list(arrays)
    if len(arrays) < 2:
        raise ValueError("multi_dot(): expecting at least two arrays")
    like = next((a for a in arrays if isinstance(a, Tensor)), None)
    ts = [_tensor(a, "multi_dot", like=like) for a in arrays]
    row, col = ts[0].ndim == 1, ts[-1].ndim == 1
    if row:
        ts[0] = _reshape(ts[0], (1, ts[0].shape[0]))
    if col:
        ts[-1] = _reshape(ts[-1], (ts[-1].shape[0], 1))
    for t in ts:
        if t.ndim != 2:
            raise LinAlgError(f"multi_dot(): {t.ndim}-dimensional array given; the arrays "
                              "must be 2-d (the first and last may be 1-d)")
    for t, u in zip(ts, ts[1:]):
        if t.shape[1] != u.shape[0]:
            raise ValueError(f"multi_dot(): shapes {t.shape} and {u.shape} are not aligned")
    r = _chain(ts, _chain_order([t.shape[0] for t in ts] + [ts[-1].shape[1]]), 0, len(ts) - 1)
    r = r[0, 0] if row and col else r[0] if row else r[:, 0] if col else r
    if out is None:
        return r
    if not isinstance(out, Tensor) or out.shape != r.shape or out.dtype != r.dtype:
        raise ValueError(f"multi_dot(): out must be a Tensor of shape {r.shape} and dtype "
                         f"{r.dtype}")
    out[...] = r
    return out


def _chain_order(dims: list) -> list:
    """split[i][j]: where the cheapest product of matrices i..j splits (matrix i is
    dims[i] x dims[i + 1]); the cost counts scalar multiplications."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = _math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _chain(ts, split, i, j) -> Tensor:
    if i == j:
        return ts[i]
    k = split[i][j]
    return matmul(_chain(ts, split, i, k), _chain(ts, split, k + 1, j))


def tensorinv(a, ind: int = 2) -> Tensor:
    """The inverse of a as a tensor operator: tensordot(tensorinv(a, ind), a, ind) is the
    identity on a.shape[:ind]; the result has shape a.shape[ind:] + a.shape[:ind]."""
    a = _tensor(a, "tensorinv")
    ind = _operator.index(ind)
    if ind <= 0:
        raise ValueError(f"tensorinv(): ind must be positive, got {ind}")
    rows = _math.prod(a.shape[ind:])
    if rows == 0 or a.size != rows * rows:
        raise LinAlgError(f"tensorinv(): shape {a.shape} with ind={ind} is not a square "
                          "operator (prod(shape[ind:]) must equal prod(shape[:ind]))")
    inv_ = _factor(_K.INV, [_matrices(_reshape(a, (rows, rows)), "tensorinv", square=True)])
    return _reshape(inv_, a.shape[ind:] + a.shape[:ind])


def tensorsolve(a, b, axes=None) -> Tensor:
    """x with tensordot(a, x, x.ndim) == b; x has shape a.shape[b.ndim:] (after the axes
    of a named by axes are moved to the end, as NumPy does)."""
    a, b = _pair(a, b, "tensorsolve")
    if axes is not None:
        order = list(range(a.ndim))
        for k in axes:
            k = _views._axis(k, a.ndim, "tensorsolve(): axis")
            order.remove(k)
            order.append(k)
        a = _permute_dims(a, order)
    shape = a.shape[-(a.ndim - b.ndim):]  # NumPy's slice, also when the ndims are equal
    n = _math.prod(shape)
    if a.size != n * n or b.size != n:
        raise LinAlgError(f"tensorsolve(): a of shape {a.shape} and b of shape {b.shape} do "
                          "not make a square system (prod(a.shape[b.ndim:]) must equal "
                          "prod(a.shape[:b.ndim]) = b.size)")
    x = solve(_reshape(a, (n, n)), _reshape(b, (n,)))
    return _reshape(x, shape)


def tensordot(x1: Tensor, x2: Tensor, /, *, axes=2) -> Tensor:
    """Sum over the paired axes: both operands are permuted and viewed as matrices, one GEMM."""
    x1, x2 = _pair(x1, x2, "tensordot")  # bool too: NumPy's logical sum of products
    if isinstance(axes, (int, _np.integer)):
        k = int(axes)
        if not 0 <= k <= _builtins.min(x1.ndim, x2.ndim):
            raise ValueError(f"tensordot(): axes={k} is out of range for shapes {x1.shape} and {x2.shape}")
        a_axes, b_axes = tuple(range(x1.ndim - k, x1.ndim)), tuple(range(k))
    else:
        try:
            a_axes, b_axes = axes
        except (TypeError, ValueError):
            raise ValueError("tensordot(): axes must be an int or a pair of sequences, "
                             f"got {axes!r}") from None
        a_axes, b_axes = _axis_list(a_axes, x1.ndim), _axis_list(b_axes, x2.ndim)
        if len(a_axes) != len(b_axes):
            raise ValueError(f"tensordot(): axes {axes} pair {len(a_axes)} with {len(b_axes)} axes")
    for i, j in zip(a_axes, b_axes):
        if x1.shape[i] != x2.shape[j]:
            raise ValueError(f"tensordot(): contracted axes {i} of {x1.shape} and {j} of {x2.shape} "
                             "differ in size")
    # einsum labels: x1's axes are 0..nd1-1; x2's contracted axes take x1's labels
    la = list(range(x1.ndim))
    lb = [a_axes[b_axes.index(j)] if j in b_axes else x1.ndim + j for j in range(x2.ndim)]
    out = [i for i in la if i not in a_axes] + [x for j, x in enumerate(lb) if j not in b_axes]
    return _contract([x1, x2], [la, lb], out)


def _axis_list(axes, ndim) -> tuple:
    axes = (axes,) if isinstance(axes, (int, _np.integer)) else tuple(axes)
    out = []
    for a in axes:
        a = _operator.index(a)
        if not -ndim <= a < ndim:
            raise ValueError(f"tensordot(): axis {a} is out of range for a {ndim}-d tensor")
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"tensordot(): repeated axis in {axes}")
    return tuple(out)


def _compute_axis(x1: Tensor, x2: Tensor, axis: int, name: str) -> int:
    """A negative axis in [-min(ndim), -1] whose sizes agree (no broadcast along it).
    A non-negative axis counts in the broadcast shape (NumPy's convention)."""
    axis = _operator.index(axis)
    if axis >= 0:
        axis -= _builtins.max(x1.ndim, x2.ndim)
    nd = _builtins.min(x1.ndim, x2.ndim)
    if not -nd <= axis <= -1:
        raise ValueError(f"{name}(): axis {axis} is out of range for shapes {x1.shape} and {x2.shape}")
    if x1.shape[axis] != x2.shape[axis]:
        raise ValueError(f"{name}(): axis {axis} has sizes {x1.shape[axis]} and {x2.shape[axis]} "
                         "(it is not broadcast)")
    return axis


def vecdot(x1: Tensor, x2: Tensor, /, *, axis: int = -1) -> Tensor:
    """sum(conj(x1) * x2) over axis, as einsum('...i,...i->...'): the conjugation is the
    O(1) flag, folded into the batched GEMM."""
    x1, x2 = _pair(x1, x2, "vecdot")  # bool too: NumPy's logical sum of products
    axis = _compute_axis(x1, x2, axis, "vecdot")
    a, b = _moveaxis(x1.conj(), axis, -1), _moveaxis(x2, axis, -1)
    return _contract([a, b], [[Ellipsis, 0], [Ellipsis, 0]], [Ellipsis])


def outer(x1: Tensor, x2: Tensor, /) -> Tensor:
    """Outer product of two 1-d tensors: (M,) and (N,) give (M, N), x1[i] * x2[j]."""
    x1, x2 = _pair(x1, x2, "outer")
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"outer() needs two 1-d tensors, got shapes {x1.shape} and {x2.shape}")
    return _multiply(_reshape(x1, (x1.shape[0], 1)), _reshape(x2, (1, x2.shape[0])))


def trace(x: Tensor, /, *, offset: int = 0, dtype=None) -> Tensor:
    """Sum of the offset diagonal (a strided view); integers accumulate in int64 / uint64."""
    x = _tensor(x, "trace")
    if x.ndim < 2:
        raise ValueError(f"trace() needs a (..., M, N) tensor, got shape {x.shape}")
    return _sum(diagonal(x, offset=_operator.index(offset)), axis=-1, dtype=dtype)


def cross(x1: Tensor, x2: Tensor, /, *, axis: int = -1) -> Tensor:
    """Cross product of 3-vectors along axis (negative; the other axes broadcast)."""
    x1, x2 = _numeric_pair(x1, x2, "cross")
    axis = _operator.index(axis)
    nd = _builtins.min(x1.ndim, x2.ndim)
    if 0 <= axis < nd and x1.ndim == x2.ndim:  # NumPy's non-negative axis, one meaning here
        axis -= nd
    if not -nd <= axis <= -1:
        raise ValueError(f"cross(): axis must be in [-{nd}, -1] (or [0, {nd - 1}] for "
                         f"operands of equal ndim), got {axis}")
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError(f"cross(): axis {axis} must have size 3, got shapes {x1.shape} and {x2.shape}")
    dt = _dtypes.result_type(x1.dtype, x2.dtype)
    a = _move_last(_cast(x1, dt), axis)
    b = _move_last(_cast(x2, dt), axis)
    try:
        batch = tuple(_np.broadcast_shapes(a.shape[:-1], b.shape[:-1]))
    except ValueError:
        raise ValueError(f"cross(): shapes {x1.shape} and {x2.shape} do not broadcast") from None
    out = _empty(batch + (3,), dtype=dt, device=a.device)
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        out[..., i] = _subtract(_multiply(a[..., j], b[..., k]), _multiply(a[..., k], b[..., j]))
    # the vector axis back to where axis counts from the end
    nd_out = out.ndim
    pos = nd_out + axis
    order = list(range(nd_out - 1))
    order.insert(pos, nd_out - 1)
    return _permute_dims(out, order)


def _move_last(x: Tensor, axis: int) -> Tensor:
    ax = axis % x.ndim
    return _permute_dims(x, [i for i in range(x.ndim) if i != ax] + [ax])


# ------------------------------------------------------------------- norms
def _over(a: Tensor, axis) -> int:
    """How many elements each result of a reduction of a over axis (None: all) gathers."""
    axes = range(a.ndim) if axis is None else (axis,) if isinstance(axis, int) else axis
    if not all(-a.ndim <= i < a.ndim for i in axes):
        return 1  # a 0-d a (axis 0 or -1: over no axis) or a bad axis: the reduction says so
    return _math.prod(a.shape[i] for i in axes)


def _largest(a: Tensor, name: str, axis, keepdims: bool) -> Tensor:
    """The max of the non-negative a: 0 over an empty axis (NumPy's norms of nothing)."""
    if _over(a, axis) == 0:
        return _sum(a, axis=axis, keepdims=keepdims)
    return _max(a, axis=axis, keepdims=keepdims)


def _smallest(a: Tensor, name: str, axis, keepdims: bool) -> Tensor:
    if _over(a, axis) == 0:
        raise ValueError(f"{name}(): the smallest of an empty axis is undefined (the norm "
                         "of ord -1, -2 or -inf of a zero-size operand)")
    return _min(a, axis=axis, keepdims=keepdims)


def vector_norm(x: Tensor, /, *, axis=None, keepdims: bool = False, ord=2) -> Tensor:
    """p-norms over axis (all axes when None); the result is real of x's precision."""
    x = _floating(_tensor(x, "vector_norm"))
    a = _abs(x)  # real, the conjugation flag is irrelevant
    kw = dict(axis=axis, keepdims=keepdims)
    if ord == 2:
        return _sqrt(_sum(_square(a), **kw))
    if ord == 1:
        return _sum(a, **kw)
    if ord == _math.inf:
        return _largest(a, "vector_norm", axis, keepdims)
    if ord == -_math.inf:
        return _smallest(a, "vector_norm", axis, keepdims)
    if ord == 0:
        return _sum(_cast(_not_equal(a, 0), a.dtype), **kw)
    if isinstance(ord, (bool, str)) or not isinstance(ord, (int, float, _np.integer, _np.floating)):
        raise ValueError(f"vector_norm(): ord must be a number or +-inf, got {ord!r}")
    p = float(ord)
    return _pow(_sum(_pow(a, p), **kw), 1.0 / p)


def matrix_norm(x: Tensor, /, *, keepdims: bool = False, ord="fro") -> Tensor:
    """'fro', 'nuc', 1, -1, 2, -2, inf, -inf over the last two axes."""
    x = _matrices(x, "matrix_norm", solver=False)
    if isinstance(ord, bool):
        raise ValueError(f"matrix_norm(): ord must be 'fro', 'nuc', +-1, +-2 or +-inf, got {ord!r}")
    r = _norm2(x, ord, "matrix_norm")
    return _reshape(r, r.shape + (1, 1)) if keepdims else r


def _norm2(x: Tensor, ord, name: str) -> Tensor:
    """The matrix norm ord of a floating x over its last two axes (NumPy's orders; 'f' is
    NumPy's other spelling of 'fro')."""
    if isinstance(ord, str):
        if ord in ("fro", "f"):
            return _sqrt(_sum(_square(_abs(x)), axis=(-2, -1)))
        if ord == "nuc":
            return _sum(_svdvals(x, name), axis=-1)
        raise ValueError(f"{name}(): invalid norm order {ord!r} for matrices")
    if not isinstance(ord, (int, float, _np.integer, _np.floating)):
        raise ValueError(f"{name}(): invalid norm order {ord!r} for matrices")
    if ord in (2, -2):
        vals = _svdvals(x, name)
    elif ord in (1, -1):  # column sums of |x|
        vals = _sum(_abs(x), axis=-2)
    elif ord in (_math.inf, -_math.inf):  # row sums
        vals = _sum(_abs(x), axis=-1)
    else:
        raise ValueError(f"{name}(): invalid norm order {ord!r} for matrices (need 'fro', "
                         "'nuc', +-1, +-2 or +-inf)")
    return (_largest if ord > 0 else _smallest)(vals, name, -1, False)


def _vector_norm1(x: Tensor, ord, axis: int, keepdims: bool) -> Tensor:
    """numpy.linalg.norm over one axis of a floating x."""
    a = _abs(x)
    kw = dict(axis=axis, keepdims=keepdims)
    if isinstance(ord, str):
        raise ValueError(f"norm(): invalid norm order {ord!r} for vectors")
    if ord is None or ord == 2:
        return _sqrt(_sum(_square(a), **kw))
    if ord == _math.inf:
        return _largest(a, "norm", axis, keepdims)
    if ord == -_math.inf:
        return _smallest(a, "norm", axis, keepdims)
    if ord == 0:
        return _sum(_cast(_not_equal(a, 0), a.dtype), **kw)
    if ord == 1:
        return _sum(a, **kw)
    try:
        p = float(ord)
    except (TypeError, ValueError):
        raise ValueError(f"norm(): invalid norm order {ord!r} for vectors") from None
    return _pow(_sum(_pow(a, p), **kw), 1.0 / p)


def norm(x, ord=None, axis=None, keepdims: bool = False) -> Tensor:
    """numpy.linalg.norm: a vector norm over one axis, a matrix norm over two (axis: an
    int, a 2-tuple, or None: the whole x when ord is None, else its one or two axes).
    Integer and bool x compute in float64; the result is real of x's precision."""
    x = _floating(_tensor(x, "norm"))
    nd = x.ndim
    if axis is None:
        if ord is None or (isinstance(ord, str) and ord in ("f", "fro") and nd == 2) or (
                not isinstance(ord, str) and ord == 2 and nd == 1):
            r = _sqrt(_sum(_square(_abs(x))))  # every element: the 2-norm / Frobenius
            return _reshape(r, (1,) * nd) if keepdims else r
        axis = tuple(range(nd))
    elif not isinstance(axis, tuple):
        axis = (axis,)
    axis = tuple(_views._axis(i, nd, "norm(): axis") for i in axis)
    if len(axis) == 1:
        return _vector_norm1(x, ord, axis[0], keepdims)
    if len(axis) != 2:
        raise ValueError(f"norm(): improper number of dimensions to norm (axis {axis})")
    row, col = axis
    if row == col:
        raise ValueError(f"norm(): duplicate axes given ({axis})")
    r = _norm2(_moveaxis(x, axis, (-2, -1)), "fro" if ord is None else ord, "norm")
    if keepdims:  # the two axes back as length one, where they were
        shape = list(x.shape)
        shape[row] = shape[col] = 1
        r = _reshape(r, tuple(shape))
    return r

del annotations  # the __future__ feature, not an API name
