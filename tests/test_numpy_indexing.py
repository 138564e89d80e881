"""NumPy's indexing routines against NumPy: argwhere, flatnonzero, put, put_along_axis,
putmask, place, choose, compress, select, extract, the *_indices functions,
ravel_multi_index, unravel_index, fill_diagonal and take_along_axis(axis=None): dtypes,
0-d / empty / n-d and non-contiguous inputs, the modes, in-place writes into views,
NumPy dispatch under refuse_host, and the errors."""
import numpy as np
import pytest

import hipfer as hf

from _util import ALL_DTYPES, assert_same, ids, layouts, random_array

DTS = ALL_DTYPES
SHAPES = [(), (0,), (7,), (3, 4), (2, 0, 3), (2, 3, 4)]


def host(t):
    return np.asarray(t, copy=True)  # explicit: allowed under refuse_host


def sparse(rng, shape, dt):
    """Random data with zeros in it (so non-zero selection is not trivial)."""
    x = random_array(rng, shape, dt, special=np.dtype(dt).kind == "f")
    if x.size and np.dtype(dt).kind != "b":
        x.reshape(-1)[rng.random(x.size) < 0.4] = 0
    return x


def view_pair(be, rng, shape, dt):
    """A writable hipfer view (every other element of a bigger tensor), its NumPy twin,
    and both bases."""
    big = random_array(rng, tuple(2 * n for n in shape), dt)
    key = tuple(slice(None, None, 2) for _ in shape)
    tb = hf.asarray(be.asarray(big.copy()))
    return tb[key], big[key], tb, big


# ------------------------------------------------------------ argwhere & co
@pytest.mark.parametrize("dt", DTS, ids=ids(DTS))
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_argwhere_flatnonzero(be, rng, dt, shape):
    x = sparse(rng, shape, dt)
    t = hf.asarray(be.asarray(x))
    assert_same(host(hf.argwhere(t)), np.argwhere(x))
    if x.ndim:
        assert_same(host(hf.flatnonzero(t)), np.flatnonzero(x))


def test_argwhere_layouts(be, rng):
    for name, xb, xn in layouts(be, rng, (4, 5), np.float32):
        xn = xn.copy()
        assert_same(host(hf.argwhere(hf.asarray(xb) > 0)), np.argwhere(xn > 0))
        assert_same(host(hf.flatnonzero(hf.asarray(xb) > 0)), np.flatnonzero(xn > 0))


@pytest.mark.parametrize("dt", DTS, ids=ids(DTS))
def test_extract_compress(be, rng, dt):
    x = random_array(rng, (3, 5), dt)
    c = rng.random((3, 5)) < 0.5
    t, tc = hf.asarray(be.asarray(x)), hf.asarray(be.asarray(c))
    assert_same(host(hf.extract(tc, t)), np.extract(c, x))
    assert_same(host(hf.extract(hf.asarray(be.asarray(c.astype(np.int8))), t)),
                np.extract(c.astype(np.int8), x))
    for axis in (None, 0, 1, -1):
        n = x.size if axis is None else x.shape[axis]
        cond = rng.random(n) < 0.5
        assert_same(host(hf.compress(hf.asarray(be.asarray(cond)), t, axis=axis)),
                    np.compress(cond, x, axis=axis))
        short = cond[:max(n - 2, 0)]  # a shorter condition: False beyond its end
        assert_same(host(hf.compress(list(short), t, axis=axis)), np.compress(short, x, axis=axis))


def test_compress_out_and_errors(be, rng):
    x = rng.standard_normal((4, 3))
    t = hf.asarray(be.asarray(x))
    out = hf.zeros((2, 3), device=t.device)
    r = hf.compress([True, False, False, True], t, axis=0, out=out)
    assert r is out
    assert_same(host(out), np.compress([True, False, False, True], x, axis=0))
    with pytest.raises(IndexError, match="hipfer.compress"):
        hf.compress([False] * 4 + [True], t, axis=0)
    with pytest.raises(ValueError, match="1-d"):
        hf.compress([[True]], t)
    with pytest.raises(np.exceptions.AxisError):
        hf.compress([True], t, axis=2)


