"""Reductions against NumPy references: every ReduceOp of every reduction family, mode
orders (reduce some / all / none, reordered outputs), strided inputs, empty sets, NaN,
VAR/STD corrections, the complex -> real fused reductions and ReduceAdd's alpha/beta."""
import numpy as np
import pytest

from hipfer.prims import descriptors as d
from hipfer.prims.infer import real_dtype
from hipfer.prims.optable import ReduceOp, UnaryOp

from _util import (COMPLEX, FLOATS, assert_accumulated, assert_elementwise, assert_same, dtypes_of, layouts,
                    nan_filled, random_array, run_prim)

MODES = ("i", "j", "k")
# (modes_c, reduced axes): all, some, none-but-reordered, reordered partial
MODE_CASES = [((), (0, 1, 2)), (("j",), (0, 2)), (("k", "i"), (1,)), (("j", "k", "i"), ()),
              (("i", "j"), (2,))]


def _ref_reduce(op, x, axes, modes_c, out_dtype, correction=0.0):
    """NumPy reference, in the modes_c axis order."""
    kept = [m for i, m in enumerate(MODES[:x.ndim]) if i not in axes]
    with np.errstate(all="ignore"):
        if op is ReduceOp.SUM:
            r = np.sum(x, axis=axes, dtype=out_dtype)
        elif op is ReduceOp.PROD:
            r = np.prod(x, axis=axes, dtype=out_dtype)
        elif op is ReduceOp.MEAN:
            n = int(np.prod([x.shape[a] for a in axes]))
            r = np.sum(x.astype(np.complex128 if x.dtype.kind == "c" else np.float64),
                       axis=axes) / n
        elif op in (ReduceOp.MAX, ReduceOp.MIN):
            r = (np.max if op is ReduceOp.MAX else np.min)(x, axis=axes)
        elif op is ReduceOp.ALL:
            r = np.all(x != 0, axis=axes)
        elif op is ReduceOp.ANY:
            r = np.any(x != 0, axis=axes)
        else:  # VAR / STD, in float64
            n = int(np.prod([x.shape[a] for a in axes]))
            wide = x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)
            dev = wide - np.sum(wide, axis=axes, keepdims=True) / n
            r = np.sum(np.abs(dev) ** 2, axis=axes) / max(n - correction, 0)
            if op is ReduceOp.STD:
                r = np.sqrt(r)
    r = np.asarray(r)
    return r.transpose([kept.index(m) for m in modes_c])


def _magnitude(op, x, axes, modes_c):
    """Sum of |terms| along the reduction (the scale of float rounding error)."""
    kept = [m for i, m in enumerate(MODES[:x.ndim]) if i not in axes]
    a = np.abs(x.astype(np.complex128 if x.dtype.kind == "c" else np.float64))
    if op is ReduceOp.PROD:
        m = np.abs(np.prod(a, axis=axes)) * max(1, int(np.prod([x.shape[i] for i in axes])))
    else:
        m = np.sum(a, axis=axes)
        if op is ReduceOp.MEAN:
            m = m / max(1, int(np.prod([x.shape[i] for i in axes])))
    return np.asarray(m).transpose([kept.index(k) for k in modes_c])


def _check(be, desc, x, xn, op, modes_c, axes, out_dtype, correction=0.0, conj=None):
    got = run_prim(be, desc, [x], conj=conj)
    ref_in = np.conj(xn) if conj and conj[0] else xn
    expected = _ref_reduce(op, ref_in, axes, modes_c, out_dtype, correction)
    assert got.dtype == out_dtype
    if out_dtype.kind in "fc":
        if op in (ReduceOp.VAR, ReduceOp.STD):
            rtol = {np.float16: 5e-3, np.float32: 1e-4}.get(out_dtype.type, 1e-10)
            np.testing.assert_allclose(got, expected, rtol=rtol, equal_nan=True)
        elif op in (ReduceOp.MAX, ReduceOp.MIN):
            assert_same(got, expected.astype(out_dtype))
        else:
            assert_accumulated(got, expected, _magnitude(op, ref_in, axes, modes_c), out_dtype)
    else:
        assert_same(got, expected.astype(out_dtype))
    return got


