"""hipfer.linalg: the array API linalg extension (2025.12), on every backend.

Decompositions, inverses and solves are one LinalgPrims.Factorize descriptor each: the
backend's solver library (LAPACK through NumPy on the CPU; cuSOLVER / hipSOLVER through
CuPy on the GPU). Everything else is composed from the namespace's own prims: tensordot
and matrix_power on BatchedGemm (matmul), vecdot / trace / the norms on elementwise ops
and reductions, pinv on svd + matmul, the upper Cholesky factor as a lazily conjugated
transpose of the lower one (a view, nothing copied).

Integer and bool operands of the factorizations are computed in float64. A singular
matrix (inv, solve), a matrix that is not positive-definite (cholesky), or a solver that
does not converge raises ``hipfer.linalg.LinAlgError``, a ValueError subclass, on every
backend. Non-square operands where square matrices are needed raise ValueError.
"""
from __future__ import annotations

import builtins as _builtins
import math as _math
import operator as _operator
from typing import NamedTuple as _NamedTuple

import numpy as _np

from . import _dtypes, _ops
from ._core import cast as _cast
from ._creation import empty as _empty, zeros as _zeros
from ._einsum import contract as _contract
from ._elementwise import (abs as _abs, greater as _greater, isfinite as _isfinite,
                           multiply as _multiply, not_equal as _not_equal, pow as _pow,
                           reciprocal as _reciprocal, sqrt as _sqrt, square as _square,
                           subtract as _subtract, where as _where)
from ._linear_algebra import matmul
from ._statistical import all as _all, max as _max, min as _min, sum as _sum
from ._tensor import Tensor
from ._views import (broadcast_to as _broadcast_to, diagonal, matrix_transpose, moveaxis as _moveaxis,
                     permute_dims as _permute_dims, reshape as _reshape)
from .prims import descriptors as _d
from .prims.descriptors import LinAlgError  # noqa: F401 - part of this module's API
from .prims.infer import real_dtype as _real_dtype

