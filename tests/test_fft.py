"""hipfer.fft on each backend against numpy.fft: values, the spec's dtypes (single
precision kept), sizes n / s, axes, norms, conj-flagged and non-contiguous inputs."""
import numpy as np
import pytest

import hipfer as hf
from hipfer.prims import descriptors as d

from test_tensor import host, rand

NORMS = ["backward", "ortho", "forward"]
COMPLEX = [np.complex64, np.complex128]
REAL = [np.float32, np.float64]


def tol(dtype):
    single = np.dtype(dtype) in (np.float32, np.complex64)
    return dict(rtol=1e-4, atol=1e-4) if single else dict(rtol=1e-10, atol=1e-10)


def cplx(dt):
    return np.result_type(dt, np.complex64)


def real(dt):
    return np.dtype(dt).type(0).real.dtype


def inputs(a):
    """a as a plain tensor, a conj-flagged tensor (of the conjugate data) and a
    non-contiguous view (every other element of a reversed buffer)."""
    yield "plain", hf.asarray(a)
    if a.dtype.kind == "c":
        yield "conj", hf.conj(hf.asarray(np.conj(a)))
    big = np.empty(a.shape[:-1] + (2 * a.shape[-1],), a.dtype)
    big[..., ::-2] = a
    yield "strided", hf.asarray(big)[..., ::-2]


@pytest.mark.parametrize("name", ["fft", "ifft"])
@pytest.mark.parametrize("dtype", COMPLEX + REAL)
@pytest.mark.parametrize("n,axis", [(None, -1), (5, -1), (12, 0), (None, 1)])
@pytest.mark.parametrize("norm", NORMS)
def test_fft_ifft(be, rng, name, dtype, n, axis, norm):
    a = rand(rng, (6, 8), dtype)
    for what, t in inputs(a):
        r = getattr(hf.fft, name)(t, n=n, axis=axis, norm=norm)
        ref = getattr(np.fft, name)(a, n=n, axis=axis, norm=norm)
        assert r.dtype == cplx(dtype) and r.shape == ref.shape, what
        np.testing.assert_allclose(host(r), ref, **tol(dtype))


@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize("n", [None, 7, 10])
@pytest.mark.parametrize("norm", NORMS)
def test_rfft_irfft(be, rng, dtype, n, norm):
    a = rand(rng, (3, 9), dtype)
    for what, t in inputs(a):
        r = hf.fft.rfft(t, n=n, norm=norm)
        ref = np.fft.rfft(a, n=n, norm=norm)
        assert r.dtype == cplx(dtype) and r.shape == ref.shape, what
        np.testing.assert_allclose(host(r), ref, **tol(dtype))
    c = ref.astype(cplx(dtype))
    for what, t in inputs(c):
        back = hf.fft.irfft(t, n=n, axis=-1, norm=norm)
        ref_back = np.fft.irfft(c, n=n, norm=norm)
        assert back.dtype == dtype and back.shape == ref_back.shape, what
        np.testing.assert_allclose(host(back), ref_back, **tol(dtype))


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("n", [None, 9, 4])
@pytest.mark.parametrize("norm", NORMS)
def test_hfft_ihfft(be, rng, dtype, n, norm):
    a = rand(rng, (2, 6), dtype)
    for what, t in inputs(a):
        r = hf.fft.hfft(t, n=n, norm=norm)
        ref = np.fft.hfft(a, n=n, norm=norm)
        assert r.dtype == real(dtype) and r.shape == ref.shape, what
        np.testing.assert_allclose(host(r), ref, **tol(dtype))
    x = rand(rng, (2, 7), real(dtype))
    r = hf.fft.ihfft(hf.asarray(x), n=n, norm=norm)
    ref = np.fft.ihfft(x, n=n, norm=norm)
    assert r.dtype == dtype and r.shape == ref.shape
    np.testing.assert_allclose(host(r), ref, **tol(dtype))


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("s,axes", [(None, None), (None, (0, 2)), ((4, 6), (-1, 0)),
                                    ((-1, 3), (1, 2)), ((5,), (1,))])
