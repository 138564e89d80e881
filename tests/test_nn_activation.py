"""hipfer.nn activation fused ops against NumPy on each backend: activations and their
gradients, dropout (mask bit-identical to counter_rng), BCE with logits; special values,
odd sizes, unaligned views, in place, finite differences, determinism, bad input."""
import numpy as np
import pytest

import hipfer as hf
import hipfer.nn as nn
from hipfer.nn._activation import kernels as K
from hipfer.prims import counter_rng
from hipfer.nn._activation import ops as A

from test_tensor import host

FLOATS = [np.float32, np.float64]
SHAPES = [(), (0,), (1,), (7,), (33, 65), (1029,)]
SPECIAL = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-30, -1e-30, 30.0, -30.0, 89.0, -89.0,
           104.0, -104.0, 750.0, -750.0, 1e30, -1e30]


def tol(dt):
    return dict(rtol=1e-5, atol=1e-6) if np.dtype(dt) == np.float32 else dict(rtol=1e-12, atol=1e-12)


def data(rng, shape, dtype, special=True):
    """3 * N(0, 1), with the special values first (as many as fit)."""
    x = (3 * rng.standard_normal(shape)).astype(dtype)
    if special:
        flat = x.reshape(-1)
        k = min(flat.size, len(SPECIAL))
        flat[:k] = np.array(SPECIAL[:k], dtype=dtype)
    return x


def operand(x, unaligned=False):
    """A Tensor of x; unaligned: a contiguous view one element into a larger tensor (the
    kernels' element-by-element variant)."""
    if not unaligned:
        return hf.asarray(x.copy())  # asarray may share memory on the CPU
    big = np.empty(x.size + 1, x.dtype)
    big[1:] = x.reshape(-1)
    return hf.reshape(hf.asarray(big)[1:], x.shape)


def bits(t):
    a = host(t)
    return a.view(np.uint8) if a.dtype == np.bool_ else a.view(f"u{a.itemsize}")


def assert_bitwise(a, b):
    np.testing.assert_array_equal(bits(a), bits(b))


def assert_same_bits(t, want):
    """t equals the NumPy array want bit for bit, except that a NaN may carry another
    payload (NVIDIA's arithmetic returns the canonical NaN, NumPy keeps the input's)."""
    got, nan = host(t), np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    u = f"u{want.itemsize}"
    np.testing.assert_array_equal(got[~nan].view(u), want[~nan].view(u))


# -------------------------------------------------- references (float64, the documented math)
def sig64(x):
    with np.errstate(over="ignore"):
        return 1 / (1 + np.exp(-x))  # exp overflow -> inf -> 0: right in the limit


REF = {
    "relu": lambda x: np.where(np.isnan(x), x, np.where(x > 0, x, 0.0)),
    "tanh": np.tanh,
    "sigmoid": sig64,
    "silu": lambda x: x * sig64(x),
    "exp": np.exp,
    "neg": np.negative,
}
REF_BACKWARD = {  # (grad, x, y) -> grad * f'
    "relu": lambda g, x, y: np.where(x > 0, g, 0.0),
    "silu": lambda g, x, y: g * (sig64(x) * (1 + x * (1 - sig64(x)))),
    "tanh": lambda g, x, y: g * (1 - y * y),
    "sigmoid": lambda g, x, y: g * (y * (1 - y)),
    "exp": lambda g, x, y: g * y,
    "neg": lambda g, x, y: -g,
}


def ref(name, x):
    with np.errstate(all="ignore"):
        return REF[name](x.astype(np.float64)).astype(x.dtype)


def bce64(x, y):
    x, y = x.astype(np.float64), y.astype(np.float64)
    with np.errstate(all="ignore"):
        return (np.maximum(x, 0) - x * y) + np.log1p(np.exp(-np.abs(x)))


def test_tables_agree():
    assert K.ACTIVATIONS == A.ACTIVATIONS
    assert set(K.BACKWARDS) == set(A.BACKWARD_ARG)
    from hipfer.nn import _activation
    assert all(getattr(nn, f) is getattr(_activation, f) for f in _activation.__all__)


