"""x[key] and x[key] = value with integer arrays, boolean masks and their mixtures with
ints, slices, ``...`` and None (NumPy's rules), and nonzero; against NumPy."""
import numpy as np
import pytest

import hipfer as hf

from test_tensor import host, rand

SHAPE = (4, 5, 6)
INDEX_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
VALUE_DTYPES = [np.bool_, np.int32, np.uint8, np.float32, np.float64, np.complex64, np.complex128]


def ix(rng, n, shape, dtype=np.int64):
    """Random valid indices for an axis of size n (negatives too when signed)."""
    lo = -n if np.dtype(dtype).kind == "i" else 0
    return rng.integers(lo, n, size=shape).astype(dtype)


def mask(rng, shape):
    return rng.random(shape) < 0.5


# key builders: rng, index dtype -> key over a SHAPE tensor (NumPy arrays / lists inside)
KEYS = {
    "1d": lambda r, t: ix(r, 4, (7,), t),
    "2d": lambda r, t: ix(r, 4, (2, 3), t),
    "empty": lambda r, t: ix(r, 4, (0,), t),
    "0d_with_slice": lambda r, t: (slice(None), ix(r, 5, (), t)),
    "slice_then_array": lambda r, t: (slice(None), ix(r, 5, (3,), t)),
    "ellipsis_array": lambda r, t: (Ellipsis, ix(r, 6, (2, 2), t)),
    "array_ellipsis": lambda r, t: (ix(r, 4, (3,), t), Ellipsis),
    "slice_array_slice": lambda r, t: (slice(None), ix(r, 5, (4,), t), slice(1, None)),
    "two_broadcast": lambda r, t: (ix(r, 4, (3, 1), t), ix(r, 5, (2,), t)),
    "two_apart": lambda r, t: (ix(r, 4, (3,), t), slice(None, None, -2), ix(r, 6, (3,), t)),
    "int_slice_array": lambda r, t: (1, slice(None), ix(r, 6, (2,), t)),
    "slice_int_array": lambda r, t: (slice(None), -2, ix(r, 6, (2,), t)),
    "array_none_array": lambda r, t: (ix(r, 4, (2,), t), None, ix(r, 5, (2,), t)),
    "none_front": lambda r, t: (None, ix(r, 4, (2,), t), ix(r, 5, (1,), t)),
    "three": lambda r, t: (ix(r, 4, (2, 1, 1), t), ix(r, 5, (3, 1), t), ix(r, 6, (4,), t)),
    "three_0d": lambda r, t: (ix(r, 4, (), t), ix(r, 5, (), t), ix(r, 6, (), t)),
    "array_ellipsis_array": lambda r, t: (ix(r, 4, (2,), t), Ellipsis, ix(r, 6, (2,), t)),
    "list": lambda r, t: [0, -1, 2, 2],
    "nested_list": lambda r, t: (slice(None), [[0, 1], [4, -5]]),
    "mask_full": lambda r, t: mask(r, SHAPE),
    "mask_lead": lambda r, t: mask(r, (4, 5)),
    "mask_mid": lambda r, t: (slice(None), mask(r, (5, 6))),
    "mask_last": lambda r, t: (Ellipsis, mask(r, (6,))),
    "mask_and_array": lambda r, t: (mask(r, (4,)).tolist(), slice(None), ix(r, 6, (1,), t)),
    "mask2_and_array": lambda r, t: (mask(r, (4, 5)), ix(r, 6, (1,), t)),
    "mask_list": lambda r, t: [True, False, True, True],
    "true": lambda r, t: True,
    "false": lambda r, t: (Ellipsis, False),
    "true_array": lambda r, t: (True, ix(r, 4, (3,), t)),
    "array_true": lambda r, t: (ix(r, 4, (3,), t), slice(None), True),
}


def to_hf(key):
    """The key with its NumPy arrays as hipfer tensors (lists stay lists)."""
    one = lambda k: hf.asarray(k) if isinstance(k, np.ndarray) else k  # noqa: E731
    return tuple(map(one, key)) if isinstance(key, tuple) else one(key)


def check_equal(got, ref):
    assert got.shape == ref.shape, (got.shape, ref.shape)
    assert got.dtype == ref.dtype
    np.testing.assert_array_equal(got, ref)


# ---------------------------------------------------------------------- reads
@pytest.mark.parametrize("name", sorted(KEYS))
def test_read_keys(be, rng, name):
    a = rand(rng, SHAPE, np.float64)
    key = KEYS[name](rng, np.int64)
    check_equal(host(hf.asarray(a)[to_hf(key)]), a[key])


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("name", ["1d", "slice_array_slice", "two_apart", "three", "0d_with_slice"])
def test_read_index_dtypes(be, rng, name, index_dtype):
    a = rand(rng, SHAPE, np.int32)
    key = KEYS[name](rng, index_dtype)
    check_equal(host(hf.asarray(a)[to_hf(key)]), a[key])


