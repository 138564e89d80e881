"""hipfer.fuse: fused results against the same function run eagerly, on each backend.

Elementwise results must be bitwise equal to eager (every op row of the table, every
dtype it accepts, special values, broadcast, non-contiguous and conj-flagged operands,
0-d and empty); reductions within the rounding bound and repeatable; the trace and
program caches; the trace-time errors; the CPU evaluator's block boundaries."""
import numpy as np
import pytest

import hipfer as hf
from hipfer import _elementwise
from hipfer._fuse import _cpu
from hipfer.prims.optable import UnaryOp

from _util import ACC_RTOL, ALL_DTYPES, COMPLEX, FLOATS, ids, random_array


def _np(be, t):
    return be.asnumpy(t)


def assert_bits(be, actual, expected):
    """Same dtype, shape and bytes (signed zeros included); NaN in the same places, with
    any sign and payload (IEEE leaves a NaN's sign to the instruction order, which the
    GPU compiler chooses per kernel: 0 * log(-1) came back as -NaN eagerly, +NaN fused)."""
    assert isinstance(actual, hf.Tensor)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    a, e = np.array(_np(be, actual)), np.array(_np(be, expected))
    if a.dtype.kind in "fc":
        for part_a, part_e in ((a.real, e.real), (a.imag, e.imag)) if a.dtype.kind == "c" \
                else ((a, e),):
            nan = np.isnan(part_e)
            assert np.array_equal(np.isnan(part_a), nan), (a, e)
            part_a[nan] = part_e[nan] = 0
    assert a.tobytes() == np.ascontiguousarray(e).tobytes(), (a, e)


def eager_or_error(fn, *args):
    try:
        return fn(*args), None
    except (TypeError, ValueError, OverflowError) as e:
        return None, type(e)


def check_same(be, fn, *args):
    """fuse(fn)(*args) is eager fn(*args), bit for bit, or raises the same kind of error."""
    want, err = eager_or_error(fn, *args)
    fused = hf.fuse(fn)
    if err is not None:
        with pytest.raises(err):
            fused(*args)
        return None
    got = fused(*args)
    assert_bits(be, got, want)
    return got


def _operand(be, rng, shape, dt, layout="strided"):
    """A tensor of shape and dtype with special values, laid out as asked."""
    if layout == "contiguous":
        return hf.asarray(be.asarray(random_array(rng, shape, dt, special=True)))
    big = random_array(rng, tuple(2 * n for n in shape[::-1]), dt, special=True)
    t = hf.asarray(be.asarray(big))[tuple(slice(None, None, 2) for _ in shape)]
    return hf.permute_dims(t, tuple(reversed(range(len(shape))))) if len(shape) > 1 else t


UNARY = sorted(_elementwise._UNARY)
BINARY = sorted(_elementwise._BINARY) + sorted(_elementwise._SWAPPED)


# ----------------------------------------------------------- every op row, every dtype
@pytest.mark.parametrize("dt", ALL_DTYPES, ids=ids(ALL_DTYPES))
@pytest.mark.parametrize("name", UNARY)
def test_unary_rows_bitwise(be, rng, name, dt):
    f = getattr(hf, name)
    x = _operand(be, rng, (4, 5), dt)
    check_same(be, lambda a: f(a), x)
    if dt.kind == "c":  # the conj flag folded at load
        check_same(be, lambda a: f(a), hf.conj(x))


@pytest.mark.parametrize("dt", ALL_DTYPES, ids=ids(ALL_DTYPES))
@pytest.mark.parametrize("name", BINARY)
def test_binary_rows_bitwise(be, rng, name, dt):
    f = getattr(hf, name)
    x = _operand(be, rng, (3, 1, 4), dt, "contiguous")
    y = _operand(be, rng, (5, 4), dt)  # broadcast against x, non-contiguous
    if dt.kind in "iu" and name in ("bitwise_left_shift", "bitwise_right_shift", "pow"):
        y = hf.asarray(be.asarray(rng.integers(0, 9, (5, 4)).astype(dt)))
    check_same(be, lambda a, b: f(a, b), x, y)
    if dt.kind == "c":
        check_same(be, lambda a, b: f(a, b), hf.conj(x), y)


