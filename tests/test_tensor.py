"""Tensor: views share memory, conj is O(1), basic indexing and __setitem__, conversions."""
import numpy as np
import pytest

import hipfer as hf
from hipfer._views import _nocopy_strides

DTYPES = [np.bool_, np.int8, np.int32, np.int64, np.uint8, np.uint64,
          np.float32, np.float64, np.complex64, np.complex128]


def rand(rng, shape, dtype):
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(max(info.min, -100), min(info.max, 100), size=shape, dtype=dt)
    if dt.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    return rng.standard_normal(shape).astype(dt)


def host(t):
    return np.asarray(t.to_device("cpu"))


def shares(be, a, b):
    return bool(be.xp.shares_memory(a._data, b._data))


@pytest.mark.parametrize("dtype", DTYPES)
def test_attributes_and_roundtrip(be, rng, dtype):
    a = rand(rng, (3, 4, 5), dtype)
    t = hf.asarray(a)
    assert t.device == be.device
    assert t.shape == (3, 4, 5) and t.ndim == 3 and t.size == 60 and t.dtype == np.dtype(dtype)
    assert t.strides == (20, 5, 1)
    np.testing.assert_array_equal(host(t), a)


def test_views_share_memory(be, rng):
    a = rand(rng, (4, 6, 8), np.float64)
    t = hf.asarray(a)
    views = {
        "slice_step": (t[1:, ::2, ::-3], a[1:, ::2, ::-3]),
        "neg_step": (t[::-1], a[::-1]),
        "int_index": (t[2], a[2]),
        "ellipsis_none": (t[..., None, 1], a[..., None, 1]),
        "permute": (hf.permute_dims(t, (2, 0, 1)), a.transpose(2, 0, 1)),
        "mT": (t.mT, a.swapaxes(-1, -2)),
        "expand": (hf.expand_dims(t, axis=1), a[:, None]),
        "squeeze": (hf.squeeze(t[:, :1], axis=1), a[:, 0]),
        "broadcast": (hf.broadcast_to(t[:1], (5, 4, 6, 8)), np.broadcast_to(a[:1], (5, 4, 6, 8))),
        "diagonal": (hf.diagonal(t[:, :, :6], offset=1), np.diagonal(a[:, :, :6], 1, -2, -1)),
        "diagonal_neg": (hf.diagonal(t, offset=-2), np.diagonal(a, -2, -2, -1)),
        "reshape_view": (hf.reshape(t, (2, 2, 48)), a.reshape(2, 2, 48)),
        "reshape_strided": (hf.reshape(t[:, ::2], (4, 3, 2, 4)), a[:, ::2].reshape(4, 3, 2, 4)),
    }
    for name, (v, ref) in views.items():
        assert shares(be, v, t), name
        np.testing.assert_array_equal(host(v), ref, err_msg=name)


def test_reshape_copies_only_when_needed(be, rng):
    a = rand(rng, (4, 6), np.float32)
    t = hf.asarray(a)
    tt = t.mT  # (6, 4), not mergeable into a flat view
    r = hf.reshape(tt, (24,))
    assert not shares(be, r, t)
    np.testing.assert_array_equal(host(r), a.T.reshape(24))
    with pytest.raises(ValueError, match="copy=False"):
        hf.reshape(tt, (24,), copy=False)
    with pytest.raises(ValueError):
        hf.reshape(t, (5, 5))
    assert hf.reshape(t, (-1, 3)).shape == (8, 3)


