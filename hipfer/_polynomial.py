"""NumPy's legacy polynomial functions (``numpy.poly*``, ``roots``, ``vander``):
coefficients run highest power first, as in NumPy's module-level API.

Every function computes on the device of its tensor operands (lists and scalars join
them there), composed from the namespace's functions. A few read one or two scalars to
know their output's size or dtype, as NumPy's own code does, and say so: ``roots``
(where the leading and trailing zeros end; whether every root is real), ``polymul``
(its operands' leading zeros), ``polydiv`` (how many leading near-zero remainder terms
to trim), ``poly`` of complex zeros (whether they come in conjugate pairs) and
``polyfit`` (the rank, for NumPy's RankWarning). ``poly1d``, NumPy's legacy polynomial
class, is not provided.
"""
from __future__ import annotations

import operator
import warnings

import numpy as np

from . import _ops, linalg
from ._creation import arange, asarray, eye, ones, zeros
from ._elementwise import abs as _abs, conj, equal, real, sqrt, where
from ._linear_algebra import matmul
from ._manipulation import concat
from ._statistical import all as _all, cumulative_prod, max as _max, sum as _sum
from ._tensor import Tensor
from ._views import broadcast_to, reshape
from .prims import descriptors as d

__all__ = ["poly", "polyadd", "polyder", "polydiv", "polyfit", "polyint", "polymul",
           "polysub", "polyval", "roots", "vander"]


# ---------------------------------------------------------------- helpers
def _device(*args):
    """The device of the first Tensor among args (None: the default device)."""
    for a in args:
        if isinstance(a, Tensor):
            return a.device
    return None


def _tensor(a, device, dtype=None) -> Tensor:
    """a as a Tensor on device (a Tensor already there is kept; dtype casts)."""
    t = a if isinstance(a, Tensor) else asarray(a, device=device)
    return t if dtype is None or t.dtype == dtype else t.astype(dtype)


def _1d(a, device, name: str) -> Tensor:
    """NumPy's atleast_1d for one operand."""
    t = _tensor(a, device)
    if t.dtype.kind not in "biufc":
        raise TypeError(f"hipfer.{name}: unsupported dtype {t.dtype}")
    return reshape(t, (1,)) if t.ndim == 0 else t


def _common(*ts: Tensor) -> tuple:
    """ts cast to NumPy's result dtype of them all (NumPy's promotion, which also joins
    uint64 with signed integers in float64)."""
    dt = np.result_type(*(t.dtype for t in ts))
    return tuple(t if t.dtype == dt else t.astype(dt) for t in ts)


def _order(m, what: str, name: str) -> int:
    m = operator.index(m)
    if m < 0:
        raise ValueError(f"hipfer.{name}: order of {what} must be positive")
    return m


def _host_ints(t: Tensor) -> list:
    """A small integer tensor's values on the host: the documented size sync."""
    return [int(v) for v in np.asarray(t, copy=True).reshape(-1)]


def _convolve(a: Tensor, b: Tensor) -> Tensor:
    """The full convolution of 1-d a and b (NumPy's np.convolve, mode='full'): their
    outer product, each row i shifted right by i (a reshape of the zero-padded rows),
    summed over the rows. O(len(a) * (len(a) + len(b))) work, fine for polynomials."""
    n, m = a.shape[0], b.shape[0]
    dt = np.result_type(a.dtype, b.dtype)
    prod = reshape(a.astype(dt), (n, 1)) * reshape(b.astype(dt), (1, m))
    padded = concat([prod, zeros((n, n), dtype=dt, device=a.device)], axis=1)
    skewed = reshape(reshape(padded, (-1,))[:n * (n + m - 1)], (n, n + m - 1))
    if dt.kind == "b":  # NumPy's boolean convolution: any over the products
        return _sum(skewed, axis=0).astype(dt)
    return _sum(skewed, axis=0, dtype=dt)


