"""eye, linspace, meshgrid, tril and triu against NumPy, on every backend."""
import numpy as np
import pytest

import hipfer as hf
from _util import ALL_DTYPES, random_array
from test_manipulation import check, host

LAYOUTS = ["contig", "stepped", "transposed", "conj"]


def make(rng, shape, dtype, layout):
    """(tensor, the NumPy array it reads as): contiguous, stepped, transposed (last two
    axes) or conjugated (complex only), with NaN/inf/-0.0 among real floats."""
    if layout == "stepped":
        big = random_array(rng, shape[:-1] + (2 * shape[-1],), dtype, special=True)
        return hf.asarray(big)[..., ::2], big[..., ::2]
    if layout == "transposed":
        a = random_array(rng, shape[:-2] + shape[-2:][::-1], dtype, special=True)
        return hf.asarray(a).mT, a.swapaxes(-1, -2)
    a = random_array(rng, shape, dtype, special=True)
    if layout == "conj" and a.dtype.kind == "c":
        return hf.conj(hf.asarray(a)), np.conj(a)
    return hf.asarray(a), a


# ------------------------------------------------------------------ eye
@pytest.mark.parametrize("dtype", [None] + ALL_DTYPES, ids=str)
def test_eye(be, dtype):
    for n_rows, n_cols, k in [(4, None, 0), (3, 5, 1), (5, 3, -2), (3, 4, 7), (3, 4, -3),
                              (0, None, 0), (2, 0, 0), (1, 1, 0), (6, 6, -5)]:
        t = hf.eye(n_rows, n_cols, k=k, dtype=dtype)
        check(t, np.eye(n_rows, n_cols, k=k, dtype=dtype or np.float64), be)


def test_eye_errors(be):
    with pytest.raises(ValueError):
        hf.eye(-1)
    with pytest.raises(TypeError):
        hf.eye(2.5)
    with pytest.raises(TypeError):
        hf.eye(3, k=1.0)
    with pytest.raises(TypeError):
        hf.eye(3, 3, 1)  # k is keyword-only


# ------------------------------------------------------------------ linspace
LINSPACE_CASES = [
    (0.0, 1.0, 5), (-3, 7, 11), (2.5, -1.25, 8), (0, 1e10, 33), (1.0, 1.0, 4), (0.0, 1.0, 0),
    (3.0, 9.0, 1), (0.1, 0.7, 100), (-1e-3, 1e5, 1001), (0.0, 5e-324, 10),  # step underflows
    (np.inf, np.inf, 3), (0.0, np.nan, 4), (-np.inf, 1.0, 3),
]


@pytest.mark.parametrize("endpoint", [True, False])
@pytest.mark.parametrize("dtype", [None, "float32", "float64", "complex64", "complex128"])
def test_linspace_real(be, dtype, endpoint):
    for start, stop, num in LINSPACE_CASES:
        t = hf.linspace(start, stop, num, dtype=dtype, endpoint=endpoint)
        with np.errstate(all="ignore"):
            ref = np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype or np.float64)
        check(t, ref, be)


@pytest.mark.parametrize("endpoint", [True, False])
@pytest.mark.parametrize("dtype", [None, "complex64", "complex128"])
def test_linspace_complex(be, rng, dtype, endpoint):
    for num in (0, 1, 2, 7, 50):
        start, stop = complex(*rng.standard_normal(2) * 5), complex(*rng.standard_normal(2) * 5)
        t = hf.linspace(start, stop, num, dtype=dtype, endpoint=endpoint)
        ref = np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype or np.complex128)
        check(t, ref, be)
    check(hf.linspace(1, 2j, 3), np.linspace(1, 2j, 3), be)


def test_linspace_random(be, rng):
    for _ in range(20):
        start, stop = rng.standard_normal(2) * 10.0 ** rng.integers(-3, 6)
        num = int(rng.integers(2, 500))
        check(hf.linspace(start, stop, num), np.linspace(start, stop, num), be)


