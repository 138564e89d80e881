"""numpy.linalg's API on hipfer.linalg, per backend, against numpy.linalg itself: norm,
cond, matrix_rank, pinv, svd / eigh / qr's NumPy keywords, lstsq, multi_dot, tensorinv,
tensorsolve, eig / eigvals' result dtype, matrix_power, the named results, the errors and
the dispatch of np.linalg.<name>(tensor). Values compare at tolerances scaled by the
dtype's eps (random matrices made well-conditioned by adding n * I); dtypes exactly."""
import math

import numpy as np
import pytest

import hipfer as hf
from hipfer import linalg as hl

from _util import random_array

SOLVER = [np.float32, np.float64, np.complex64, np.complex128]
NORM_DTYPES = [np.bool_, np.int8, np.uint8, np.int64, np.float16, np.float32, np.float64,
               np.complex64, np.complex128]


def eps_tol(dtype, scale=1.0):
    """rtol / atol for a result of this dtype's precision, scale: the problem's growth."""
    dt = np.dtype(dtype)
    eps = np.finfo(dt).eps if dt.kind in "fc" else np.finfo(np.float64).eps
    return dict(rtol=max(200 * eps * scale, 1e-13), atol=200 * eps * scale)


def rand(rng, shape, dtype):
    dt = np.dtype(dtype)
    if dt.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    if dt.kind == "f":
        return rng.standard_normal(shape).astype(dt)
    return random_array(rng, shape, dt)


def well_conditioned(rng, shape, dtype):
    n = shape[-1]
    return (rand(rng, shape, dtype) + 2 * n * np.eye(n)).astype(dtype)


NP_VERSION = np.lib.NumpyVersion(np.__version__)


def np_cond(x, p=None):
    """np.linalg.cond as NumPy >= 2.3.3 gives it: always a real dtype. Before (gh-29333,
    NumPy 2.2 included) a complex x with p other than None / 2 / -2 gave the complex dtype
    (a zero imaginary part: the product of two real norms); its real part is the value."""
    c = np.linalg.cond(x, p)
    if NP_VERSION < "2.3.3" and np.iscomplexobj(c):
        c = c.real
    return c


def T(be, a):
    return hf.asarray(a, device=be.device)


def check(be, got, want, **tol):
    """got (a Tensor) equals NumPy's want in shape and dtype, and in value within tol."""
    assert isinstance(got, hf.Tensor), type(got)
    want = np.asarray(want)
    g = be.asnumpy(got)
    assert g.shape == want.shape, (g.shape, want.shape)
    assert g.dtype == want.dtype, (g.dtype, want.dtype)
    np.testing.assert_allclose(g, want, equal_nan=True, **(tol or eps_tol(want.dtype)))