@pytest.mark.parametrize("dtype", VALUE_DTYPES)
@pytest.mark.parametrize("name", ["2d", "two_broadcast", "mask_lead", "mask2_and_array"])
def test_read_value_dtypes(be, rng, name, dtype):
    a = rand(rng, SHAPE, dtype)
    key = KEYS[name](rng, np.int32)
    check_equal(host(hf.asarray(a)[to_hf(key)]), a[key])


@pytest.mark.parametrize("name", ["1d", "two_apart", "three", "mask_mid", "int_slice_array"])
def test_read_from_strided_views(be, rng, name):
    """Negative steps, steps and transposes before the advanced index."""
    big = rand(rng, (9, 5, 13), np.float32)
    view = np.ascontiguousarray(big.transpose(2, 1, 0))[::-2, ::-1, 1::2]  # (7, 5, 4)
    a = view.transpose(2, 1, 0)[:, :, :6]  # SHAPE with odd strides
    t = hf.asarray(np.ascontiguousarray(big.transpose(2, 1, 0)))[::-2, ::-1, 1::2]
    t = hf.permute_dims(t, (2, 1, 0))[:, :, :6]
    key = KEYS[name](rng, np.int64)
    check_equal(host(t[to_hf(key)]), a[key])


def test_read_broadcast_source_and_zero_d(be, rng):
    row = rand(rng, (6,), np.float64)
    t = hf.broadcast_to(hf.asarray(row), SHAPE)
    a = np.broadcast_to(row, SHAPE)
    key = (ix(rng, 4, (3,)), slice(None), ix(rng, 6, (3,)))
    check_equal(host(t[to_hf(key)]), a[key])
    z = hf.asarray(np.float64(2.5))
    check_equal(host(z[True]), np.float64(2.5)[None])
    check_equal(host(z[hf.asarray(False)]), np.zeros(0))
    check_equal(host(z[None, True]), np.full((1, 1), 2.5))
    check_equal(host(z[np.array(True)]), np.float64(2.5)[None])
    check_equal(host(hf.asarray(row)[np.array(False), np.array([[0], [5]])]), row[False, [[0], [5]]])


def test_read_empty(be, rng):
    a = rand(rng, (0, 3), np.float64)
    t = hf.asarray(a)
    check_equal(host(t[hf.asarray(np.zeros(0, np.int64))]), a[np.zeros(0, np.int64)])
    check_equal(host(t[:, hf.asarray(np.array([2, 0]))]), a[:, [2, 0]])
    check_equal(host(t[hf.asarray(np.zeros((0, 3), bool))]), np.zeros(0))
    b = rand(rng, (3, 4), np.float64)
    check_equal(host(hf.asarray(b)[hf.asarray(np.zeros((3, 4), bool))]), np.zeros(0))
    e = np.zeros((2, 0), np.int64)
    check_equal(host(hf.asarray(b)[hf.asarray(e), hf.asarray(e)]), b[e, e])


def test_read_keeps_conj(be, rng):
    a = rand(rng, SHAPE, np.complex128)
    c = hf.conj(hf.asarray(a))
    key = (ix(rng, 4, (3,)), slice(None), ix(rng, 6, (3,)))
    got = c[to_hf(key)]
    assert got.is_conj()
    check_equal(host(got), np.conj(a)[key])
    m = mask(rng, (4, 5))
    check_equal(host(c[hf.asarray(m)]), np.conj(a)[m])


# --------------------------------------------------------------------- writes
def write_value(rng, a, key, dtype, kind):
    shape = a[key].shape
    if kind == "scalar":
        return rand(rng, (), dtype)[()]
    if kind == "full":
        return rand(rng, shape, dtype)
    return rand(rng, shape[1:], dtype)  # broadcast over the leading result axis


@pytest.mark.parametrize("kind", ["scalar", "full", "trailing"])
@pytest.mark.parametrize("name", sorted(KEYS))
def test_write_keys(be, rng, name, kind):
    a = rand(rng, SHAPE, np.float64)
    key = KEYS[name](rng, np.int64)
    v = write_value(rng, a, key, np.float64, kind)
    t = hf.asarray(a.copy())
    t[to_hf(key)] = v if kind == "scalar" else hf.asarray(v)
    ref = a.copy()
    ref[key] = v
    check_equal(host(t), ref)


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("dtype", [np.bool_, np.uint8, np.int64, np.float32, np.complex64])
def test_write_dtypes(be, rng, dtype, index_dtype):
    a = rand(rng, SHAPE, dtype)
    key = (slice(None), np.array([3, 0, 1], index_dtype), slice(1, None))
    v = rand(rng, a[key].shape, dtype)
    t = hf.asarray(a.copy())
    t[to_hf(key)] = hf.asarray(v)
    ref = a.copy()
    ref[key] = v
    check_equal(host(t), ref)