# ------------------------------------------------------------------------ activations
@pytest.mark.parametrize("unaligned", [False, True])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", A.ACTIVATIONS)
def test_activation(be, rng, name, dtype, shape, unaligned):
    x = data(rng, shape, dtype)
    X = operand(x, unaligned and x.ndim > 0)
    r = getattr(nn, name)(X)
    assert r.shape == shape and r.dtype == np.dtype(dtype) and r.device == be.device
    np.testing.assert_allclose(host(r), ref(name, x), **tol(dtype))
    assert_bitwise(r, nn.activation(name, X))  # deterministic, and one op either way
    np.testing.assert_array_equal(host(X), x)  # the input is untouched


@pytest.mark.parametrize("dtype", FLOATS)
def test_activation_signed_zero_and_nan(be, dtype):
    x = hf.asarray(np.array([-0.0, 0.0, np.nan, -np.nan], dtype))
    r = host(nn.relu(x))
    assert not np.signbit(r[:2]).any() and np.isnan(r[2:]).all()  # relu(-0.0) = +0
    assert np.signbit(host(nn.neg(hf.asarray(np.array([0.0], dtype))))).all()
    for name in A.ACTIVATIONS:
        assert np.isnan(host(nn.activation(name, x))[2:]).all(), name


@pytest.mark.parametrize("dtype", FLOATS)
def test_sigmoid_never_overflows(be, dtype):
    x = np.array([-1e30, -750, -104, -89, -30, 30, 89, 104, 750, 1e30], dtype)
    with np.errstate(all="raise"):
        r = host(nn.sigmoid(hf.asarray(x)))
    assert np.isfinite(r).all() and (r >= 0).all() and (r <= 1).all()
    np.testing.assert_allclose(r, ref("sigmoid", x), **tol(dtype))


@pytest.mark.parametrize("shape", [(), (0,), (7,), (33, 65)])
@pytest.mark.parametrize("name", A.ACTIVATIONS)
def test_activation_in_place(be, rng, name, shape):
    x = data(rng, shape, np.float32)
    X = hf.asarray(x.copy())
    assert nn.activation(name, X, out=X) is X
    np.testing.assert_allclose(host(X), ref(name, x), **tol(np.float32))
    Y, O = hf.asarray(x.copy()), hf.empty(shape, dtype=hf.float32)
    assert nn.activation(name, Y, out=O) is O  # a separate out
    np.testing.assert_allclose(host(O), ref(name, x), **tol(np.float32))


# -------------------------------------------------------------- activation gradients
@pytest.mark.parametrize("unaligned", [False, True])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", A.ACTIVATIONS)
def test_elementwise_backward(be, rng, name, dtype, shape, unaligned):
    x, g = data(rng, shape, dtype), data(rng, shape, dtype, special=False)
    y = ref(name, x)
    ua = unaligned and x.ndim > 0
    G, X, Y = operand(g, ua), operand(x, ua), operand(y, ua)
    r = nn.elementwise_backward(name, G, X, Y)
    with np.errstate(all="ignore"):
        want = REF_BACKWARD[name](g.astype(np.float64), x.astype(np.float64), y.astype(np.float64))
    assert r.shape == shape and r.dtype == np.dtype(dtype)
    np.testing.assert_allclose(host(r), want.astype(dtype), **tol(dtype))
    assert_bitwise(r, nn.elementwise_backward(name, G, X, Y))
    G2 = operand(g)
    assert nn.elementwise_backward(name, G2, x=X, y=Y, out=G2) is G2  # in place on grad
    assert_bitwise(G2, r)


@pytest.mark.parametrize("name", A.ACTIVATIONS)
def test_elementwise_backward_finite_difference(be, rng, name):
    """grad * f'(x) against central differences of the forward, in float64."""
    x = 2 * rng.standard_normal(41)
    x[np.abs(x) < 1e-3] = 0.5  # relu's kink
    g = rng.standard_normal(41)
    h = 1e-6
    f = lambda v: host(nn.activation(name, hf.asarray(v)))  # noqa: E731
    fd = g * (f(x + h) - f(x - h)) / (2 * h)
    X = hf.asarray(x)
    r = nn.elementwise_backward(name, hf.asarray(g), X, nn.activation(name, X))
    np.testing.assert_allclose(host(r), fd, rtol=1e-6, atol=1e-8)


def test_relu_backward_at_zero_and_nan(be):
    x = hf.asarray(np.array([0.0, -0.0, np.nan, 1e-300, -1e-300]))
    g = hf.asarray(np.array([np.inf, 2.0, 3.0, 4.0, np.nan]))
    r = host(nn.elementwise_backward("relu", g, x))
    np.testing.assert_array_equal(r, [0.0, 0.0, 0.0, 4.0, 0.0])  # only x > 0 passes grad