# ------------------------------------------------------------------------------- norm
VECTOR_ORDS = [None, 0, 1, -1, 2, 3, 0.5, -2, math.inf, -math.inf]
MATRIX_ORDS = [None, "fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf]


@pytest.mark.parametrize("dtype", NORM_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("ord", VECTOR_ORDS, ids=str)
def test_norm_vectors(be, rng, dtype, ord):
    x = rand(rng, (7,), dtype)
    if np.dtype(dtype) == np.float16 and ord in (3, 0.5, -1, -2):
        x = np.abs(x) + np.float16(0.5)  # keep float16's powers in range
    tol = eps_tol(np.float16 if np.dtype(dtype) == np.float16 else np.float64
                  if np.dtype(dtype).kind in "biu" else dtype, 10)
    with np.errstate(all="ignore"):
        check(be, hl.norm(T(be, x), ord), np.linalg.norm(x, ord), **tol)
        a = rand(rng, (3, 4, 5), dtype)
        for axis in (0, -1, 1):
            check(be, hl.norm(T(be, a), ord, axis=axis), np.linalg.norm(a, ord, axis=axis), **tol)
        check(be, hl.norm(T(be, a), ord, axis=1, keepdims=True),
              np.linalg.norm(a, ord, axis=1, keepdims=True), **tol)


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64, np.complex64, np.complex128],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("ord", MATRIX_ORDS, ids=str)
def test_norm_matrices(be, rng, dtype, ord):
    tol = eps_tol(np.float64 if np.dtype(dtype).kind == "i" else dtype, 30)
    a = rand(rng, (4, 5), dtype)
    check(be, hl.norm(T(be, a), ord), np.linalg.norm(a, ord), **tol)
    check(be, hl.norm(T(be, a), ord, keepdims=True), np.linalg.norm(a, ord, keepdims=True), **tol)
    b = rand(rng, (3, 4, 2), dtype)
    for axis in ((0, 1), (2, 0), (-1, -3), (1, 2)):
        check(be, hl.norm(T(be, b), ord, axis=axis), np.linalg.norm(b, ord, axis=axis), **tol)
        check(be, hl.norm(T(be, b), ord, axis=axis, keepdims=True),
              np.linalg.norm(b, ord, axis=axis, keepdims=True), **tol)


def test_norm_layouts_and_defaults(be, rng):
    a = rng.standard_normal((6, 8))
    t = T(be, a)
    for view, ref in ((t[::2, 1::3], a[::2, 1::3]), (hf.matrix_transpose(t), a.T),
                      (t[::-1], a[::-1])):
        for ord in (None, 1, 2, "nuc", math.inf):
            check(be, hl.norm(view, ord), np.linalg.norm(ref, ord))
        check(be, hl.norm(view, 3, axis=0), np.linalg.norm(ref, 3, axis=0))
    b = rng.standard_normal((2, 3, 4))  # ord None, axis None: every element, any ndim
    check(be, hl.norm(T(be, b)), np.linalg.norm(b))
    check(be, hl.norm(T(be, b), keepdims=True), np.linalg.norm(b, keepdims=True))
    check(be, hl.norm(T(be, np.float32(-3.0))), np.linalg.norm(np.float32(-3.0)))
    check(be, hl.norm(T(be, a[0]), 2), np.linalg.norm(a[0], 2))
    check(be, hl.norm(T(be, a), "f"), np.linalg.norm(a, "f"))
    check(be, hl.norm([3, 4]), np.linalg.norm([3, 4]))  # an array_like
    check(be, hl.norm(T(be, a[0]), True), np.linalg.norm(a[0], True))  # True == 1


def test_norm_special_values_and_empty(be):
    x = np.array([np.nan, 1.0, -np.inf, -0.0])
    for ord in (None, 0, 1, 2, 3, math.inf, -math.inf):
        check(be, hl.norm(T(be, x), ord), np.linalg.norm(x, ord))
    y = np.array([-np.inf, 2.0, -0.0])
    for ord in (None, 0, 1, math.inf, -math.inf, -1):
        with np.errstate(all="ignore"):
            check(be, hl.norm(T(be, y), ord), np.linalg.norm(y, ord))
    for shape, ord, axis in (((0,), math.inf, None), ((0,), 1, None), ((0, 3), 1, None),
                             ((0, 3), 2, None), ((3, 0), "nuc", None), ((0, 3), None, None),
                             ((2, 0), 2, 1), ((2, 0, 3), "fro", (1, 2))):
        e = np.zeros(shape)
        if NP_VERSION >= "2.3.0":
            want = np.linalg.norm(e, ord, axis=axis)
        else:  # NumPy < 2.3 (before gh-28343) raised for ord inf (vector) / 2 (matrix) on
            want = np.linalg.norm(e, axis=axis)  # an empty array: 0, as the default norm
        check(be, hl.norm(T(be, e), ord, axis=axis), want)
    with pytest.raises(ValueError):
        hl.norm(T(be, np.zeros(0)), -math.inf)


def test_norm_errors(be):
    a, v = T(be, np.ones((3, 3))), T(be, np.ones(3))
    with pytest.raises(ValueError, match="norm"):
        hl.norm(v, "fro")
    with pytest.raises(ValueError, match="norm"):
        hl.norm(v, "nuc")
    with pytest.raises(ValueError, match="norm"):
        hl.norm(a, 3)
    with pytest.raises(ValueError, match="norm"):
        hl.norm(a, "x")
    with pytest.raises(ValueError, match="duplicate"):
        hl.norm(a, axis=(1, -1))
    with pytest.raises(ValueError, match="improper"):
        hl.norm(T(be, np.ones((2, 2, 2))), 1)
    with pytest.raises(np.exceptions.AxisError, match="norm"):
        hl.norm(a, axis=2)
    with pytest.raises(TypeError):
        hl.norm(a, axis=1.5)
    with pytest.raises(TypeError):  # no solver takes float16 (NumPy's LAPACK neither)
        hl.norm(T(be, np.ones((2, 2), np.float16)), 2)
    with pytest.raises(TypeError):
        hl.norm("abc")


# ------------------------------------------------------------------------------- cond
@pytest.mark.parametrize("dtype", SOLVER, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("p", [None, 2, -2, 1, -1, math.inf, -math.inf, "fro", "nuc"], ids=str)
def test_cond(be, rng, dtype, p):
    a = rand(rng, (2, 3, 4, 4), dtype) + 2 * np.eye(4, dtype=dtype)
    c = np_cond(a, p)
    check(be, hl.cond(T(be, a), p), c, **eps_tol(dtype, 10 * float(np.max(c))))
    check(be, hl.cond(T(be, a[0, 0]), p), np_cond(a[0, 0], p),
          **eps_tol(dtype, 10 * float(np.max(c))))


def test_cond_singular_nan_and_shapes(be, rng):
    singular = np.array([[[1.0, 2.0], [2.0, 4.0]], [[2.0, 0.0], [0.0, 1.0]]])
    for p in (None, 1, -1, "fro", math.inf, -2):
        with np.errstate(all="ignore"):
            got, want = hl.cond(T(be, singular), p), np.linalg.cond(singular, p)
        if p in (None, -2):  # sigma_max / sigma_min: a singular matrix's sigma_min is 0 or
            g = be.asnumpy(got)  # a rounding error away from it (inf or ~1/eps)
            ok = (np.isinf(g[0]) or g[0] > 1e15) if p is None else g[0] < 1e-15  # -2: inverse
            assert ok and np.isclose(g[1], want[1]), (p, g)
        else:
            check(be, got, want)
    with_nan = np.array([[np.nan, 1.0], [1.0, 1.0]])
    check(be, hl.cond(T(be, with_nan), 1), np.linalg.cond(with_nan, 1))  # NaN stays NaN
    with pytest.raises(np.linalg.LinAlgError):  # NumPy: "SVD did not converge"
        hl.cond(T(be, with_nan))
    rect = rng.standard_normal((3, 5))  # p None / +-2: any shape
    check(be, hl.cond(T(be, rect)), np.linalg.cond(rect), **eps_tol(np.float64, 100))
    check(be, hl.cond(T(be, rect), -2), np.linalg.cond(rect, -2), **eps_tol(np.float64, 100))
    ints = np.array([[2, 1], [1, 3]])
    check(be, hl.cond(T(be, ints), 1), np.linalg.cond(ints, 1))
    for bad, p in ((np.zeros((0, 0)), None), (np.zeros((2, 0, 3)), 1), (np.ones((2, 3)), 1),
                   (np.ones(3), None)):
        with pytest.raises(np.linalg.LinAlgError, match="cond"):
            hl.cond(T(be, bad), p)
    with pytest.raises(ValueError, match="cond"):
        hl.cond(T(be, np.eye(2)), 3)


# ------------------------------------------------------------------- matrix_rank, pinv
def low_rank(rng, batch, m, n, r, dtype):
    return (rand(rng, batch + (m, r), dtype) @ rand(rng, batch + (r, n), dtype)).astype(dtype)


@pytest.mark.parametrize("dtype", SOLVER, ids=lambda d: np.dtype(d).name)
def test_matrix_rank(be, rng, dtype):
    a = low_rank(rng, (3,), 5, 4, 2, dtype)
    check(be, hl.matrix_rank(T(be, a)), np.linalg.matrix_rank(a))
    check(be, hl.matrix_rank(T(be, a[0])), np.linalg.matrix_rank(a[0]))
    check(be, hl.matrix_rank(T(be, a), tol=1e-3), np.linalg.matrix_rank(a, tol=1e-3))
    d = np.stack([np.diag([1, 1e-3, 1e-6, 0]), np.diag([1, 0.5, 1e-2, 1e-4])]).astype(dtype)
    for rtol in (1e-2, np.array([1e-5, 1e-1])):
        check(be, hl.matrix_rank(T(be, d), rtol=rtol), np.linalg.matrix_rank(d, rtol=rtol))
    check(be, hl.matrix_rank(T(be, d), tol=np.array([1e-4, 1e-3])),
          np.linalg.matrix_rank(d, np.array([1e-4, 1e-3])))
    check(be, np.linalg.matrix_rank(T(be, d), np.array([1e-4, 1e-3])),  # NumPy's positional tol
          np.linalg.matrix_rank(d, np.array([1e-4, 1e-3])))
    h = a[..., :4, :] + np.conj(np.swapaxes(a[..., :4, :], -1, -2))
    check(be, hl.matrix_rank(T(be, h), hermitian=True), np.linalg.matrix_rank(h, hermitian=True))


def test_matrix_rank_small_cases(be):
    for x in (np.zeros(3), np.array([0.0, 2.0]), np.float64(0.0), np.float64(3.0),
              np.arange(6).reshape(2, 3), np.zeros((3, 3), np.int8), np.ones((2, 2), bool),
              np.zeros((2, 0, 3))):
        if x.size == 0 and NP_VERSION < "2.4.5":  # NumPy < 2.4.5 (before gh-30422) raised
            want = np.zeros(x.shape[:-2], np.intp)  # for an empty matrix; its rank is 0
        else:
            want = np.linalg.matrix_rank(x)
        check(be, hl.matrix_rank(T(be, x)), want)
    with pytest.raises(ValueError, match="matrix_rank"):
        hl.matrix_rank(T(be, np.eye(2)), tol=1.0, rtol=1.0)


@pytest.mark.parametrize("dtype", SOLVER, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 3, 5)], ids=str)
def test_pinv(be, rng, dtype, shape):
    a = rand(rng, shape, dtype)
    check(be, hl.pinv(T(be, a)), np.linalg.pinv(a), **eps_tol(dtype, 100))
    low = low_rank(rng, shape[:-2], shape[-2], shape[-1], 1, dtype)
    for kw, np_kw in (({}, {"rtol": None}), ({"rcond": 1e-5}, {"rcond": 1e-5}),
                      ({"rtol": None}, {"rtol": None}), ({"rtol": 1e-5}, {"rtol": 1e-5})):
        check(be, hl.pinv(T(be, low), **kw), np.linalg.pinv(low, **np_kw), **eps_tol(dtype, 100))
    if shape[-1] == shape[-2]:
        h = a + np.conj(np.swapaxes(a, -1, -2))
        check(be, hl.pinv(T(be, h), hermitian=True), np.linalg.pinv(h, hermitian=True),
              **eps_tol(dtype, 1e3))


