"""NumPy's sorting and searching routines against NumPy: sort / argsort with NumPy's
signature (axis=None, kind, order, stable; complex lexicographic), lexsort,
sort_complex, partition / argpartition (the partition property and the kth values, as
NumPy's own tests check them), searchsorted on every real dtype with NaN, sorter and
out-of-range Python ints; NumPy dispatch under refuse_host; the errors."""
import numpy as np
import pytest

import hipfer as hf

from _util import ALL_DTYPES, assert_same, dtypes_of, ids, layouts, random_array

REAL = dtypes_of("biuf")
SHAPES = [(0,), (9,), (3, 5), (2, 0, 3), (2, 3, 4)]


def host(t):
    return np.asarray(t, copy=True)  # explicit: allowed under refuse_host


def data(rng, shape, dt):
    """Random data with ties (small integers) and, for floats, NaN / +-inf / -0.0."""
    dt = np.dtype(dt)
    if dt.kind in "biu":
        return random_array(rng, shape, dt, low=0, high=5) if dt.kind != "b" else \
            random_array(rng, shape, dt)
    if dt.kind == "f":
        return random_array(rng, shape, dt, special=True)
    x = (rng.integers(-2, 3, shape) + 1j * rng.integers(-2, 3, shape)).astype(dt)
    if x.size:
        x.reshape(-1)[0] = complex(np.nan, 1)
        x.reshape(-1)[-1] = complex(1, np.nan)
    return x


def t_of(be, x):
    return hf.asarray(be.asarray(x))


def axes_of(shape):
    return [None] + list(range(-len(shape), len(shape)))


# ------------------------------------------------------------ sort / argsort
@pytest.mark.parametrize("dt", ALL_DTYPES, ids=ids(ALL_DTYPES))
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_sort_argsort(be, rng, dt, shape):
    x = data(rng, shape, dt)
    t = t_of(be, x)
    for axis in axes_of(shape):
        assert_same(host(hf.sort(t, axis=axis)), np.sort(x, axis=axis))
        assert_same(host(hf.argsort(t, axis=axis)), np.argsort(x, axis=axis, stable=True))
        assert_same(host(np.argsort(t, axis, kind="stable")),
                    np.argsort(x, axis, kind="stable"))


def test_sort_0d_layouts_descending(be, rng):
    t = t_of(be, np.float32(2.5))
    assert_same(host(hf.sort(t, axis=None)), np.sort(np.float32(2.5), axis=None))
    with pytest.raises(np.exceptions.AxisError):
        hf.sort(t)
    for name, xb, xn in layouts(be, rng, (4, 6), np.float64, special=True):
        assert_same(host(hf.sort(hf.asarray(xb), axis=0)), np.sort(xn, axis=0))
        assert_same(host(hf.argsort(hf.asarray(xb), axis=None)),
                    np.argsort(xn, axis=None, stable=True))
    x = data(rng, (3, 5), np.float64)  # the standard's keyword keeps working
    r = host(hf.sort(t_of(be, x), descending=True))
    assert_same(r, np.flip(np.sort(x), axis=-1))
    c = data(rng, (11,), np.complex128)
    assert_same(host(hf.sort(t_of(be, c), descending=True)), np.sort(c)[::-1])


def test_sort_errors(be):
    t = t_of(be, np.arange(3.0))
    with pytest.raises(ValueError, match="kind"):
        hf.sort(t, kind="bogus")
    with pytest.raises(ValueError, match="order"):
        hf.argsort(t, order="f0")
    with pytest.raises(np.exceptions.AxisError):
        hf.sort(t, axis=1)
    with pytest.raises(TypeError):
        hf.argsort(t, axis=0.5)


# ------------------------------------------------------------ lexsort, sort_complex
@pytest.mark.parametrize("dt", ALL_DTYPES, ids=ids(ALL_DTYPES))
def test_lexsort(be, rng, dt):
    keys = [data(rng, (4, 7), dt) for _ in range(3)]
    tk = [t_of(be, k) for k in keys]
    for axis in (-1, 0, 1, None):
        if axis is None:
            e = np.lexsort([k.reshape(-1) for k in keys])
            assert_same(host(hf.lexsort([k.reshape(-1) for k in tk])), e)
        else:
            assert_same(host(hf.lexsort(tk, axis=axis)), np.lexsort(keys, axis=axis))
    stacked = np.stack([k[0] for k in keys])  # a 2-d tensor: its rows are the keys
    assert_same(host(hf.lexsort(t_of(be, stacked))), np.lexsort(stacked))
    assert_same(host(hf.lexsort((tk[0][0],))), np.lexsort((keys[0][0],)))


def test_lexsort_mixed_and_errors(be, rng):
    a = rng.integers(0, 3, 10)
    b = rng.standard_normal(10).astype(np.float32)
    b[::3] = np.nan
    assert_same(host(hf.lexsort((t_of(be, b), t_of(be, a)))), np.lexsort((b, a)))
    with pytest.raises(TypeError):
        hf.lexsort([])
    with pytest.raises(ValueError, match="same shape"):
        hf.lexsort((t_of(be, a), t_of(be, a[:5])))