@pytest.mark.parametrize("scalar", [True, 3, -2.5, 1.5 - 2j], ids=["bool", "int", "float", "complex"])
@pytest.mark.parametrize("dt", ALL_DTYPES, ids=ids(ALL_DTYPES))
@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "maximum", "pow",
                                  "greater", "less_equal", "equal", "remainder", "bitwise_xor",
                                  "atan2", "copysign", "logaddexp"])
def test_weak_scalars(be, rng, name, dt, scalar):
    """Python scalars are weak, as a literal and as an argument (its value per call)."""
    f = getattr(hf, name)
    x = _operand(be, rng, (6,), dt)
    check_same(be, lambda a: f(a, scalar), x)
    check_same(be, lambda a: f(scalar, a), x)
    check_same(be, lambda a, s: f(a, s), x, scalar)


@pytest.mark.parametrize("dt", FLOATS + COMPLEX, ids=ids(FLOATS + COMPLEX))
@pytest.mark.parametrize("shape", [(), (0,), (0, 3), (1,), (7,), (2, 3, 4)])
def test_shapes(be, rng, shape, dt):
    x = _operand(be, rng, shape, dt, "contiguous")
    y = _operand(be, rng, shape, dt)
    check_same(be, lambda a, b: hf.exp(a) * b - a / 3, x, y)


# ------------------------------------------------------------------------- chains
def damped(a, b, c, w, t):
    return a * hf.exp(-b * t) + c * hf.sin(w * t)


@pytest.mark.parametrize("dt", FLOATS, ids=ids(FLOATS))
def test_damped_chain(be, rng, dt):
    args = [_operand(be, rng, (33, 17), dt, "contiguous") for _ in range(4)]
    t = _operand(be, rng, (17,), dt)  # broadcast along the rows
    check_same(be, damped, *args, t)


@pytest.mark.parametrize("dt", ["int8", "uint8", "int32", "uint64"])
def test_integer_wraparound_chain(be, rng, dt):
    x = _operand(be, rng, (9, 4), np.dtype(dt))
    y = _operand(be, rng, (4,), np.dtype(dt), "contiguous")
    check_same(be, lambda a, b: (a * 3 + b) // 7 - (a % 5) * b, x, y)


@pytest.mark.parametrize("dt", ALL_DTYPES, ids=ids(ALL_DTYPES))
def test_where_astype_clip_compare(be, rng, dt):
    x = _operand(be, rng, (5, 6), dt)
    y = _operand(be, rng, (6,), dt, "contiguous")
    check_same(be, lambda a, b: hf.where(a > b, a, b * 2), x, y)
    check_same(be, lambda a, b: hf.where(a == b, 1.5, a).astype(hf.float32), x, y)
    check_same(be, lambda a: hf.astype(a, hf.int16) + hf.astype(a, hf.float16), x)
    check_same(be, lambda a: hf.clip(a, 0, 7), x)
    check_same(be, lambda a, b: hf.clip(a, b, None), x, y)
    check_same(be, lambda a, b: hf.logical_and(a != b, hf.isfinite(a)), x, y)


def test_mixed_dtypes_promote_as_eagerly(be, rng):
    a = _operand(be, rng, (4, 3), np.dtype(np.int8))
    b = _operand(be, rng, (3,), np.dtype(np.uint8))
    c = _operand(be, rng, (4, 3), np.dtype(np.float16))
    d = _operand(be, rng, (4, 3), np.dtype(np.complex64))
    check_same(be, lambda p, q, r, s: hf.sqrt(p + q) * r + s, a, b, c, d)
    check_same(be, lambda p, r: hf.exp(p) + np.float32(2) * r, a, c)  # a NumPy scalar: strong


@pytest.mark.parametrize("dt", ["float32", "int8", "uint16", "complex64", "bool"])
def test_numpy_scalar_arguments_are_strong(be, rng, dt):
    x = _operand(be, rng, (5,), np.dtype(dt))
    for s in (np.float64(2.5), np.int16(-3), np.float16(0.5), np.bool_(True)):
        check_same(be, lambda a, v: a * v, x, s)
        check_same(be, lambda a, v: hf.where(a == a, v, a), x, s)


def test_operators_and_numpy_functions(be, rng):
    x = _operand(be, rng, (8,), np.dtype(np.float32))
    y = _operand(be, rng, (8,), np.dtype(np.float32))
    check_same(be, lambda a, b: -(a ** 2) + abs(b) / (1 + a * a) - (a >= b) * 2.0, x, y)
    got = hf.fuse(lambda a, b: np.exp(a) + np.arctan2(a, b))(x, y)  # NumPy's names reach hf
    assert_bits(be, got, hf.exp(x) + hf.atan2(x, y))
    i = _operand(be, rng, (8,), np.dtype(np.int32))
    check_same(be, lambda a: (~a & 0xF0) | (a << 2) ^ (a >> 1), i)


# --------------------------------------------------------------------- reductions
_REDUCERS = {"sum": hf.sum, "prod": hf.prod, "max": hf.max, "min": hf.min, "mean": hf.mean}


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2), 1])
@pytest.mark.parametrize("op", sorted(_REDUCERS))
@pytest.mark.parametrize("dt", ["float32", "float64", "float16", "int16", "bool", "complex64"])
def test_reduction_tail(be, rng, dt, op, axis, keepdims):
    red = _REDUCERS[op]
    dt = np.dtype(dt)
    x = _operand(be, rng, (6, 5, 7), dt, "contiguous")
    if dt.kind == "f":
        x = hf.abs(x) * 0.1 + 0.9 if op == "prod" else x
        x = hf.where(hf.isfinite(x), x, 1.0)
    y = _operand(be, rng, (5, 1), dt)

    def fn(a, b):
        return red(a * b if dt.kind != "b" else a & b, axis=axis, keepdims=keepdims)
    want, err = eager_or_error(fn, x, y)
    fused = hf.fuse(fn)
    if err is not None:
        with pytest.raises(err):
            fused(x, y)
        return
    got = fused(x, y)
    assert got.dtype == want.dtype and got.shape == want.shape
    w = _np(be, want)
    g = _np(be, got)
    if w.dtype.kind in "fc":
        tol = ACC_RTOL[np.dtype(w.dtype.char.lower() if w.dtype.kind == "c" else w.dtype)] \
            if w.dtype.kind == "f" else 1e-5
        np.testing.assert_allclose(g, w, rtol=tol * 10, atol=tol * 10)
    else:
        np.testing.assert_array_equal(g, w)
    again = fused(x, y)
    assert _np(be, again).tobytes() == g.tobytes()  # deterministic