def test_linspace_errors(be):
    with pytest.raises(ValueError):
        hf.linspace(0, 1, -1)
    with pytest.raises(TypeError):
        hf.linspace(0, 1, 5, dtype="bool")
    with pytest.raises(TypeError):
        hf.linspace(0, 1j, 5, dtype="float64")
    with pytest.raises(TypeError):
        hf.linspace(0, 1, 2.0)
    with pytest.raises(TypeError):
        hf.linspace(0, 1, 5, False, False, None, 0, "cpu")  # device is keyword-only


# ------------------------------------------------------------------ meshgrid
@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("dtype", [np.dtype(t) for t in (np.bool_, np.int16, np.uint32,
                                                       np.float32, np.complex128)], ids=str)
def test_meshgrid(be, rng, dtype, indexing):
    for sizes in [(), (4,), (3, 5), (2, 0, 4), (2, 3, 4, 1)]:
        arrays = [random_array(rng, (n,), dtype) for n in sizes]
        ts = [hf.asarray(a) for a in arrays]
        if dtype.kind == "c" and ts:
            ts[0], arrays[0] = hf.conj(ts[0]), np.conj(arrays[0])
        if len(sizes) > 1:
            ts[1], arrays[1] = ts[1][::-1], arrays[1][::-1]
        out = hf.meshgrid(*ts, indexing=indexing)
        refs = np.meshgrid(*arrays, indexing=indexing)
        assert isinstance(out, tuple) and len(out) == len(refs)  # 2025.12: a tuple
        for t, ref in zip(out, refs):
            check(t, ref, be)
            assert not t.is_conj()


def test_meshgrid_errors(be):
    x = hf.arange(3)
    with pytest.raises(ValueError):
        hf.meshgrid(x, indexing="xx")
    with pytest.raises(ValueError):
        hf.meshgrid(x, hf.ones((2, 2)))
    with pytest.raises(TypeError):
        hf.meshgrid(x, [1, 2])


# ------------------------------------------------------------------ tril / triu
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_tril_triu(be, rng, dtype, layout):
    for shape in [(4, 5), (5, 3), (2, 3, 4), (0, 3), (2, 0, 2), (1, 1)]:
        x, a = make(rng, shape, dtype, layout)
        for k in (0, 1, -1, -4, 6, -7):
            check(hf.tril(x, k=k), np.tril(a, k), be)
            check(hf.triu(x, k=k), np.triu(a, k), be)
    check(hf.tril(x), np.tril(a), be)


def test_tril_triu_errors(be):
    for fn in (hf.tril, hf.triu):
        with pytest.raises(ValueError):
            fn(hf.arange(3))
        with pytest.raises(ValueError):
            fn(hf.asarray(1.0))
        with pytest.raises(TypeError):
            fn(hf.ones((2, 2)), 1)  # k is keyword-only


@pytest.mark.parametrize("dtype", [None, "float32", "int16", "complex128"])
def test_asarray_of_nested_tensors_stays_on_device(be, rng, refuse_host, dtype):
    """[tensor, [scalars], tensor view, ...] is built where the tensors live (no host
    round trip: refuse_host), with NumPy's shape and dtype rules."""
    a_np = random_array(rng, (2, 3), np.float32)
    b_np = random_array(rng, (3,), np.int32)
    a, b = hf.asarray(be.asarray(a_np)), hf.asarray(be.asarray(b_np))
    obj = [[a[0], b, [1, 2, 3]], [a[1, ::-1], b, (4.5, -0.0, 6)]]
    want = np.asarray([[a_np[0], b_np, [1, 2, 3]], [a_np[1, ::-1], b_np, (4.5, -0.0, 6)]],
                      dtype=dtype)
    got = hf.asarray(obj, dtype=dtype)
    assert got.device == a.device and got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(be.asnumpy(got), want)
    assert hf.asarray([hf.asarray(be.asarray(np.float32(2))), 1.5]).dtype == np.float64


def test_asarray_of_nested_tensors_errors(be):
    a = hf.asarray(be.asarray(np.ones(3)))
    with pytest.raises(ValueError, match="inhomogeneous"):
        hf.asarray([a, a[:2]])
    with pytest.raises(ValueError, match="copy"):
        hf.asarray([a, a], copy=False)