def test_pinv_defaults_empty_and_errors(be):
    d = np.diag([1.0, 1e-14, 1e-17])
    # hipfer's default is the standard's max(M, N) * eps (drops 1e-14) ...
    check(be, hl.pinv(T(be, d)), np.linalg.pinv(d, rtol=None))
    check(be, hl.pinv(T(be, d), rtol=None), np.linalg.pinv(d, rtol=None))
    check(be, hl.pinv(T(be, d), rcond=1e-15), np.linalg.pinv(d))
    # ... and np.linalg.pinv's stays NumPy's 1e-15 (keeps 1e-14)
    check(be, np.linalg.pinv(T(be, d)), np.linalg.pinv(d))
    check(be, np.linalg.pinv(T(be, d), rtol=None), np.linalg.pinv(d, rtol=None))
    check(be, np.linalg.pinv(T(be, d), 1e-20), np.linalg.pinv(d, 1e-20))
    with pytest.raises(ValueError, match="pinv"):
        np.linalg.pinv(T(be, d), rcond=1e-3, rtol=1e-3)
    check(be, hl.pinv(T(be, np.arange(6).reshape(2, 3))), np.linalg.pinv(np.arange(6).reshape(2, 3)))
    r = hl.pinv(T(be, np.zeros((2, 0, 3))))
    assert r.shape == (2, 3, 0) and r.dtype == np.float64
    with pytest.raises(ValueError, match="pinv"):
        hl.pinv(T(be, np.eye(2)), rcond=1e-3, rtol=1e-3)


