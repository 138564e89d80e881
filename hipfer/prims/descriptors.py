"""Descriptors: frozen, hashable descriptions of one operation, one class per op kind.

A descriptor says *what* to compute; a backend's ``plan(desc, dtypes, shapes)`` decides
*how* (and is cached by key), ``execute(plan, inputs, out)`` does it. Each descriptor
class belongs to exactly one family (``FAMILY_OF``).

Mode labels (``modes_*``) name axes as in einsum: any hashable labels, one per axis of
the operand. In reductions a label of ``modes_a`` missing from ``modes_c`` is reduced,
and ``modes_c`` may reorder the kept labels.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Hashable, Optional, Tuple

import numpy as np

from .optable import BinaryOp, ReduceOp, UnaryOp
from .semiring import Semiring

Modes = Tuple[Hashable, ...]


class GemmOp(Enum):
    """How BatchedGemm reads an operand: as stored, transposed, or conjugate-transposed."""
    N = "N"
    T = "T"
    C = "C"


class GenerateKind(Enum):
    IOTA = "iota"          # out[i] = start + i * step over the flattened (C-order) output
    CONSTANT = "constant"  # out[...] = value


# --------------------------------------------------------------- SemiringCore
@dataclass(frozen=True)
class BatchedGemm:
    """out[b] = alpha * op_a(a[b]) (x) op_b(b[b]) + beta * out[b] over the semiring.
    Operands are (batch, m, k) and (batch, k, n) after their op; batch may be 1 on one
    side (broadcast). argmax (tropical semirings, beta 0): a second output, int64, the k
    of the winning product of each element (ties: the smallest k; -1 when k == 0)."""
    semiring: Semiring = Semiring.STANDARD
    op_a: GemmOp = GemmOp.N
    op_b: GemmOp = GemmOp.N
    argmax: bool = False


@dataclass(frozen=True)
class ReduceAdd:
    """Sum over the labels of modes_a missing from modes_c; modes_a has no repeats."""
    modes_a: Modes
    modes_c: Modes


@dataclass(frozen=True)
class Trace:
    """Single-operand einsum: modes_a may repeat labels (the diagonal is taken), labels
    missing from modes_c are summed. E.g. ('i','i') -> () is the matrix trace."""
    modes_a: Modes
    modes_c: Modes


@dataclass(frozen=True)
class AntiTrace:
    """Adjoint of Trace: out (modes_c, may repeat labels) is a on the diagonals where
    repeated labels agree and 0 elsewhere; labels of modes_c missing from modes_a are
    broadcast (the adjoint of a sum). The output shape is given to plan."""
    modes_a: Modes
    modes_c: Modes


@dataclass(frozen=True)
class AntiDiag:
    """Adjoint of taking a diagonal: every label of modes_c is in modes_a; repeated
    labels of modes_c put a onto that diagonal, zeros elsewhere."""
    modes_a: Modes
    modes_c: Modes


@dataclass(frozen=True)
class MakeContiguous:
    """C-contiguous copy (the conjugation flag is resolved on the way)."""


# ----------------------------------------------------------- SemiringFastPath
@dataclass(frozen=True)
class Contract:
    """out(modes_c) = alpha * sum over the other labels of a(modes_a) b(modes_b) + beta * out."""
    modes_a: Modes
    modes_b: Modes
    modes_c: Modes
    semiring: Semiring = Semiring.STANDARD


@dataclass(frozen=True)
class ElementwiseBinary:
    """out = alpha * (a op b) + beta * out, op the semiring's ADD or MUL."""
    op: BinaryOp
    semiring: Semiring = Semiring.STANDARD


# ----------------------------------------------------------------- ScalarPrims
@dataclass(frozen=True)
class ScalarUnary:
    op: UnaryOp


@dataclass(frozen=True)
class ScalarBinary:
    op: BinaryOp


@dataclass(frozen=True)
class ScalarWhere:
    """out = cond ? a : b; dtypes (bool, T, T)."""