@pytest.mark.parametrize("norm", NORMS)
def test_fftn_family(be, rng, dtype, s, axes, norm):
    a = rand(rng, (4, 5, 6), dtype)
    np_s = None if s is None else [a.shape[ax] if n == -1 else n for n, ax in zip(s, axes)]
    for what, t in inputs(a):
        for name in ("fftn", "ifftn"):
            r = getattr(hf.fft, name)(t, s=s, axes=axes, norm=norm)
            ref = getattr(np.fft, name)(a, s=np_s, axes=axes, norm=norm)
            assert r.dtype == dtype and r.shape == ref.shape, (what, name)
            np.testing.assert_allclose(host(r), ref, **tol(dtype))
    x = rand(rng, (4, 5, 6), real(dtype))
    r = hf.fft.rfftn(hf.asarray(x), s=s, axes=axes, norm=norm)
    ref = np.fft.rfftn(x, s=np_s, axes=axes, norm=norm)
    assert r.dtype == dtype and r.shape == ref.shape
    np.testing.assert_allclose(host(r), ref, **tol(dtype))
    c = ref.astype(dtype)
    back = hf.fft.irfftn(hf.asarray(c), s=np_s, axes=axes, norm=norm)
    ref_back = np.fft.irfftn(c, s=np_s, axes=axes, norm=norm)
    assert back.dtype == real(dtype) and back.shape == ref_back.shape
    np.testing.assert_allclose(host(back), ref_back, **tol(dtype))


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("s,axes", [(None, (-2, -1)), ((3, 8), (-2, -1)), (None, (2, 0)),
                                    ((4, 6), (0, 1))])
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_2d_forms(be, rng, dtype, s, axes, norm):
    """NumPy's fft2 family: the n-d transforms over two axes, s and axes positional."""
    a = rand(rng, (4, 5, 6), dtype)
    for what, t in inputs(a):
        for name in ("fft2", "ifft2"):
            r = getattr(hf.fft, name)(t, s, axes, norm)
            ref = getattr(np.fft, name)(a, s, axes, norm)
            assert r.dtype == dtype and r.shape == ref.shape, (what, name)
            np.testing.assert_allclose(host(r), ref, **tol(dtype))
    x = rand(rng, (4, 5, 6), real(dtype))
    r = hf.fft.rfft2(hf.asarray(x), s, axes, norm)
    ref = np.fft.rfft2(x, s, axes, norm)
    assert r.dtype == dtype and r.shape == ref.shape
    np.testing.assert_allclose(host(r), ref, **tol(dtype))
    c = ref.astype(dtype)
    back = hf.fft.irfft2(hf.asarray(c), s, axes, norm)
    ref_back = np.fft.irfft2(c, s, axes, norm)
    assert back.dtype == real(dtype) and back.shape == ref_back.shape
    np.testing.assert_allclose(host(back), ref_back, **tol(dtype))


@pytest.mark.usefixtures("refuse_host")
def test_2d_forms_through_numpy(be, rng):
    a = rand(rng, (3, 4, 5), np.complex128)
    t = hf.asarray(a)
    for name in ("fft2", "ifft2"):
        r = getattr(np.fft, name)(t, axes=(0, 2), norm="ortho")
        assert isinstance(r, hf.Tensor)
        np.testing.assert_allclose(np.asarray(r, copy=True),
                                   getattr(np.fft, name)(a, axes=(0, 2), norm="ortho"))
    x = hf.asarray(a.real)
    r = np.fft.irfft2(np.fft.rfft2(x), s=(4, 5))
    assert isinstance(r, hf.Tensor)
    np.testing.assert_allclose(np.asarray(r, copy=True), a.real, atol=1e-12)
    with pytest.raises(ValueError, match="fft2"):
        hf.fft.fft2(t, (3,), (0, 1))


def test_round_trips(be, rng):
    a = rand(rng, (3, 16), np.complex64)
    t = hf.asarray(a)
    np.testing.assert_allclose(host(hf.fft.ifft(hf.fft.fft(t))), a, rtol=1e-5, atol=1e-5)
    x = rand(rng, (3, 15), np.float64)
    back = hf.fft.irfft(hf.fft.rfft(hf.asarray(x)), n=15)
    np.testing.assert_allclose(host(back), x, rtol=1e-12, atol=1e-12)
    back = hf.fft.irfftn(hf.fft.rfftn(hf.asarray(x)), s=(3, 15), axes=(0, 1))
    np.testing.assert_allclose(host(back), x, rtol=1e-12, atol=1e-12)


