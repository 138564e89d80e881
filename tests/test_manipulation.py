"""Manipulation functions against NumPy: views where the result can be one, copies that fold
the conjugation flag and promote dtypes, and the standard's errors."""
import numpy as np
import pytest

import hipfer as hf
from _util import random_array

DTYPES = [np.dtype(t) for t in (np.bool_, np.int8, np.uint64, np.int64, np.float32,
                                np.complex64, np.complex128)]
LAYOUTS = ["contig", "stepped", "reversed", "transposed", "conj"]


def make(rng, shape, dtype, layout="contig"):
    """(hipfer tensor on the default device, the NumPy array it reads as) in one layout;
    'conj' is a conjugated tensor (its flag set) for complex dtypes, contiguous otherwise."""
    shape = tuple(shape)
    if layout == "stepped" and shape:
        big = random_array(rng, shape[:-1] + (2 * shape[-1],), dtype)
        return hf.asarray(big)[..., ::2], big[..., ::2]
    if layout == "reversed" and shape:
        a = random_array(rng, shape, dtype)
        return hf.asarray(a)[::-1], a[::-1]
    if layout == "transposed" and len(shape) > 1:
        a = random_array(rng, shape[::-1], dtype)
        return hf.permute_dims(hf.asarray(a), tuple(range(len(shape)))[::-1]), a.T
    a = random_array(rng, shape, dtype)
    t = hf.asarray(a)
    if layout == "conj" and np.dtype(dtype).kind == "c":
        return hf.conj(t), np.conj(a)
    return t, a


def host(t):
    return np.asarray(t.to_device("cpu"))


def check(t, ref, be):
    assert t.device == be.device
    assert t.dtype == ref.dtype, (t.dtype, ref.dtype)
    assert t.shape == ref.shape, (t.shape, ref.shape)
    np.testing.assert_array_equal(host(t), ref)


def shares(be, a, b):
    # our own extent check: cupy.shares_memory fails on 0-d arrays
    from hipfer._indexing import _may_overlap
    return _may_overlap(a._data, b._data)


# ------------------------------------------------------------------ broadcasting
def test_broadcast_shapes():
    cases = [((2, 1, 3), (4, 1), (1,)), ((0, 1), (5,)), ((), (3, 2)), ((1,), ()), ((7,),)]
    for shapes in cases:
        assert hf.broadcast_shapes(*shapes) == np.broadcast_shapes(*shapes)
    assert hf.broadcast_shapes() == ()
    for bad in [((2,), (3,)), ((0,), (2,)), ((2, 3), (3, 3, 2))]:
        with pytest.raises(ValueError):
            hf.broadcast_shapes(*bad)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_broadcast_arrays(be, rng, dtype):
    x, xa = make(rng, (3, 1, 4), dtype, "conj")
    y, ya = make(rng, (5, 1), dtype, "reversed")
    z, za = make(rng, (), dtype)
    out = hf.broadcast_arrays(x, y, z)
    assert isinstance(out, tuple) and len(out) == 3  # 2025.12: a tuple
    for t, src, ref in zip(out, (x, y, z), np.broadcast_arrays(xa, ya, za)):
        check(t, ref, be)
        assert shares(be, t, src) and t.is_conj() == src.is_conj()
    assert hf.broadcast_arrays() == ()
    with pytest.raises(ValueError):
        hf.broadcast_arrays(x, hf.asarray(random_array(rng, (2,), dtype)))


# ------------------------------------------------------------------ views
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_flip(be, rng, dtype, layout):
    x, a = make(rng, (3, 4, 5), dtype, layout)
    for axis in (None, 0, -1, (0, 2), (-2,), ()):
        t = hf.flip(x, axis=axis)
        check(t, np.flip(a, axis=axis), be)
        assert shares(be, t, x) and t.is_conj() == x.is_conj()
    z, za = make(rng, (), dtype)
    check(hf.flip(z), za, be)
    e, ea = make(rng, (0, 3), dtype)
    check(hf.flip(e, axis=1), np.flip(ea, 1), be)
    with pytest.raises(IndexError):
        hf.flip(x, axis=3)
    with pytest.raises(IndexError):
        hf.flip(z, axis=0)