@pytest.mark.parametrize("old_shape,old_strides,new_shape", [
    ((4, 6), (6, 1), (24,)), ((4, 6), (1, 4), (24,)), ((2, 3, 4), (24, 8, 2), (6, 4)),
    ((2, 3, 4), (12, 4, 1), (2, 1, 12, 1)), ((1, 5, 1), (5, 1, 1), (5,)), ((6,), (2,), (2, 3)),
    ((3, 4), (4, 1), (3, 2, 2)), ((3, 4), (1, 3), (3, 2, 2)),
])
def test_nocopy_strides_matches_numpy(old_shape, old_strides, new_shape):
    base = np.arange(200.0)
    a = np.lib.stride_tricks.as_strided(base, old_shape, tuple(s * 8 for s in old_strides))
    st = _nocopy_strides(old_shape, old_strides, new_shape)
    try:
        ref = np.reshape(a, new_shape, copy=False)
    except ValueError:
        assert st is None
        return
    assert st is not None
    v = np.lib.stride_tricks.as_strided(a, new_shape, tuple(s * 8 for s in st))
    np.testing.assert_array_equal(v, ref)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_conj_is_o1_and_folded(be, rng, dtype):
    a = rand(rng, (5, 7), dtype)
    t = hf.asarray(a)
    c = hf.conj(t)
    assert c.is_conj() and not t.is_conj()
    assert c._data is t._data  # nothing copied
    assert hf.conj(c)._data is t._data and not hf.conj(c).is_conj()
    np.testing.assert_array_equal(host(c), np.conj(a))
    # views keep the flag
    np.testing.assert_array_equal(host(c[1:, ::-2].mT), np.conj(a)[1:, ::-2].T)
    r = hf.resolve_conj(c)
    assert not r.is_conj() and r._data is not t._data
    np.testing.assert_array_equal(host(r), np.conj(a))
    assert hf.resolve_conj(t) is t
    # real/imag of a conjugated tensor
    np.testing.assert_array_equal(host(hf.real(c)), a.real)
    np.testing.assert_array_equal(host(hf.imag(c)), -a.imag)
    assert shares(be, hf.real(c), t) and shares(be, hf.imag(t), t)
    # elementwise folds the flag in
    np.testing.assert_allclose(host(c * t), np.conj(a) * a, rtol=1e-6)


def test_conj_of_real_is_identity(be, rng):
    t = hf.asarray(rand(rng, (3,), np.float64))
    assert hf.conj(t) is t and not hf.conj(t).is_conj()
    np.testing.assert_array_equal(host(hf.imag(t)), np.zeros(3))


def test_conj_copies_no_device_memory(be, rng):
    t = hf.asarray(rand(rng, (256, 256), np.complex128))
    if be.name == "cupy":
        pool = be.xp.get_default_memory_pool()
        before = pool.used_bytes()
        c = hf.conj(t)
        assert pool.used_bytes() == before
    else:
        c = hf.conj(t)
    assert c._data is t._data


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.complex128])
def test_setitem(be, rng, dtype):
    a = rand(rng, (6, 8), dtype)
    t = hf.asarray(a.copy())
    v = rand(rng, (3, 4), dtype)
    t[::2, 1::2] = hf.asarray(v)
    a[::2, 1::2] = v
    np.testing.assert_array_equal(host(t), a)
    t[1] = 7
    a[1] = 7
    np.testing.assert_array_equal(host(t), a)
    row = rand(rng, (8,), dtype)
    t[2:5] = hf.asarray(row)  # broadcast
    a[2:5] = row
    np.testing.assert_array_equal(host(t), a)
    t[0, 0] = hf.asarray(a[5, 5])  # 0-d
    a[0, 0] = a[5, 5]
    np.testing.assert_array_equal(host(t), a)
    t[:, ::-1] = hf.asarray(a)  # negative-step destination
    a[:, ::-1] = a.copy()
    np.testing.assert_array_equal(host(t), a)


def test_setitem_overlap_and_conj(be, rng):
    a = rand(rng, (10,), np.complex128)
    t = hf.asarray(a.copy())
    t[1:] = t[:-1]  # overlapping: must read before writing
    ref = a.copy()
    ref[1:] = a[:-1]
    np.testing.assert_array_equal(host(t), ref)
    c = hf.conj(hf.asarray(a.copy()))
    c[:3] = hf.asarray(a[3:6])  # reads back as written
    exp = np.conj(a)
    exp[:3] = a[3:6]
    np.testing.assert_array_equal(host(c), exp)
    c[4] = 1 + 2j
    exp[4] = 1 + 2j
    np.testing.assert_array_equal(host(c), exp)
    s = hf.asarray(a.copy())
    s[:5] = hf.conj(hf.asarray(a[5:]))
    exp2 = a.copy()
    exp2[:5] = np.conj(a[5:])
    np.testing.assert_array_equal(host(s), exp2)