@pytest.mark.parametrize("dt", ALL_DTYPES, ids=ids(ALL_DTYPES))
def test_sort_complex(be, rng, dt):
    x = data(rng, (3, 6), dt)
    assert_same(host(hf.sort_complex(t_of(be, x))), np.sort_complex(x))


# ------------------------------------------------------------ partition
def check_partition(p, x, kth, axis):
    """p has x's sorted values at the kth places, and every element before (after) one
    is <= (>=) it, NaN last: NumPy's partition property."""
    s = np.sort(x, axis=axis)
    p, s = np.moveaxis(p, axis, -1), np.moveaxis(s, axis, -1)
    n = s.shape[-1]
    for k in np.atleast_1d(kth):
        k = k % n
        np.testing.assert_array_equal(p[..., k], s[..., k])
        pivot = p[..., k:k + 1]
        if p.dtype.kind in "fc":
            pn = np.isnan(pivot)
            assert np.all(~pn | np.isnan(p[..., k:]))
        with np.errstate(invalid="ignore"):
            assert np.all((p[..., :k] <= pivot) | np.isnan(pivot))
            assert np.all((p[..., k + 1:] >= pivot) | np.isnan(p[..., k + 1:]))
    np.testing.assert_array_equal(np.sort(p, axis=-1), s)  # a permutation of x


@pytest.mark.parametrize("dt", REAL, ids=ids(REAL))
@pytest.mark.parametrize("kth", [0, 3, -1, [1, 4], (-2, 0, 5)], ids=str)
def test_partition(be, rng, dt, kth):
    x = data(rng, (4, 7), dt)
    t = t_of(be, x)
    for axis in (-1, 1):
        p = host(hf.partition(t, kth, axis=axis))
        assert p.dtype == x.dtype and p.shape == x.shape
        check_partition(p, x, kth, axis)
        i = host(hf.argpartition(t, kth, axis=axis))
        assert i.dtype == np.int64
        check_partition(np.take_along_axis(x, i, axis), x, kth, axis)
    p = host(hf.partition(t, 2, axis=0))
    check_partition(p, x, 2, 0)
    p = host(hf.partition(t, kth, axis=None))
    check_partition(p, x.reshape(-1), kth, 0)


@pytest.mark.parametrize("dt", [np.float32, np.int16, np.complex128, np.bool_], ids=str)
def test_partition_shapes_layouts(be, rng, dt):
    for shape, kth, axis in [((0, 5), 2, 1), ((5, 1), 0, 1), ((2, 6, 3), [0, 5], 1),
                             ((3, 4, 2), -1, 0), ((1,), 0, 0)]:
        x = data(rng, shape, dt)
        t = t_of(be, x)
        check_partition(host(hf.partition(t, kth, axis=axis)), x, kth, axis)
        i = host(hf.argpartition(t, kth, axis=axis))
        check_partition(np.take_along_axis(x, i, axis), x, kth, axis)
    for name, xb, xn in layouts(be, rng, (5, 6), dt):
        check_partition(host(hf.partition(hf.asarray(xb), 3)), xn, 3, -1)
        i = host(hf.argpartition(hf.asarray(xb), (1, 2), axis=0))
        check_partition(np.take_along_axis(xn, i, 0), xn, (1, 2), 0)


def test_partition_errors(be):
    t = t_of(be, np.arange(5.0))
    for fn in (hf.partition, hf.argpartition):
        with pytest.raises(ValueError, match="out of bounds"):
            fn(t, 5)
        with pytest.raises(ValueError, match="out of bounds"):
            fn(t, [0, -6])
        with pytest.raises(TypeError):
            fn(t, 1.5)
        with pytest.raises(ValueError, match="kind"):
            fn(t, 1, kind="quicksort")
        with pytest.raises(np.exceptions.AxisError):
            fn(t, 1, axis=1)


# ------------------------------------------------------------ searchsorted
@pytest.mark.parametrize("dt", ALL_DTYPES, ids=ids(ALL_DTYPES))
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted(be, rng, dt, side):
    a = np.sort(data(rng, (12,), dt))
    v = data(rng, (3, 4), dt)
    ta, tv = t_of(be, a), t_of(be, v)
    assert_same(host(hf.searchsorted(ta, tv, side=side)), np.searchsorted(a, v, side=side))
    assert_same(host(hf.searchsorted(ta, tv[:, ::2].T, side=side)), np.searchsorted(a, v[:, ::2].T, side))
    perm = rng.permutation(12)
    u = a[perm]
    sorter = np.argsort(u, kind="stable")
    assert_same(host(hf.searchsorted(t_of(be, u), tv, side=side, sorter=t_of(be, sorter))),
                np.searchsorted(u, v, side=side, sorter=sorter))
    assert_same(host(hf.searchsorted(t_of(be, a[:0]), tv, side=side)),
                np.searchsorted(a[:0], v, side=side))