def test_activation_bad_input(be):
    x, x32 = hf.asarray(np.ones(3)), hf.asarray(np.ones(3, np.float32))
    with pytest.raises(ValueError, match="unknown activation 'gelu'"):
        nn.activation("gelu", x)
    with pytest.raises(TypeError, match="float32 or float64"):
        nn.relu(hf.asarray(np.ones(3, np.int64)))
    with pytest.raises(TypeError, match="hipfer Tensor"):
        nn.relu(np.ones(3))
    with pytest.raises(ValueError, match="in place"):
        nn.relu(x, out=hf.asarray(np.ones((3, 2)))[:, 0])
    with pytest.raises(ValueError, match="out has shape"):
        nn.relu(x, out=hf.asarray(np.ones(4)))
    with pytest.raises(ValueError, match="out has shape"):
        nn.relu(x, out=x32)
    with pytest.raises(ValueError, match="needs y"):
        nn.elementwise_backward("tanh", x, x)
    with pytest.raises(ValueError, match="needs x"):
        nn.elementwise_backward("silu", x, y=x)
    with pytest.raises(ValueError, match="unknown activation"):
        nn.elementwise_backward("gelu", x, x, x)
    with pytest.raises(ValueError, match="shapes differ"):
        nn.elementwise_backward("relu", x, hf.asarray(np.ones(4)))
    with pytest.raises(TypeError, match="dtypes differ"):
        nn.elementwise_backward("sigmoid", x, y=x32)


# ---------------------------------------------------------------------------- dropout
def keep_ref(seed, offset, n, p):
    """The mask straight from counter_rng: dropped iff the float32 uniform < p (exactly)."""
    return counter_rng.uniform(seed, offset, n, np.float32).astype(np.float64) >= p


@pytest.mark.parametrize("p", [0.0, 0.3, 0.9])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_dropout(be, rng, dtype, shape, p):
    x = data(rng, shape, dtype)
    seed, offset = int(rng.integers(0, 2 ** 63)), int(rng.integers(0, 1000))
    for unaligned in (False, True) if x.ndim else (False,):
        out, mask = nn.dropout(operand(x, unaligned), p, seed=seed, offset=offset)
        keep = keep_ref(seed, offset, x.size, p).reshape(shape)
        assert mask.dtype == np.bool_ and mask.shape == shape and out.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(host(mask), keep)
        with np.errstate(all="ignore"):
            want = np.where(keep, x * np.dtype(dtype).type(1 / (1 - p)), np.dtype(dtype).type(0))
        assert_same_bits(out, want)
        out2, mask2 = nn.dropout(operand(x, unaligned), p, seed=seed, offset=offset)
        assert_bitwise(out, out2)
        assert_bitwise(mask, mask2)


def test_dropout_threshold_is_exact(be):
    """p exactly at / just above a uniform the stream takes; seed and offset mod 2^64 (the
    counter wraps inside the tensor)."""
    seed, offset, n = -5, 2 ** 64 - 3, 37
    u = counter_rng.uniform(seed, offset, n, np.float32)
    j = int(np.argmin(np.abs(u - 0.5)))
    uj = float(u[j])
    x = hf.asarray(np.arange(1.0, n + 1))
    for p, kept in ((uj, True), (np.nextafter(uj, 1.0), False), (np.nextafter(uj, 0.0), True),
                    (float(np.nextafter(u[j], np.float32(1))), False)):
        _, mask = nn.dropout(x, p, seed=seed, offset=offset)
        m = host(mask)
        assert m[j] == kept
        np.testing.assert_array_equal(m, u.astype(np.float64) >= p)
    _, m0 = nn.dropout(x, 0.5, seed=seed, offset=offset)
    _, m1 = nn.dropout(x, 0.5, seed=seed + 2 ** 64, offset=offset - 2 ** 64)
    assert_bitwise(m0, m1)


def test_dropout_grid_stride_and_rate(be, rng):
    """More elements than one sweep of the grid; dropped fraction close to p."""
    n, p, seed = 5_000_003, 0.25, 12345
    x = rng.standard_normal(n) + 10  # never 0, so out == 0 marks exactly the drops
    out, mask = nn.dropout(hf.asarray(x), p, seed=seed, offset=7)
    m = host(mask)
    np.testing.assert_array_equal(m, keep_ref(seed, 7, n, p))
    np.testing.assert_array_equal(host(out) != 0, m)
    assert abs(1 - m.mean() - p) < 2e-3