# ---------------------------------------------------------------- evaluation
def polyval(p, x):
    """p(x) by Horner's rule, p highest power first: one launch of the Polyval prim for a
    1-d p (NumPy's arithmetic, y = y * x + p[k] rounded every step); an N-d p (whose rows
    broadcast against x, as in NumPy) by len(p) multiply-adds of the namespace."""
    dev = _device(x, p)
    x, p = _common(_tensor(x, dev), _tensor(p, dev))
    if p.ndim == 0:
        raise TypeError("hipfer.polyval: p must be a sequence of coefficients, not a scalar")
    if p.ndim == 1 and x.dtype.kind in "biufc":
        return Tensor(_ops.run(d.Polyval(), [p, x], called="polyval"))
    y = zeros(x.shape, dtype=x.dtype, device=x.device)
    for i in range(p.shape[0]):
        y = y * x + p[i]
    return y


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of 1-d x: columns x**(N-1), ..., x**0 (increasing=True:
    x**0 first); NumPy's dtype (x's promoted with int64)."""
    x = _tensor(x, _device(x))
    if x.ndim != 1:
        raise ValueError("hipfer.vander: x must be a one-dimensional array or sequence.")
    n = x.shape[0]
    N = n if N is None else operator.index(N)
    if N < 0:
        raise ValueError(f"hipfer.vander: negative dimensions are not allowed, got N={N}")
    dt = np.promote_types(x.dtype, np.int64)
    cols = [ones((n, min(N, 1)), dtype=dt, device=x.device)]
    if N > 1:  # x**1 .. x**(N-1): a running product along the columns
        cols.append(cumulative_prod(broadcast_to(reshape(x.astype(dt), (n, 1)), (n, N - 1)),
                                    axis=1))
    v = concat(cols, axis=1)
    return v if increasing else v[:, ::-1]


# ---------------------------------------------------------------- arithmetic
def _padded(a: Tensor, n: int) -> Tensor:
    """a with zeros in front up to length n (its own dtype)."""
    if a.shape[0] >= n:
        return a
    return concat([zeros((n - a.shape[0],), dtype=a.dtype, device=a.device), a])


def polyadd(a1, a2):
    """The sum of two polynomials (the shorter padded with leading zeros)."""
    dev = _device(a1, a2)
    a1, a2 = _common(_1d(a1, dev, "polyadd"), _1d(a2, dev, "polyadd"))
    n = max(a1.shape[0], a2.shape[0])
    return _padded(a1, n) + _padded(a2, n)


def polysub(a1, a2):
    """The difference a1 - a2 of two polynomials (the shorter padded with leading
    zeros); booleans raise TypeError, as NumPy's subtract does."""
    dev = _device(a1, a2)
    a1, a2 = _common(_1d(a1, dev, "polysub"), _1d(a2, dev, "polysub"))
    if a1.dtype.kind == "b" and a2.dtype.kind == "b":
        raise TypeError("hipfer.polysub: boolean subtraction is not supported, "
                        "use bitwise_xor or logical_xor instead")
    n = max(a1.shape[0], a2.shape[0])
    return _padded(a1, n) - _padded(a2, n)


def _leading_zeros(*ts: Tensor) -> list:
    """The number of leading zeros of each 1-d t, read in one sync."""
    counts = [reshape(_sum(cumulative_prod((t == 0).astype(np.int64))), (1,)) for t in ts]
    return _host_ints(concat(counts))


def _trimmed(t: Tensor, lead: int) -> Tensor:
    """t without its lead leading zeros; [0] when that is all of it (NumPy's poly1d)."""
    if lead == t.shape[0]:
        return zeros((1,), dtype=t.dtype, device=t.device)
    return t[lead:]


def polymul(a1, a2):
    """The product of two polynomials (the convolution of their coefficients). As
    NumPy, leading zeros are dropped first (reading their count: one sync)."""
    dev = _device(a1, a2)
    a1, a2 = _common(_1d(a1, dev, "polymul"), _1d(a2, dev, "polymul"))
    if a1.ndim != 1 or a2.ndim != 1:
        raise ValueError("hipfer.polymul: polynomials must be 1-d")
    l1, l2 = _leading_zeros(a1, a2)
    return _convolve(_trimmed(a1, l1), _trimmed(a2, l2))


def polydiv(u, v):
    """(q, r): the quotient and remainder of u / v, in floating point. Trimming r's
    leading zeros (|r[0]| <= 1e-8, as NumPy's allclose) reads their count: one sync."""
    dev = _device(u, v)
    u, v = _1d(u, dev, "polydiv") + 0.0, _1d(v, dev, "polydiv") + 0.0
    if u.ndim != 1 or v.ndim != 1:
        raise ValueError("hipfer.polydiv: u and v must be 1-d")
    if u.shape[0] == 0 or v.shape[0] == 0:
        raise IndexError("hipfer.polydiv: u and v must not be empty")
    dt = np.result_type(u.dtype, v.dtype)
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = 1.0 / v[0]
    q = zeros((max(m - n + 1, 1),), dtype=dt, device=u.device)
    r = u.astype(dt)
    for k in range(m - n + 1):
        d = scale * r[k]
        q[k] = d
        r[k:k + n + 1] = r[k:k + n + 1] - d * v
    # the leading run of near-zero terms, never all of r
    lead = _host_ints(_sum(cumulative_prod((_abs(r) <= 1e-8).astype(np.int64))))[0]
    return q, r[min(lead, r.shape[0] - 1):]


# ---------------------------------------------------------------- calculus
def polyder(p, m=1):
    """The m-th derivative of polynomial p."""
    m = _order(m, "derivative", "polyder")
    p = _1d(p, _device(p), "polyder")
    for _ in range(m):
        n = p.shape[0] - 1
        p, k = _common(p[:max(n, 0)], arange(n, 0, -1, device=p.device))
        p = p * k
    return p