def test_write_repeats_last_wins(be, rng):
    a = rand(rng, (5, 3), np.float64)
    t = hf.asarray(a.copy())
    idx = np.array([1, 3, 1, -4, 1])  # 1 and -4 are the same row: last one wins
    v = rand(rng, (5, 3), np.float64)
    t[hf.asarray(idx)] = hf.asarray(v)
    ref = a.copy()
    ref[1], ref[3] = v[4], v[1]
    check_equal(host(t), ref)
    t2 = hf.asarray(a.copy())
    t2[hf.asarray(np.array([[0, 2], [0, 2]])), hf.asarray(np.array([1, 1]))] = \
        hf.asarray(np.array([[1.0, 2.0], [3.0, 4.0]]))
    ref2 = a.copy()
    ref2[0, 1], ref2[2, 1] = 3.0, 4.0
    check_equal(host(t2), ref2)


@pytest.mark.parametrize("dtype", [np.bool_, np.int16, np.float32, np.complex128])
def test_masked_writes(be, rng, dtype):
    a = rand(rng, SHAPE, dtype)
    m = mask(rng, (4, 5))
    for value in (rand(rng, (), dtype)[()],                   # scalar: where path
                  rand(rng, (6,), dtype),                     # broadcast row: where path
                  rand(rng, (1, 6), dtype),                   # size-one facing axis
                  rand(rng, (1, 1, 6), dtype),                # extra leading one
                  rand(rng, (int(m.sum()), 6), dtype)):       # one row per element
        t = hf.asarray(a.copy())
        t[hf.asarray(m)] = value if np.ndim(value) == 0 else hf.asarray(value)
        ref = a.copy()
        ref[m] = value
        check_equal(host(t), ref)
    t = hf.asarray(a.copy())
    m3 = mask(rng, SHAPE)
    t[hf.asarray(m3)] = hf.asarray(a[::-1][m3])
    ref = a.copy()
    ref[m3] = a[::-1][m3]
    check_equal(host(t), ref)


def test_write_into_strided_views_and_aliases(be, rng):
    a = rand(rng, (8, 6), np.float64)
    t = hf.asarray(a.copy())
    view, ref_view = t[::-2, 1:], (ref := a.copy())[::-2, 1:]
    key = (np.array([3, 0]), slice(None, None, -1))
    v = rand(rng, (2, 5), np.float64)
    view[to_hf(key)] = hf.asarray(v)
    ref_view[key] = v
    check_equal(host(t), ref)
    t[hf.asarray(np.array([1, 2, 3]))] = t[:3]  # the value shares memory with the target
    ref[[1, 2, 3]] = ref[:3].copy()
    check_equal(host(t), ref)
    m = mask(rng, (8, 6))
    t[hf.asarray(m)] = t[0, 0]  # where path, value inside the target
    ref[m] = ref[0, 0].copy()
    check_equal(host(t), ref)
    b = np.array([True, False, True, True])
    tb = hf.asarray(b.copy())
    tb[tb] = False  # the mask is the target
    check_equal(host(tb), np.zeros(4, bool))


def test_write_conj(be, rng):
    a = rand(rng, (4, 3), np.complex128)
    c = hf.conj(hf.asarray(a.copy()))
    v = rand(rng, (2, 3), np.complex128)
    c[hf.asarray(np.array([2, 0]))] = hf.asarray(v)
    exp = np.conj(a)
    exp[[2, 0]] = v
    check_equal(host(c), exp)
    c[hf.asarray(np.array([1])), hf.asarray(np.array([2]))] = hf.conj(hf.asarray(v[0, :1]))
    exp[1, 2] = np.conj(v[0, 0])
    check_equal(host(c), exp)
    m = mask(rng, (4, 3))
    c[hf.asarray(m)] = 1 + 2j
    exp[m] = 1 + 2j
    check_equal(host(c), exp)
    c[hf.asarray(m)] = hf.asarray(v[0, :1])
    exp[m] = v[0, 0]
    check_equal(host(c), exp)


def test_write_casts(be, rng):
    t = hf.zeros((5,), dtype=hf.float32)
    t[hf.asarray(np.array([0, 3]))] = hf.asarray(np.array([2, 7], np.int64))
    t[[True, False, False, False, True]] = 9
    check_equal(host(t), np.array([9, 0, 0, 7, 9], np.float32))
    with pytest.raises(TypeError, match="complex"):
        t[[0]] = 1j
    with pytest.raises(TypeError, match="complex"):
        t[[0]] = hf.asarray(np.array([1j]))