__all__ = [
    "cholesky", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "inv",
    "matmul", "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "outer",
    "pinv", "qr", "slogdet", "solve", "svd", "svdvals", "tensordot", "trace", "vecdot",
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
def _tensor(x, name: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}() expects a hipfer Tensor, got {type(x).__name__}")
    return x


def _floating(x: Tensor) -> Tensor:
    """x in a floating dtype: integers and bool compute in float64."""
    return _cast(x, _dtypes.float_for(x.dtype))


def _matrices(x, name: str, square=False, solver=True) -> Tensor:
    """x checked as a stack of (square) matrices, in a floating dtype; solver: for a
    solver library, which takes no float16."""
    x = _tensor(x, name)
    if x.ndim < 2:
        raise ValueError(f"{name}() needs a (..., M, N) tensor, got shape {x.shape}")
    if square and x.shape[-1] != x.shape[-2]:
        raise ValueError(f"{name}() needs square matrices, got shape {x.shape}")
    return _solvable(_floating(x), name) if solver else _floating(x)


def _solvable(x: Tensor, name: str) -> Tensor:
    """x, refused for float16 as NumPy's LAPACK does: checked here, so that an empty x
    (which no solver sees) is refused as well."""
    if x.dtype == _dtypes.float16:
        raise TypeError(f"{name}() does not support float16 (no solver library takes it); "
                        "cast to float32 first")
    return x


def _numeric(x, name: str) -> Tensor:
    x = _tensor(x, name)
    if x.dtype == _dtypes.bool:
        raise TypeError(f"{name}() needs a numeric tensor, got bool")
    return x


def _factor(kind: _d.FactorKind, inputs, full=False):
    out = _ops.run(_d.Factorize(kind, full), inputs, called=kind.value)
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


def _eps_tol(x: Tensor, rtol):
    """rtol as a Python float or a tensor broadcasting against the (..., K) singular values."""
    if rtol is None:
        return max(x.shape[-2:]) * float(_np.finfo(_real_dtype(x.dtype)).eps)
    if isinstance(rtol, Tensor):
        return _reshape(rtol, rtol.shape + (1,))
    return float(rtol)


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


def eigh(x: Tensor, /) -> EighResult:
    """(eigenvalues, eigenvectors) of each Hermitian / symmetric matrix in x.
    The eigenvalues ascend and have x's real dtype; x is assumed Hermitian (not checked).
    """
    return EighResult(*_factor(_K.EIGH, [_finite(_matrices(x, "eigh", square=True), "eigh")]))


def eigvalsh(x: Tensor, /) -> Tensor:
    """Eigenvalues (ascending, x's real dtype) of each Hermitian / symmetric matrix."""
    return _factor(_K.EIGVALSH, [_finite(_matrices(x, "eigvalsh", square=True), "eigvalsh")])


def eig(x: Tensor, /) -> EigResult:
    """Eigenvalues and eigenvectors of a general matrix, always complex."""
    return EigResult(*_factor(_K.EIG, [_finite(_matrices(x, "eig", square=True), "eig")]))


def eigvals(x: Tensor, /) -> Tensor:
    """Eigenvalues of each general square matrix in x, always complex."""
    return _factor(_K.EIGVALS, [_finite(_matrices(x, "eigvals", square=True), "eigvals")])


def qr(x: Tensor, /, *, mode: str = "reduced") -> QRResult:
    """(Q, R) with x = Q @ R for each matrix (..., M, N); mode "reduced" gives Q
    (..., M, K), R (..., K, N) with K = min(M, N); "complete" gives Q (..., M, M).
    """
    if mode not in ("reduced", "complete"):
        raise ValueError(f"qr(): mode must be 'reduced' or 'complete', got {mode!r}")
    return QRResult(*_factor(_K.QR, [_matrices(x, "qr")], full=mode == "complete"))


def svd(x: Tensor, /, *, full_matrices: bool = True) -> SVDResult:
    """(U, S, Vh) with x = U @ diag(S) @ Vh for each matrix (..., M, N).

    S descends and has x's real dtype; full_matrices=True gives square U and Vh, False the
    reduced K = min(M, N) ones. Non-finite input is a LinAlgError.
    """
    return SVDResult(*_factor(_K.SVD, [_finite(_matrices(x, "svd"), "svd")],
                              full=bool(full_matrices)))


def svdvals(x: Tensor, /) -> Tensor:
    """Singular values (descending, x's real dtype) of each matrix (..., M, N)."""
    return _svdvals(_matrices(x, "svdvals"), "svdvals")


def _svdvals(x: Tensor, name: str) -> Tensor:
    """The singular values of checked matrices, for the function `name` (its errors)."""
    return _factor(_K.SVDVALS, [_finite(_solvable(x, name), name)])


def solve(x1: Tensor, x2: Tensor, /) -> Tensor:
    """x with x1 @ x = x2. A 1-d x2 of shape (M,) is one right-hand side for every matrix
    (the result is (..., M)); otherwise x2 is (..., M, K) and the batch axes broadcast."""
    _tensor(x1, "solve"), _tensor(x2, "solve")
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
def matrix_rank(x: Tensor, /, *, rtol=None) -> Tensor:
    """Count of singular values > rtol * largest (default rtol: max(M, N) * eps)."""
    x = _matrices(x, "matrix_rank")
    s = _svdvals(x, "matrix_rank")
    if s.shape[-1] == 0:
        return _zeros(x.shape[:-2], dtype=_dtypes.int64, device=x.device)
    tol = _multiply(_max(s, axis=-1, keepdims=True), _eps_tol(x, rtol))
    return _sum(_greater(s, tol), axis=-1, dtype=_dtypes.int64)


def pinv(x: Tensor, /, *, rtol=None) -> Tensor:
    """Moore-Penrose pseudo-inverse: V diag(1/s, s > rtol * max(s)) U^H from the SVD."""
    x = _matrices(x, "pinv")
    m, n = x.shape[-2:]
    if m == 0 or n == 0:
        return _zeros(x.shape[:-2] + (n, m), dtype=x.dtype, device=x.device)
    u, s, vh = _factor(_K.SVD, [_finite(x, "pinv")], full=False)
    keep = _greater(s, _multiply(_max(s, axis=-1, keepdims=True), _eps_tol(x, rtol)))
    s_inv = _where(keep, _reciprocal(_where(keep, s, 1.0)), 0.0)
    v_scaled = _multiply(matrix_transpose(vh.conj()),
                         _reshape(s_inv, s_inv.shape[:-1] + (1, s.shape[-1])))
    return matmul(v_scaled, matrix_transpose(u.conj()))


# ------------------------------------------------------------ composed ops
def matrix_power(x: Tensor, n: int, /) -> Tensor:
    """x ** n by repeated squaring on matmul; n == 0 gives identities, n < 0 powers of inv(x)."""
    x = _tensor(x, "matrix_power")
    n = _operator.index(n)
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(f"matrix_power() needs square matrices, got shape {x.shape}")
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


def tensordot(x1: Tensor, x2: Tensor, /, *, axes=2) -> Tensor:
    """Sum over the paired axes: both operands are permuted and viewed as matrices, one GEMM."""
    x1, x2 = _numeric(x1, "tensordot"), _numeric(x2, "tensordot")
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
    x1, x2 = _numeric(x1, "vecdot"), _numeric(x2, "vecdot")
    axis = _compute_axis(x1, x2, axis, "vecdot")
    a, b = _moveaxis(x1.conj(), axis, -1), _moveaxis(x2, axis, -1)
    return _contract([a, b], [[Ellipsis, 0], [Ellipsis, 0]], [Ellipsis])


def outer(x1: Tensor, x2: Tensor, /) -> Tensor:
    """Outer product of two 1-d tensors: (M,) and (N,) give (M, N), x1[i] * x2[j]."""
    x1, x2 = _tensor(x1, "outer"), _tensor(x2, "outer")
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
    x1, x2 = _numeric(x1, "cross"), _numeric(x2, "cross")
    axis = _operator.index(axis)
    nd = _builtins.min(x1.ndim, x2.ndim)
    if not -nd <= axis <= -1:
        raise ValueError(f"cross(): axis must be a negative integer in [-{nd}, -1], got {axis}")
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
    extreme = {1: _largest, -1: _smallest, 2: _largest, -2: _smallest, _math.inf: _largest,
               -_math.inf: _smallest}
    if isinstance(ord, str):
        if ord == "fro":
            r = _sqrt(_sum(_square(_abs(x)), axis=(-2, -1)))
        elif ord == "nuc":
            r = _sum(_svdvals(x, "matrix_norm"), axis=-1)
        else:
            raise ValueError(f"matrix_norm(): unknown ord {ord!r}")
    elif not isinstance(ord, bool) and ord in extreme:
        if abs(ord) == 2:
            vals = _svdvals(x, "matrix_norm")
        else:  # 1: column sums, inf: row sums of |x|
            vals = _sum(_abs(x), axis=-2 if abs(ord) == 1 else -1)
        r = extreme[ord](vals, "matrix_norm", -1, False)
    else:
        raise ValueError(f"matrix_norm(): ord must be 'fro', 'nuc', +-1, +-2 or +-inf, got {ord!r}")
    return _reshape(r, r.shape + (1, 1)) if keepdims else r

del annotations  # the __future__ feature, not an API name