def polyint(p, m=1, k=None):
    """The m-th antiderivative of p; k holds the m integration constants (a scalar or
    one value serves them all; default zeros)."""
    m = _order(m, "integral", "polyint")
    p = _1d(p, _device(p, k), "polyint")
    k = zeros((m,), dtype=np.float64, device=p.device) if k is None else _1d(k, p.device,
                                                                             "polyint")
    if k.ndim != 1:
        raise ValueError("hipfer.polyint: k must be a scalar or a rank-1 array")
    if k.shape[0] == 1 and m > 1:
        k = k[0] * ones((m,), dtype=np.float64, device=p.device)
    if k.shape[0] < m:
        raise ValueError("hipfer.polyint: k must be a scalar or a rank-1 array of "
                         "length 1 or >m.")
    for i in range(m):
        p, n = _common(p, arange(p.shape[0], 0, -1, device=p.device))
        y = p / n
        dt = np.result_type(y.dtype, k.dtype)
        p = concat([y.astype(dt), k[i:i + 1].astype(dt)])
    return p


# ---------------------------------------------------------------- zeros and roots
def _eigvals(a: Tensor, name: str) -> Tensor:
    """linalg.eigvals(a), its refusal named for the function called: a backend without
    a general eigensolver (CuPy on ROCm, CuPy < 14) cannot serve roots or poly."""
    try:
        return linalg.eigvals(a)
    except TypeError as e:
        why = str(e).split("backend: ", 1)[-1] if "backend: " in str(e) else ""
        raise TypeError(f"hipfer.{name}: needs the eigenvalues of a general matrix, which "
                        f"the {a.device} device cannot compute here ({why or a.dtype})"
                        ) from None


def _conjugate_closed(z: Tensor) -> bool:
    """Whether the multiset of z equals that of conj(z) (NumPy compares the sorted
    values): per value, as many equal entries as conjugate ones. One bool read."""
    col, row = reshape(z, (-1, 1)), reshape(z, (1, -1))
    same = _sum(equal(col, row).astype(np.int64), axis=1)
    mirrored = _sum(equal(col, conj(row)).astype(np.int64), axis=1)
    return bool(np.asarray(_all(same == mirrored), copy=True))


def poly(seq_of_zeros):
    """The coefficients of the monic polynomial with the given zeros (or with the
    eigenvalues of a square matrix); complex zeros in conjugate pairs give real
    coefficients. An empty sequence gives 1.0, as in NumPy."""
    z = _tensor(seq_of_zeros, _device(seq_of_zeros))
    z = reshape(z, (1,)) if z.ndim == 0 else z
    if z.ndim == 2 and z.shape[0] == z.shape[1] and z.shape[0] != 0:
        z = _eigvals(z if z.dtype.kind in "fc" else z.astype(np.float64), "poly")
    elif z.ndim == 1:
        # NumPy's mintypecode: float32/complex64 stay, everything else goes to 64 bits
        if z.dtype not in (np.float32, np.float64, np.complex64, np.complex128):
            z = z.astype(np.float64)
    else:
        raise ValueError("hipfer.poly: input must be 1d or non-empty square 2d array.")
    if z.shape[0] == 0:
        return 1.0
    a = ones((1,), dtype=z.dtype, device=z.device)
    for i in range(z.shape[0]):  # a * (x - z_i): shift and subtract
        a = concat([a, zeros((1,), dtype=z.dtype, device=z.device)]) - \
            concat([zeros((1,), dtype=z.dtype, device=z.device), a * z[i]])
    if a.dtype.kind == "c" and _conjugate_closed(z):
        a = real(a)
    return a


def roots(p):
    """The roots of polynomial p (eigenvalues of its companion matrix), real when all
    are real. Syncs to read where p's leading/trailing zeros end and whether the roots
    are real. Needs hipfer.linalg.eigvals: on ROCm (no general eigensolver in CuPy
    there) it raises."""
    p = _tensor(p, _device(p))
    p = reshape(p, (1,)) if p.ndim == 0 else p
    if p.ndim != 1:
        raise ValueError("hipfer.roots: input must be a rank-1 array.")
    if p.dtype.kind not in "fc":
        p = p.astype(np.float64)
    n = p.shape[0]
    # one read: the leading zeros of p and of p reversed (its trailing zeros)
    first, trail = _leading_zeros(p, p[::-1])
    if first == n:
        return zeros((0,), dtype=np.float64, device=p.device)
    p = p[first:n - trail]
    N = p.shape[0]
    if N > 1:
        top = reshape(-p[1:] / p[0], (1, N - 1))
        companion = concat([top, eye(N - 2, N - 1, dtype=p.dtype, device=p.device)])
        r = _eigvals(companion, "roots")
        if bool(np.asarray(_all(r.imag == 0), copy=True)):
            r = real(r)
    else:
        r = zeros((0,), dtype=p.dtype, device=p.device)
    return concat([r, zeros((trail,), dtype=r.dtype, device=p.device)])