def test_reduction_empty_and_errors(be):
    e = hf.asarray(be.asarray(np.zeros((0, 3), np.float32)))
    assert float(hf.fuse(lambda a: hf.sum(a * 2))(e)) == 0.0
    assert np.isnan(float(hf.fuse(lambda a: hf.mean(a + 1))(e)))
    assert hf.fuse(lambda a: hf.sum(a, axis=0))(e).shape == (3,)
    with pytest.raises(ValueError):
        hf.fuse(lambda a: hf.max(a * 2))(e)
    with pytest.raises(TypeError, match="complex"):
        hf.fuse(lambda a: hf.max(a))(hf.asarray(be.asarray(np.ones(3, np.complex64))))
    with pytest.raises(np.exceptions.AxisError):
        hf.fuse(lambda a: hf.sum(a, axis=2))(e)


@pytest.mark.parametrize("n", [1, 5, 1027, 3 * 2048 + 13, 262147])
@pytest.mark.parametrize("op", ["sum", "max", "mean"])
def test_full_reduction_ignores_layout(be, rng, n, op):
    """The same values dense and aligned (vector loads on the GPU), dense at an odd
    offset and strided fold in the same order: one result, bit for bit; within the
    rounding bound of the eager one."""
    red = _REDUCERS[op]
    big = random_array(rng, (2 * n + 2,), np.dtype(np.float32))
    v = big[1:n + 1]
    views = [hf.asarray(be.asarray(np.ascontiguousarray(v))),      # aligned
             hf.asarray(be.asarray(big))[1:n + 1]]                  # offset by 4 bytes
    strided = np.empty(2 * n, np.float32)
    strided[::2] = v
    views.append(hf.asarray(be.asarray(strided))[::2])               # element stride 2
    y = hf.asarray(be.asarray(np.float32([0.5])))
    fused = hf.fuse(lambda a, b: red(hf.exp(a * b) - a))
    got = [_np(be, fused(x, y)) for x in views]
    assert got[0].tobytes() == got[1].tobytes() == got[2].tobytes()
    want = _np(be, red(hf.exp(views[0] * y) - views[0]))
    np.testing.assert_allclose(got[0], want, rtol=1e-4 if op != "max" else 0)


