"""NumPy's creation functions (issue 21) against NumPy on every backend: array and the
as*array family, copy, identity, diag, diagflat, tri, indices, fromfunction, linspace with
array bounds, logspace, geomspace, frombuffer, fromiter; the NumPy dispatch of each."""
import numpy as np
import pytest

import hipfer as hf
from _util import ALL_DTYPES, FLOATS, RTOL, ids, random_array


def T(be, a):
    """A tensor on be's device holding the NumPy data a."""
    return hf.asarray(np.asarray(a), device=be.device)


def host(t):
    return np.asarray(t.to_device("cpu"), copy=True)


def check(t, ref, be, rtol=0.0):
    assert isinstance(t, hf.Tensor)
    assert t.device == be.device
    assert t.dtype == ref.dtype, (t.dtype, ref.dtype)
    assert t.shape == ref.shape, (t.shape, ref.shape)
    if rtol:
        np.testing.assert_allclose(host(t), ref, rtol=rtol, atol=0, equal_nan=True)
    else:
        np.testing.assert_array_equal(host(t), ref)


LAYOUTS = ["contig", "stepped", "transposed", "fortran", "reversed", "permuted"]


def make(be, rng, shape, dtype, layout):
    """(tensor, the NumPy array it reads as) in one memory layout."""
    a = random_array(rng, shape, dtype)
    if layout == "stepped" and a.ndim:
        big = random_array(rng, shape[:-1] + (2 * shape[-1],), dtype)
        return T(be, big)[..., ::2], big[..., ::2]
    if layout == "transposed" and a.ndim > 1:
        return hf.transpose(T(be, a)), a.T
    if layout == "fortran" and a.ndim > 1:
        return hf.asfortranarray(T(be, a)), np.asfortranarray(a)
    if layout == "reversed" and a.ndim:
        key = (slice(None, None, -1),) * min(a.ndim, 2) if a.ndim < 3 else \
            (slice(None, None, -1), Ellipsis, slice(None, None, -1))
        return T(be, a)[key], a[key]
    if layout == "permuted" and a.ndim > 1:  # axes (1, 0, 2) of a 3-d array, stepped
        b = random_array(rng, (shape[1], shape[0], 2), dtype)
        return hf.permute_dims(T(be, b), (1, 0, 2))[..., ::2], b.transpose(1, 0, 2)[..., ::2]
    return T(be, a), a


def same_strides(t, a):
    """t's strides are a's (in elements) on every axis longer than one."""
    got = [s for s, n in zip(t.strides, t.shape) if n > 1]
    want = [s // a.itemsize for s, n in zip(a.strides, a.shape) if n > 1]
    return got == want


# ------------------------------------------------------------------ array family
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=ids(ALL_DTYPES))
@pytest.mark.parametrize("layout", LAYOUTS)
def test_array_copies_values_and_layout(be, rng, dtype, layout):
    for shape in [(), (0,), (5,), (3, 4)]:
        t, a = make(be, rng, shape, dtype, layout)
        for order in ("K", "A", "C", "F"):
            got = hf.array(t, order=order)
            want = np.array(a, order=order)
            check(got, want, be)
            assert same_strides(got, want), (order, got.strides, want.strides)
            if got.size:
                assert not np.shares_memory(host(got), a)
        for ndmin in (0, 1, 3):
            check(hf.array(t, ndmin=ndmin), np.array(a, ndmin=ndmin), be)


def test_array_copy_modes(be, rng):
    a = random_array(rng, (3, 4), np.float64)
    t = T(be, a)
    c = hf.array(t)  # copy=True: writing to it leaves t alone
    c[0, 0] = 7.0
    assert host(t)[0, 0] == a[0, 0]
    assert hf.array(t, copy=None) is t
    assert hf.asanyarray(t) is t
    assert hf.ascontiguousarray(t) is t
    f = hf.asfortranarray(t)
    assert f._data.flags.f_contiguous and not f._data.flags.c_contiguous
    assert hf.asfortranarray(f) is f
    check(f, np.asfortranarray(a), be)
    with pytest.raises(ValueError, match="copy"):
        hf.array(t, dtype=hf.float32, copy=False)
    with pytest.raises(ValueError, match="hipfer.array"):
        hf.array(t.mT, order="C", copy=False)
    with pytest.raises(ValueError, match="order"):
        hf.array(t, order="X")
    check(hf.array([[1, 2], [3, 4]], dtype=hf.int8, device=be.device),
          np.array([[1, 2], [3, 4]], dtype=np.int8), be)
    check(hf.array(2.5, like=t), np.array(2.5), be)