@pytest.mark.parametrize("dtype", FLOATS)
def test_dropout_special_values_and_in_place(be, dtype):
    x = np.array(SPECIAL * 3, dtype)
    X = hf.asarray(x.copy())
    r, mask = nn.dropout(X, 0.5, seed=99, out=X)
    assert r is X
    keep = keep_ref(99, 0, x.size, 0.5)
    np.testing.assert_array_equal(host(mask), keep)
    o = host(X)
    assert (o[~keep] == 0).all() and not np.signbit(o[~keep]).any()  # +0 even for inf, NaN
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(o[keep], (x * dtype(2))[keep])


@pytest.mark.parametrize("shape", [(), (0,), (7,), (33, 65)])
@pytest.mark.parametrize("dtype", FLOATS)
def test_dropout_backward(be, rng, dtype, shape):
    g = data(rng, shape, dtype)
    _, mask = nn.dropout(hf.asarray(np.ones(shape, dtype)), 0.4, seed=5)
    m = host(mask)
    r = nn.dropout_backward(hf.asarray(g), mask, 0.4)
    with np.errstate(all="ignore"):
        want = np.where(m, g * np.dtype(dtype).type(1 / 0.6), np.dtype(dtype).type(0))
    assert_same_bits(r, want)
    G = hf.asarray(g.copy())
    assert nn.dropout_backward(G, mask, 0.4, out=G) is G
    assert_bitwise(G, r)


def test_dropout_backward_finite_difference(be, rng):
    x, g, p = rng.standard_normal(29), rng.standard_normal(29), 0.3
    h = 1e-6
    f = lambda v: host(nn.dropout(hf.asarray(v), p, seed=42, offset=3)[0])  # noqa: E731
    fd = g * (f(x + h) - f(x - h)) / (2 * h)
    _, mask = nn.dropout(hf.asarray(x), p, seed=42, offset=3)
    np.testing.assert_allclose(host(nn.dropout_backward(hf.asarray(g), mask, p)), fd, rtol=1e-6, atol=1e-8)


def test_dropout_bad_input(be):
    x = hf.asarray(np.ones(5))
    for p in (-0.1, 1.0, 1.5, float("nan")):
        with pytest.raises(ValueError, match=r"p must be in \[0, 1\)"):
            nn.dropout(x, p, seed=1)
        with pytest.raises(ValueError, match=r"p must be in \[0, 1\)"):
            nn.dropout_backward(x, hf.asarray(np.ones(5, bool)), p)
    with pytest.raises(TypeError, match="seed must be an integer"):
        nn.dropout(x, 0.5, seed=1.5)
    with pytest.raises(TypeError, match="offset must be an integer"):
        nn.dropout(x, 0.5, seed=1, offset="3")
    with pytest.raises(TypeError, match="float32 or float64"):
        nn.dropout(hf.asarray(np.ones(5, np.int32)), 0.5, seed=1)
    with pytest.raises(TypeError, match="mask operand must be bool"):
        nn.dropout_backward(x, hf.asarray(np.ones(5, np.uint8)), 0.5)
    with pytest.raises(ValueError, match="shapes differ"):
        nn.dropout_backward(x, hf.asarray(np.ones(4, bool)), 0.5)
    with pytest.raises(ValueError, match="out has shape"):
        nn.dropout(x, 0.5, seed=1, out=hf.asarray(np.ones(5, np.float32)))


# ------------------------------------------------------------------- BCE with logits
@pytest.mark.parametrize("unaligned", [False, True])
@pytest.mark.parametrize("shape", SHAPES + [(100_003,)])
@pytest.mark.parametrize("dtype", FLOATS)
def test_bce_with_logits(be, rng, dtype, shape, unaligned):
    x = data(rng, shape, dtype, special=False)
    y = rng.random(shape).astype(dtype)
    ua = unaligned and x.ndim > 0
    X, Y = operand(x, ua), operand(y, ua)
    r = nn.bce_with_logits(X, Y)
    assert r.shape == shape and r.dtype == np.dtype(dtype)
    t = dict(rtol=1e-5, atol=1e-5) if dtype == np.float32 else tol(dtype)
    np.testing.assert_allclose(host(r), bce64(x, y), **t)
    m = nn.bce_with_logits(X, Y, reduction="mean")
    assert m.shape == () and m.dtype == np.dtype(dtype)
    if x.size:
        np.testing.assert_allclose(host(m), bce64(x, y).mean(), **t)
    else:
        assert np.isnan(host(m))
    assert_bitwise(m, nn.bce_with_logits(X, Y, reduction="mean"))  # fixed summation order
    assert_bitwise(m, nn.bce_with_logits(operand(x, not ua), operand(y, not ua), reduction="mean"))


