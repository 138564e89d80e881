"""IndexSelect, Gather, Scatter, IndexPut against loop references written here: every
axis, negative indices, every index dtype, out-of-range -> IndexError, repeated
destinations (last write wins / accumulate in C order), strided operands, conj flags."""
import itertools

import numpy as np
import pytest

from hipfer.prims import descriptors as d

from _util import (INDEX_DTYPES, StridedOut, assert_same, dtypes_of, layouts, random_array,
                    run_prim)

VALUE_DTYPES = [np.dtype(t) for t in (np.bool_, np.int8, np.int64, np.uint16, np.float32,
                                      np.float64, np.complex64, np.complex128)]


def _indices(rng, n, shape, dt):
    """Indices in [-n, n) (non-negative for unsigned dtypes), with repeats."""
    lo = 0 if np.dtype(dt).kind == "u" else -n
    return rng.integers(lo, n, size=shape).astype(dt)


def _wrap(i, n):
    return int(i) + n if int(i) < 0 else int(i)


# ------------------------------------------------------------------ IndexSelect
@pytest.mark.parametrize("dt", VALUE_DTYPES, ids=str)
@pytest.mark.parametrize("idt", INDEX_DTYPES, ids=str)
def test_index_select(be, rng, dt, idt):
    shape = (3, 4, 5)
    for axis in (0, 1, -1):
        ax = axis % 3
        idx = _indices(rng, shape[ax], (7,), idt)
        for _, a, an in layouts(be, rng, shape, dt)[::3]:
            got = run_prim(be, d.IndexSelect(axis), [a, be.asarray(idx)])
            ref = np.stack([np.take(an, _wrap(i, shape[ax]), axis=ax) for i in idx], axis=ax)
            assert_same(got, ref)
    idx = _indices(rng, 4, (6,), idt)
    so = StridedOut(be, (3, 6, 5), dt, "step")
    an = random_array(rng, shape, dt)
    got = run_prim(be, d.IndexSelect(1), [be.asarray(an), be.asarray(idx)[::-1]], out=so.view)
    assert_same(got, np.take(an, idx[::-1].astype(np.int64), axis=1))
    so.check_gaps()


def test_index_select_misc(be, rng):
    an = random_array(rng, (4, 3), np.complex64)
    idx = np.array([3, -4, 0, 0], np.int64)
    got = run_prim(be, d.IndexSelect(0), [be.asarray(an), be.asarray(idx)], conj=(True, False))
    assert_same(got, np.conj(an[[3, 0, 0, 0]]))
    got = run_prim(be, d.IndexSelect(0), [be.asarray(an), be.asarray(np.zeros(0, np.int32))])
    assert got.shape == (0, 3)
    bn = random_array(rng, (4,), np.float32)
    got = run_prim(be, d.IndexSelect(0), [be.asarray(bn), be.asarray(np.array([1, 2]))])
    assert_same(got, bn[[1, 2]])


@pytest.mark.parametrize("bad,idt", [(5, np.int64), (-6, np.int64), (7, np.uint8),
                                     (2**63 + 3, np.uint64), (-100, np.int8)])
def test_index_select_out_of_range(be, bad, idt):
    a = be.asarray(np.zeros((2, 5), np.float32))
    idx = be.asarray(np.array([0, bad, 1], dtype=idt))
    with pytest.raises(IndexError, match=f"index {bad} is out of bounds for axis 1 with size 5"):
        run_prim(be, d.IndexSelect(1), [a, idx])


# ----------------------------------------------------------------------- Gather
def _gather_ref(a, idx, axis):
    out = np.empty(idx.shape, a.dtype)
    for pos in np.ndindex(*idx.shape):
        src = list(pos)
        src[axis] = _wrap(idx[pos], a.shape[axis])
        out[pos] = a[tuple(src)]
    return out