@pytest.mark.parametrize("shape,axis", [((37, 300), 1), ((37, 300), 0), ((3, 40, 70), (1, 2)),
                                        ((3, 40, 70), (0, 2)), ((513, 2), -1), ((4100, 33), 1),
                                        ((4097, 300), -1),
                                        ((700, 3), 0), ((20, 300, 5), (0, 1))])
@pytest.mark.parametrize("op", ["sum", "max", "mean", "prod"])
def test_reduction_over_some_axes(be, rng, shape, axis, op):
    """Fused reductions over some axes (one thread or one block per output on the GPU)
    against eager, on a strided operand broadcast against a row; repeatable."""
    red = _REDUCERS[op]
    x = _operand(be, rng, shape, np.dtype(np.float64))
    x = hf.where(hf.isfinite(x), x, 0.5)
    y = hf.asarray(be.asarray(random_array(rng, shape[-1:], np.dtype(np.float64))))
    if op == "prod":
        x, y = hf.abs(x) * 0.01 + 0.995, hf.abs(y) * 0.01 + 0.995

    def fn(a, b):
        return red(a * b + a, axis=axis, keepdims=True)
    fused = hf.fuse(fn)
    got = fused(x, y)
    want = fn(x, y)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(_np(be, got), _np(be, want), rtol=1e-12, atol=1e-12)
    assert _np(be, fused(x, y)).tobytes() == _np(be, got).tobytes()


@pytest.mark.parametrize("shape", [(9, 70), (5, 300), (4096, 40)])
@pytest.mark.parametrize("op", ["sum", "max", "prod"])
@pytest.mark.parametrize("dt", ["float16", "float32", "complex128", "int16", "bool"])
def test_row_reductions_every_accumulator(be, rng, dt, op, shape):
    """Rows reduced on the GPU's group (32 lanes, a shuffle tree) and block paths, for
    accumulators of 1 to 16 bytes: within the rounding bound of eager (exact for integers,
    bools and max); repeatable."""
    dt = np.dtype(dt)
    if op == "max" and dt.kind == "c":
        return
    red = _REDUCERS[op]
    x = _operand(be, rng, shape, dt, "contiguous")
    if dt.kind in "fc":
        x = hf.where(hf.isfinite(x), x, 0.5)
        if op == "prod":
            x = hf.abs(x) * 0.01 + 0.995
            x = x.astype(dt) if dt.kind == "c" else x

    def fn(a):
        return red(a * a if dt.kind != "b" else a & a, axis=-1)
    want, err = eager_or_error(fn, x)
    fused = hf.fuse(fn)
    if err is not None:
        with pytest.raises(err):
            fused(x)
        return
    got = fused(x)
    assert got.dtype == want.dtype and got.shape == want.shape
    w, g = _np(be, want), _np(be, got)
    if w.dtype.kind in "fc" and op != "max":
        tol = ACC_RTOL[np.dtype(w.dtype.char.lower())]
        np.testing.assert_allclose(g, w, rtol=tol * 10, atol=tol * 10)
    else:
        np.testing.assert_array_equal(g, w)
    assert _np(be, fused(x)).tobytes() == g.tobytes()


def test_method_reductions(be, rng):
    x = _operand(be, rng, (10, 4), np.dtype(np.float64))
    got = hf.fuse(lambda a: (a * a).sum(axis=1))(x)
    np.testing.assert_allclose(_np(be, got), _np(be, hf.sum(x * x, axis=1)), rtol=1e-12)


# -------------------------------------------------- the CPU evaluator's blocks
@pytest.fixture
def tiny_blocks(monkeypatch):
    monkeypatch.setattr(_cpu, "BLOCK_BYTES", 200)  # a few elements a block
    monkeypatch.setattr(_cpu, "THREAD_MIN", 1)     # and the thread pool for all