def test_integer_inputs_and_empty_batches(be, rng):
    i = rng.integers(-5, 5, (4, 8)).astype(np.int32)
    r = hf.fft.fft(hf.asarray(i))
    assert r.dtype == np.complex128
    np.testing.assert_allclose(host(r), np.fft.fft(i), rtol=1e-12, atol=1e-12)
    assert hf.fft.rfft(hf.asarray(i)).dtype == np.complex128
    e = hf.fft.fft(hf.zeros((0, 8), dtype=hf.complex64))
    assert e.shape == (0, 8) and e.dtype == np.complex64
    same = hf.fft.fftn(hf.asarray(np.complex64(2 + 1j)))  # 0-d: no axis, the identity
    assert complex(same) == 2 + 1j and same.dtype == np.complex64


def test_errors(be):
    c = hf.ones((4,), dtype=hf.complex64)
    with pytest.raises(TypeError):
        hf.fft.rfft(c)
    with pytest.raises(TypeError):
        hf.fft.ihfft(c)
    with pytest.raises(ValueError, match="norm"):
        hf.fft.fft(c, norm="none")
    with pytest.raises(ValueError):
        hf.fft.fft(c, n=0)
    with pytest.raises(ValueError):
        hf.fft.fft(hf.zeros((0,), dtype=hf.complex64))
    with pytest.raises(IndexError):
        hf.fft.fft(c, axis=1)
    with pytest.raises(ValueError):
        hf.fft.fft(c, axis=-2)  # AxisError is both
    with pytest.raises(ValueError, match="axes"):
        hf.fft.fftn(c, s=(4,))
    with pytest.raises(ValueError):
        hf.fft.fftn(hf.ones((2, 2), dtype=hf.complex64), axes=(0, 0))
    with pytest.raises(ValueError):
        hf.fft.irfft(hf.ones((1,), dtype=hf.complex64))  # default n = 0
    with pytest.raises(TypeError):
        hf.fft.fft(np.ones(4))


@pytest.mark.parametrize("n", [1, 2, 7, 8])
@pytest.mark.parametrize("dspace", [1.0, 0.25])
def test_freqs(be, n, dspace):
    f = hf.fft.fftfreq(n, d=dspace)
    assert f.dtype == np.float64 and f.device == be.device
    np.testing.assert_array_equal(host(f), np.fft.fftfreq(n, d=dspace))
    r = hf.fft.rfftfreq(n, d=dspace, dtype=hf.float32)
    assert r.dtype == np.float32
    np.testing.assert_array_equal(host(r), np.fft.rfftfreq(n, d=dspace).astype(np.float32))
    with pytest.raises(TypeError):
        hf.fft.fftfreq(n, dtype=hf.complex64)


@pytest.mark.parametrize("axes", [None, 0, -1, (0, 2), (1,)])
def test_shifts(be, rng, axes):
    a = rand(rng, (4, 5, 3), np.complex64)
    for what, t in inputs(a):
        r = hf.fft.fftshift(t, axes=axes)
        np.testing.assert_array_equal(host(r), np.fft.fftshift(a, axes=axes), what)
        back = hf.fft.ifftshift(r, axes=axes)
        np.testing.assert_array_equal(host(back), a, what)
        np.testing.assert_array_equal(host(hf.fft.ifftshift(t, axes=axes)), np.fft.ifftshift(a, axes=axes))


def test_prims_fft_infer_and_support(be):
    b = be.backend
    F32, C64, C128 = np.dtype(np.float32), np.dtype(np.complex64), np.dtype(np.complex128)
    r2c = d.Fft(d.FftKind.R2C, (1,), (8,))
    assert b.has_fft_support(r2c, (F32,))
    assert not b.has_fft_support(r2c, (C64,))
    assert not b.has_linalg_support(r2c)
    assert b.plan(r2c, (F32,), ((3, 6),)).outs == (((3, 5), C64),)
    c2r = d.Fft(d.FftKind.C2R, (0, 1), (4, 9), norm="ortho")
    assert b.plan(c2r, (C128,), ((5, 3),)).outs == (((4, 9), np.dtype(np.float64)),)
    with pytest.raises(ValueError):
        b.plan(d.Fft(d.FftKind.C2C, (0, 0), (2, 2)), (C64,), ((2, 2),))
    with pytest.raises(ValueError):
        b.plan(d.Fft(d.FftKind.R2C, (0,), (2,), inverse=True), (F32,), ((2,),))
    with pytest.raises(ValueError, match="norm"):
        b.plan(d.Fft(d.FftKind.C2C, (0,), (2,), norm="x"), (C64,), ((2,),))