# -------------------------------------------------------------- svd, eigh, qr keywords
@pytest.mark.parametrize("dtype", SOLVER, ids=lambda d: np.dtype(d).name)
def test_svd_compute_uv_and_hermitian(be, rng, dtype):
    a = rand(rng, (2, 4, 3), dtype)
    s = hl.svd(T(be, a), compute_uv=False)
    check(be, s, np.linalg.svd(a, compute_uv=False), **eps_tol(dtype, 10))
    h = rand(rng, (2, 4, 4), dtype)
    h = h + np.conj(np.swapaxes(h, -1, -2))
    check(be, hl.svd(T(be, h), compute_uv=False, hermitian=True),
          np.linalg.svd(h, compute_uv=False, hermitian=True), **eps_tol(dtype, 10))
    u, s, vh = hl.svd(T(be, h), hermitian=True)
    want = np.linalg.svd(h, hermitian=True)
    check(be, s, want.S, **eps_tol(dtype, 10))
    u, s, vh = be.asnumpy(u), be.asnumpy(s), be.asnumpy(vh)
    assert u.dtype == vh.dtype == np.dtype(dtype)
    np.testing.assert_allclose((u * s[..., None, :]) @ vh, h, **eps_tol(dtype, 30))
    with pytest.raises(np.linalg.LinAlgError):
        hl.svd(T(be, a), hermitian=True)


@pytest.mark.parametrize("dtype", SOLVER, ids=lambda d: np.dtype(d).name)
def test_eigh_uplo(be, rng, dtype):
    a = rand(rng, (3, 4, 4), dtype)  # not Hermitian: the triangle read matters
    for uplo in ("L", "U"):
        check(be, hl.eigvalsh(T(be, a), UPLO=uplo), np.linalg.eigvalsh(a, UPLO=uplo),
              **eps_tol(dtype, 30))
        w, v = hl.eigh(T(be, a), UPLO=uplo)
        check(be, w, np.linalg.eigh(a, UPLO=uplo).eigenvalues, **eps_tol(dtype, 30))
        tri = np.triu(a) if uplo == "U" else np.tril(a)
        herm = tri + np.conj(np.swapaxes(tri, -1, -2))
        herm[..., range(4), range(4)] = np.diagonal(a, axis1=-2, axis2=-1).real
        v = be.asnumpy(v)
        np.testing.assert_allclose(herm @ v, v * be.asnumpy(w)[..., None, :], **eps_tol(dtype, 100))
    with pytest.raises(ValueError, match="UPLO"):
        hl.eigh(T(be, a), UPLO="X")


@pytest.mark.parametrize("dtype", SOLVER, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)], ids=str)
def test_qr_mode_r(be, rng, dtype, shape):
    a = rand(rng, shape, dtype)
    r = hl.qr(T(be, a), mode="r")
    want = np.linalg.qr(a, mode="r")
    assert isinstance(r, hf.Tensor) and r.shape == want.shape and r.dtype == want.dtype
    # R is unique up to the sign (phase) of each row: compare magnitudes
    np.testing.assert_allclose(np.abs(be.asnumpy(r)), np.abs(want), **eps_tol(dtype, 30))
    with pytest.raises(ValueError, match="mode"):
        hl.qr(T(be, a), mode="economic")