# --------------------------------------------------------------------- errors
def test_errors(be, rng):
    a = rand(rng, (3, 4), np.float64)
    t = hf.asarray(a)
    cases = {
        IndexError: [
            (hf.asarray(np.array([0, 3])),),
            (slice(None), hf.asarray(np.array([-5]))),
            (hf.asarray(np.array([0], np.uint64)), hf.asarray(np.array([4], np.uint8))),
            (hf.asarray(np.array([1.0])),),                      # float index
            (hf.asarray(np.ones(4, bool)),),                      # mask shape mismatch
            (hf.asarray(np.array([0, 1])), hf.asarray(np.array([0, 1, 2]))),  # no broadcast
            (hf.asarray(np.array([0])), 0, 0),                    # too many
        ],
    }
    for key in cases[IndexError]:
        with pytest.raises(IndexError):
            t[key]
        with pytest.raises(IndexError):
            t[key] = 1.0
    with pytest.raises(IndexError, match="axis 1 with size 4"):
        t[:, hf.asarray(np.array([0, 9]))]
    with pytest.raises(IndexError, match="axis 1 with size 4"):
        t[0, ..., hf.asarray(np.array([9]))]
    with pytest.raises(IndexError, match="axis 1 with size 4"):
        t[hf.asarray(np.array([0])), hf.asarray(np.array([-9]))]
    with pytest.raises(IndexError, match="axis 1 with size 4"):
        t[hf.asarray(np.array([0])), hf.asarray(np.array([4]))] = 1.0
    u = hf.asarray(a.copy())
    with pytest.raises(IndexError):
        u[hf.asarray(np.array([0, 1, 5]))] = 7.0
    check_equal(host(u), a)  # nothing written before the check
    with pytest.raises(ValueError, match="shape"):
        u[hf.asarray(np.array([0, 1]))] = hf.asarray(np.ones((3, 4)))
    with pytest.raises(ValueError, match="shape"):
        u[hf.asarray(np.ones((3, 4), bool))] = hf.asarray(np.ones((2, 4)))


def test_index_on_another_device(be, rng):
    if be.name == "numpy":
        pytest.skip("needs a second device")
    t = hf.asarray(rand(rng, (3,), np.float64))
    with pytest.raises(ValueError, match="device"):
        t[hf.asarray(np.array([0]), device="cpu")]


# -------------------------------------------------------------------- nonzero
@pytest.mark.parametrize("dtype", VALUE_DTYPES)
@pytest.mark.parametrize("shape", [(7,), (3, 4, 5), (0, 3), (4, 0)])
def test_nonzero(be, rng, dtype, shape):
    a = rand(rng, shape, dtype)
    if a.size and np.dtype(dtype).kind in "iuf":
        a[rng.random(shape) < 0.4] = 0
    if a.size and np.dtype(dtype).kind == "f":
        a.flat[0], a.flat[-1] = np.nan, -0.0
    got = hf.nonzero(hf.asarray(a))
    ref = np.nonzero(a)
    assert len(got) == len(ref)
    for g, r in zip(got, ref):
        check_equal(host(g), r.astype(np.int64))


def test_nonzero_views_and_errors(be, rng):
    a = rand(rng, (6, 8), np.float32)
    a[a < 0] = 0
    t = hf.asarray(a)[::-2, 1::3]
    for g, r in zip(hf.nonzero(t), np.nonzero(a[::-2, 1::3])):
        check_equal(host(g), r.astype(np.int64))
    assert all(x.shape == (0,) for x in hf.nonzero(hf.zeros((3, 2))))
    with pytest.raises(ValueError):
        hf.nonzero(hf.asarray(1.0))


def test_nonzero_prim(be, rng):
    """The Nonzero descriptor: worst-case coordinates buffer + count."""
    from hipfer import _ops
    from hipfer.prims import descriptors as d
    from hipfer.prims.infer import infer
    assert infer(d.Nonzero(), [np.bool_], [(3, 4)]) == (((2, 12), np.int64), ((), np.int64))
    assert infer(d.Nonzero(), [np.bool_], [()]) == (((0, 1), np.int64), ((), np.int64))
    with pytest.raises(TypeError, match="bool"):
        infer(d.Nonzero(), [np.float32], [(3,)])
    assert be.backend.has_indexing_support(d.Nonzero(), [np.bool_])
    assert not be.backend.has_indexing_support(d.Nonzero(), [np.int8])
    m = mask(rng, (5, 7))
    coords, count = _ops.run_arrays(be.backend, d.Nonzero(), [be.asarray(m)[:, ::-1]])
    n = int(count)
    assert n == m.sum()
    check_equal(be.asnumpy(coords[:, :n]), np.array(np.nonzero(m[:, ::-1])))
    for v in (True, False):
        coords, count = _ops.run_arrays(be.backend, d.Nonzero(), [be.asarray(np.array(v))])
        assert coords.shape == (0, 1) and int(count) == int(v)