@pytest.mark.parametrize("dtype", [np.dtype(np.int32), np.dtype(np.complex128)], ids=str)
def test_moveaxis(be, rng, dtype):
    x, a = make(rng, (2, 3, 4, 5), dtype, "conj")
    for src, dst in [(0, -1), (-1, 0), ((0, 1), (2, 3)), ((3, 0), (1, 2)), ((), ()), (1, 1)]:
        t = hf.moveaxis(x, src, dst)
        check(t, np.moveaxis(a, src, dst), be)
        assert shares(be, t, x) and t.is_conj() == x.is_conj()
    with pytest.raises(IndexError):
        hf.moveaxis(x, 4, 0)
    with pytest.raises(ValueError):
        hf.moveaxis(x, (0, 1), (2,))
    with pytest.raises(ValueError):
        hf.moveaxis(x, (0, 0), (1, 2))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_expand_dims(be, rng, dtype):
    x, a = make(rng, (3, 4), dtype, "conj")
    for axis in (0, 2, -1, -3, (0, 1), (0, -1), (-4, 1), (3, 0, 2)):
        t = hf.expand_dims(x, axis)
        check(t, np.expand_dims(a, axis), be)
        assert shares(be, t, x) and t.is_conj() == x.is_conj()
    check(hf.expand_dims(x, axis=(1,)), a[:, None], be)
    z, za = make(rng, (), dtype)
    check(hf.expand_dims(z, (0, -1)), za[None, None], be)
    for bad in (3, -4, (0, 4), (-5, 0)):
        with pytest.raises(IndexError):
            hf.expand_dims(x, bad)
    with pytest.raises(ValueError):  # repeated position (as 0 and -4)
        hf.expand_dims(x, (0, -4))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_unstack(be, rng, dtype):
    x, a = make(rng, (3, 2, 4), dtype, "conj")
    for axis in (0, 1, -1):
        parts = hf.unstack(x, axis=axis)
        refs = [np.take(a, i, axis=axis) for i in range(a.shape[axis])]
        assert isinstance(parts, tuple) and len(parts) == len(refs)
        for t, ref in zip(parts, refs):
            check(t, ref, be)
            assert shares(be, t, x) and t.is_conj() == x.is_conj()
    assert hf.unstack(make(rng, (0, 3), dtype)[0]) == ()
    with pytest.raises(IndexError):
        hf.unstack(x, axis=3)
    with pytest.raises(IndexError):
        hf.unstack(make(rng, (), dtype)[0])


# ------------------------------------------------------------------ concat / stack
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_concat(be, rng, dtype, layout):
    for axis, shapes in [(0, [(2, 3, 4), (1, 3, 4), (3, 3, 4)]),
                         (-1, [(2, 3, 1), (2, 3, 5)]),
                         (1, [(2, 0, 4), (2, 3, 4), (2, 1, 4)]),
                         (None, [(2, 3), (4,), (1, 2, 2)])]:
        pairs = [make(rng, s, dtype, layout) for s in shapes]
        t = hf.concat([p[0] for p in pairs], axis=axis)
        check(t, np.concatenate([p[1] for p in pairs], axis=axis), be)
        assert not t.is_conj()
    x, a = make(rng, (2, 3), dtype, layout)
    check(hf.concat([x]), np.concatenate([a]), be)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_stack(be, rng, dtype, layout):
    for shape in [(3, 4), (0, 2), ()]:
        pairs = [make(rng, shape, dtype, layout) for _ in range(3)]
        for axis in range(-len(shape) - 1, len(shape) + 1):
            t = hf.stack([p[0] for p in pairs], axis=axis)
            check(t, np.stack([p[1] for p in pairs], axis=axis), be)


@pytest.mark.parametrize("fn", [hf.concat, hf.stack])
def test_concat_stack_promote(be, rng, fn):
    names = ["bool", "int8", "uint8", "int32", "float32", "float64", "complex64"]
    for i, d1 in enumerate(names):
        for d2 in names[i:]:
            x, a = make(rng, (2, 3), d1)
            y, b = make(rng, (2, 3), d2, "conj")
            ref = (np.concatenate if fn is hf.concat else np.stack)([a, b, a])
            check(fn([x, y, x]), ref.astype(np.result_type(a.dtype, b.dtype)), be)


def test_concat_stack_errors(be, rng):
    x = hf.asarray(random_array(rng, (2, 3), np.float32))
    with pytest.raises(ValueError):
        hf.concat([x, hf.asarray(random_array(rng, (2, 4), np.float32))])
    with pytest.raises(ValueError):
        hf.concat([x, hf.asarray(random_array(rng, (2, 3, 1), np.float32))])
    with pytest.raises(ValueError):
        hf.concat([hf.asarray(1.0), hf.asarray(2.0)])
    with pytest.raises(ValueError):
        hf.concat([])
    with pytest.raises(IndexError):
        hf.concat([x, x], axis=2)
    with pytest.raises(TypeError):
        hf.concat([x, np.zeros((2, 3))])
    with pytest.raises(ValueError):
        hf.stack([x, x[:, :2]])
    with pytest.raises(IndexError):
        hf.stack([x, x], axis=3)
    with pytest.raises(IndexError):
        hf.stack([x, x], axis=-4)