@pytest.mark.parametrize("dtype", [np.bool_, np.int32, np.uint8, np.float16, np.complex128])
def test_as_arrays(be, rng, dtype):
    for shape in [(), (4,), (3, 5)]:
        t, a = make(be, rng, shape, dtype, "stepped")
        got = hf.ascontiguousarray(t)
        check(got, np.ascontiguousarray(a), be)
        assert got._data.flags.c_contiguous
        got = hf.asfortranarray(t)
        check(got, np.asfortranarray(a), be)
        assert got._data.flags.f_contiguous
        check(hf.asanyarray(t, dtype=hf.complex128), np.asanyarray(a, dtype=np.complex128), be)
        check(hf.ascontiguousarray(t, dtype=hf.complex64),
              np.ascontiguousarray(a, dtype=np.complex64), be)


@pytest.mark.parametrize("order", ["K", "A", "C", "F"])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_copy(be, rng, order, layout):
    t, a = make(be, rng, (3, 4), np.int16, layout)
    got = hf.copy(t, order=order)
    want = np.copy(a, order=order)
    check(got, want, be)
    assert same_strides(got, want), (got.strides, want.strides)
    got[0, 0] = 1
    got[0, 1] = 2
    np.testing.assert_array_equal(host(t), a)  # a new buffer


def test_conjugated_inputs_fold_their_flag(be, rng):
    a = random_array(rng, (3, 2), np.complex64)
    t = hf.conj(T(be, a))
    for fn, ref in [(hf.array, np.array), (hf.asfortranarray, np.asfortranarray),
                    (hf.copy, np.copy)]:
        got = fn(t)
        check(got, ref(np.conj(a)), be)


# ------------------------------------------------------------------ matrices
@pytest.mark.parametrize("dtype", [None, np.int32, np.float32, np.complex64, np.bool_])
def test_identity(be, dtype):
    for n in (0, 1, 4):
        check(hf.identity(n, dtype=dtype, device=be.device), np.identity(n, dtype=dtype), be)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=ids(ALL_DTYPES))
def test_diag_and_diagflat(be, rng, dtype):
    v = random_array(rng, (4,), dtype)
    m = random_array(rng, (3, 5), dtype)
    for k in (-5, -2, 0, 1, 3, 6):
        check(hf.diag(T(be, v), k), np.diag(v, k), be)
        check(hf.diag(T(be, m), k), np.diag(m, k), be)
        check(hf.diag(T(be, m)[::-1, ::2], k), np.diag(m[::-1, ::2], k), be)
        check(hf.diagflat(T(be, m[:2, :2]), k), np.diagflat(m[:2, :2], k), be)
    check(hf.diag(T(be, v[:0])), np.diag(v[:0]), be)
    got = hf.diag([1, 2, 3])  # array_like: on the default device
    assert got.dtype == np.int64
    np.testing.assert_array_equal(host(got), np.diag([1, 2, 3]))


def test_diag_of_a_matrix_is_a_view(be, rng):
    m = random_array(rng, (3, 3), np.float64)
    t = T(be, m)
    d = hf.diag(t, 1)
    t[0, 1] = 42.0
    assert host(d)[0] == 42.0


@pytest.mark.parametrize("dtype", [float, int, np.float32, np.bool_, np.complex64])
def test_tri(be, dtype):
    for N, M, k in [(0, None, 0), (3, None, 0), (3, 5, 1), (4, 2, -1), (2, 3, -5), (3, 3, 9)]:
        check(hf.tri(N, M, k, dtype=dtype, device=be.device), np.tri(N, M, k, dtype=dtype), be)


@pytest.mark.parametrize("dtype", [int, np.int8, np.float32, np.uint16])
def test_indices(be, dtype):
    # NumPy's indices has no device=: made on the default device
    for dims in [(), (0,), (3,), (2, 3), (2, 1, 4)]:
        pairs = [(hf.indices(dims, dtype=dtype), np.indices(dims, dtype=dtype))]
        pairs += list(zip(hf.indices(dims, dtype=dtype, sparse=True),
                          np.indices(dims, dtype=dtype, sparse=True)))
        assert len(pairs) == 1 + len(dims)
        for g, w in pairs:
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_array_equal(host(g), w)


def test_fromfunction(be):
    got = hf.fromfunction(lambda i, j: i * 10 + j, (3, 4), dtype=int, device=be.device)
    check(got, np.fromfunction(lambda i, j: i * 10 + j, (3, 4), dtype=int), be)
    got = hf.fromfunction(lambda i, j, s: (i - j) * s, (2, 3), s=0.5, device=be.device)
    check(got, np.fromfunction(lambda i, j, s: (i - j) * s, (2, 3), s=0.5), be)
    got = hf.fromfunction(lambda i: i, (0,), device=be.device)
    check(got, np.fromfunction(lambda i: i, (0,)), be)