@pytest.mark.parametrize("dtype", SOLVER + [np.int32], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4), (0, 3), (2, 3, 0)], ids=str)
def test_qr_mode_raw(be, rng, dtype, shape):
    a = rand(rng, shape, dtype)
    h, tau = hl.qr(T(be, a), mode="raw")
    want_h, want_tau = np.linalg.qr(a, mode="raw")
    # geqrf's Householder form is LAPACK's on every solver library: compare it as it is
    rt = np.float64 if np.dtype(dtype).kind == "i" else dtype
    check(be, h, want_h, **eps_tol(rt, 30))
    check(be, tau, want_tau, **eps_tol(rt, 30))
    k = min(shape[-2:])  # its R is mode "r"'s
    r = np.triu(np.swapaxes(be.asnumpy(h), -1, -2))[..., :k, :]
    np.testing.assert_allclose(r, be.asnumpy(hl.qr(T(be, a), mode="r")), **eps_tol(rt, 30))
    check(be, hl.qr(T(be, a[..., ::-1, :]), mode="raw")[1],  # a reversed view
          np.linalg.qr(a[..., ::-1, :], mode="raw")[1], **eps_tol(rt, 30))


# ------------------------------------------------------------------------------ lstsq
@pytest.mark.parametrize("dtype", SOLVER + [np.int64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("m,n,k", [(6, 3, None), (6, 3, 2), (3, 6, 2), (4, 4, 1)], ids=str)
def test_lstsq(be, rng, dtype, m, n, k):
    a = rand(rng, (m, n), dtype)
    b = rand(rng, (m,) if k is None else (m, k), dtype)
    got, want = hl.lstsq(T(be, a), T(be, b)), np.linalg.lstsq(a, b)
    assert isinstance(got, tuple) and len(got) == 4
    res_dt = np.dtype(dtype) if np.dtype(dtype).kind in "fc" else np.dtype(np.float64)
    for g, w in zip(got, want):
        check(be, g, w, **eps_tol(res_dt, 1e3))


def test_lstsq_rank_deficient_rcond_and_empty(be, rng):
    a = np.ones((5, 2))
    b = rng.standard_normal(5)
    for rcond in (None, 1e-3, -1):
        for g, w in zip(hl.lstsq(T(be, a), T(be, b), rcond=rcond), np.linalg.lstsq(a, b, rcond=rcond)):
            check(be, g, w, **eps_tol(np.float64, 100))
    d = np.diag([1.0, 1e-4, 1.0])[:, :2]
    for rcond in (1e-2, 1e-6):  # rcond decides the rank, and with it the residuals
        for g, w in zip(hl.lstsq(T(be, d), [1.0, 2.0, 3.0], rcond=rcond),
                        np.linalg.lstsq(d, [1.0, 2.0, 3.0], rcond=rcond)):
            check(be, g, w, **eps_tol(np.float64, 1e4))
    for sa, sb in (((0, 3), (0, 2)), ((3, 0), (3, 2)), ((0, 0), (0,)), ((3, 0), (3,))):
        for g, w in zip(hl.lstsq(T(be, np.zeros(sa)), T(be, rng.standard_normal(sb))),
                        np.linalg.lstsq(np.zeros(sa), np.zeros(sb) + 1.0)):
            assert g.shape == w.shape and g.dtype == w.dtype
    f32 = rand(rng, (4, 2), np.float32)
    got = hl.lstsq(T(be, f32), [1.0, 2.0, 3.0, 4.0])  # float32 with a list: float64 (NumPy)
    assert got[0].dtype == np.linalg.lstsq(f32, [1.0, 2.0, 3.0, 4.0])[0].dtype


def test_lstsq_errors(be):
    with pytest.raises(np.linalg.LinAlgError, match="lstsq"):
        hl.lstsq(T(be, np.ones((2, 3, 3))), T(be, np.ones(3)))
    with pytest.raises(np.linalg.LinAlgError, match="lstsq"):
        hl.lstsq(T(be, np.ones((3, 3))), T(be, np.ones(4)))
    with pytest.raises(np.linalg.LinAlgError, match="lstsq"):
        hl.lstsq(T(be, np.array([[np.nan, 1.0], [1.0, 1.0]])), T(be, np.ones(2)))


# -------------------------------------------------------------------------- multi_dot
@pytest.mark.parametrize("shapes", [
    [(3, 5), (5, 2)], [(5,), (5, 2)], [(3, 5), (5,)], [(4,), (4,)],
    [(10, 30), (30, 5), (5, 60)], [(3,), (3, 7), (7, 2), (2,)],
    [(2, 8), (8, 1), (1, 9), (9, 3), (3, 4)], [(6,), (6, 2), (2, 9), (9, 3), (3,)],
], ids=str)
@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64, np.complex128],
                         ids=lambda d: np.dtype(d).name)
def test_multi_dot(be, rng, shapes, dtype):
    arrays = [rand(rng, s, dtype) for s in shapes]
    got = hl.multi_dot([T(be, a) for a in arrays])
    want = np.linalg.multi_dot(arrays)
    if np.dtype(dtype).kind == "i":
        check(be, got, want, rtol=0, atol=0)
    else:
        check(be, got, want, **eps_tol(dtype, 30))