@pytest.mark.parametrize("shape", [(1001,), (7, 13, 5), (3, 1, 37), (2, 3, 4, 5)])
def test_block_boundaries(tiny_blocks, rng, shape):
    be = _Np()
    x = _operand(be, rng, shape, np.dtype(np.float32))
    y = _operand(be, rng, shape[-1:], np.dtype(np.float32), "contiguous")
    c = _operand(be, rng, shape, np.dtype(np.float32), "contiguous")
    check_same(be, lambda a, b: hf.exp(-a * b) + b, x, y)
    check_same(be, lambda a, b: hf.sin(a) * 3 - a, c, y)
    for axis in [None, 0, -1, tuple(range(len(shape)))[1:] or None]:
        want = hf.sum(hf.exp(-x * y) + y, axis=axis)
        got = hf.fuse(lambda a, b: hf.sum(hf.exp(-a * b) + b, axis=axis))(x, y)
        np.testing.assert_allclose(_np(be, got), _np(be, want), rtol=1e-4, atol=1e-4)
        got2 = hf.fuse(lambda a, b: hf.max(a * b, axis=axis, keepdims=True))(x, y)
        assert_bits(be, got2, hf.max(x * y, axis=axis, keepdims=True))  # max is exact


class _Np:
    name = "numpy"

    @staticmethod
    def asarray(a):
        return np.asarray(a)

    @staticmethod
    def asnumpy(t):
        return np.asarray(t, copy=True) if isinstance(t, hf.Tensor) else np.asarray(t)


# ------------------------------------------------------------------------ the cache
def test_cache_traces_and_compiles_once(be, rng):
    f = hf.fuse(damped)
    args = [_operand(be, rng, (5, 4), np.dtype(np.float32), "contiguous") for _ in range(5)]
    f(*args)
    f(*args)
    other = [_operand(be, rng, (9, 2), np.dtype(np.float32), "contiguous") for _ in range(5)]
    f(*other)  # another shape of the same ndim and broadcast pattern
    assert f.stats == {"traces": 1, "compiles": 1}
    f(*args[:4], _operand(be, rng, (1, 4), np.dtype(np.float32)))  # a broadcast dim
    assert f.stats == {"traces": 1, "compiles": 2}
    f(*[a.astype(hf.float64) for a in args])
    assert f.stats["traces"] == 2


def test_new_scalar_value_does_not_retrace(be, rng):
    f = hf.fuse(lambda a, s: a * s + 1)
    x = _operand(be, rng, (6,), np.dtype(np.float32))
    for s in (2.0, -3.5, float("nan"), -0.0):
        assert_bits(be, f(x, s), x * s + 1)
    assert f.stats == {"traces": 1, "compiles": 1}
    assert_bits(be, f(x, 2), x * 2 + 1)  # an int: another weak type, another trace
    assert f.stats["traces"] == 2
    with pytest.raises(OverflowError):
        hf.fuse(lambda a, s: a + s)(hf.astype(x, hf.int8), 1000)


def test_eager_functions_restored_after_a_trace(rng):
    before = {n: getattr(hf, n) for n in ("exp", "add", "sort", "sum", "where")}
    x = hf.asarray(rng.standard_normal(4))
    hf.fuse(lambda a: hf.exp(a) + hf.where(a > 0, a, 0.0))(x)
    with pytest.raises(TypeError):
        hf.fuse(lambda a: hf.sort(a))(x)
    assert {n: getattr(hf, n) for n in before} == before


def test_decorator_and_identity(be, rng):
    @hf.fuse
    def f(a, b):
        return hf.tanh(a) * b
    x = _operand(be, rng, (3, 4), np.dtype(np.float64))
    assert_bits(be, f(x, x), hf.tanh(x) * x)
    assert f.__name__ == "f"
    assert hf.fuse(lambda a: a)(x) is x  # the argument itself, as eagerly


def test_no_host_copy(refuse_host, rng):
    x = hf.asarray(rng.standard_normal((50, 3)).astype(np.float32))
    got = hf.fuse(damped)(x, x, x, x, x)
    assert isinstance(got, hf.Tensor)
    assert isinstance(hf.fuse(lambda a: hf.sum(a * a, axis=0))(x), hf.Tensor)


# ------------------------------------------------------------------------ errors
@pytest.mark.parametrize("fn,match", [
    (lambda a: hf.sort(a), "sort is not elementwise"),
    (lambda a: hf.matmul(a, a), "matmul is not elementwise"),
    (lambda a: a @ a, "matmul is not elementwise"),
    (lambda a: a[0], "indexing"),
    (lambda a: a if a > 0 else -a, "control flow"),
    (lambda a: float(a) + a, "control flow"),
    (lambda a: hf.reshape(a, (-1,)), "reshape is not elementwise"),
    (lambda a: hf.linalg.vector_norm(a), "linalg.vector_norm is not elementwise"),
    (lambda a: hf.sum(a) + 1, "reduction can only end"),
    (lambda a: a.shape, "shape is not known"),
    (lambda a: np.sort(a), "sort is not elementwise"),
    (lambda a: 3, "must return one tensor"),
])
def test_trace_time_errors(fn, match):
    x = hf.asarray(np.arange(6.0).reshape(2, 3))
    with pytest.raises(TypeError, match=match) as info:
        hf.fuse(fn)(x)
    assert str(info.value).startswith("hipfer.fuse:")
    assert "Scalar" not in str(info.value) and "Descriptor" not in str(info.value)