_REDUCE_CASES = [(d.ScalarReduce, op, t)
                 for op in (ReduceOp.SUM, ReduceOp.PROD, ReduceOp.MEAN, ReduceOp.MAX, ReduceOp.MIN)
                 for t in dtypes_of("fc" if op is ReduceOp.MEAN else op.kinds)] + \
                [(d.MetadataReduce, op, t)
                 for op in (ReduceOp.SUM, ReduceOp.PROD, ReduceOp.MAX, ReduceOp.MIN,
                            ReduceOp.ALL, ReduceOp.ANY)
                 for t in dtypes_of("biu")]


def _out_dtype(op, dt):
    if op in (ReduceOp.ALL, ReduceOp.ANY):
        return np.dtype(np.bool_)
    if op is ReduceOp.SUM and dt == np.bool_:
        return np.dtype(np.int64)
    return dt


def _data(rng, op, shape, dt, special=False):
    if op is ReduceOp.PROD and dt.kind in "fc":  # keep products in range
        x = rng.uniform(0.5, 1.5, shape) * rng.choice([-1, 1], shape)
        if dt.kind == "c":
            x = x * np.exp(1j * rng.uniform(0, 0.3, shape))
        return x.astype(dt)
    if op in (ReduceOp.ALL, ReduceOp.ANY) and dt.kind in "iu":
        x = random_array(rng, shape, dt, low=0, high=2)  # plenty of zeros
        return x
    return random_array(rng, shape, dt, special=special)


@pytest.mark.parametrize("fam,op,dt", _REDUCE_CASES,
                         ids=[f"{f.__name__}-{o.name}-{t}" for f, o, t in _REDUCE_CASES])
def test_reduce(be, rng, fam, op, dt):
    odt = _out_dtype(op, dt)
    for modes_c, axes in MODE_CASES:
        desc = fam(op, MODES, modes_c)
        for _, x, xn in layouts(be, rng, (3, 4, 5), dt):
            if op is ReduceOp.PROD or op in (ReduceOp.ALL, ReduceOp.ANY):
                xn = _data(rng, op, (3, 4, 5), dt)
                x = be.asarray(xn)
            _check(be, desc, x, xn, op, modes_c, axes, odt)
    # 0-d operand, empty reduced set, empty output
    xn = random_array(rng, (), dt)
    _check(be, fam(op, (), ()), be.asarray(xn), xn, op, (), (), odt)
    if op not in (ReduceOp.MAX, ReduceOp.MIN):
        xn = random_array(rng, (0, 4), dt)
        _check(be, fam(op, ("i", "j"), ("j",)), be.asarray(xn), xn, op, ("j",), (0,), odt)
    xn = random_array(rng, (0, 4), dt)
    got = run_prim(be, fam(op, ("i", "j"), ("i",)), [be.asarray(xn)])
    assert got.shape == (0,) and got.dtype == odt
    if dt.kind == "c":
        xn = random_array(rng, (4, 6), dt)
        _check(be, fam(op, ("i", "j"), ("j",)), be.asarray(xn), xn, op, ("j",), (0,), odt,
               conj=(True,))


@pytest.mark.parametrize("op", [ReduceOp.SUM, ReduceOp.MAX, ReduceOp.MIN, ReduceOp.MEAN])
@pytest.mark.parametrize("dt", FLOATS, ids=str)
def test_reduce_nan(be, rng, op, dt):
    xn = random_array(rng, (4, 7), dt)
    xn[1, 3] = np.nan
    xn[2, 0] = np.inf
    got = run_prim(be, d.ScalarReduce(op, ("i", "j"), ("i",)), [be.asarray(xn)])
    assert np.isnan(got[1]) and not np.isnan(got[[0, 3]]).any()
    assert got[2] == (np.inf if op is not ReduceOp.MIN else np.min(xn[2]))


