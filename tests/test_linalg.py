"""hipfer.linalg on each backend against NumPy: decompositions checked by their properties
(reconstruction, orthogonality) rather than sign-dependent entries; everything else by value."""
import numpy as np
import pytest

import hipfer as hf
from hipfer.prims import descriptors as d

from test_tensor import host, rand

FLOATS = [np.float32, np.float64, np.complex64, np.complex128]
BATCHES = [(), (3,), (2, 2)]


def tol(dtype):
    single = np.dtype(dtype) in (np.float32, np.complex64)
    return dict(rtol=2e-3, atol=2e-4) if single else dict(rtol=1e-9, atol=1e-10)


def well_conditioned(rng, shape, dtype):
    """Random square matrices with a dominant diagonal (safely invertible)."""
    a = rand(rng, shape, dtype)
    n = shape[-1]
    return (a + 3 * n * np.eye(n)).astype(dtype)


def hpd(rng, shape, dtype):
    """Random Hermitian positive-definite matrices."""
    a = rand(rng, shape, dtype)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def ct(a):
    return np.conj(np.swapaxes(a, -1, -2))


def views(rng, a):
    """The same matrices as a plain tensor, a conj-flagged tensor (of the conjugate data),
    and a non-contiguous (reversed, transposed) view."""
    yield "plain", hf.asarray(a), a
    if a.dtype.kind == "c":
        yield "conj", hf.conj(hf.asarray(np.conj(a))), a
    big = np.empty(a.shape[:-2] + (a.shape[-1], 2 * a.shape[-2]), a.dtype)
    big[..., ::-2] = np.swapaxes(a, -1, -2)
    yield "strided", hf.matrix_transpose(hf.asarray(big)[..., ::-2]), a


# ------------------------------------------------------------------ det, inv, solve
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("batch", BATCHES)
def test_det_inv_slogdet(be, rng, dtype, batch):
    a = well_conditioned(rng, batch + (4, 4), dtype)
    for what, t, ref in views(rng, a):
        det = hf.linalg.det(t)
        assert det.dtype == dtype and det.shape == batch, what
        np.testing.assert_allclose(host(det), np.linalg.det(ref), **tol(dtype))
        inv = hf.linalg.inv(t)
        assert inv.dtype == dtype
        np.testing.assert_allclose(host(inv), np.linalg.inv(ref), **tol(dtype))
        sign, logabs = hf.linalg.slogdet(t)
        rs, rl = np.linalg.slogdet(ref)
        assert sign.dtype == dtype and logabs.dtype == np.dtype(dtype).type(0).real.dtype
        np.testing.assert_allclose(host(sign), rs, **tol(dtype))
        np.testing.assert_allclose(host(logabs), rl, **tol(dtype))


def test_slogdet_of_singular_and_det_of_empty(be):
    sign, logabs = hf.linalg.slogdet(hf.asarray([[1.0, 2.0], [2.0, 4.0]]))
    assert float(sign) == 0 and float(logabs) == -np.inf
    assert float(hf.linalg.det(hf.zeros((0, 0)))) == 1.0
    assert hf.linalg.inv(hf.zeros((3, 0, 0))).shape == (3, 0, 0)
    assert hf.linalg.det(hf.zeros((0, 3, 3))).shape == (0,)


@pytest.mark.parametrize("dtype", FLOATS)
def test_solve(be, rng, dtype):
    a = well_conditioned(rng, (2, 3, 4, 4), dtype)
    b = rand(rng, (3, 4, 2), dtype)  # batch broadcasts against a's (2, 3)
    for what, t, ref in views(rng, a):
        x = hf.linalg.solve(t, hf.asarray(b))
        assert x.shape == (2, 3, 4, 2) and x.dtype == dtype, what
        np.testing.assert_allclose(host(x), np.linalg.solve(ref, b), **tol(dtype))
    v = rand(rng, (4,), dtype)  # one right-hand side for every matrix
    x = hf.linalg.solve(hf.asarray(a), hf.asarray(v))
    assert x.shape == (2, 3, 4)
    np.testing.assert_allclose(host(x), np.linalg.solve(a, v[:, None])[..., 0], **tol(dtype))