@dataclass(frozen=True)
class ScalarReduce:
    op: ReduceOp
    modes_a: Modes
    modes_c: Modes


# --------------------------------------------------------------- AnalyticPrims
@dataclass(frozen=True)
class AnalyticUnary:
    op: UnaryOp


@dataclass(frozen=True)
class AnalyticBinary:
    op: BinaryOp


@dataclass(frozen=True)
class AnalyticReduce:
    """VAR or STD with the given correction (degrees of freedom removed)."""
    op: ReduceOp
    modes_a: Modes
    modes_c: Modes
    correction: float = 0.0


# --------------------------------------------------------------- IndexingPrims
@dataclass(frozen=True)
class IndexSelect:
    """out = take(a, index, axis) with a 1-D integer index (negative entries wrap once)."""
    axis: int


@dataclass(frozen=True)
class Gather:
    """out[..., i, ...] = a[..., index[..., i, ...], ...] along axis (torch.gather)."""
    axis: int


@dataclass(frozen=True)
class Scatter:
    """out = a; out[..., index[..., i, ...], ...] (=|+=) src[..., i, ...] along axis.
    reduce None: the last write in index order wins; 'add': accumulate."""
    axis: int
    reduce: Optional[str] = None


@dataclass(frozen=True)
class IndexPut:
    """out = a; out[idx_0, ..., idx_{k-1}] (=|+=) values, with k broadcast integer index
    tensors over the leading k axes (NumPy advanced-index assignment)."""
    accumulate: bool = False


# --------------------------------------------------------------- MetadataPrims
@dataclass(frozen=True)
class Generate:
    kind: GenerateKind


@dataclass(frozen=True)
class MetadataBinary:
    op: BinaryOp


@dataclass(frozen=True)
class MetadataWhere:
    """cond ? a : b over integer/bool tensors."""


@dataclass(frozen=True)
class MetadataReduce:
    op: ReduceOp
    modes_a: Modes
    modes_c: Modes


# ----------------------------------------------------------- MetadataCastPrims
@dataclass(frozen=True)
class PointwiseCast:
    """out = dtype(a) (any source dtype; the conjugation flag is folded in)."""
    dtype: np.dtype

    def __post_init__(self):
        object.__setattr__(self, "dtype", np.dtype(self.dtype))


@dataclass(frozen=True)
class MaskWhere:
    """cond ? a : b with a bool mask over float/complex tensors."""


# --------------------------------------------------------------------- RngPrims
@dataclass(frozen=True)
class Uniform:
    """Uniform [0, 1) in the output dtype (float32/float64)."""


@dataclass(frozen=True)
class Normal:
    """Standard normal (Box-Muller over two counters per pair of outputs)."""


@dataclass(frozen=True)
class Integer:
    """Uniform integers in [low, high)."""
    low: int
    high: int


# -------------------------------------------------------------------- SortPrims
@dataclass(frozen=True)
class Sort:
    axis: int = -1
    descending: bool = False
    stable: bool = True


@dataclass(frozen=True)
class Argsort:
    axis: int = -1
    descending: bool = False
    stable: bool = True


@dataclass(frozen=True)
class Topk:
    """k largest (or smallest) along axis, values and int64 indices; NaN ranks above every
    number; equal values keep the lower index first. sorted=False still returns rank order."""
    axis: int
    k: int
    largest: bool = True
    sorted: bool = True


# -------------------------------------------------------------- ComplexRealPrims
@dataclass(frozen=True)
class ComplexRealUnary:
    """complex -> real: ABS, REAL or IMAG."""
    op: UnaryOp


@dataclass(frozen=True)
class ComplexRealReduce:
    """reduce(unary(a)) in one pass, unary in {ABS, REAL, IMAG}, reduce in {SUM, MAX, MIN, MEAN}."""
    unary: UnaryOp
    reduce: ReduceOp
    modes_a: Modes
    modes_c: Modes