def test_reduce_empty_rules(be):
    x = be.asarray(np.zeros((0, 3), np.float32))
    assert_same(run_prim(be, d.ScalarReduce(ReduceOp.SUM, ("i", "j"), ("j",)), [x]),
                np.zeros(3, np.float32))
    assert_same(run_prim(be, d.ScalarReduce(ReduceOp.PROD, ("i", "j"), ("j",)), [x]),
                np.ones(3, np.float32))
    assert_same(run_prim(be, d.ScalarReduce(ReduceOp.MEAN, ("i", "j"), ("j",)), [x]),
                np.full(3, np.nan, np.float32))
    b = be.asarray(np.zeros((0, 3), np.bool_))
    assert_same(run_prim(be, d.MetadataReduce(ReduceOp.ALL, ("i", "j"), ("j",)), [b]),
                np.ones(3, np.bool_))
    assert_same(run_prim(be, d.MetadataReduce(ReduceOp.ANY, ("i", "j"), ("j",)), [b]),
                np.zeros(3, np.bool_))
    assert_same(run_prim(be, d.MetadataReduce(ReduceOp.SUM, ("i", "j"), ("j",)), [b]),
                np.zeros(3, np.int64))
    with pytest.raises(ValueError, match="no identity"):
        be.backend.plan(d.ScalarReduce(ReduceOp.MAX, ("i", "j"), ("j",)), (np.float32,), ((0, 3),))


def test_integer_sums_wrap(be):
    x = np.array([100, 100, 100], np.int8)
    assert_same(run_prim(be, d.ScalarReduce(ReduceOp.SUM, ("i",), ()), [be.asarray(x)]),
                np.array(44, np.int8))
    u = np.array([200, 2], np.uint8)
    assert_same(run_prim(be, d.MetadataReduce(ReduceOp.PROD, ("i",), ()), [be.asarray(u)]),
                np.array(144, np.uint8))
    b = np.array([True, False, True, True])
    assert_same(run_prim(be, d.MetadataReduce(ReduceOp.SUM, ("i",), ()), [be.asarray(b)]),
                np.array(3, np.int64))
    assert_same(run_prim(be, d.MetadataReduce(ReduceOp.PROD, ("i",), ()), [be.asarray(b)]),
                np.array(False))


# ------------------------------------------------------------------- VAR / STD
@pytest.mark.parametrize("op", [ReduceOp.VAR, ReduceOp.STD])
@pytest.mark.parametrize("dt", FLOATS + COMPLEX, ids=str)
def test_var_std(be, rng, op, dt):
    odt = real_dtype(dt)
    for modes_c, axes in MODE_CASES:
        n = int(np.prod([(3, 4, 5)[a] for a in axes]))
        for correction in (0.0, 1.0, float(n), n + 2.5):
            desc = d.AnalyticReduce(op, MODES, modes_c, correction)
            for _, x, xn in layouts(be, rng, (3, 4, 5), dt)[::2]:
                _check(be, desc, x, xn, op, modes_c, axes, odt, correction)
    xn = random_array(rng, (0, 3), dt)
    got = run_prim(be, d.AnalyticReduce(op, ("i", "j"), ("j",), 1.0), [be.asarray(xn)])
    assert got.dtype == odt and np.isnan(got).all()
    xn = random_array(rng, (4, 5), dt)
    if dt.kind == "c":  # var(conj(x)) == var(x)
        _check(be, d.AnalyticReduce(op, ("i", "j"), ("i",), 1.0), be.asarray(xn), xn, op,
               ("i",), (1,), odt, 1.0, conj=(True,))