# ------------------------------------------------------------------ ranges
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.float16])
@pytest.mark.parametrize("endpoint", [True, False])
def test_linspace_array_bounds(be, rng, dtype, endpoint):
    a = random_array(rng, (3,), dtype, low=-50, high=50)
    b = random_array(rng, (2, 1), dtype, low=-50, high=50)
    for num in (0, 1, 2, 6):
        for axis in (0, 1, -1, 2, -3):
            got = hf.linspace(T(be, a), T(be, b), num, endpoint=endpoint, axis=axis)
            want = np.linspace(a, b, num, endpoint=endpoint, axis=axis)
            check(got, want, be, rtol=RTOL.get(want.dtype, 0) * 4)
    got, step = hf.linspace(T(be, a), 5.0, 4, retstep=True)
    want, wstep = np.linspace(a, 5.0, 4, retstep=True)
    check(got, want, be, rtol=RTOL[want.dtype] * 4)
    check(step, wstep, be, rtol=RTOL[wstep.dtype] * 4)


def test_linspace_numpy_extras(be):
    check(hf.linspace(0, 10, 7, dtype=np.int32, device=be.device),
          np.linspace(0, 10, 7, dtype=np.int32), be)
    check(hf.linspace(-3.5, 2, 6, dtype=np.int64, device=be.device),
          np.linspace(-3.5, 2, 6, dtype=np.int64), be)
    y, step = hf.linspace(0, 1, 5, retstep=True, device=be.device)
    wy, wstep = np.linspace(0, 1, 5, retstep=True)
    check(y, wy, be)
    assert step == wstep
    assert np.isnan(hf.linspace(0, 1, 1, retstep=True)[1])
    check(hf.linspace(2.0, 3.0, 50, device=be.device), np.linspace(2.0, 3.0), be)
    check(hf.linspace([0, 1], [[2], [3]], 3, device=be.device),
          np.linspace([0, 1], [[2], [3]], 3), be)
    z = np.array([1 + 1j, -2j])
    check(hf.linspace(T(be, z), 0, 4), np.linspace(z, 0, 4), be, rtol=1e-14)
    with pytest.raises(np.exceptions.AxisError):
        hf.linspace(T(be, np.zeros(2)), 1.0, 3, axis=3)
    with pytest.raises(ValueError, match="hipfer.linspace"):
        hf.linspace(0, 1, -2)


@pytest.mark.parametrize("dtype", [None, np.float32, np.int64])
def test_logspace(be, rng, dtype):
    for start, stop in [(0, 3), (-1.5, 2.0), (2, -2)]:
        for num, endpoint in [(0, True), (1, True), (5, True), (4, False)]:
            got = hf.logspace(start, stop, num, endpoint, dtype=dtype) if be.name == "numpy" \
                else hf.logspace(T(be, np.float64(start)), T(be, np.float64(stop)), num,
                                 endpoint, dtype=dtype)
            want = np.logspace(start, stop, num, endpoint, dtype=dtype)
            check(got, want, be, rtol=0 if want.dtype.kind in "iu" else 1e-13 if dtype is None
                  else RTOL[want.dtype])
    a = np.array([0.0, 1.0, 2.0])
    for base in (2.0, [2.0, 3.0, 10.0]):
        got = hf.logspace(T(be, a), 3.0, 4, base=base if isinstance(base, float) else T(be, base),
                          axis=-1)
        check(got, np.logspace(a, 3.0, 4, base=base, axis=-1), be, rtol=1e-13)


def test_geomspace(be, rng):
    for start, stop in [(1, 1000), (-1, -1000), (1e-3, 7.5), (1j, 1000j), (-1 + 0j, 1 + 0j),
                        (2, 2), (8, 1)]:
        for num, endpoint in [(0, True), (1, True), (4, True), (5, False)]:
            got = hf.geomspace(start, stop, num, endpoint)
            want = np.geomspace(start, stop, num, endpoint)
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_allclose(host(got), want, rtol=1e-12, atol=1e-12)
    a = np.array([1.0, -2.0, 3.0], np.float32)
    b = np.array([10.0, -20.0, 3000.0], np.float32)
    for axis in (0, 1, -1):
        got = hf.geomspace(T(be, a), T(be, b), 4, axis=axis)
        want = np.geomspace(a, b, 4, axis=axis)
        check(got, want, be, rtol=RTOL[np.dtype(np.float32)] * 10)
    got = hf.geomspace(1, 256, 9, dtype=np.int32)
    want = np.geomspace(1, 256, 9, dtype=np.int32)
    assert got.dtype == want.dtype
    # an integer geomspace truncates the float powers: NumPy's 2 ** 7 comes out as
    # 127.99.. -> 127, a GPU's pow may round it to 128 (one ulp of the float result)
    np.testing.assert_array_equal(host(got), want) if be.name == "numpy" else \
        np.testing.assert_allclose(host(got), want, atol=1)
    with pytest.raises(ValueError, match="zero"):
        hf.geomspace(0, 5, 3)