@pytest.mark.parametrize("dt", VALUE_DTYPES, ids=str)
def test_gather(be, rng, dt):
    shape = (3, 4, 5)
    for axis, idt in zip((0, 1, 2, -2), itertools.cycle(INDEX_DTYPES)):
        ax = axis % 3
        ishape = list(shape)
        ishape[ax] = 6
        ishape[(ax + 1) % 3] -= 1  # smaller than a on another axis (torch.gather)
        idx = _indices(rng, shape[ax], ishape, idt)
        for _, a, an in layouts(be, rng, shape, dt)[::2]:
            got = run_prim(be, d.Gather(axis), [a, be.asarray(idx)])
            assert_same(got, _gather_ref(an, idx, ax))
    an = random_array(rng, (2, 3), dt)
    idx = np.array([[0, 2], [-1, 1]], np.int32)
    got = run_prim(be, d.Gather(1), [be.asarray(an), be.asarray(idx).T])
    assert_same(got, _gather_ref(an, idx.T, 1))
    if dt.kind == "c":
        got = run_prim(be, d.Gather(1), [be.asarray(an), be.asarray(idx)], conj=(True, False))
        assert_same(got, np.conj(_gather_ref(an, idx, 1)))


@pytest.mark.parametrize("bad", [3, -4, 100])
def test_gather_out_of_range(be, bad):
    a = be.asarray(np.zeros((2, 3)))
    idx = be.asarray(np.array([[0, 1], [bad, 2]]))
    with pytest.raises(IndexError, match=f"index {bad} is out of bounds for axis 1 with size 3"):
        run_prim(be, d.Gather(1), [a, idx])


# ---------------------------------------------------------------------- Scatter
def _scatter_ref(a, idx, src, axis, add):
    out = a.copy()
    for pos in np.ndindex(*idx.shape):  # C order: the last write wins / sums in order
        dst = list(pos)
        dst[axis] = _wrap(idx[pos], a.shape[axis])
        if add:
            with np.errstate(over="ignore"):
                out[tuple(dst)] = out[tuple(dst)] + src[pos]
        else:
            out[tuple(dst)] = src[pos]
    return out


@pytest.mark.parametrize("dt", VALUE_DTYPES, ids=str)
@pytest.mark.parametrize("reduce", [None, "add"])
def test_scatter(be, rng, dt, reduce):
    shape = (4, 5)
    for axis in (0, 1, -1):
        ax = axis % 2
        ishape = (3, 4) if ax == 0 else (4, 7)  # more entries than slots: repeats
        idx = _indices(rng, shape[ax], ishape, np.int64)
        srcn = random_array(rng, (ishape[0] + 1, ishape[1] + 1), dt)  # src larger than index
        for _, a, an in layouts(be, rng, shape, dt)[::2]:
            got = run_prim(be, d.Scatter(axis, reduce), [a, be.asarray(idx), be.asarray(srcn)])
            ref = _scatter_ref(an, idx, srcn, ax, reduce == "add")
            if dt.kind in "fc" and reduce == "add":
                np.testing.assert_allclose(got, ref, rtol=1e-6 if dt.itemsize <= 8 else 1e-14)
            else:
                assert_same(got, ref)
    # strided output, empty index
    an = random_array(rng, shape, dt)
    idx = _indices(rng, 5, (4, 3), np.int16)
    srcn = random_array(rng, (4, 3), dt)
    so = StridedOut(be, shape, dt, "transposed")
    got = run_prim(be, d.Scatter(1, reduce), [be.asarray(an), be.asarray(idx), be.asarray(srcn)],
                   out=so.view)
    ref = _scatter_ref(an, idx, srcn, 1, reduce == "add")
    np.testing.assert_allclose(got, ref, rtol=1e-6) if dt.kind in "fc" else assert_same(got, ref)
    empty = be.asarray(np.zeros((0, 5), np.int64))
    got = run_prim(be, d.Scatter(0, reduce), [be.asarray(an), empty, be.asarray(an)])
    assert_same(got, an)