def test_solve_promotes_and_checks(be, rng):
    a = well_conditioned(rng, (3, 3), np.float32)
    x = hf.linalg.solve(hf.asarray(a), hf.asarray(np.arange(3, dtype=np.float32)))
    assert x.dtype == np.float32
    x = hf.linalg.solve(hf.asarray(a), hf.asarray(np.arange(3, dtype=np.int32)))
    assert x.dtype == np.linalg.solve(a, np.arange(3, dtype=np.int32)).dtype
    x = hf.linalg.solve(hf.asarray(a), hf.asarray(np.ones((3, 1), np.complex128)))
    assert x.dtype == np.complex128
    with pytest.raises(ValueError):
        hf.linalg.solve(hf.asarray(a), hf.asarray(np.ones((4, 1))))
    with pytest.raises(ValueError):
        hf.linalg.solve(hf.asarray(np.ones((3, 4))), hf.asarray(np.ones((3, 1))))


def test_singular_raises_linalgerror(be):
    singular = hf.asarray([[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(hf.linalg.LinAlgError):
        hf.linalg.inv(singular)
    with pytest.raises(ValueError):  # LinAlgError is a ValueError
        hf.linalg.solve(singular, hf.asarray([1.0, 1.0]))
    with pytest.raises(hf.linalg.LinAlgError):
        hf.linalg.cholesky(hf.asarray([[1.0, 2.0], [2.0, 1.0]]))  # not positive-definite


@pytest.mark.parametrize("fn", ["det", "inv", "slogdet", "cholesky", "eigh", "eigvalsh", "eig", "eigvals"])
def test_square_needed(be, fn):
    with pytest.raises(ValueError, match="square"):
        getattr(hf.linalg, fn)(hf.ones((2, 3)))
    with pytest.raises(ValueError):
        getattr(hf.linalg, fn)(hf.ones((3,)))
    with pytest.raises(TypeError):  # array_likes are taken, other objects are not
        getattr(hf.linalg, fn)("not an array")


def test_integer_operands_compute_in_float64(be):
    x = hf.asarray(np.array([[2, 1], [1, 3]], np.int32))
    assert hf.linalg.det(x).dtype == np.float64
    np.testing.assert_allclose(float(hf.linalg.det(x)), 5.0)
    assert hf.linalg.inv(hf.asarray(np.eye(2, dtype=bool))).dtype == np.float64


# --------------------------------------------------------------- decompositions
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("batch", BATCHES)
def test_cholesky(be, rng, dtype, batch):
    a = hpd(rng, batch + (4, 4), dtype)
    for what, t, ref in views(rng, a):
        low = hf.linalg.cholesky(t)
        assert low.dtype == dtype and low.shape == a.shape, what
        np.testing.assert_allclose(host(low), np.linalg.cholesky(ref), **tol(dtype))
        up = hf.linalg.cholesky(t, upper=True)
        u = host(up)
        np.testing.assert_allclose(np.tril(u, -1), 0, atol=0)
        np.testing.assert_allclose(ct(u) @ u, ref, **tol(dtype))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr(be, rng, dtype, shape, mode):
    a = rand(rng, shape, dtype)
    m, n = shape[-2:]
    k = min(m, n) if mode == "reduced" else m
    for what, t, ref in views(rng, a):
        res = hf.linalg.qr(t, mode=mode)
        assert isinstance(res, hf.linalg.QRResult)
        q, r = host(res.Q), host(res.R)
        assert q.shape == shape[:-2] + (m, k) and r.shape == shape[:-2] + (k, n), what
        assert q.dtype == dtype and r.dtype == dtype
        np.testing.assert_allclose(ct(q) @ q, np.broadcast_to(np.eye(k), q.shape[:-2] + (k, k)), **tol(dtype))
        np.testing.assert_allclose(np.tril(r, -1), 0, atol=0)
        np.testing.assert_allclose(q @ r, ref, **tol(dtype))
    with pytest.raises(ValueError, match="mode"):
        hf.linalg.qr(hf.asarray(a), mode="economic")  # NumPy's deprecated spelling


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
@pytest.mark.parametrize("full", [True, False])
def test_svd(be, rng, dtype, shape, full):
    a = rand(rng, shape, dtype)
    m, n = shape[-2:]
    k = min(m, n)
    real = np.dtype(dtype).type(0).real.dtype
    for what, t, ref in views(rng, a):
        u, s, vh = (host(p) for p in hf.linalg.svd(t, full_matrices=full))
        assert u.shape[-2:] == ((m, m) if full else (m, k)), what
        assert vh.shape[-2:] == ((n, n) if full else (k, n)) and s.shape == shape[:-2] + (k,)
        assert u.dtype == dtype and vh.dtype == dtype and s.dtype == real
        np.testing.assert_allclose(s, np.linalg.svd(ref, compute_uv=False), **tol(dtype))
        assert np.all(np.diff(s, axis=-1) <= 0)
        np.testing.assert_allclose((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], ref, **tol(dtype))
        ku = u.shape[-1]
        np.testing.assert_allclose(ct(u) @ u, np.broadcast_to(np.eye(ku), u.shape[:-2] + (ku, ku)), **tol(dtype))
        sv = hf.linalg.svdvals(t)
        assert sv.dtype == real
        np.testing.assert_allclose(host(sv), s, **tol(dtype))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("batch", BATCHES)
def test_eigh(be, rng, dtype, batch):
    a = rand(rng, batch + (5, 5), dtype)
    a = (a + ct(a)) / 2
    real = np.dtype(dtype).type(0).real.dtype
    for what, t, ref in views(rng, a):
        w, v = hf.linalg.eigh(t)
        w, v = host(w), host(v)
        assert w.dtype == real and v.dtype == dtype and w.shape == batch + (5,), what
        np.testing.assert_allclose(w, np.linalg.eigvalsh(ref), **tol(dtype))
        np.testing.assert_allclose((v * w[..., None, :]) @ ct(v), ref, **tol(dtype))
        np.testing.assert_allclose(host(hf.linalg.eigvalsh(t)), w, **tol(dtype))


@pytest.mark.parametrize("dtype", FLOATS)
def test_eig(be, rng, dtype):
    if not be.backend.has_linalg_support(d.Factorize(d.FactorKind.EIG), (np.dtype(dtype),)):
        with pytest.raises(TypeError, match="not supported"):
            hf.linalg.eig(hf.asarray(np.eye(2, dtype=dtype)))
        return
    a = rand(rng, (3, 4, 4), dtype)
    cplx = np.result_type(dtype, np.complex64)
    for what, t, ref in views(rng, a):
        w, v = (host(p) for p in hf.linalg.eig(t))
        assert w.dtype == cplx and v.dtype == cplx, what
        np.testing.assert_allclose(ref @ v, v * w[..., None, :], **tol(dtype))
        ev = host(hf.linalg.eigvals(t))
        assert ev.dtype == cplx
        np.testing.assert_allclose(np.sort_complex(ev), np.sort_complex(np.linalg.eigvals(ref)), **tol(dtype))


# ----------------------------------------------------------- singular-value based
@pytest.mark.parametrize("dtype", FLOATS)
def test_matrix_rank_and_pinv(be, rng, dtype):
    a = rand(rng, (2, 5, 3), dtype)
    a[1, :, 2] = a[1, :, 0]  # rank 2
    t = hf.asarray(a)
    r = hf.linalg.matrix_rank(t)
    assert r.dtype == np.int64
    np.testing.assert_array_equal(host(r), [3, 2])
    np.testing.assert_array_equal(host(hf.linalg.matrix_rank(t, rtol=0.99)), [1, 1])
    rdt = np.dtype(dtype).type(0).real.dtype
    # the second cut sits above the rounding noise of a single-precision SVD (~eps)
    rt = hf.asarray(np.array([0.99, 1e-4 if rdt == np.float32 else 1e-12], rdt))
    np.testing.assert_array_equal(host(hf.linalg.matrix_rank(t, rtol=rt)), [1, 2])
    p = hf.linalg.pinv(t)
    assert p.shape == (2, 3, 5) and p.dtype == dtype
    np.testing.assert_allclose(host(p), np.linalg.pinv(a, rtol=max(a.shape[-2:]) * np.finfo(
        np.dtype(dtype).type(0).real.dtype).eps), **tol(dtype))
    np.testing.assert_allclose(host(hf.linalg.pinv(hf.conj(t))), np.linalg.pinv(np.conj(a)), **tol(dtype))
    assert hf.linalg.pinv(hf.zeros((2, 0, 3))).shape == (2, 3, 0)


@pytest.mark.parametrize("dtype", FLOATS + [np.int64])
@pytest.mark.parametrize("n", [-3, -1, 0, 1, 2, 5])
def test_matrix_power(be, rng, dtype, n):
    if np.dtype(dtype).kind == "i":
        a = rng.integers(-3, 4, (2, 3, 3)).astype(dtype)
        if n < 0:
            return
    else:
        a = well_conditioned(rng, (2, 3, 3), dtype) / 10
    r = hf.linalg.matrix_power(hf.asarray(a), n)
    assert r.shape == a.shape
    if n >= 0:
        assert r.dtype == dtype
    np.testing.assert_allclose(host(r), np.linalg.matrix_power(a, n), **tol(dtype if n else np.float64))


# ------------------------------------------------------------------ composed ops
@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64, np.complex128])
@pytest.mark.parametrize("shapes,axes", [
    (((3, 4, 5), (4, 5, 2)), 2), (((3, 4), (4, 2)), 1), (((2, 3), (4,)), 0),
    (((3, 4, 5), (5, 3, 2)), ([0, 2], [1, 0])), (((3, 4, 5), (2, 4)), ([-2], [-1])),
])
def test_tensordot(be, rng, dtype, shapes, axes):
    a, b = rand(rng, shapes[0], dtype), rand(rng, shapes[1], dtype)
    r = hf.tensordot(hf.asarray(a), hf.asarray(b), axes=axes)
    ref = np.tensordot(a, b, axes=axes)
    assert r.shape == ref.shape and r.dtype == ref.dtype
    np.testing.assert_allclose(host(r), ref, **tol(dtype))
    assert hf.linalg.tensordot is hf.tensordot


def test_tensordot_errors(be):
    with pytest.raises(ValueError):
        hf.tensordot(hf.ones((2, 3)), hf.ones((4, 5)), axes=1)
    with pytest.raises(ValueError):
        hf.tensordot(hf.ones((2, 3)), hf.ones((3, 5)), axes=3)


@pytest.mark.parametrize("dtype", [np.int16, np.float32, np.complex64, np.complex128])
def test_vecdot(be, rng, dtype):
    a, b = rand(rng, (2, 3, 4), dtype), rand(rng, (3, 4), dtype)
    for axis in (-1, -2):
        r = hf.vecdot(hf.asarray(a), hf.asarray(b), axis=axis)
        ref = np.vecdot(a, b, axis=axis)
        assert r.dtype == ref.dtype and r.shape == ref.shape
        np.testing.assert_allclose(host(r), ref, **tol(dtype))
    r = hf.linalg.vecdot(hf.conj(hf.asarray(a)), hf.asarray(b))  # flag folded in
    np.testing.assert_allclose(host(r), np.vecdot(np.conj(a), b), **tol(dtype))
    with pytest.raises(ValueError):
        hf.vecdot(hf.asarray(a), hf.asarray(b), axis=-3)
    with pytest.raises(ValueError):
        hf.vecdot(hf.ones((3, 4)), hf.ones((3, 1)))


def test_outer_and_trace(be, rng):
    a, b = rand(rng, (4,), np.complex64), rand(rng, (3,), np.float32)
    r = hf.linalg.outer(hf.asarray(a), hf.asarray(b))
    assert r.dtype == np.complex64
    np.testing.assert_allclose(host(r), np.outer(a, b), rtol=1e-6)
    with pytest.raises(ValueError):
        hf.linalg.outer(hf.ones((2, 2)), hf.ones((2,)))
    x = rand(rng, (2, 4, 5), np.int16)
    for off in (-2, 0, 1, 7):
        t = hf.linalg.trace(hf.asarray(x), offset=off)
        assert t.dtype == np.int64
        np.testing.assert_array_equal(host(t), np.trace(x, offset=off, axis1=-2, axis2=-1))
    assert hf.linalg.trace(hf.asarray(x.astype(np.uint8)), dtype=np.uint8).dtype == np.uint8
    c = rand(rng, (3, 3), np.complex128)
    np.testing.assert_allclose(complex(hf.linalg.trace(hf.conj(hf.asarray(c)))), np.trace(c).conj())
    f = rand(rng, (3, 3), np.float32)
    assert hf.linalg.trace(hf.asarray(f)).dtype == np.float32


@pytest.mark.parametrize("dtype", [np.int32, np.float64, np.complex64])
def test_cross(be, rng, dtype):
    a, b = rand(rng, (2, 3, 4), dtype), rand(rng, (3, 1), dtype)
    r = hf.linalg.cross(hf.asarray(a), hf.asarray(b), axis=-2)
    ref = np.cross(a, b, axis=-2)
    assert r.shape == ref.shape and r.dtype == ref.dtype
    np.testing.assert_allclose(host(r), ref, **tol(dtype))
    a, b = rand(rng, (5, 3), dtype), rand(rng, (3,), dtype)
    np.testing.assert_allclose(host(hf.linalg.cross(hf.asarray(a), hf.asarray(b))), np.cross(a, b), **tol(dtype))
    with pytest.raises(ValueError):
        hf.linalg.cross(hf.ones((4,)), hf.ones((4,)))
    # a non-negative axis is NumPy's (numpy.linalg.cross takes it for equal ndims)
    assert host(hf.linalg.cross(hf.ones((3,)), hf.ones((3,)), axis=0)).tolist() == [0, 0, 0]
    with pytest.raises(ValueError):
        hf.linalg.cross(hf.ones((3,)), hf.ones((3,)), axis=1)


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("ord", [2, 1, np.inf, -np.inf, 0, 3, 0.5, -1])
def test_vector_norm(be, rng, dtype, ord):
    x = rand(rng, (3, 4, 5), dtype)
    x[0, 0, 0] = 0
    for axis, keepdims in ((None, False), (1, True), ((0, 2), False), (-1, False)):
        r = hf.linalg.vector_norm(hf.asarray(x), axis=axis, keepdims=keepdims, ord=ord)
        with np.errstate(divide="ignore"):
            ref = np.linalg.vector_norm(x, axis=axis, keepdims=keepdims, ord=ord)
        expect = np.float64 if np.dtype(dtype).kind == "i" else np.dtype(dtype).type(0).real.dtype
        assert r.dtype == expect and r.shape == ref.shape
        np.testing.assert_allclose(host(r), ref, **tol(expect))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf])
