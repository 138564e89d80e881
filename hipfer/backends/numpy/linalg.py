"""LinalgPrims on NumPy: Factorize through numpy.linalg (LAPACK).

NumPy's LinAlgError (singular matrix, not positive-definite, no convergence) becomes
hipfer's LinAlgError, a ValueError, as on the GPU. Results keep the operand's precision
(copied into the given outputs, any layout).
"""
from __future__ import annotations

import numpy as np

from ...prims import descriptors as d
from ._common import Handler, conj_loader

K = d.FactorKind


def _svd(full):
    return lambda a: tuple(np.linalg.svd(a, full_matrices=full))


def _qr(full):
    return lambda a: tuple(np.linalg.qr(a, mode="complete" if full else "reduced"))


def _solver(desc):
    """inputs -> tuple of results, per kind."""
    k = desc.kind
    one = {
        K.CHOLESKY: np.linalg.cholesky, K.INV: np.linalg.inv, K.DET: np.linalg.det,
        K.EIGVALSH: np.linalg.eigvalsh, K.EIGVALS: np.linalg.eigvals,
        K.SVDVALS: lambda a: np.linalg.svd(a, compute_uv=False),
    }
    many = {
        K.SLOGDET: lambda a: tuple(np.linalg.slogdet(a)), K.EIGH: lambda a: tuple(np.linalg.eigh(a)),
        K.EIG: lambda a: tuple(np.linalg.eig(a)), K.SVD: _svd(desc.full), K.QR: _qr(desc.full),
        K.QR_RAW: lambda a: tuple(np.linalg.qr(a, mode="raw")),
    }
    if k is K.SOLVE:
        return lambda xs: (np.linalg.solve(xs[0], xs[1]),)
    if k in one:
        return lambda xs: (one[k](xs[0]),)
    return lambda xs: many[k](xs[0])


def _make(desc, dtypes, shapes, outs, strides, conj):
    load = conj_loader(dtypes, conj)
    solve = _solver(desc)

    def run(inputs, out):
        outs_ = out if isinstance(out, tuple) else (out,)
        if all(o.size == 0 for o in outs_):
            return
        try:
            with np.errstate(all="ignore"):
                res = solve(load(inputs))
        except np.linalg.LinAlgError as e:
            raise d.LinAlgError(f"{desc.kind.value}: {e}") from None
        for o, r in zip(outs_, res):
            np.copyto(o, r)  # eig's real eigenvalues (when all are real) widen to complex
    return run


def _supports(desc, dtypes) -> bool:
    return dtypes is None or all(np.dtype(t).kind in "fc" for t in dtypes)


HANDLERS = {d.Factorize: Handler(_make, _supports)}