# --------------------------------------------------------- complex -> real fused
@pytest.mark.parametrize("unary", [UnaryOp.ABS, UnaryOp.REAL, UnaryOp.IMAG])
@pytest.mark.parametrize("op", [ReduceOp.SUM, ReduceOp.MAX, ReduceOp.MIN, ReduceOp.MEAN])
@pytest.mark.parametrize("dt", COMPLEX, ids=str)
def test_complex_real_reduce(be, rng, unary, op, dt):
    rdt = np.dtype(np.float32) if dt == np.complex64 else np.dtype(np.float64)
    f = {UnaryOp.ABS: np.abs, UnaryOp.REAL: np.real, UnaryOp.IMAG: np.imag}[unary]
    for modes_c, axes in MODE_CASES[:3]:
        desc = d.ComplexRealReduce(unary, op, MODES, modes_c)
        for _, x, xn in layouts(be, rng, (3, 4, 5), dt)[:2]:
            for conj in (False, True):
                got = run_prim(be, desc, [x], conj=(conj,))
                src = f(np.conj(xn) if conj else xn).astype(rdt)
                expected = _ref_reduce(op, src, axes, modes_c, rdt)
                assert got.dtype == rdt
                if op in (ReduceOp.MAX, ReduceOp.MIN) and unary is not UnaryOp.ABS:
                    assert_same(got, expected.astype(rdt))
                elif op in (ReduceOp.MAX, ReduceOp.MIN):  # hypot may differ by an ulp
                    assert_elementwise(got, expected.astype(rdt))
                else:
                    assert_accumulated(got, expected, _magnitude(op, src, axes, modes_c), rdt)


# --------------------------------------------------------------------- ReduceAdd
@pytest.mark.parametrize("dt", dtypes_of("iufc") + [np.dtype(np.bool_)], ids=str)
def test_reduce_add(be, rng, dt):
    odt = np.dtype(np.int64) if dt == np.bool_ else dt
    xn = random_array(rng, (3, 4, 5), dt, low=-50 if dt.kind == "i" else None,
                      high=50 if dt.kind in "iu" else None)
    x = be.asarray(xn)
    desc = d.ReduceAdd(MODES, ("k", "i"))
    s = np.sum(xn, axis=1, dtype=odt).T
    mag = np.sum(np.abs(xn.astype(np.complex128 if dt.kind == "c" else np.float64)), axis=1).T
    out = nan_filled(be, (5, 3), odt)
    assert_accumulated(run_prim(be, desc, [x], out=out, beta=0), s, mag, odt)
    if dt.kind == "b":
        return
    c0 = random_array(rng, (5, 3), odt, low=-50 if dt.kind == "i" else None,
                      high=50 if dt.kind in "iu" else None)
    alpha, beta = (2, 3) if dt.kind in "iu" else (1.5, -0.5)
    got = run_prim(be, desc, [x], out=be.asarray(c0.copy()), alpha=alpha, beta=beta)
    with np.errstate(over="ignore"):
        expected = (np.asarray(alpha).astype(odt) * s + np.asarray(beta).astype(odt) * c0)
    assert_accumulated(got, expected, abs(alpha) * mag + abs(beta) * np.abs(c0), odt)
    if dt.kind == "c":
        got = run_prim(be, desc, [x], conj=(True,))
        assert_accumulated(got, np.conj(s), mag, odt)


def test_reductions_repeat_bit_for_bit(be, rng):
    xn = random_array(rng, (64, 257), np.float32)
    x = be.asarray(xn)
    for op in (ReduceOp.SUM, ReduceOp.MEAN):
        desc = d.ScalarReduce(op, ("i", "j"), ("i",))
        first = run_prim(be, desc, [x])
        for _ in range(3):
            np.testing.assert_array_equal(run_prim(be, desc, [x]), first)
    desc = d.AnalyticReduce(ReduceOp.VAR, ("i", "j"), (), 1.0)
    first = run_prim(be, desc, [x])
    np.testing.assert_array_equal(run_prim(be, desc, [x]), first)


# ------------------------------------- contiguous runs (the GPU's vec path: red_vec)
# (shape, kept modes): full reductions of one run and last-axis reductions, with 32 lanes
# per row (300 rows), a block per row or per split (3 long rows, long 1-d runs), rows
# whose length is not a multiple of the 16-byte pack (997, 33, 17, 70001), and splits.
_VEC_SHAPES = [((1,), ()), ((17,), ()), ((1000,), ()), ((70001,), ()), ((300000,), ()),
               ((300, 1000), ("i",)), ((300, 997), ("i",)), ((3, 20000), ("i",)),
               ((5, 33), ("i",))]