# ------------------------------------------------------------- ComplexScalePrims
@dataclass(frozen=True)
class ComplexScale:
    """out = a * s with a complex and s real of the same precision (broadcasting)."""


# ----------------------------------------------------------------- FusedPrims
@dataclass(frozen=True)
class Fused:
    """One op of the fused device op set (hipfer.nn). ``op`` names a row of the op table
    (hipfer.prims.fused_ops); ``params`` are its structural parameters as sorted (name,
    value) pairs (flags, k, axes: what a kernel is specialised on). Scalars that change
    from call to call (learning rate, seed, p, alpha) are not here: they go to execute()
    as keyword arguments, so a new value reuses the plan. Build with ``Fused.of(op, **params)``."""
    op: str
    params: Tuple[Tuple[str, Hashable], ...] = ()

    @staticmethod
    def of(op: str, **params) -> "Fused":
        return Fused(op, tuple(sorted(params.items())))

    def get(self, name: str, default=None):
        for k, v in self.params:
            if k == name:
                return v
        return default

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.params)
        return f"Fused.{self.op}({args})"


FAMILY_OF = {
    BatchedGemm: "semiring_core", ReduceAdd: "semiring_core", Trace: "semiring_core",
    AntiTrace: "semiring_core", AntiDiag: "semiring_core", MakeContiguous: "semiring_core",
    Contract: "semiring_fast_path", ElementwiseBinary: "semiring_fast_path",
    ScalarUnary: "scalar", ScalarBinary: "scalar", ScalarWhere: "scalar", ScalarReduce: "scalar",
    AnalyticUnary: "analytic", AnalyticBinary: "analytic", AnalyticReduce: "analytic",
    IndexSelect: "indexing", Gather: "indexing", Scatter: "indexing", IndexPut: "indexing",
    Generate: "metadata", MetadataBinary: "metadata", MetadataWhere: "metadata",
    MetadataReduce: "metadata",
    PointwiseCast: "metadata_cast", MaskWhere: "metadata_cast",
    Uniform: "rng", Normal: "rng", Integer: "rng",
    Sort: "sort", Argsort: "sort", Topk: "sort",
    ComplexRealUnary: "complex_real", ComplexRealReduce: "complex_real",
    ComplexScale: "complex_scale",
    Fused: "fused",
}

FAMILIES = ("semiring_core", "semiring_fast_path", "scalar", "analytic", "indexing",
            "metadata", "metadata_cast", "rng", "sort", "complex_real", "complex_scale",
            "fused")


def family_of(desc) -> str:
    try:
        return FAMILY_OF[type(desc)]
    except KeyError:
        raise TypeError(f"unknown descriptor {desc!r}: not a hipfer.prims descriptor") from None


# ------------------------------------------- searching and scans (appended: searching helper)
@dataclass(frozen=True)
class ArgReduce:
    """int64 index along axis of the first maximum (op MAX) or minimum (op MIN); NaN
    counts as the extreme (the first NaN wins, as in NumPy), -0.0 == 0.0. The axis is
    removed from the output (keepdims is a reshape above the prims)."""
    op: ReduceOp
    axis: int


class ScanOp(Enum):
    SUM = "sum"
    PROD = "prod"


@dataclass(frozen=True)
class Cumulative:
    """Inclusive running sum / product along axis in the input dtype (ints wrap; bool
    SUM is or, PROD is and), in a fixed order. include_initial prepends the identity,
    so that axis grows by one."""
    op: ScanOp
    axis: int
    include_initial: bool = False


@dataclass(frozen=True)
class SearchSorted:
    """out[j] = insertion index of x2[j] into the ascending 1-d x1 (int64, x2's shape):
    side 'left' counts x1 elements < v, 'right' those <= v, with NaN above every number
    (sort's order)."""
    side: str = "left"


FAMILY_OF.update({ArgReduce: "scalar", Cumulative: "scalar", SearchSorted: "scalar"})


