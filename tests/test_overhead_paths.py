"""The warm-call fast paths give what the general paths give.

hipfer's hot paths skip work on a warm call (hipfer/_ops.py ``Site``: a flat-key plan
lookup; hipfer/_elementwise.py: no promotion for two tensors of one dtype or a weak
Python scalar, the scalar operand filled through a cached plan; hipfer/_dtypes.py: a
result_type memo; the NumPy backend's cheap errstate). Each test here computes the same
thing through the general path -- the promotion of ``_operands`` as it was, the 0-d
scalar made by ``full``, ``_ops.run`` hashing the descriptor into ``Backend.plan`` -- and
asks for bit-identical results (dtype, shape, conjugation flag, every byte), or for the
same exception, on the edge cases: Python and NumPy scalars, mixed dtypes, conj flags,
0-d, empty, broadcast and non-contiguous operands.
"""
import math
import warnings

import numpy as np
import pytest

import hipfer as hf
from hipfer import _core, _dtypes, _elementwise as E, _ops
from hipfer._device import get_default_device
from hipfer._tensor import Tensor
from hipfer.prims import descriptors as d
from hipfer.prims.registry import get_backend

DTYPES = [np.dtype(t) for t in (np.bool_, np.int8, np.uint8, np.int32, np.int64, np.uint64,
                                np.float16, np.float32, np.float64, np.complex64,
                                np.complex128)]
BINARY = ["add", "subtract", "multiply", "divide", "less", "maximum", "bitwise_and",
          "pow", "floor_divide", "copysign"]
SCALARS = [True, False, 0, 1, -1, 127, 128, 255, 300, 2**31, 2**63 - 1, 2**63, -2**63,
           0.5, -0.0, 0.0, math.nan, math.inf, -1e300, 1e5, 1 + 2j, -0.0j, complex(0, -0.0),
           np.float32(1.5), np.int8(-3), np.uint64(7), np.complex64(2j), np.bool_(True)]


# --------------------------------------------------------------- the general path
def _general_operands(a, b):
    """_core.operands as it was: the scalar filled by full() on t.device."""
    ta, tb = isinstance(a, Tensor), isinstance(b, Tensor)
    for v, is_t in ((a, ta), (b, tb)):
        if not is_t and not isinstance(v, (bool, int, float, complex, np.generic)):
            raise _core.NotAnOperand(f"unsupported operand type {type(v).__name__}")
    if not (ta or tb):
        raise TypeError("at least one operand must be a hipfer Tensor")
    if ta and tb:
        return a, b, _dtypes._result_type((a.dtype, b.dtype))
    t, s = (a, b) if ta else (b, a)
    if isinstance(s, np.generic):
        dt = _dtypes._result_type((t.dtype, s.dtype))
    else:
        dt = _dtypes.scalar_type(t.dtype, s)
    s = hf.full((), s, dtype=dt, device=t.device)
    return (t, s, dt) if ta else (s, t, dt)


def _general_cast(x, dt):
    return x if x.dtype == dt else Tensor(_ops.run(d.PointwiseCast(dt), [x]))


def _general_binary(name, x1, x2):
    op = E._BINARY.get(name) or E._SWAPPED[name]
    a, b = (x2, x1) if name in E._SWAPPED else (x1, x2)
    row = op.row
    if op in E._COMPARISONS:  # an int beyond the dtype: NumPy 2's constant answer
        const = E._beyond_range(op, a, b)
        if const is not None:
            return const
    a, b, dt = _general_operands(a, b)
    if dt.kind not in row.kinds and dt.kind in "biu" and "f" in row.kinds and "i" not in row.kinds:
        dt = _dtypes.default_float
    if dt.kind not in row.kinds:
        raise TypeError(f"{name}() does not support dtype {dt}")
    desc = E._BINARY_DESC[row.family](op)
    return Tensor(_ops.run(desc, [_general_cast(a, dt), _general_cast(b, dt)], called=name))


