"""LinalgPrims: Factorize, decompositions and solves by the backend's solver library."""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import numpy as np

from .. import rules as r
from ._base import Descriptor

__all__ = ["LinAlgError", "FactorKind", "Factorize"]


class LinAlgError(np.linalg.LinAlgError):
    """A factorization that cannot be done: a singular matrix (INV, SOLVE), a matrix that is
    not positive-definite (CHOLESKY), or a solver that did not converge. Raised alike by
    every backend (on the GPU after reading the solver's info array: one sync). A
    numpy.linalg.LinAlgError (so a ValueError), so NumPy code's handlers catch it."""


class FactorKind(Enum):
    """What Factorize computes from a (..., M, N) operand, and its outputs:
    CHOLESKY  (M == N) lower L with x = L L^H
    QR        Q, R (reduced: (M, K), (K, N); full: (M, M), (M, N); K = min(M, N))
    QR_RAW    LAPACK's geqrf form, as numpy.linalg.qr(mode='raw'): h (N, M), the factored
              matrix transposed (R in its upper triangle before the transpose, the
              Householder vectors below it), and tau (K,), the reflectors' scales
    EIGH      real eigenvalues (..., M) ascending, eigenvectors (..., M, M); lower triangle read
    EIGVALSH  real eigenvalues (..., M) ascending
    EIG       complex eigenvalues (..., M), complex eigenvectors (..., M, M)
    EIGVALS   complex eigenvalues (..., M)
    SVD       U, S (real, descending), Vh (reduced: (M, K), (K,), (K, N);
              full: (M, M), (K,), (N, N))
    SVDVALS   S (real, descending) (..., K)
    SOLVE     two operands a (..., M, M), b (..., M, R) with equal batch shapes: x with a x = b
    INV       (M == N) the inverse
    DET       (M == N) the determinant (...)
    SLOGDET   (M == N) sign (..., same dtype) and log|det| (..., real); sign 0, -inf if singular
    """
    CHOLESKY = "cholesky"
    QR = "qr"
    QR_RAW = "qr_raw"
    EIGH = "eigh"
    EIGVALSH = "eigvalsh"
    EIG = "eig"
    EIGVALS = "eigvals"
    SVD = "svd"
    SVDVALS = "svdvals"
    SOLVE = "solve"
    INV = "inv"
    DET = "det"
    SLOGDET = "slogdet"


@dataclass(frozen=True)
class Factorize(Descriptor, family="linalg"):
    """A dense-matrix factorization or solve over the last two axes (batched over the
    others), by the backend's solver library (LAPACK through NumPy; cuSOLVER / hipSOLVER
    through CuPy). ``full`` selects the complete QR / full_matrices SVD. Float and complex
    dtypes only; the conjugation flag is resolved before the library reads the operand."""
    kind: FactorKind
    full: bool = False

    def infer(self, dtypes, shapes):
        k, K = self.kind, FactorKind
        r.expect(self, dtypes, shapes, 2 if k is K.SOLVE else 1)
        dt, shape = dtypes[0], shapes[0]
        r.check_kind(self, k.name, dt, "fc")
        if len(shape) < 2:
            raise ValueError(f"Factorize({k.name}): needs a (..., M, N) operand, got shape "
                             f"{shape}")
        *batch, m, n = shape
        batch = tuple(batch)
        if k not in (K.QR, K.QR_RAW, K.SVD, K.SVDVALS) and m != n:
            raise ValueError(f"Factorize({k.name}): needs square matrices, got shape {shape}")
        if k is K.SOLVE:
            return _solve(dt, shape, dtypes[1], shapes[1])
        return _factors(k, self.full, dt, shape)

    def probe_shapes(self, n_inputs):
        return ((2, 2), (2, 1)) if self.kind is FactorKind.SOLVE else ((2, 2),)


def _solve(dt, shape, b_dtype, b):
    """x's spec for a x = b, a of shape (..., M, M)."""
    if b_dtype != dt:
        raise TypeError(f"Factorize(SOLVE): operand dtypes differ ({dt} and {b_dtype})")
    if len(b) != len(shape) or tuple(b[:-2]) != tuple(shape[:-2]) or b[-2] != shape[-2]:
        raise ValueError(f"Factorize(SOLVE): b of shape {b} does not fit a of shape {shape} "
                         "(need (..., M, R) with a's batch shape)")
    return ((tuple(b), dt),)


def _factors(k, full, dt, shape):
    """The output specs of factorization k of an operand (..., M, N) (checked)."""
    K = FactorKind
    *batch, m, n = shape
    batch = tuple(batch)
    real, cplx, kk = r.real_dtype(dt), r.complex_dtype(dt), min(m, n)
    if k in (K.CHOLESKY, K.INV):
        return ((shape, dt),)
    if k is K.DET:
        return ((batch, dt),)
    if k is K.SLOGDET:
        return ((batch, dt), (batch, real))
    if k is K.EIGVALSH:
        return ((batch + (m,), real),)
    if k is K.EIGH:
        return ((batch + (m,), real), (shape, dt))
    if k is K.EIGVALS:
        return ((batch + (m,), cplx),)
    if k is K.EIG:
        return ((batch + (m,), cplx), (shape, cplx))
    if k is K.SVDVALS:
        return ((batch + (kk,), real),)
    if k is K.SVD:
        u, v = (m, n) if full else (kk, kk)
        return ((batch + (m, u), dt), (batch + (kk,), real), (batch + (v, n), dt))
    if k is K.QR_RAW:
        return ((batch + (n, m), dt), (batch + (kk,), dt))
    q = m if full else kk  # QR
    return ((batch + (m, q), dt), (batch + (q, n), dt))