# ------------------------------------------- linalg and fft (appended: linalg/fft helper)
class LinAlgError(ValueError):
    """A factorization that cannot be done: a singular matrix (INV, SOLVE), a matrix that is
    not positive-definite (CHOLESKY), or a solver that did not converge. Raised alike by
    every backend (on the GPU after reading the solver's info array: one sync)."""


class FactorKind(Enum):
    """What Factorize computes from a (..., M, N) operand, and its outputs:
    CHOLESKY  (M == N) lower L with x = L L^H
    QR        Q, R (reduced: (M, K), (K, N); full: (M, M), (M, N); K = min(M, N))
    EIGH      real eigenvalues (..., M) ascending, eigenvectors (..., M, M); lower triangle read
    EIGVALSH  real eigenvalues (..., M) ascending
    EIG       complex eigenvalues (..., M), complex eigenvectors (..., M, M)
    EIGVALS   complex eigenvalues (..., M)
    SVD       U, S (real, descending), Vh (reduced: (M, K), (K,), (K, N); full: (M, M), (K,), (N, N))
    SVDVALS   S (real, descending) (..., K)
    SOLVE     two operands a (..., M, M), b (..., M, R) with equal batch shapes: x with a x = b
    INV       (M == N) the inverse
    DET       (M == N) the determinant (...)
    SLOGDET   (M == N) sign (..., same dtype) and log|det| (..., real); sign 0, -inf if singular
    """
    CHOLESKY = "cholesky"
    QR = "qr"
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
class Factorize:
    """A dense-matrix factorization or solve over the last two axes (batched over the
    others), by the backend's solver library (LAPACK through NumPy; cuSOLVER / hipSOLVER
    through CuPy). ``full`` selects the complete QR / full_matrices SVD. Float and complex
    dtypes only; the conjugation flag is resolved before the library reads the operand."""
    kind: FactorKind
    full: bool = False


class FftKind(Enum):
    C2C = "c2c"   # complex -> complex (forward, or inverse when Fft.inverse)
    R2C = "r2c"   # real -> complex, the last axis halved to n//2 + 1 (rfftn)
    C2R = "c2r"   # complex -> real, the inverse of R2C (irfftn)


@dataclass(frozen=True)
class Fft:
    """N-d discrete Fourier transform over ``axes`` (distinct, non-negative), by the
    backend's FFT library (pocketfft through NumPy; cuFFT / hipFFT through CuPy).
    ``sizes`` are the logical lengths n per axis: the input is zero-padded or trimmed to
    them (for C2R, to n//2 + 1 on the last axis, whose output has length n). ``norm``
    is NumPy's: 'backward' scales the inverse by 1/prod(n), 'forward' the forward one,
    'ortho' both by 1/sqrt(prod(n)). The output keeps the input's precision."""
    kind: FftKind
    axes: Tuple[int, ...]
    sizes: Tuple[int, ...]
    inverse: bool = False
    norm: str = "backward"

    @property
    def function_name(self) -> str:
        """The N-d transform of NumPy's and CuPy's fft modules that computes this one."""
        if self.kind is FftKind.R2C:
            return "rfftn"
        if self.kind is FftKind.C2R:
            return "irfftn"
        return "ifftn" if self.inverse else "fftn"


FAMILY_OF.update({Factorize: "linalg", Fft: "fft"})
FAMILIES = FAMILIES + ("linalg", "fft")


# ------------------------------------------- nonzero (appended: indexing helper)
@dataclass(frozen=True)
class Nonzero:
    """Coordinates of the True elements of a bool tensor, in C order. Two outputs:
    coords (a.ndim, a.size) int64, whose first ``count`` columns hold the coordinates
    (column c: the c-th True element; the other columns are unspecified), and count
    (0-d int64). The output is sized for the worst case because the count is data; the
    caller reads count (one device->host sync) and slices. A 0-d operand gives zero rows."""


FAMILY_OF.update({Nonzero: "indexing"})