def test_multi_dot_order_out_and_errors(be, rng):
    # the classic chain: (10x100)(100x5)(5x50) is cheapest as (AB)C
    split = hl._chain_order([10, 100, 5, 50])
    assert split[0][2] == 1
    split = hl._chain_order([50, 5, 100, 10])  # and here as A(BC)
    assert split[0][2] == 0
    arrays = [rng.standard_normal(s) for s in [(3, 4), (4, 5), (5, 2)]]
    ts = [T(be, a) for a in arrays]
    out = hf.zeros((3, 2), device=be.device)
    assert hl.multi_dot(ts, out=out) is out
    check(be, out, np.linalg.multi_dot(arrays))
    check(be, hl.multi_dot([ts[0], arrays[1], arrays[2].tolist()]), np.linalg.multi_dot(arrays))
    check(be, hl.multi_dot([ts[0].mT, ts[0]]), arrays[0].T @ arrays[0])  # a transposed view
    with pytest.raises(ValueError, match="multi_dot"):
        hl.multi_dot(ts, out=hf.zeros((2, 3), device=be.device))
    with pytest.raises(ValueError, match="multi_dot"):
        hl.multi_dot([ts[0]])
    with pytest.raises(ValueError, match="multi_dot"):
        hl.multi_dot([ts[0], ts[0], ts[1]])
    with pytest.raises(np.linalg.LinAlgError, match="multi_dot"):
        hl.multi_dot([ts[0], T(be, np.ones((4, 4, 4))), ts[1]])


# ----------------------------------------------------------------- tensorinv, tensorsolve
@pytest.mark.parametrize("dtype", SOLVER, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape,ind", [((4, 6, 8, 3), 2), ((24, 4, 6), 1), ((2, 3, 6), 2),
                                       ((3, 3), 1)], ids=str)
def test_tensorinv(be, rng, dtype, shape, ind):
    n = math.prod(shape[:ind])
    a = well_conditioned(rng, (n, n), dtype).reshape(shape)
    check(be, hl.tensorinv(T(be, a), ind), np.linalg.tensorinv(a, ind), **eps_tol(dtype, 10))


def test_tensorinv_errors(be):
    with pytest.raises(ValueError, match="ind"):
        hl.tensorinv(T(be, np.eye(2)), 0)
    with pytest.raises(np.linalg.LinAlgError, match="tensorinv"):
        hl.tensorinv(T(be, np.ones((2, 3, 4))), 1)
    with pytest.raises(np.linalg.LinAlgError):
        hl.tensorinv(T(be, np.ones((2, 2, 2, 2))), 2)  # singular