# ------------------------------------------------------------------ host data
@pytest.mark.parametrize("dtype", [np.uint8, np.int32, np.float64, np.complex64])
def test_frombuffer_and_fromiter(be, rng, dtype):
    a = random_array(rng, (7,), dtype)
    buf = a.tobytes()
    item = np.dtype(dtype).itemsize
    for count, offset in [(-1, 0), (3, 0), (2, 2 * item), (-1, item)]:
        check(hf.frombuffer(buf, dtype=dtype, count=count, offset=offset, device=be.device),
              np.frombuffer(buf, dtype=dtype, count=count, offset=offset), be)
    values = a.tolist()
    check(hf.fromiter(iter(values), dtype, device=be.device), np.fromiter(iter(values), dtype), be)
    check(hf.fromiter((v for v in values), dtype, count=3, device=be.device),
          np.fromiter((v for v in values), dtype, count=3), be)
    with pytest.raises(ValueError):
        hf.frombuffer(buf, dtype=dtype, count=100)


# ------------------------------------------------------------------ NumPy's dispatch
def test_numpy_reaches_hipfer(be, rng, refuse_host):
    a = random_array(rng, (3, 4), np.float64)
    t = T(be, a)
    v = T(be, a[0])
    cases = [
        (lambda: np.identity(3, like=t), np.identity(3)),
        (lambda: np.tri(3, 4, 1, like=t), np.tri(3, 4, 1)),
        (lambda: np.diag(t, 1), np.diag(a, 1)),
        (lambda: np.diag(v, -1), np.diag(a[0], -1)),
        (lambda: np.diagflat(t[:2, :2]), np.diagflat(a[:2, :2])),
        (lambda: np.copy(t, order="F"), np.copy(a, order="F")),
        (lambda: np.array(t, like=t), np.array(a)),
        (lambda: np.asanyarray(t, like=t), np.asanyarray(a)),
        (lambda: np.ascontiguousarray(t.mT, like=t), np.ascontiguousarray(a.T)),
        (lambda: np.asfortranarray(t, like=t), np.asfortranarray(a)),
        (lambda: np.linspace(v, t, 3, axis=1), np.linspace(a[0], a, 3, axis=1)),
        (lambda: np.fromfunction(lambda i, j: i + j, (2, 3), like=t),
         np.fromfunction(lambda i, j: i + j, (2, 3))),
        (lambda: np.frombuffer(b"\x01\x02\x03\x04", dtype=np.uint8, like=t),
         np.frombuffer(b"\x01\x02\x03\x04", dtype=np.uint8)),
        (lambda: np.fromiter(range(4), float, like=t), np.fromiter(range(4), float)),
    ]
    for call, want in cases:
        got = call()
        assert isinstance(got, hf.Tensor)
        assert got.device == be.device
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(np.asarray(got, copy=True), want, rtol=1e-14)
    for call, want in [(lambda: np.logspace(v, 2.0, 3), np.logspace(a[0], 2.0, 3)),
                       (lambda: np.geomspace(hf.abs(v), 2.0, 3),
                        np.geomspace(np.abs(a[0]), 2.0, 3))]:
        got = call()
        assert isinstance(got, hf.Tensor) and got.device == be.device
        np.testing.assert_allclose(np.asarray(got, copy=True), want, rtol=1e-12)


def test_creation_errors(be):
    t = T(be, np.ones((2, 2, 2)))
    with pytest.raises(ValueError, match="hipfer.diag"):
        hf.diag(t)
    with pytest.raises(TypeError):
        hf.identity(2.5)
    assert hf.tri(-1).shape == np.tri(-1).shape
    with pytest.raises(TypeError):
        hf.indices((2.5,))
    with pytest.raises(TypeError, match="tensor dtype"):
        hf.frombuffer(b"ab", dtype="S1")
    with pytest.raises(TypeError, match="hipfer.linspace"):
        hf.linspace(1j, 2, 3, dtype=np.float64)