@pytest.mark.parametrize("dtype", FLOATS)
def test_bce_special_values(be, dtype):
    x = np.array(SPECIAL * 3, dtype)
    y = np.array([0.0, 1.0, 0.5] * len(SPECIAL), dtype)  # products exact: no cancellation noise
    r = host(nn.bce_with_logits(hf.asarray(x), hf.asarray(y)))
    np.testing.assert_allclose(r, bce64(x, y), **tol(dtype))
    assert np.isfinite(r[np.isfinite(x)]).all()  # exp never overflows
    g = host(nn.bce_with_logits_backward(hf.asarray(np.ones_like(x)), hf.asarray(x), hf.asarray(y)))
    np.testing.assert_allclose(g, (sig64(x.astype(np.float64)) - y).astype(dtype), **tol(dtype))


@pytest.mark.parametrize("reduction", ["none", "mean"])
@pytest.mark.parametrize("shape", [(), (0,), (1,), (7,), (33, 65), (1029,)])
@pytest.mark.parametrize("dtype", FLOATS)
def test_bce_with_logits_backward(be, rng, dtype, shape, reduction):
    x, y = data(rng, shape, dtype, special=False), rng.random(shape).astype(dtype)
    g = data(rng, () if reduction == "mean" else shape, dtype, special=False)
    r = nn.bce_with_logits_backward(hf.asarray(g), hf.asarray(x), hf.asarray(y), reduction=reduction)
    g64 = g.astype(np.float64) / (x.size if reduction == "mean" and x.size else 1)
    want = g64 * (sig64(x.astype(np.float64)) - y)
    assert r.shape == shape and r.dtype == np.dtype(dtype)
    np.testing.assert_allclose(host(r), want, **tol(dtype))
    assert_bitwise(r, nn.bce_with_logits_backward(hf.asarray(g), hf.asarray(x), hf.asarray(y),
                                                  reduction=reduction))


@pytest.mark.parametrize("reduction", ["none", "mean"])
def test_bce_with_logits_backward_finite_difference(be, rng, reduction):
    n, h = 23, 1e-6
    x, y = 3 * rng.standard_normal(n), rng.random(n)
    Y = hf.asarray(y)
    loss = lambda v: host(nn.bce_with_logits(hf.asarray(v), Y, reduction=reduction))  # noqa: E731
    if reduction == "none":
        g = rng.standard_normal(n)
        fd = g * (loss(x + h) - loss(x - h)) / (2 * h)
    else:
        g = np.array(rng.standard_normal())
        fd = np.array([g * (loss(x + h * e) - loss(x - h * e)) / (2 * h) for e in np.eye(n)])
    r = nn.bce_with_logits_backward(hf.asarray(g), hf.asarray(x), Y, reduction=reduction)
    np.testing.assert_allclose(host(r), fd, rtol=1e-6, atol=1e-8)


def test_bce_bad_input(be):
    x, x32 = hf.asarray(np.ones(3)), hf.asarray(np.ones(3, np.float32))
    with pytest.raises(ValueError, match="shapes differ"):
        nn.bce_with_logits(x, hf.asarray(np.ones(4)))
    with pytest.raises(TypeError, match="dtypes differ"):
        nn.bce_with_logits(x, x32)
    with pytest.raises(TypeError, match="float32 or float64"):
        nn.bce_with_logits(hf.asarray(np.ones(3, np.int64)), hf.asarray(np.ones(3, np.int64)))
    with pytest.raises(ValueError, match="reduction must be"):
        nn.bce_with_logits(x, x, reduction="sum")
    with pytest.raises(ValueError, match="must be 0-d"):
        nn.bce_with_logits_backward(x, x, x, reduction="mean")
    with pytest.raises(ValueError, match="grad and x shapes differ"):
        nn.bce_with_logits_backward(hf.asarray(np.ones(2)), x, x)
    with pytest.raises(ValueError, match="x and y shapes differ"):
        nn.bce_with_logits_backward(x, x, hf.asarray(np.ones(2)))