def _general_unary(name, x):
    op = E._UNARY[name]
    row = op.row
    if x.dtype.kind not in row.kinds and row.family == "analytic" and x.dtype.kind in "biu":
        x = _general_cast(x, _dtypes.default_float)
    if x.dtype.kind not in row.kinds:
        raise TypeError(f"{name}() does not support dtype {x.dtype}")
    return Tensor(_ops.run(E._UNARY_DESC[row.family](op), [x], called=name))


def _outcome(fn, *args):
    """('ok', dtype, shape, conj, bytes of the resolved data) or ('error', type, message)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning either path emits fails the test
        try:
            r = fn(*args)
        except Exception as e:  # noqa: BLE001 - the exception is the outcome compared
            return ("error", type(e), str(e))
    host = np.ascontiguousarray(r.resolve_conj()._host()) if r.size else np.empty(r.shape, r.dtype)
    return ("ok", r.dtype, r.shape, r.is_conj(), host.tobytes())


def _same(fast, general, *args):
    got, want = _outcome(fast, *args), _outcome(general, *args)
    assert got == want, f"{args!r}: fast path {got!r}, general path {want!r}"
    return got


def _t(be, x, conj=False):
    return Tensor(be.asarray(x), conj)


def _data(rng, dt, shape):
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        return rng.integers(0, 9, size=shape).astype(dt)
    x = rng.standard_normal(shape) * 3
    if dt.kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return np.asarray(x).astype(dt)


# ------------------------------------------------------------------------ binary
@pytest.mark.parametrize("name", BINARY)
def test_tensor_pairs_every_dtype(be, rng, name):
    """Same dtypes (the fast path) and mixed dtypes (promotion) against the general path,
    errors included (uint64 with a signed type, float bitwise_and, ...)."""
    fast = getattr(hf, name)
    for da in DTYPES:
        for db in DTYPES:
            a, b = _t(be, _data(rng, da, (5,))), _t(be, _data(rng, db, (5,)))
            _same(fast, lambda x, y: _general_binary(name, x, y), a, b)


@pytest.mark.parametrize("name", ["add", "multiply", "subtract", "divide", "less", "pow",
                                  "maximum", "bitwise_and", "copysign"])
def test_python_and_numpy_scalars(be, rng, name):
    """Weak Python scalars (the fast path when they keep the tensor's dtype), scalars that
    promote, out-of-range ints (OverflowError), -0.0, NaN, NumPy scalars -- on both sides."""
    fast = getattr(hf, name)
    for dt in DTYPES:
        x = _t(be, _data(rng, dt, (4,)))
        for s in SCALARS:
            _same(fast, lambda u, v: _general_binary(name, u, v), x, s)
            _same(fast, lambda u, v: _general_binary(name, u, v), s, x)


def test_negative_zero_and_nan_scalars_keep_their_bits(be):
    x = _t(be, np.array([1.0, -2.0, 0.0], np.float64))
    assert np.signbit(hf.copysign(x, -0.0)._host()).all()
    assert not np.signbit(hf.copysign(x, 0.0)._host()).any()
    assert np.isnan(hf.add(x, math.nan)._host()).all()
    z = hf.multiply(_t(be, np.array([1.0], np.float32)), -0.0)
    assert z.dtype == np.float32 and np.signbit(z._host()).all()


@pytest.mark.parametrize("name", ["add", "multiply", "subtract", "less", "divide"])
def test_layouts_and_shapes(be, rng, name):
    """0-d, empty, broadcast, stepped, reversed and transposed operands, and their mixes."""
    fast = getattr(hf, name)
    general = lambda u, v: _general_binary(name, u, v)  # noqa: E731
    dt = np.dtype(np.float32)
    big = _t(be, _data(rng, dt, (6, 8)))
    views = {
        "0d": _t(be, _data(rng, dt, ())),
        "empty": _t(be, _data(rng, dt, (0, 4))),
        "row": _t(be, _data(rng, dt, (4,))),
        "col": _t(be, _data(rng, dt, (3, 1))),
        "contig": _t(be, _data(rng, dt, (3, 4))),
        "step": big[::2, ::2],
        "reversed": big[:3, ::-1][:, :4],
        "transposed": _t(be, _data(rng, dt, (4, 3))).mT,
    }
    for a in views.values():
        for b in views.values():
            _same(fast, general, a, b)
        _same(fast, general, a, 2.5)
        _same(fast, general, 3, a)
    with pytest.raises(ValueError):
        fast(views["contig"], _t(be, _data(rng, dt, (5,))))


@pytest.mark.parametrize("name", ["add", "multiply", "subtract", "divide", "pow"])
def test_conjugation_flags(be, rng, name):
    """Lazily conjugated complex operands, alone, both, with scalars, with real tensors."""
    fast = getattr(hf, name)
    general = lambda u, v: _general_binary(name, u, v)  # noqa: E731
    for dt in (np.dtype(np.complex64), np.dtype(np.complex128)):
        x, y = _data(rng, dt, (2, 3)), _data(rng, dt, (2, 3))
        for cx in (False, True):
            for cy in (False, True):
                a, b = _t(be, x, cx), _t(be, y, cy)
                _same(fast, general, a, b)
                _same(fast, general, a, 1 - 2j)
                _same(fast, general, 0.5, b)
                _same(fast, general, a, _t(be, _data(rng, np.dtype(np.float32), (3,))))
                _same(fast, general, a, b[:, ::-1])


def test_operators_and_reflection(be, rng):
    x = _t(be, _data(rng, np.dtype(np.int16), (4,)))
    f = _t(be, _data(rng, np.dtype(np.float32), (4,)))
    for got, want in [(x + 1, _general_binary("add", x, 1)),
                      (1 - x, _general_binary("subtract", 1, x)),
                      (2.0 * f, _general_binary("multiply", 2.0, f)),
                      (x < 3, _general_binary("less", x, 3)),
                      (3 < x, _general_binary("less", 3, x)),
                      (f / x, _general_binary("divide", f, x)),
                      (x ** 2, _general_binary("pow", x, 2))]:
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got._host(), want._host())
    with pytest.raises(TypeError):
        x + "a"
    with pytest.raises(TypeError):  # (a list of numbers is an operand since issue 20)
        x + ["a"]
    with pytest.raises(TypeError):
        x + None
    with pytest.raises(OverflowError):
        x + 2**20
    y = hf.asarray(be.asnumpy(x._data).copy(), device=be.device)
    y += 1
    np.testing.assert_array_equal(y._host(), x._host() + 1)
    with pytest.raises(TypeError):
        y += 1.5  # in-place does not promote


# ------------------------------------------------------------------------- unary
@pytest.mark.parametrize("name", ["negative", "exp", "abs", "sqrt", "sin", "square",
                                  "bitwise_invert", "logical_not", "floor", "isnan"])
def test_unary_every_dtype(be, rng, name):
    """Unary functions: supported kinds run as they are, integer inputs of analytic ops
    are cast to float64 first, unsupported dtypes raise -- as the general path does."""
    fast = getattr(hf, name)
    for dt in DTYPES:
        x = _data(rng, dt, (2, 3))
        for t in (_t(be, x), _t(be, x)[:, ::-1], _t(be, x).mT, _t(be, x[0, 0])):
            _same(fast, lambda u: _general_unary(name, u), t)
        if dt.kind == "c":
            _same(fast, lambda u: _general_unary(name, u), _t(be, x, True))
    with pytest.raises(TypeError):
        fast([1.0, 2.0])


def test_astype_and_where(be, rng):
    x = _t(be, _data(rng, np.dtype(np.complex64), (3,)), True)
    for dt in DTYPES:
        got, want = _core.cast(x, dt), _general_cast(x, dt)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got._host(), want._host())
    cond = _t(be, np.array([True, False, True]))
    a = _t(be, np.array([1, 2, 3], np.int8))
    np.testing.assert_array_equal(hf.where(cond, a, 300.5)._host(), [1, 300.5, 3])
    assert hf.where(cond, a, 7).dtype == np.int8


# ------------------------------------------------------------- caches and helpers
def test_site_plans_are_the_backend_plans_and_clear_together(be, rng):
    """A Site files the very Plan that Backend.plan made and cached; clearing the plan
    cache clears the site table too, so a re-planned call (e.g. after loading a
    contraction library) is never served a stale plan."""
    B = be.backend
    a, b = _t(be, _data(rng, np.dtype(np.float64), (7,))), _t(be, _data(rng, np.dtype(np.float64), (7,)))
    add = getattr(hf.add, "__wrapped__", hf.add)  # the Python path (the CPU's warm path plans nothing)
    add(a, b)
    site = next(c.cell_contents for c in add.__closure__
                if isinstance(c.cell_contents, _ops.Site))
    plans = [v.plan for k, v in B.plans.sites.items() if k[0] is site]  # Backend.runner(plan)
    assert plans
    strides = (a._data.strides, b._data.strides) if B.wants_strides else None
    assert B.plan(site.desc, (a.dtype, b.dtype), (a.shape, b.shape), strides=strides) in plans
    B.plans.clear()
    assert len(B.plans) == 0 and not B.plans.sites
    np.testing.assert_array_equal(add(a, b)._host(), a._host() + b._host())
    assert B.plans.sites


def test_result_type_memo_matches_the_rules():
    """The memo answers as the general rules do for every pair and some triples (errors
    are never remembered: they raise every time), with dtypes, tensors, NumPy scalars."""
    for a in _dtypes.ALL_DTYPES:
        for b in _dtypes.ALL_DTYPES:
            for args in ((a, b), (b, a), (a, b, a)):
                try:
                    want = _dtypes._result_type(args)
                except TypeError as e:
                    for _ in range(2):
                        with pytest.raises(TypeError, match=str(e)[:20]):
                            _dtypes.result_type(*args)
                    continue
                for _ in range(2):
                    assert _dtypes.result_type(*args) is want
    t8 = hf.asarray(np.ones(2, np.int8))
    assert _dtypes.result_type(t8, np.float32) == np.float32  # a class: not memoised
    assert _dtypes.result_type(t8, 1.5) == np.float64
    assert _dtypes.result_type(t8, 1) == np.int8
    assert _dtypes.result_type(t8, np.int16(1)) == np.int16
    with pytest.raises(OverflowError):
        _dtypes.result_type(t8, 1000)
    with pytest.raises(TypeError):
        _dtypes.result_type(1, 2.0)
    with pytest.raises(TypeError):
        _dtypes.result_type(np.dtype(">f8"))
    with pytest.raises(TypeError):
        _dtypes.result_type()


def test_scalar_type_bounds():
    for dt in _dtypes.ALL_DTYPES:
        if dt.kind not in "iu":
            continue
        info = np.iinfo(dt)
        assert _dtypes.scalar_type(dt, int(info.min)) is dt
        assert _dtypes.scalar_type(dt, int(info.max)) is dt
        with pytest.raises(OverflowError):
            _dtypes.scalar_type(dt, int(info.max) + 1)
        with pytest.raises(OverflowError):
            _dtypes.scalar_type(dt, int(info.min) - 1)


def test_numpy_fp_errors_ignored_and_state_restored():
    """The NumPy backend's cheap errstate: no warning from x / 0, and the caller's
    error state (including 'raise' and the buffer size) is back afterwards, also when
    the guarded call raises."""
    from hipfer.backends.numpy._common import fp_ignore, fp_restore
    x = hf.asarray(np.array([1.0, 0.0, -1.0]), device="cpu")
    z = hf.asarray(np.zeros(3), device="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = hf.divide(x, z)
        hf.exp(hf.asarray(np.array([1000.0]), device="cpu"))
    assert np.isinf(r._host()[0]) and np.isnan(r._host()[1])
    with np.errstate(divide="raise", over="warn", invalid="call"):
        before = np.geterr()
        hf.divide(x, z)
        assert np.geterr() == before
        tok = fp_ignore()
        try:
            assert set(np.geterr().values()) == {"ignore"}
        finally:
            fp_restore(tok)
        assert np.geterr() == before
        with pytest.raises(ZeroDivisionError):
            tok = fp_ignore()
            try:
                1 / 0
            finally:
                fp_restore(tok)
        assert np.geterr() == before
        with pytest.raises(FloatingPointError):
            np.divide(np.ones(1), np.zeros(1))
    size = np.getbufsize()
    try:
        np.setbufsize(16384)
        tok = fp_ignore()
        try:
            assert np.getbufsize() == 16384
        finally:
            fp_restore(tok)
    finally:
        np.setbufsize(size)


def test_backend_of(be):
    t = _t(be, np.ones(3))
    assert _ops.backend_of_data(t._data) is be.backend
    assert _ops.backend_of([t, t]) is be.backend
    assert _ops.backend_of([]) is get_backend(get_default_device())
    assert t.device == be.device
    if be.name == "cupy":
        c = hf.asarray(np.ones(3), device="cpu")
        with pytest.raises(ValueError, match="different devices"):
            hf.add(t, c)
        with pytest.raises(ValueError, match="different devices"):
            hf.add(c, t)


# ------------------------------------------------- output layout (NumPy's order='K')
def _axis_order(a):
    """Axes longer than 1, outermost first by |stride| (the memory order)."""
    st = a._data.strides
    big = [i for i, n in enumerate(a.shape) if n > 1]
    return sorted(big, key=lambda i: -abs(st[i]))


@pytest.mark.parametrize("perm", [(1, 0), (2, 0, 1), (0, 2, 1), (2, 1, 0)])
def test_elementwise_output_keeps_the_operand_layout(be, rng, perm):
    """An elementwise result is laid out like its full-size operands when they agree (as
    NumPy's default order='K' does), so a permuted operand streams in memory order; when
    they disagree the result is C-ordered, as NumPy's is. The values are NumPy's, whatever
    the layout."""
    shape = (3, 5, 4)[: len(perm)]
    base = _data(rng, np.dtype(np.float32), tuple(shape[i] for i in np.argsort(perm)))
    x = _t(be, base).permute_dims(perm) if hasattr(Tensor, "permute_dims") else hf.permute_dims(_t(be, base), perm)
    xh = base.transpose(perm)
    other = _data(rng, np.dtype(np.float32), x.shape)
    same = hf.permute_dims(_t(be, np.ascontiguousarray(other.transpose(np.argsort(perm)))), perm)
    for got, want in ((hf.exp(x), np.exp(xh)), (hf.add(x, same), xh + same._host()),
                      (x * 2.0, xh * np.float32(2.0)), (hf.astype(x, hf.float64), xh.astype(np.float64))):
        np.testing.assert_allclose(got._host(), want, rtol=2e-7, atol=0)  # exp: the device's libm
        assert _axis_order(got) == _axis_order(x)
        assert got._data.flags.c_contiguous or got._data.flags.f_contiguous or len(perm) > 2
    # full-size operands in different layouts: C order, either way round (as NumPy)
    for c, want in ((hf.add(_t(be, other), x), other + xh), (hf.add(x, _t(be, other)), xh + other)):
        assert c._data.flags.c_contiguous and want.flags.c_contiguous
        np.testing.assert_array_equal(c._host(), want)


def test_elementwise_output_layout_ignores_broadcast_views(be, rng):
    """A stride-0 (broadcast) operand or a size-1 axis does not make a permuted output."""
    v = _t(be, _data(rng, np.dtype(np.float64), (1, 6)))
    wide = hf.broadcast_to(v, (4, 6))
    r = hf.exp(wide)
    assert r._data.flags.c_contiguous
    np.testing.assert_array_equal(r._host(), np.exp(np.broadcast_to(v._host(), (4, 6))))
    col = _t(be, _data(rng, np.dtype(np.float64), (6, 1))).mT  # (1, 6), a size-1 axis
    assert hf.negative(col)._data.flags.c_contiguous
    assert _ops.layout_perm((4, 6), [wide._data]) is None
    assert _ops.layout_perm((6,), [v._data]) is None


# ------------------------------------------------------------- the scalar cache
def test_cached_scalar_operands(be, rng):
    """Python scalars as operands: the same value gives the same bits however often it
    is used, and values that compare equal but differ (-0.0 / 0.0, True / 1, 1 / 1.0)
    never share a cached device scalar."""
    x = _t(be, _data(rng, np.dtype(np.float64), (5,)))
    xh = x._host()
    for _ in range(3):
        np.testing.assert_array_equal((x * 2.0)._host(), xh * 2.0)
        assert np.signbit(hf.copysign(x, -0.0)._host()).all()
        assert not np.signbit(hf.copysign(x, 0.0)._host()).any()
    i = _t(be, np.arange(5, dtype=np.int8))
    assert (i + True).dtype == np.int8 and (i + 1).dtype == np.int8
    b = _t(be, np.array([True, False]))
    np.testing.assert_array_equal((b & True)._host(), [True, False])
    np.testing.assert_array_equal((b | 1 if False else b | True)._host(), [True, True])
    c = _t(be, np.array([1 + 1j], np.complex64))
    np.testing.assert_array_equal((c * complex(0.0, -0.0))._host(), c._host() * np.complex64(complex(0.0, -0.0)))
    assert be.backend.caches_scalars  # both backends: making the 0-d array is host time
    keys = [k for k in _core._SCALARS if k[0] is be.backend]
    assert any(k[3] == 0.0 and k[4] == (-1.0,) for k in keys)
    assert any(k[3] == 0.0 and k[4] == (1.0,) for k in keys)
    if be.name == "numpy":  # a stray write into a cached scalar raises
        assert all(not _core._SCALARS[k]._data.flags.writeable for k in keys)
    # in-place updates read a cached scalar and write only their target
    y = _t(be, xh.copy())
    y *= 2.0
    y += 2.0
    np.testing.assert_array_equal(y._host(), xh * 2.0 + 2.0)
    np.testing.assert_array_equal((x * 2.0)._host(), xh * 2.0)


# ---------------------------------------------------------- reduction sites
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2), [2, 0], (), (-3, -1)])
def test_reduction_sites(be, rng, axis):
    """sum / max / var through the cached reduction sites equal NumPy's, for every way of
    naming the axes (a list is not cached, and still works), with keepdims."""
    xh = _data(rng, np.dtype(np.float64), (3, 4, 5))
    x = _t(be, xh)
    ax = tuple(axis) if isinstance(axis, list) else axis
    for _ in range(2):
        np.testing.assert_allclose(hf.sum(x, axis=axis)._host(), xh.sum(axis=ax), rtol=1e-12)
        np.testing.assert_array_equal(hf.max(x, axis=axis, keepdims=True)._host(), xh.max(axis=ax, keepdims=True))
        np.testing.assert_allclose(hf.var(x, axis=axis, correction=1)._host(), xh.var(axis=ax, ddof=1), rtol=1e-12)
    with pytest.raises(IndexError):
        hf.sum(x, axis=3)
    with pytest.raises(ValueError):
        hf.sum(x, axis=(0, 0))