def test_dtype_queries_run_during_a_trace(rng):
    x = hf.asarray(rng.standard_normal(5).astype(np.float32))
    i = hf.asarray(rng.integers(0, 9, 5).astype(np.int16))

    def fn(a, b):
        dt = hf.result_type(a, b)
        eps = float(hf.finfo(dt).eps)
        return hf.astype(b, dt) * eps + a
    assert_bits(_Np(), hf.fuse(fn)(x, i), fn(x, i))


def test_other_errors():
    x = hf.asarray(np.arange(6.0))
    captured = hf.asarray(np.ones(6))
    with pytest.raises(TypeError, match="captured"):
        hf.fuse(lambda a: a + captured)(x)
    with pytest.raises(TypeError, match="argument 0"):
        hf.fuse(lambda a: a)(np.ones(3))
    with pytest.raises(TypeError, match="at least one Tensor"):
        hf.fuse(lambda a: a)(1.0)
    with pytest.raises(TypeError, match="expects a function"):
        hf.fuse(3)
    with pytest.raises(ValueError, match="broadcast"):
        hf.fuse(lambda a, b: a + b)(x, hf.asarray(np.ones(4)))
    with pytest.raises(TypeError, match="does not support dtype"):
        hf.fuse(lambda a: hf.bitwise_invert(a))(x)
    with pytest.raises(TypeError, match="scalar argument"):
        hf.fuse(lambda a, s: a * (s * 2))(x, 2.0)


def test_rows_cover_the_table():
    """Every op row with a namespace function is traced by the tests above."""
    assert {op.row.api for op in UnaryOp if op.row.api} <= set(UNARY)


NUMPY_NAMED = ["arccos", "arcsinh", "exp2", "spacing", "deg2rad", "rad2deg", "rint", "fix",
               "absolute", "fabs", "degrees", "true_divide", "arctan2", "power", "fmod",
               "fmax", "fmin", "heaviside", "logaddexp2", "mod"]


@pytest.mark.parametrize("name", NUMPY_NAMED)
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_numpy_named_functions_bitwise(be, name, dt):
    """NumPy's spellings (hipfer.arctan2, np.fmax(proxy), ...) trace to the same rows: the
    fused result is the eager one to the bit on floating operands."""
    rng = np.random.default_rng(9)
    x = hf.asarray(be.asarray((rng.standard_normal((5, 7)) * 0.7).astype(dt)))
    y = hf.asarray(be.asarray((rng.standard_normal((5, 7)) * 0.7 + 0.1).astype(dt)))
    f = getattr(hf, name)
    two = name in ("true_divide", "arctan2", "power", "fmod", "fmax", "fmin", "heaviside",
                   "logaddexp2", "mod")
    check_same(be, (lambda a, b: f(a, b)) if two else (lambda a, b: f(a) + b), x, y)
    g = getattr(np, name)
    check_same(be, (lambda a, b: g(a, b)) if two else (lambda a, b: g(a) * b), x, y)


def test_numpy_named_integer_rules_are_refused(be):
    i = hf.asarray(be.asarray(np.arange(6, dtype=np.int8)))
    with pytest.raises(TypeError, match="NumPy's own dtype rule"):
        hf.fuse(lambda a: hf.arccos(a))(i)
    with pytest.raises(TypeError, match="does not take"):
        hf.fuse(lambda a: hf.fabs(a))(hf.asarray(be.asarray(np.ones(3, np.complex64))))
    # absolute / shifts of integers follow the standard's rule: traced
    got = hf.fuse(lambda a: hf.absolute(a) + hf.left_shift(a, 1))(i)
    np.testing.assert_array_equal(np.asarray(got, copy=True), np.abs(np.arange(6)) + (np.arange(6) << 1))