# ------------------------------------------------------------ put & co (in place)
@pytest.mark.parametrize("dt", DTS, ids=ids(DTS))
@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_put(be, rng, dt, mode):
    tv, xv, tb, xb = view_pair(be, rng, (3, 4), dt)
    lo, hi = (-12, 11) if mode == "raise" else (-30, 30)
    ind = rng.integers(lo, hi, size=5)
    v = random_array(rng, (3,), dt)  # shorter than ind: repeated
    hf.put(tv, hf.asarray(be.asarray(ind)), hf.asarray(be.asarray(v)), mode=mode)
    np.put(xv, ind, v, mode=mode)
    assert_same(host(tb), xb)  # the view's base changed where NumPy's did
    hf.put(tv, [0, -1], v[0].item() if dt.kind != "b" else True)
    np.put(xv, [0, -1], v[0].item() if dt.kind != "b" else True)
    assert_same(host(tb), xb)


def test_put_0d_empty_repeats(be, rng):
    x = np.array(1.5)
    t = hf.asarray(be.asarray(x.copy()))
    hf.put(t, [0, 0], [2.0, 3.0])
    np.put(x, [0, 0], [2.0, 3.0])
    assert_same(host(t), x)
    e = hf.asarray(be.asarray(np.zeros((0, 3))))
    hf.put(e, [], [1.0])
    y = np.arange(5)
    t = hf.asarray(be.asarray(y.copy()))
    hf.put(t, [1, 1, 1], [7, 8, 9])  # repeats: the last wins
    np.put(y, [1, 1, 1], [7, 8, 9])
    assert_same(host(t), y)
    hf.put(t, [2], 3.9)  # cast unsafely to the tensor's dtype, as NumPy
    np.put(y, [2], 3.9)
    assert_same(host(t), y)


def test_put_errors(be):
    t = hf.asarray(be.asarray(np.zeros(3)))
    with pytest.raises(IndexError, match="hipfer.put"):
        hf.put(t, [3], [1.0])
    with pytest.raises(IndexError, match="hipfer.put"):
        hf.put(t, [-4], [1.0])
    with pytest.raises(ValueError, match="mode"):
        hf.put(t, [0], [1.0], mode="bogus")
    with pytest.raises(TypeError):
        hf.put(np.zeros(3), [0], [1.0])
    with pytest.raises(TypeError):
        hf.put(t, [0.5], [1.0])
    assert_same(host(t), np.zeros(3))  # nothing was written by the failed calls


@pytest.mark.parametrize("dt", DTS, ids=ids(DTS))
@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_put_along_axis(be, rng, dt, axis):
    tv, xv, tb, xb = view_pair(be, rng, (3, 4), dt)
    if axis is None:
        ind = rng.permutation(12)[:5]
        v = random_array(rng, (5,), dt)
    else:
        n = xv.shape[axis]
        ishape = list(xv.shape)
        ishape[axis] = 1
        ind = np.stack([rng.permutation(n)[:1] - rng.integers(0, 2) * n
                        for _ in range(int(np.prod(ishape)))]).reshape(ishape)
        v = random_array(rng, ind.shape, dt)
    hf.put_along_axis(tv, hf.asarray(be.asarray(ind)), hf.asarray(be.asarray(v)), axis)
    if axis is None:  # NumPy writes into a copy of arr.flat there (a no-op): the intent
        xv.flat[ind] = v
    else:
        np.put_along_axis(xv, ind, v, axis)
    assert_same(host(tb), xb)


def test_put_along_axis_argsort(be, rng):
    x = rng.standard_normal((4, 5))
    t = hf.asarray(be.asarray(x.copy()))
    i = np.argsort(x, axis=1)[:, :1]
    hf.put_along_axis(t, hf.asarray(be.asarray(i)), -1.0, axis=1)
    np.put_along_axis(x, i, -1.0, axis=1)
    assert_same(host(t), x)
    with pytest.raises(ValueError, match="same number"):
        hf.put_along_axis(t, hf.asarray(be.asarray(i[0])), 0.0, axis=1)
    with pytest.raises(IndexError, match="hipfer.put_along_axis"):
        hf.put_along_axis(t, hf.asarray(be.asarray(i + 10)), 0.0, axis=1)