def test_matrix_norm(be, rng, dtype, ord):
    x = rand(rng, (2, 4, 3), dtype)
    for keepdims in (False, True):
        r = hf.linalg.matrix_norm(hf.conj(hf.asarray(x)), ord=ord, keepdims=keepdims)
        ref = np.linalg.matrix_norm(np.conj(x), ord=ord, keepdims=keepdims)
        assert r.dtype == np.dtype(dtype).type(0).real.dtype and r.shape == ref.shape
        np.testing.assert_allclose(host(r), ref, **tol(dtype))
    with pytest.raises(ValueError):
        hf.linalg.matrix_norm(hf.asarray(x), ord=3)


def test_namespace_aliases_and_results(be):
    assert hf.linalg.matmul is hf.matmul
    assert hf.linalg.matrix_transpose is hf.matrix_transpose
    assert hf.linalg.diagonal is hf.diagonal
    for name in hf.linalg.__all__:
        assert callable(getattr(hf.linalg, name)), name
    res = hf.linalg.eigh(hf.asarray(np.eye(2)))
    assert res._fields == ("eigenvalues", "eigenvectors")
    assert hf.linalg.svd(hf.asarray(np.eye(2)))._fields == ("U", "S", "Vh")
    assert hf.linalg.slogdet(hf.asarray(np.eye(2)))._fields == ("sign", "logabsdet")
    assert issubclass(hf.linalg.LinAlgError, ValueError)


def test_prims_factorize_infer_and_support(be):
    b = be.backend
    F32, C64, I32 = np.dtype(np.float32), np.dtype(np.complex64), np.dtype(np.int32)
    desc = d.Factorize(d.FactorKind.SVD, full=True)
    assert b.has_linalg_support(desc, (F32,))
    assert not b.has_linalg_support(desc, (I32,))
    assert not b.has_fft_support(desc)
    outs = b.plan(desc, (C64,), ((2, 5, 3),)).outs
    assert outs == (((2, 5, 5), C64), ((2, 3), F32), ((2, 3, 3), C64))
    with pytest.raises(ValueError, match="square"):
        b.plan(d.Factorize(d.FactorKind.INV), (F32,), ((2, 3),))
    with pytest.raises(ValueError, match="batch"):
        b.plan(d.Factorize(d.FactorKind.SOLVE), (F32, F32), ((2, 3, 3), (3, 1)))