def test_searchsorted_scalars_and_nan(be):
    a = np.array([1, 2, 2, 3, 200], np.uint8)
    ta = t_of(be, a)
    for v in (0, 2, 255, 300, -1, 2.5, True):
        for side in ("left", "right"):
            assert_same(host(hf.searchsorted(ta, v, side=side)), np.asarray(np.searchsorted(a, v, side)))
    f = np.array([-np.inf, -0.0, 1.0, np.nan, np.nan], np.float16)
    for v in (np.nan, 0.0, -0.0, np.inf, -np.inf):
        for side in ("left", "right"):
            assert_same(host(hf.searchsorted(t_of(be, f), v, side=side)),
                        np.asarray(np.searchsorted(f, v, side)))
    assert_same(host(hf.searchsorted([1, 3, 5], t_of(be, np.array([4, 0])))),
                np.searchsorted([1, 3, 5], [4, 0]))


def test_searchsorted_errors(be):
    t = t_of(be, np.arange(4.0))
    with pytest.raises(ValueError, match="side"):
        hf.searchsorted(t, 1.0, side="middle")
    with pytest.raises(ValueError, match="1-d"):
        hf.searchsorted(t_of(be, np.zeros((2, 2))), 1.0)
    with pytest.raises(ValueError, match="sorter"):
        hf.searchsorted(t, 1.0, sorter=t_of(be, np.arange(3)))
    with pytest.raises(TypeError):
        hf.searchsorted(t, "a")


def test_searchsorted_mixed_complex(be, rng):
    a = np.sort(data(rng, (10,), np.float64))
    v = data(rng, (5,), np.complex64)
    for side in ("left", "right"):
        assert_same(host(hf.searchsorted(t_of(be, a), t_of(be, v), side=side)),
                    np.searchsorted(a, v, side))
        assert_same(host(hf.searchsorted(t_of(be, a), 1 + 1j, side=side)),
                    np.asarray(np.searchsorted(a, 1 + 1j, side)))


# ------------------------------------------------------------ NumPy dispatch
def test_numpy_dispatch_reaches_hipfer(be, rng, refuse_host):
    x = data(rng, (3, 5), np.float64)
    t = t_of(be, x)
    c = data(rng, (6,), np.complex64)
    tc = t_of(be, c)
    keys = (t[0], t[1])
    for r, e in [(np.sort(t), np.sort(x)), (np.sort(t, axis=None), np.sort(x, axis=None)),
                 (np.sort(t, 0, kind="stable"), np.sort(x, 0, kind="stable")),
                 (np.argsort(t, axis=None, stable=True), np.argsort(x, axis=None, stable=True)),
                 (np.sort(tc), np.sort(c)), (np.sort_complex(t[0]), np.sort_complex(x[0])),
                 (np.lexsort(keys), np.lexsort((x[0], x[1]))),
                 (np.searchsorted(hf.sort(t[0]), t[1]), np.searchsorted(np.sort(x[0]), x[1])),
                 (np.searchsorted(hf.sort(t[0]), t[1], "right"),
                  np.searchsorted(np.sort(x[0]), x[1], "right"))]:
        assert isinstance(r, hf.Tensor)
        assert_same(host(r), e)
    p = np.partition(t, 2, axis=1)
    assert isinstance(p, hf.Tensor)
    check_partition(host(p), x, 2, 1)
    i = np.argpartition(t, [0, -1])
    assert isinstance(i, hf.Tensor)
    check_partition(np.take_along_axis(x, host(i), -1), x, [0, -1], -1)


def test_edge_cases(be):
    t = lambda x: t_of(be, np.asarray(x))  # noqa: E731
    assert_same(host(hf.lexsort((t(np.int64(1)),))), np.asarray(np.lexsort((np.array(1),))))
    assert_same(host(hf.lexsort([[1, 0, 1], [0, 0, 1]])), np.lexsort([[1, 0, 1], [0, 0, 1]]))
    assert_same(host(hf.sort([3, 1, 2])), np.sort([3, 1, 2]))
    assert_same(host(hf.partition(t(3.0), 0, axis=None)), np.partition(np.float64(3.0), 0, axis=None))
    with pytest.raises(ValueError, match="boolean"):
        hf.partition(t([3, 1, 2]), True)
    with pytest.raises(TypeError):
        hf.partition(t([3, 1, 2]), [])
    a = np.array([-3, 1, 2], np.int64)
    v = np.array([2**63 + 5, 1], np.uint64)
    assert_same(host(hf.searchsorted(t(a), t(v))), np.searchsorted(a, v))
    a, v = np.array([1, 2], np.uint64), np.array([-1, 2], np.int8)
    assert_same(host(hf.searchsorted(t(a), t(v), side="right")), np.searchsorted(a, v, "right"))
    assert_same(host(hf.searchsorted(t(np.array([1, 2], np.int8)), 2**40)),
                np.asarray(np.searchsorted(np.array([1, 2], np.int8), 2**40)))