_VEC_DTYPES = ["float32", "float64", "complex64", "complex128", "float16", "int8", "int32",
               "int64", "bool"]


def _at_offset(be, xn, offset):
    """xn's values stored `offset` elements into a fresh buffer (offset 1: not 16-byte
    aligned, so the GPU loads the packs element by element)."""
    flat = np.zeros(xn.size + offset, xn.dtype)
    flat[offset:] = xn.reshape(-1)
    return be.asarray(flat)[offset:].reshape(xn.shape)


def _vec_ops(dt):
    ops = [(d.ScalarReduce, ReduceOp.SUM)]
    if dt.kind in "fc":
        ops += [(d.ScalarReduce, ReduceOp.MEAN), (d.AnalyticReduce, ReduceOp.VAR)]
    if dt.kind in "biuf":
        ops += [(d.ScalarReduce, ReduceOp.MAX), (d.ScalarReduce, ReduceOp.MIN)]
    if dt.kind in "bi":
        ops += [(d.MetadataReduce, ReduceOp.ALL), (d.MetadataReduce, ReduceOp.ANY),
                (d.ScalarReduce, ReduceOp.PROD)]
    return ops


@pytest.mark.parametrize("dt", _VEC_DTYPES)
def test_contiguous_runs(be, rng, dt):
    """Every reducer over contiguous runs, aligned and offset by one element (the same
    values must give the same bits either way: the order does not depend on alignment)."""
    dt = np.dtype(dt)
    for shape, modes_c in _VEC_SHAPES:
        if dt == np.float16 and shape[-1] > 1000:
            continue  # NumPy's float16 reference sums round in float16
        modes = MODES[:len(shape)]
        axes = tuple(i for i, m in enumerate(modes) if m not in modes_c)
        for fam, op in _vec_ops(dt):
            xn = _data(rng, op, shape, dt)
            if op is ReduceOp.PROD:  # few non-zeros, so products do not just vanish
                xn = np.where(rng.random(shape) < 0.9, 1, xn).astype(dt)
            desc = fam(op, modes, modes_c, 1.0) if fam is d.AnalyticReduce else fam(op, modes, modes_c)
            odt = real_dtype(dt) if op is ReduceOp.VAR else _out_dtype(op, dt)
            corr = 1.0 if op is ReduceOp.VAR else 0.0
            if op is ReduceOp.VAR and int(np.prod([shape[a] for a in axes])) < 2:
                continue
            got = [_check(be, desc, _at_offset(be, xn, off), xn, op, modes_c, axes, odt, corr)
                   for off in (0, 1)]
            if be.name == "cupy":
                np.testing.assert_array_equal(be.asnumpy(got[0]), be.asnumpy(got[1]))


@pytest.mark.parametrize("op", [ReduceOp.MAX, ReduceOp.MIN, ReduceOp.SUM])
@pytest.mark.parametrize("dt", FLOATS, ids=str)
def test_contiguous_runs_nan(be, rng, op, dt):
    """NaN anywhere in a run (in a whole pack, or in the cut last pack) wins; inf does not."""
    for shape, modes_c in [((300, 997), ("i",)), ((4, 20001), ("i",)), ((70001,), ())]:
        modes = MODES[:len(shape)]
        axes = tuple(i for i, m in enumerate(modes) if m not in modes_c)
        xn = random_array(rng, shape, dt).reshape(-1, shape[-1])
        rows = xn.shape[0]
        xn[: rows // 2, -1] = np.nan                                   # the cut pack
        picked = range(rows // 2, rows, 3)                             # anywhere
        xn[picked, rng.integers(0, shape[-1], len(picked))] = np.nan
        xn[:, 0] = np.where(np.arange(rows) % 2, np.inf, -np.inf)
        xn = xn.reshape(shape)
        assert np.isnan(xn).any() and not np.isnan(xn).all()
        for off in (0, 1):  # _check compares NaN positions (and max / min exactly)
            _check(be, d.ScalarReduce(op, modes, modes_c), _at_offset(be, xn, off), xn, op,
                   modes_c, axes, np.dtype(dt))