@pytest.mark.parametrize("dt", DTS, ids=ids(DTS))
def test_putmask_place(be, rng, dt):
    for nvals in (1, 3, 12, 20):
        tv, xv, tb, xb = view_pair(be, rng, (3, 4), dt)
        m = rng.random((3, 4)) < 0.5
        v = random_array(rng, (nvals,), dt)
        hf.putmask(tv, hf.asarray(be.asarray(m)), hf.asarray(be.asarray(v)))
        np.putmask(xv, m, v)
        assert_same(host(tb), xb)
        hf.place(tv, hf.asarray(be.asarray(~m)), hf.asarray(be.asarray(v)))
        np.place(xv, ~m, v)
        assert_same(host(tb), xb)


def test_putmask_place_special(be, rng):
    x = np.array([1.0, np.nan, -0.0, np.inf, 2.0])
    t = hf.asarray(be.asarray(x.copy()))
    hf.putmask(t, [True, False, True, False, True], [np.nan, -np.inf])
    np.putmask(x, [True, False, True, False, True], [np.nan, -np.inf])
    assert_same(host(t), x)
    hf.place(t, [1, 0, 0, 1, 0], [-0.0])  # a non-bool mask counts non-zero
    np.place(x, [1, 0, 0, 1, 0], [-0.0])
    assert_same(host(t), x)
    assert np.signbit(host(t)[0]) == np.signbit(x[0])
    hf.place(t, [False] * 5, [])  # no True place: an empty vals is fine
    with pytest.raises(ValueError, match="hipfer.place"):
        hf.place(t, [True] + [False] * 4, [])
    with pytest.raises(ValueError, match="same size"):
        hf.putmask(t, [True] * 4, [1.0])
    with pytest.raises(ValueError, match="same size"):
        hf.place(t, [True] * 4, [1.0])
    with pytest.raises(TypeError, match="complex"):
        hf.putmask(t, [True] * 5, [1j])


# ------------------------------------------------------------ choose & select
@pytest.mark.parametrize("dt", DTS, ids=ids(DTS))
@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_choose(be, rng, dt, mode):
    choices = [random_array(rng, (3, 4), dt) for _ in range(3)]
    lo, hi = (0, 2) if mode == "raise" else (-5, 6)
    a = rng.integers(lo, hi, size=(3, 4), endpoint=True)
    r = hf.choose(hf.asarray(be.asarray(a)), [hf.asarray(be.asarray(c)) for c in choices],
                  mode=mode)
    assert_same(host(r), np.choose(a, choices, mode=mode))


def test_choose_broadcast_promote_out(be, rng):
    a = rng.integers(0, 2, size=(2, 1, 4), endpoint=True)
    c = [rng.standard_normal((3, 4)).astype(np.float32), np.arange(4, dtype=np.int16), 2.5]
    ta = hf.asarray(be.asarray(a))
    r = hf.choose(ta, [hf.asarray(be.asarray(c[0])), hf.asarray(be.asarray(c[1])), c[2]])
    assert_same(host(r), np.choose(a, c))
    stacked = hf.asarray(be.asarray(np.stack([c[0], c[0] * 2, c[0] * 3])))
    out = hf.zeros((2, 3, 4), dtype=hf.float32, device=ta.device)
    assert hf.choose(ta, stacked, out=out) is out
    assert_same(host(out), np.choose(a, np.stack([c[0], c[0] * 2, c[0] * 3])))
    with pytest.raises(ValueError, match="invalid entry"):
        hf.choose(hf.asarray(be.asarray(np.array([0, 3]))), [[1, 2], [3, 4], [5, 6]])
    with pytest.raises(ValueError, match="invalid entry"):
        hf.choose(hf.asarray(be.asarray(np.array([0, -1]))), [[1, 2], [3, 4]])
    with pytest.raises(TypeError):
        hf.choose(hf.asarray(be.asarray(np.array([0.0, 1.0]))), [[1, 2], [3, 4]])


@pytest.mark.parametrize("dt", DTS, ids=ids(DTS))
def test_select(be, rng, dt):
    x = random_array(rng, (3, 4), dt)
    conds = [rng.random((3, 4)) < 0.3, rng.random((4,)) < 0.5]
    choices = [x, random_array(rng, (1, 4), dt)]
    tc = [hf.asarray(be.asarray(c)) for c in conds]
    tx = [hf.asarray(be.asarray(c)) for c in choices]
    assert_same(host(hf.select(tc, tx)), np.select(conds, choices))
    d = True if dt.kind == "b" else 1
    assert_same(host(hf.select(tc, tx, default=d)), np.select(conds, choices, default=d))