def test_setitem_casts_and_errors(be, rng):
    t = hf.zeros((4,), dtype=hf.float32)
    t[:2] = hf.asarray(np.array([1, 2], dtype=np.int64))
    np.testing.assert_array_equal(host(t), [1, 2, 0, 0])
    with pytest.raises(TypeError, match="complex"):
        t[0] = 1j
    with pytest.raises(TypeError, match="complex"):
        t[:2] = hf.asarray(np.array([1j, 2j]))
    with pytest.raises(ValueError, match="shape"):
        t[:2] = hf.asarray(np.ones(3))
    with pytest.raises(IndexError):
        t[4] = 1
    with pytest.raises(IndexError, match="too many"):
        t[0, 0] = 1


def test_indexing_errors(be, rng):
    t = hf.asarray(rand(rng, (3, 4), np.float64))
    with pytest.raises(IndexError):
        t[3]
    with pytest.raises(IndexError):
        t[0, -5]
    with pytest.raises(IndexError, match="ellipsis"):
        t[..., ...]
    with pytest.raises(IndexError):
        t[hf.asarray(np.array([0, 3]))]  # out of range (integer arrays: test_advanced_indexing)
    with pytest.raises(ValueError):
        t[::0]


def test_empty_and_zero_d(be, rng):
    e = hf.asarray(np.zeros((0, 3)))
    assert e.shape == (0, 3) and e.size == 0
    assert e[:, 1:].shape == (0, 2)
    e[...] = 5.0  # no-op
    z = hf.asarray(np.float64(2.5))
    assert z.shape == () and float(z) == 2.5
    z[...] = 1.5
    assert float(z) == 1.5
    assert int(hf.asarray(7)) == 7 and bool(hf.asarray(True))
    assert complex(hf.conj(hf.asarray(1 + 2j))) == 1 - 2j
    with pytest.raises(TypeError):
        float(hf.asarray([1.0, 2.0]))
    with pytest.raises(TypeError):
        len(z)


def test_len_iter(be, rng):
    a = rand(rng, (3, 2), np.int64)
    t = hf.asarray(a)
    assert len(t) == 3
    for row, ref in zip(t, a):
        np.testing.assert_array_equal(host(row), ref)


def test_numpy_interop_cpu():
    a = np.arange(6.0).reshape(2, 3)
    t = hf.asarray(a, device="cpu")
    assert np.shares_memory(np.asarray(t), a)
    np.testing.assert_array_equal(np.asarray(hf.conj(hf.asarray(a + 1j, device="cpu"))), a - 1j)
    with pytest.raises(ValueError, match="copy"):
        np.asarray(hf.conj(hf.asarray(a + 1j, device="cpu")), copy=False)
    with pytest.raises(ValueError, match="copy=False"):
        hf.asarray([1, 2], device="cpu", copy=False)
    assert hf.asarray(a, device="cpu", copy=False)._data is a
    assert not np.shares_memory(np.asarray(hf.asarray(a, device="cpu", copy=True)), a)


def test_to_device_roundtrip(be, rng):
    a = rand(rng, (4, 3), np.complex64)
    t = hf.conj(hf.asarray(a))
    c = t.to_device("cpu")
    assert c.device == hf.Device("cpu") and c.is_conj()
    np.testing.assert_array_equal(np.asarray(c), np.conj(a))
    back = c.to_device(be.device)
    assert back.device == be.device
    np.testing.assert_array_equal(host(back), np.conj(a))


def test_device_errors(be):
    with pytest.raises(ValueError):
        hf.as_device("tpu")
    with pytest.raises((RuntimeError, ValueError)):
        hf.asarray([1.0], device="gpu:99")
    if be.name == "cupy":
        g = hf.asarray([1.0, 2.0])
        c = hf.asarray([1.0, 2.0], device="cpu")
        with pytest.raises(ValueError, match="different devices"):
            g + c
        with pytest.raises(TypeError, match="implicitly"):
            np.asarray(g)
        np.testing.assert_array_equal(np.asarray(g, copy=True), [1.0, 2.0])


def test_unsupported_dtype():
    with pytest.raises(TypeError, match="not supported"):
        hf.asarray(np.zeros(3, dtype=np.longdouble), device="cpu")  # float128 on x86-64
    with pytest.raises(TypeError):
        hf.asarray(["a", "b"], device="cpu")


@pytest.mark.parametrize("shape", [(), (5,), (2, 3), (2, 3, 4), (1, 2, 3, 4)])
def test_T_reverses_every_axis_as_numpy(be, rng, shape):
    a = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    t = hf.conj(hf.asarray(be.asarray(a)))
    np.testing.assert_array_equal(be.asnumpy(t.T), np.conj(a).T)