@pytest.mark.parametrize("dtype", SOLVER, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("a_shape,b_shape,axes", [
    ((2, 3, 6), (2, 3), None), ((6, 2, 3), (2, 3), (0,)), ((3, 4, 12), (12,), (0, 1)),
    ((4, 4), (4,), None), ((2, 5, 2, 5), (2, 5), (2, 1)),
], ids=str)
def test_tensorsolve(be, rng, dtype, a_shape, b_shape, axes):
    n = math.prod(b_shape)
    a = well_conditioned(rng, (n, n), dtype).reshape(a_shape)
    b = rand(rng, b_shape, dtype)
    check(be, hl.tensorsolve(T(be, a), T(be, b), axes), np.linalg.tensorsolve(a, b, axes),
          **eps_tol(dtype, 10))


def test_tensorsolve_errors(be):
    with pytest.raises(np.linalg.LinAlgError, match="tensorsolve"):
        hl.tensorsolve(T(be, np.ones((2, 3, 4))), T(be, np.ones(2)))
    with pytest.raises(np.exceptions.AxisError):
        hl.tensorsolve(T(be, np.eye(4).reshape(2, 2, 4)), T(be, np.ones((2, 2))), axes=(5,))


# ----------------------------------------------------------------- eig, matrix_power
@pytest.mark.parametrize("dtype", SOLVER, ids=lambda d: np.dtype(d).name)
def test_eig_result_dtype_follows_numpy(be, rng, dtype):
    tri = np.triu(rand(rng, (2, 4, 4), dtype))  # real eigenvalues for a real matrix
    rot = np.array([[0, 1], [-1, 0]], dtype)  # +-i
    for a in (tri, rot, rand(rng, (3, 3), dtype)):
        try:
            w, v = hl.eig(T(be, a))
        except TypeError as e:  # a GPU stack without a general eigensolver says so
            assert "eig()" in str(e) and "CuPy" in str(e)
            pytest.skip(str(e))
        want = np.linalg.eig(a)
        # NumPy <= 2.4's rule (hipfer's): real results when a is real and every eigenvalue
        # is; NumPy 2.5 returns complex always
        real = a.dtype.kind != "c" and not np.any(want.eigenvalues.imag)
        cplx = np.result_type(want.eigenvalues.dtype, np.complex64)
        dt = cplx.type(0).real.dtype if real else cplx
        assert w.dtype == dt and v.dtype == dt
        wv = hl.eigvals(T(be, a))
        assert wv.dtype == dt
        w, v = be.asnumpy(w), be.asnumpy(v)
        np.testing.assert_allclose(a @ v, v * w[..., None, :], **eps_tol(dtype, 100))
        np.testing.assert_allclose(np.sort_complex(be.asnumpy(wv).ravel()),
                                   np.sort_complex(np.linalg.eigvals(a).ravel()),
                                   **eps_tol(dtype, 100))


@pytest.mark.parametrize("dtype", [np.int8, np.int64, np.float32, np.complex128],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n", [-3, -1, 0, 1, 2, 5])
def test_matrix_power(be, rng, dtype, n):
    a = np.array([[2, 1], [1, 3]], dtype) if np.dtype(dtype).kind == "i" else \
        well_conditioned(rng, (3, 3, 3), dtype)
    want = np.linalg.matrix_power(a, n)
    got = hl.matrix_power(T(be, a), n)
    if want.dtype.kind == "i":
        check(be, got, want, rtol=0, atol=0)
    else:
        check(be, got, want, **eps_tol(dtype, 100))


def test_matrix_power_errors(be):
    with pytest.raises(TypeError, match="integer"):
        hl.matrix_power(T(be, np.eye(2)), 2.0)
    with pytest.raises(np.linalg.LinAlgError, match="square"):
        hl.matrix_power(T(be, np.ones((2, 3))), 2)
    with pytest.raises(np.linalg.LinAlgError):
        hl.matrix_power(T(be, np.ones((2, 2))), -1)


# --------------------------------------------------------- named results, errors, dispatch
def test_named_results_match_numpy(be, rng):
    a = well_conditioned(rng, (3, 3), np.float64)
    h = a + a.T
    t = T(be, a)
    for got, want in ((hl.svd(t), np.linalg.svd(a)), (hl.qr(t), np.linalg.qr(a)),
                      (hl.slogdet(t), np.linalg.slogdet(a)),
                      (hl.eigh(T(be, h)), np.linalg.eigh(h))):
        assert type(got).__name__ == type(want).__name__ and got._fields == want._fields


def test_linalgerror_is_numpys(be):
    assert issubclass(hl.LinAlgError, np.linalg.LinAlgError)
    with pytest.raises(np.linalg.LinAlgError):
        hl.inv(T(be, np.ones((2, 2))))
    with pytest.raises(np.linalg.LinAlgError, match="inv"):
        hl.inv(T(be, np.ones(3)))
    with pytest.raises(np.linalg.LinAlgError, match="square"):
        hl.det(T(be, np.ones((2, 3))))
    with pytest.raises(TypeError):
        hl.det(object())


DISPATCH = [
    (np.linalg.norm, lambda a, v: (a,), {"ord": "nuc"}),
    (np.linalg.norm, lambda a, v: (a,), {"ord": -1, "axis": (1, 0), "keepdims": True}),
    (np.linalg.norm, lambda a, v: (v, 3), {}),
    (np.linalg.norm, lambda a, v: (a, None, 1), {}),
    (np.linalg.cond, lambda a, v: (a,), {}), (np.linalg.cond, lambda a, v: (a, "fro"), {}),
    (np.linalg.matrix_rank, lambda a, v: (a,), {}),
    (np.linalg.matrix_rank, lambda a, v: (a, 0.5), {}),
    (np.linalg.matrix_rank, lambda a, v: (a + a.T,), {"hermitian": True}),
    (np.linalg.pinv, lambda a, v: (a,), {}), (np.linalg.pinv, lambda a, v: (a,), {"rtol": 1e-3}),
    (np.linalg.pinv, lambda a, v: (a + a.T, 1e-10, True), {}),
    (np.linalg.svd, lambda a, v: (a,), {"compute_uv": False}),
    (np.linalg.eigvalsh, lambda a, v: (a,), {"UPLO": "U"}),
    (np.linalg.qr, lambda a, v: (a, "r"), {}),
    (np.linalg.multi_dot, lambda a, v: ([v, a, a, v],), {}),
    (np.linalg.tensorinv, lambda a, v: (a.reshape(2, 2, 4),), {"ind": 2}),
    (np.linalg.tensorsolve, lambda a, v: (a.reshape(2, 2, 4), v.reshape(2, 2)), {}),
    (np.linalg.matrix_power, lambda a, v: (a, -2), {}),
]


@pytest.mark.parametrize("f,args,kw", DISPATCH,
                         ids=[f"{f[0].__name__}-{i}" for i, f in enumerate(DISPATCH)])
def test_numpy_calls_reach_hipfer(be, rng, refuse_host, f, args, kw):
    a = rng.standard_normal((4, 4)) + 4 * np.eye(4)
    v = rng.standard_normal(4)
    want = f(*args(a, v), **kw)
    conv = [T(be, x) if isinstance(x, np.ndarray) else
            [T(be, y) for y in x] if isinstance(x, list) else x for x in args(a, v)]
    got = f(*conv, **kw)
    check(be, got, want, **eps_tol(np.float64, 100))


def test_numpy_lstsq_reaches_hipfer(be, rng, refuse_host):
    a, b = rng.standard_normal((6, 3)), rng.standard_normal((6, 2))
    got = np.linalg.lstsq(T(be, a), T(be, b), rcond=None)
    for g, w in zip(got, np.linalg.lstsq(a, b, rcond=None)):
        check(be, g, w, **eps_tol(np.float64, 100))
    out = hf.zeros((3,), device=be.device)
    v = [T(be, rng.standard_normal(s)) for s in [(3, 4), (4, 3)]]
    r = np.linalg.multi_dot([v[0], v[1], T(be, np.ones(3))], out=out)
    assert r is out


def test_array_like_operands_follow_the_tensor(be, rng):
    a = rng.standard_normal((3, 3)) + 3 * np.eye(3)
    v = rng.standard_normal(3)
    t = T(be, a)
    for got, want in ((hl.solve(t, v.tolist()), np.linalg.solve(a, v)),
                      (hl.solve(a.tolist(), T(be, v)), np.linalg.solve(a, v)),
                      (hl.vecdot(t, v), np.linalg.vecdot(a, v)),
                      (hl.outer(T(be, v), v.tolist()), np.linalg.outer(v, v)),
                      (hl.cross(t, a[::-1]), np.linalg.cross(a, a[::-1])),
                      (hl.tensordot(t, a, axes=1), np.linalg.tensordot(a, a, axes=1))):
        assert got.device == be.device
        check(be, got, want, **eps_tol(np.float64, 10))


def test_cross_non_negative_axis(be, rng):
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    check(be, hl.cross(T(be, a), T(be, b), axis=0), np.linalg.cross(a, b, axis=0))
    check(be, hl.cross(T(be, a.T), T(be, b.T), axis=1), np.linalg.cross(a.T, b.T, axis=1))
    with pytest.raises(ValueError, match="cross"):
        hl.cross(T(be, a), T(be, b), axis=2)


def test_bool_contractions(be, rng):
    a, b = rng.random((3, 4)) < 0.5, rng.random((4, 2)) < 0.5
    check(be, hl.tensordot(T(be, a), T(be, b), axes=1), np.linalg.tensordot(a, b, axes=1),
          rtol=0, atol=0)
    check(be, hl.vecdot(T(be, a), T(be, a)), np.linalg.vecdot(a, a), rtol=0, atol=0)
    with pytest.raises(TypeError):  # NumPy: subtract on bool
        hl.cross(T(be, a[:, :3]), T(be, a[:, :3]))


def test_eig_where_the_backend_has_no_general_eigensolver(be, monkeypatch):
    # as on ROCm or CuPy < 14: a TypeError naming the function and what it needs
    monkeypatch.setattr(be.backend, "has_linalg_support", lambda desc, dtypes=None: False)
    for fn in (hl.eig, hl.eigvals):
        with pytest.raises(TypeError, match=rf"{fn.__name__}\(\).*CuPy >= 14"):
            fn(T(be, np.eye(2)))


@pytest.mark.parametrize("dtype", [np.float64, np.complex128], ids=lambda d: np.dtype(d).name)
def test_views_strided_transposed_and_conjugated(be, rng, dtype):
    big = rand(rng, (8, 10), dtype) + 5 * np.eye(8, 10, dtype=dtype)
    t = T(be, big)
    views = [(t[::2, 1::2], big[::2, 1::2]), (hf.matrix_transpose(t)[:5, :5], big.T[:5, :5]),
             (t[::-1, ::-2][:5], big[::-1, ::-2][:5])]
    if np.dtype(dtype).kind == "c":
        views.append((hf.conj(t)[:4, :4], np.conj(big)[:4, :4]))  # the lazy conjugation flag
    for v, ref in views:
        tol = eps_tol(dtype, 1e3)
        check(be, hl.norm(v, "nuc"), np.linalg.norm(ref, "nuc"), **tol)
        check(be, hl.matrix_rank(v), np.linalg.matrix_rank(ref))
        check(be, hl.pinv(v, rcond=1e-15), np.linalg.pinv(ref), **tol)
        check(be, hl.svd(v, compute_uv=False), np.linalg.svd(ref, compute_uv=False), **tol)
        b = ref[:, :1]
        for g, w in zip(hl.lstsq(v, b), np.linalg.lstsq(ref, b)):
            check(be, g, w, **tol)
        if ref.shape[0] == ref.shape[1]:
            for p in (None, 1, "fro"):
                check(be, hl.cond(v, p), np_cond(ref, p), **tol)
            check(be, hl.eigvalsh(v, UPLO="U"), np.linalg.eigvalsh(ref, UPLO="U"), **tol)
            check(be, hl.multi_dot([v, v, v]), np.linalg.multi_dot([ref, ref, ref]), **tol)