def test_select_promotion_and_errors(be, rng):
    c = rng.random(5) < 0.5
    x8 = np.arange(5, dtype=np.int8)
    tc, t8 = hf.asarray(be.asarray(c)), hf.asarray(be.asarray(x8))
    tf = hf.asarray(be.asarray(np.full(5, np.nan, np.float32)))
    assert_same(host(hf.select([tc], [t8])), np.select([c], [x8]))
    assert_same(host(hf.select([tc, ~tc], [t8, tf], default=-0.0)),
                np.select([c, ~c], [x8, np.full(5, np.nan, np.float32)], default=-0.0))
    with pytest.raises(ValueError, match="same length"):
        hf.select([tc], [t8, t8])
    with pytest.raises(ValueError, match="empty"):
        hf.select([], [])
    with pytest.raises(TypeError, match="boolean"):
        hf.select([t8], [t8])


# ------------------------------------------------------------ index helpers
@pytest.mark.parametrize("n,k,m", [(4, 0, None), (4, 1, None), (4, -2, 6), (3, 5, 2),
                                   (0, 0, None), (5, -1, 3)])
def test_tri_indices(be, n, k, m):
    for hfn, nfn in ((hf.tril_indices, np.tril_indices), (hf.triu_indices, np.triu_indices)):
        r, e = hfn(n, k, m, device=be.device), nfn(n, k, m)
        assert len(r) == 2
        for a, b in zip(r, e):
            assert_same(host(a), b)
    x = hf.asarray(be.asarray(np.zeros((n, n if m is None else m))))
    for hfn, nfn in ((hf.tril_indices_from, np.tril_indices_from),
                     (hf.triu_indices_from, np.triu_indices_from)):
        for a, b in zip(hfn(x, k), nfn(np.zeros(x.shape), k)):
            assert_same(host(a), b)
            assert a.device == x.device


def test_diag_and_mask_indices(be):
    for n, nd in ((4, 2), (3, 3), (0, 2)):
        for a, b in zip(hf.diag_indices(n, nd, device=be.device), np.diag_indices(n, nd)):
            assert_same(host(a), b)
        x = hf.asarray(be.asarray(np.zeros((n,) * nd)))
        for a, b in zip(hf.diag_indices_from(x), np.diag_indices_from(np.zeros((n,) * nd))):
            assert_same(host(a), b)
    with pytest.raises(ValueError, match="at least 2-d"):
        hf.diag_indices_from(hf.asarray(be.asarray(np.zeros(3))))
    with pytest.raises(ValueError, match="equal length"):
        hf.diag_indices_from(hf.asarray(be.asarray(np.zeros((2, 3)))))
    for fn, nfn in ((hf.triu, np.triu), (hf.tril, np.tril), (np.triu, np.triu)):
        for k in (0, 1, -1):
            for a, b in zip(hf.mask_indices(4, fn, k, device=be.device),
                            np.mask_indices(4, nfn, k)):
                assert_same(host(a), b)
    with pytest.raises(ValueError, match="2-d"):
        hf.tril_indices_from(hf.asarray(be.asarray(np.zeros(3))))


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("dims", [(3, 4), (2, 3, 5), (7,), (1, 1)], ids=str)
def test_ravel_unravel(be, rng, order, dims):
    size = int(np.prod(dims))
    flat = rng.integers(0, size, size=(2, 3))
    for idt in (np.int64, np.int32, np.uint16):
        t = hf.asarray(be.asarray(flat.astype(idt)))
        r = hf.unravel_index(t, dims, order=order)
        e = np.unravel_index(flat.astype(idt), dims, order=order)
        assert len(r) == len(e)
        for a, b in zip(r, e):
            assert_same(host(a), b.astype(np.int64))
        back = hf.ravel_multi_index(r, dims, order=order)
        assert_same(host(back), np.ravel_multi_index(e, dims, order=order))
    r = hf.unravel_index(hf.asarray(be.asarray(np.int64(size - 1))), dims, order=order)
    for a, b in zip(r, np.unravel_index(size - 1, dims, order=order)):
        assert_same(host(a), np.asarray(b))