# ---------------------------------------------------------------- fitting
def _lstsq(a: Tensor, b: Tensor, rcond: float):
    """NumPy's lstsq by the SVD: (solution, rank as a 0-d tensor, singular values);
    singular values at or below rcond * max are dropped."""
    u, s, vh = linalg.svd(a, full_matrices=False)
    keep = s > rcond * _max(s)
    s_inv = where(keep, 1.0 / where(keep, s, 1.0), 0.0)
    b2 = b if b.ndim == 2 else reshape(b, (-1, 1))
    c = matmul(conj(vh).mT, reshape(s_inv, (-1, 1)) * matmul(conj(u).mT, b2))
    return (c if b.ndim == 2 else reshape(c, (-1,))), _sum(keep.astype(np.int64)), s


def _residuals(a: Tensor, b: Tensor, c: Tensor, rank: int) -> Tensor:
    """lstsq's residuals: the squared 2-norm of b - a @ c per column of b, only for a
    full-rank overdetermined system (else empty, as NumPy)."""
    m, n = a.shape
    if rank != n or m <= n:
        return zeros((0,), dtype=np.empty(0, a.dtype).real.dtype, device=a.device)
    b2 = b if b.ndim == 2 else reshape(b, (-1, 1))
    c2 = c if c.ndim == 2 else reshape(c, (-1, 1))
    return _sum(_abs(b2 - matmul(a, c2)) ** 2, axis=0)


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """The least-squares polynomial of degree deg through (x, y) (y may be 2-d: one fit
    per column): NumPy's column-scaled Vandermonde system, solved by the SVD. Reads the
    rank (one sync) to warn as NumPy does (np.exceptions.RankWarning). full=True
    returns (p, residuals, rank, singular values, rcond); cov=True or "unscaled"
    returns (p, covariance)."""
    dev = _device(x, y, w)
    order = operator.index(deg) + 1
    x = _tensor(x, dev) + 0.0
    y = _tensor(y, dev) + 0.0
    if order < 1:
        raise ValueError("hipfer.polyfit: expected deg >= 0")
    if x.ndim != 1:
        raise TypeError("hipfer.polyfit: expected 1D vector for x")
    if x.shape[0] == 0:
        raise TypeError("hipfer.polyfit: expected non-empty vector for x")
    if y.ndim < 1 or y.ndim > 2:
        raise TypeError("hipfer.polyfit: expected 1D or 2D array for y")
    if x.shape[0] != y.shape[0]:
        raise TypeError("hipfer.polyfit: expected x and y to have same length")
    n = x.shape[0]
    if rcond is None:
        rcond = n * float(np.finfo(x.dtype).eps)
    lhs = vander(x, order)  # float64 for a float32 x too, as NumPy's; real for complex y
    rhs = y
    if w is not None:
        w = _tensor(w, dev) + 0.0
        if w.ndim != 1:
            raise TypeError("hipfer.polyfit: expected a 1-d array for weights")
        if w.shape[0] != n:
            raise TypeError("hipfer.polyfit: expected w and y to have the same length")
        lhs = lhs * reshape(w, (n, 1))
        rhs = rhs * (reshape(w, (n, 1)) if rhs.ndim == 2 else w)
    scale = sqrt(_sum(_abs(lhs) ** 2, axis=0))  # NumPy's column scaling
    lhs = lhs / scale
    c, rank_t, s = _lstsq(lhs, rhs, rcond)
    rank = _host_ints(rank_t)[0]
    resids = _residuals(lhs, rhs, c, rank) if full or cov not in (False, "unscaled") else None
    c = (c.mT / scale).mT if c.ndim == 2 else c / scale
    if rank != order and not full:
        warnings.warn("Polyfit may be poorly conditioned", np.exceptions.RankWarning,
                      stacklevel=2)
    if full:
        return c, resids, rank_t, s, rcond
    if not cov:
        return c
    if cov != "unscaled" and n <= order:
        raise ValueError("hipfer.polyfit: the number of data points must exceed order "
                         "to scale the covariance matrix")
    vbase = linalg.inv(matmul(conj(lhs).mT, lhs))
    vbase = vbase / (reshape(scale, (-1, 1)) * reshape(scale, (1, -1)))
    fac = 1.0 if cov == "unscaled" else resids / (n - order)
    if y.ndim == 1:
        return c, vbase * fac
    return c, reshape(vbase, vbase.shape + (1,)) * fac