def test_scatter_last_write_wins(be):
    a = np.zeros(4, np.float64)
    idx = np.array([1, 3, 1, 1, 3], np.int64)
    src = np.array([10.0, 20.0, 30.0, 40.0, 50.0])
    got = run_prim(be, d.Scatter(0), [be.asarray(a), be.asarray(idx), be.asarray(src)])
    assert_same(got, np.array([0.0, 40.0, 0.0, 50.0]))
    got = run_prim(be, d.Scatter(0, "add"), [be.asarray(a), be.asarray(idx), be.asarray(src)])
    assert_same(got, np.array([0.0, 80.0, 0.0, 70.0]))
    with pytest.raises(IndexError, match="index 4 is out of bounds for axis 0 with size 4"):
        run_prim(be, d.Scatter(0), [be.asarray(a), be.asarray(np.array([0, 4])), be.asarray(src)])


# --------------------------------------------------------------------- IndexPut
def _index_put_ref(a, idxs, values, accumulate):
    out = a.copy()
    bidx = np.broadcast_arrays(*idxs)
    k = len(idxs)
    target = bidx[0].shape + a.shape[k:]
    vals = np.broadcast_to(values, target)
    for pos in np.ndindex(*bidx[0].shape):
        dst = tuple(_wrap(ix[pos], a.shape[j]) for j, ix in enumerate(bidx))
        if accumulate:
            with np.errstate(over="ignore"):
                out[dst] = out[dst] + vals[pos]
        else:
            out[dst] = vals[pos]
    return out


@pytest.mark.parametrize("dt", dtypes_of("bif") + [np.dtype(np.complex128)], ids=str)
@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put(be, rng, dt, accumulate):
    shape = (4, 3, 2)
    cases = [  # (index shapes, values shape)
        ([(6,)], (6, 3, 2)),
        ([(6,)], (2,)),
        ([(5, 1), (1, 4)], (5, 4, 2)),
        ([(3,), (3,), (3,)], ()),
        ([(2, 3), (3,)], (1, 2)),
    ]
    for ishapes, vshape in cases:
        idxs = [_indices(rng, shape[j], s, INDEX_DTYPES[(j + len(s)) % len(INDEX_DTYPES)])
                for j, s in enumerate(ishapes)]
        vn = random_array(rng, vshape, dt)
        for _, a, an in layouts(be, rng, shape, dt)[:2]:
            got = run_prim(be, d.IndexPut(accumulate), [a] + [be.asarray(i) for i in idxs] +
                           [be.asarray(vn)])
            ref = _index_put_ref(an, idxs, vn, accumulate)
            if dt.kind in "fc" and accumulate:
                np.testing.assert_allclose(got, ref, rtol=1e-6 if dt == np.float32 else 1e-14)
            else:
                assert_same(got, ref)


def test_index_put_rules(be):
    a = np.zeros((3, 2), np.int32)
    idx = np.array([2, 0, 2, -1])
    vals = np.array([[1, 2], [3, 4], [5, 6], [7, 8]], np.int32)
    got = run_prim(be, d.IndexPut(False), [be.asarray(a), be.asarray(idx), be.asarray(vals)])
    assert_same(got, np.array([[3, 4], [0, 0], [7, 8]], np.int32))
    got = run_prim(be, d.IndexPut(True), [be.asarray(a), be.asarray(idx), be.asarray(vals)])
    assert_same(got, np.array([[3, 4], [0, 0], [13, 16]], np.int32))
    c = np.zeros(3, np.complex64)
    v = np.array([1 + 2j], np.complex64)
    got = run_prim(be, d.IndexPut(False), [be.asarray(c), be.asarray(np.array([1])), be.asarray(v)],
                   conj=(False, False, True))
    assert_same(got, np.array([0, 1 - 2j, 0], np.complex64))
    with pytest.raises(IndexError, match="index -4 is out of bounds for axis 0 with size 3"):
        run_prim(be, d.IndexPut(False), [be.asarray(a), be.asarray(np.array([0, -4])),
                                         be.asarray(vals[:2])])
    with pytest.raises(IndexError, match="index 2 is out of bounds for axis 1 with size 2"):
        run_prim(be, d.IndexPut(True), [be.asarray(a), be.asarray(np.array([0])),
                                        be.asarray(np.array([2])), be.asarray(np.int32(1))])