@pytest.mark.parametrize("mode", ["wrap", "clip", ("clip", "wrap")], ids=str)
def test_ravel_multi_index_modes(be, rng, mode):
    coords = (rng.integers(-7, 7, size=6), rng.integers(-9, 9, size=6))
    t = tuple(hf.asarray(be.asarray(c)) for c in coords)
    assert_same(host(hf.ravel_multi_index(t, (3, 4), mode=mode)),
                np.ravel_multi_index(coords, (3, 4), mode=mode))


def test_ravel_unravel_errors(be):
    t = hf.asarray(be.asarray(np.array([0, 1])))
    with pytest.raises(ValueError, match="invalid entry"):
        hf.ravel_multi_index((t, t - 1), (2, 2))
    with pytest.raises(ValueError, match="invalid entry"):
        hf.ravel_multi_index((t, t + 1), (2, 2))
    with pytest.raises(ValueError, match="length"):
        hf.ravel_multi_index((t,), (2, 2))
    with pytest.raises(ValueError, match="out of bounds"):
        hf.unravel_index(t + 3, (2, 2))
    with pytest.raises(ValueError, match="out of bounds"):
        hf.unravel_index(t - 1, (2, 2))
    with pytest.raises(TypeError):
        hf.unravel_index(hf.asarray(be.asarray(np.array([0.5]))), (2, 2))


@pytest.mark.parametrize("dt", DTS, ids=ids(DTS))
@pytest.mark.parametrize("shape,wrap", [((4, 4), False), ((6, 3), False), ((7, 3), True),
                                        ((3, 6), False), ((3, 3, 3), False), ((0, 0), False)],
                         ids=str)
def test_fill_diagonal(be, rng, dt, shape, wrap):
    tv, xv, tb, xb = view_pair(be, rng, shape, dt)
    v = random_array(rng, (2,), dt)
    hf.fill_diagonal(tv, hf.asarray(be.asarray(v)), wrap=wrap)
    np.fill_diagonal(xv, v, wrap=wrap)
    assert_same(host(tb), xb)
    s = v[0].item()
    hf.fill_diagonal(tv, s, wrap=wrap)
    np.fill_diagonal(xv, s, wrap=wrap)
    assert_same(host(tb), xb)


def test_fill_diagonal_errors(be):
    with pytest.raises(ValueError, match="at least 2-d"):
        hf.fill_diagonal(hf.asarray(be.asarray(np.zeros(3))), 1.0)
    with pytest.raises(ValueError, match="equal length"):
        hf.fill_diagonal(hf.asarray(be.asarray(np.zeros((2, 2, 3)))), 1.0)


def test_take_along_axis_numpy_signature(be, rng):
    x = rng.standard_normal((3, 4))
    t = hf.asarray(be.asarray(x))
    i = rng.integers(-12, 12, size=5)
    assert_same(host(np.take_along_axis(t, hf.asarray(be.asarray(i)), None)),
                np.take_along_axis(x, i, None))
    j = np.argsort(x, axis=0)
    assert_same(host(np.take_along_axis(t, hf.asarray(be.asarray(j)), 0)),
                np.take_along_axis(x, j, 0))
    with pytest.raises(ValueError, match="1-d"):
        np.take_along_axis(t, hf.asarray(be.asarray(j)), None)