def test_mixed_devices(be, rng):
    if be.name == "numpy":
        pytest.skip("needs a second device")
    a = random_array(rng, (2, 3), np.float64)
    g, c = hf.asarray(a), hf.asarray(a, device="cpu")
    counts = hf.asarray([1, 2, 3], device="cpu")
    for call in (lambda: hf.concat([g, c]), lambda: hf.stack([c, g]),
                 lambda: hf.broadcast_arrays(g, c), lambda: hf.repeat(g, counts, axis=1)):
        with pytest.raises(ValueError):
            call()


# ------------------------------------------------------------------ roll / tile / repeat
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_roll(be, rng, dtype, layout):
    x, a = make(rng, (3, 4, 5), dtype, layout)
    for shift, axis in [(1, None), (-7, None), (2, 0), (-1, -1), (13, 1), (0, 2),
                        ((1, -2), (0, 2)), ((2, 3), 1), (1, (0, 1, 2)), ((1, 1), (2, -1))]:
        t = hf.roll(x, shift, axis=axis)
        check(t, np.roll(a, shift, axis=axis), be)
        assert not shares(be, t, x)
    for shape in [(), (0, 3)]:
        z, za = make(rng, shape, dtype)
        check(hf.roll(z, 3), np.roll(za, 3), be)
    with pytest.raises(IndexError):
        hf.roll(x, 1, axis=3)
    with pytest.raises(ValueError):
        hf.roll(x, (1, 2, 3), axis=(0, 1))


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_tile(be, rng, dtype, layout):
    x, a = make(rng, (2, 3), dtype, layout)
    for reps in [(2,), (1, 1), (3, 2), (2, 1, 2), (0, 2), (4, 1, 1, 2)]:
        check(hf.tile(x, reps), np.tile(a, reps), be)
    z, za = make(rng, (), dtype)
    check(hf.tile(z, (3,)), np.tile(za, (3,)), be)
    check(hf.tile(z, ()), np.tile(za, ()), be)
    e, ea = make(rng, (0, 2), dtype)
    check(hf.tile(e, (2, 2)), np.tile(ea, (2, 2)), be)
    with pytest.raises(ValueError):
        hf.tile(x, (2, -1))


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_repeat(be, rng, dtype, layout):
    x, a = make(rng, (3, 4), dtype, layout)
    for reps, axis in [(2, None), (3, 0), (1, -1), (0, 1), (2, 1)]:
        check(hf.repeat(x, reps, axis=axis), np.repeat(a, reps, axis=axis), be)
    for axis in (None, 0, 1):
        n = a.size if axis is None else a.shape[axis]
        counts = rng.integers(0, 4, size=n)
        for rdt in ("int64", "uint8", "int32"):
            t = hf.repeat(x, hf.asarray(counts.astype(rdt)), axis=axis)
            check(t, np.repeat(a, counts, axis=axis), be)
        check(hf.repeat(x, hf.asarray([2]), axis=axis), np.repeat(a, 2, axis=axis), be)
    z, za = make(rng, (), dtype)
    check(hf.repeat(z, 3), np.repeat(za, 3), be)
    e, ea = make(rng, (0, 3), dtype)
    check(hf.repeat(e, hf.asarray([1, 2, 0]), axis=1), np.repeat(ea, [1, 2, 0], axis=1), be)


def test_repeat_errors(be, rng):
    x = hf.asarray(random_array(rng, (3, 4), np.float64))
    with pytest.raises(ValueError):
        hf.repeat(x, -1)
    with pytest.raises(ValueError):
        hf.repeat(x, hf.asarray([1, -1, 2]), axis=0)
    with pytest.raises(ValueError):
        hf.repeat(x, hf.asarray([1, 2]), axis=0)
    with pytest.raises(ValueError):
        hf.repeat(x, hf.asarray([[1, 2, 3]]), axis=0)
    with pytest.raises(TypeError):
        hf.repeat(x, hf.asarray([1.0, 2.0, 3.0]), axis=0)
    with pytest.raises(IndexError):
        hf.repeat(x, 2, axis=2)


def test_permute_dims_errors(be, rng):
    x = hf.asarray(random_array(rng, (2, 3, 4), np.float32))
    check(hf.permute_dims(x, (-1, 0, 1)), np.transpose(host(x), (-1, 0, 1)), be)
    for bad in [(0, 1), (0, 1, 1), (0, 1, 5), (0, 1, 2, 3)]:
        with pytest.raises(ValueError):
            hf.permute_dims(x, bad)
    with pytest.raises(IndexError):
        hf.permute_dims(x, (0, 1, 3))