# ------------------------------------------------------------ NumPy dispatch
def test_numpy_dispatch_reaches_hipfer(be, rng, refuse_host):
    x = rng.standard_normal((3, 4))
    x[0, 1] = 0
    t = hf.asarray(be.asarray(x))
    ti = hf.asarray(be.asarray(np.array([0, 2, 1])))
    for r, e in [(np.argwhere(t), np.argwhere(x)), (np.flatnonzero(t), np.flatnonzero(x)),
                 (np.extract(t > 0, t), np.extract(x > 0, x)),
                 (np.compress([True, False, True], t, axis=0), np.compress([1, 0, 1], x, 0)),
                 (np.choose(ti, [t[0, :3], t[1, :3], t[2, :3]]),
                  np.choose([0, 2, 1], [x[0, :3], x[1, :3], x[2, :3]])),
                 (np.select([t > 0], [t]), np.select([x > 0], [x])),
                 (np.take_along_axis(t, ti[:, None], axis=1),
                  np.take_along_axis(x, np.array([0, 2, 1])[:, None], axis=1)),
                 (np.ravel_multi_index((ti, ti), (3, 3)), np.ravel_multi_index(([0, 2, 1],) * 2, (3, 3)))]:
        assert isinstance(r, hf.Tensor)
        assert_same(host(r), e)
    (a, b) = np.unravel_index(ti, (2, 2))
    assert isinstance(a, hf.Tensor) and isinstance(b, hf.Tensor)
    for a, b in zip(np.tril_indices_from(t), np.tril_indices_from(x)):
        assert isinstance(a, hf.Tensor)
        assert_same(host(a), b)
    y = x.copy()
    for fn, args in [(np.put, ([0, 5], [9.0])), (np.putmask, (x > 0, [7.0, 8.0])),
                     (np.place, (x < 0, [1.5, 2.5])), (np.fill_diagonal, (-3.0,))]:
        assert fn(t, *args) is None
        fn(y, *args)
        assert_same(host(t), y)
    np.put_along_axis(t, ti[:, None], 4.0, axis=1)
    np.put_along_axis(y, np.array([0, 2, 1])[:, None], 4.0, axis=1)
    assert_same(host(t), y)


def test_edge_cases(be):
    t = lambda x: hf.asarray(be.asarray(np.asarray(x)))  # noqa: E731
    assert_same(host(hf.argwhere([[1, 0], [0, 2]])), np.argwhere([[1, 0], [0, 2]]))
    assert_same(host(hf.argwhere(t(np.float32(0)))), np.argwhere(np.float32(0)))
    assert_same(host(hf.flatnonzero(t(np.int8(3)))), np.flatnonzero(np.int8(3)))
    assert_same(host(hf.choose(t(1), [t(5.0), t(6.0)])), np.asarray(np.choose(1, [5.0, 6.0])))
    assert_same(host(hf.choose(t([0, 1, 0]), [1, 2])), np.choose([0, 1, 0], [1, 2]))
    one = hf.choose(t([[0, 0], [0, 0]]), [t([1, 2])])  # one choice: a fresh tensor
    one[0, 0] = 7
    assert_same(host(one), np.array([[7, 2], [1, 2]]))
    c = hf.choose(t(1), [t(1 + 2j).conj(), t(3 + 4j).conj()])  # conjugated views
    assert_same(host(c), np.asarray(3 - 4j))
    assert_same(host(hf.select([t([True, False])], [3], default=1.5)),
                np.select([[True, False]], [3], default=1.5))
    assert_same(host(hf.compress([True], t(5.0))), np.compress([True], np.float64(5.0)))
    assert_same(host(hf.extract(t(True), t(5.0))), np.extract(True, np.float64(5.0)))
    for a, b in zip(hf.unravel_index(5, (2, 3)), np.unravel_index(5, (2, 3))):
        assert_same(host(a), np.asarray(b))
    assert hf.unravel_index(0, ()) == ()
    assert_same(host(hf.ravel_multi_index((1, 2), (3, 4))), np.asarray(np.ravel_multi_index((1, 2), (3, 4))))
    assert_same(host(hf.ravel_multi_index((t([1, 2]), t([[0], [3]])), (3, 4))),
                np.ravel_multi_index(([1, 2], [[0], [3]]), (3, 4)))
    with pytest.raises(TypeError):
        hf.ravel_multi_index((t([1.0]), t([1])), (3, 4))
    x, y = t(np.zeros((2, 2))), np.zeros((2, 2))
    hf.put(x, [[0], [3]], [5.0, 6.0])
    np.put(y, [[0], [3]], [5.0, 6.0])
    assert_same(host(x), y)
    x, y = t(np.zeros((2, 3))), np.zeros((2, 3))
    hf.put_along_axis(x, t([[1]]), t([[7.0], [8.0]]), 1)
    np.put_along_axis(y, np.array([[1]]), np.array([[7.0], [8.0]]), 1)
    assert_same(host(x), y)
    x, y = t(np.zeros((3, 3), np.int32)), np.zeros((3, 3), np.int32)
    hf.fill_diagonal(x, 2.7)
    np.fill_diagonal(y, 2.7)
    assert_same(host(x), y)
