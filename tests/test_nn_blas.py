"""hipfer.nn BLAS-like fused ops against NumPy on each backend."""
import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

import hipfer as hf
import hipfer.nn as nn

from test_tensor import host, rand

FLOATS = [np.float32, np.float64]
EPS = {np.dtype(np.float32): 1.2e-7, np.dtype(np.float64): 2.3e-16}


def tol(dt):
    return dict(rtol=1e-5, atol=1e-6) if np.dtype(dt) == np.float32 else dict(rtol=1e-12, atol=1e-12)


def bits(t):
    """A tensor's bytes, for bitwise comparisons."""
    return host(t).tobytes()


def assert_sums(got, terms, axis=None):
    """got against the float64 sum of terms (the products of a dot, ...): within a few
    roundings of the sum of |terms| per output, which any summation order meets."""
    ref = np.sum(terms.astype(np.float64), axis=axis)
    bound = 16 * EPS[np.dtype(got.dtype)] * np.sum(np.abs(terms.astype(np.float64)), axis=axis)
    assert got.shape == np.shape(ref)
    assert np.all(np.abs(got - ref) <= bound + 1e-300), (got, ref)


# ------------------------------------------------------------------------------ axpby
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(), (0,), (7,), (33, 65)])
def test_axpby(be, rng, dtype, shape):
    x, y = rand(rng, shape, dtype), rand(rng, shape, dtype)
    X, Y = hf.asarray(x), hf.asarray(y.copy())  # asarray may share memory on the CPU
    r = nn.axpby(X, Y, alpha=1.5, beta=-0.25)
    assert r is Y
    np.testing.assert_allclose(host(Y), 1.5 * x - 0.25 * y, **tol(dtype))
    Y = hf.asarray(np.full(shape, np.nan, dtype))  # beta == 0 never reads y
    nn.axpby(X, Y, alpha=2.0, beta=0.0)
    np.testing.assert_allclose(host(Y), 2 * x, **tol(dtype))


def test_axpby_bad_input(be):
    x = hf.asarray(np.ones(3))
    with pytest.raises(ValueError, match="shapes differ"):
        nn.axpby(x, hf.asarray(np.ones(4)))
    with pytest.raises(TypeError, match="float32 or float64"):
        nn.axpby(hf.asarray(np.ones(3, np.int32)), hf.asarray(np.ones(3, np.int32)))
    with pytest.raises(TypeError, match="dtypes differ"):
        nn.axpby(x, hf.asarray(np.ones(3, np.float32)))
    with pytest.raises(ValueError, match="in place"):
        nn.axpby(x, hf.asarray(np.ones((3, 2)))[:, 0])
    with pytest.raises(TypeError, match="hipfer Tensor"):
        nn.axpby(np.ones(3), x)


# ---------------------------------------------------------------------------- gemm_ex
def gemm_tol(dt):
    return dict(rtol=1e-4, atol=1e-4) if np.dtype(dt) == np.float32 else dict(rtol=1e-12, atol=1e-12)


GEMM_SHAPES = [(1, 1, 1), (7, 5, 3), (33, 65, 17), (4, 3, 0), (0, 3, 2), (130, 1, 257)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("trans_a,trans_b", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("m,n,k", GEMM_SHAPES)
def test_gemm_ex(be, rng, dtype, trans_a, trans_b, m, n, k):
    a = rand(rng, (k, m) if trans_a else (m, k), dtype)
    b = rand(rng, (n, k) if trans_b else (k, n), dtype)
    ref = (a.T if trans_a else a).astype(np.float64) @ (b.T if trans_b else b).astype(np.float64)
    A, B = hf.asarray(a), hf.asarray(b)
    r = nn.gemm_ex(A, B, trans_a=trans_a, trans_b=trans_b)
    assert r.shape == (m, n) and r.dtype == dtype
    np.testing.assert_allclose(host(r), ref, **gemm_tol(dtype))
    c = rand(rng, (m, n), dtype)
    C = hf.asarray(c.copy())
    assert nn.gemm_ex(A, B, C, trans_a=trans_a, trans_b=trans_b, alpha=-0.5, beta=1.5) is C
    np.testing.assert_allclose(host(C), -0.5 * ref + 1.5 * c, **gemm_tol(dtype))
    C = hf.asarray(np.full((m, n), np.nan, dtype))  # beta == 0 never reads out
    nn.gemm_ex(A, B, C, trans_a=trans_a, trans_b=trans_b, alpha=2.0)
    np.testing.assert_allclose(host(C), 2 * ref, **gemm_tol(dtype))


def test_gemm_ex_strided_operands(be, rng):
    a, b = rand(rng, (9, 12), np.float64), rand(rng, (6, 5), np.float64)
    r = nn.gemm_ex(hf.asarray(a)[:, ::2], hf.asarray(b).T, trans_b=True)  # (9, 6) @ (6, 5)
    np.testing.assert_allclose(host(r), a[:, ::2] @ b, rtol=1e-12)


def test_gemm_ex_bad_input(be):
    a, b = hf.asarray(np.ones((3, 4))), hf.asarray(np.ones((4, 2)))
    with pytest.raises(ValueError, match="inner sizes differ"):
        nn.gemm_ex(a, b, trans_b=True)
    with pytest.raises(ValueError, match="2-d"):
        nn.gemm_ex(a, hf.asarray(np.ones(4)))
    with pytest.raises(TypeError, match="float32 or float64"):
        nn.gemm_ex(hf.asarray(np.ones((3, 4), np.int64)), b)
    with pytest.raises(TypeError, match="dtypes differ"):
        nn.gemm_ex(a, hf.asarray(np.ones((4, 2), np.float32)))
    with pytest.raises(ValueError, match="out must be given"):
        nn.gemm_ex(a, b, beta=1.0)
    with pytest.raises(ValueError, match=r"shape \(3, 2\)"):
        nn.gemm_ex(a, b, hf.asarray(np.ones((2, 3))))
    with pytest.raises(ValueError, match=r"shape \(3, 2\) and dtype float64"):
        nn.gemm_ex(a, b, hf.asarray(np.ones((3, 2), np.float32)))
    with pytest.raises(TypeError, match="hipfer Tensor"):
        nn.gemm_ex(np.ones((3, 4)), b)


# ------------------------------------------------------------------------- sum, dot
SUM_SHAPES = [(), (0,), (1,), (7,), (33, 65), (3, 5001), (1_000_003,)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", SUM_SHAPES)
def test_sum(be, rng, dtype, shape):
    x = rand(rng, shape, dtype)
    r = nn.sum(hf.asarray(x))
    assert r.shape == () and r.dtype == dtype
    assert_sums(host(r), x)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", SUM_SHAPES)
def test_dot(be, rng, dtype, shape):
    x, y = rand(rng, shape, dtype), rand(rng, shape, dtype)
    r = nn.dot(hf.asarray(x), hf.asarray(y))
    assert r.shape == () and r.dtype == dtype
    assert_sums(host(r), x * y)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", [5, 4099, 4100, 100_004])
def test_sums_ignore_alignment(be, rng, dtype, n):
    """A view starting one element in (not 16-byte aligned on the GPU: element loads, not
    vector loads) sums to the same bits as an aligned copy: the order is the same."""
    x, y = rand(rng, (n + 1,), dtype), rand(rng, (n + 1,), dtype)
    xv, yv = hf.asarray(x)[1:], hf.asarray(y)[1:]
    xc, yc = hf.asarray(x[1:].copy()), hf.asarray(y[1:].copy())
    assert bits(nn.sum(xv)) == bits(nn.sum(xc))
    assert bits(nn.dot(xv, yv)) == bits(nn.dot(xc, yc))
    assert bits(nn.dot(xv, yc)) == bits(nn.dot(xc, yv))
    m = hf.reshape(hf.asarray(x)[1:], (1, n))
    out1, out2 = hf.asarray(np.zeros(1, dtype)), hf.asarray(np.zeros(1, dtype))
    nn.accumulate_rows(m, out1)
    nn.accumulate_rows(hf.asarray(x[1:].copy().reshape(1, n)), out2)
    assert bits(out1) == bits(out2)


def test_sum_dot_bad_input(be):
    x = hf.asarray(np.ones(3))
    with pytest.raises(ValueError, match="shapes differ"):
        nn.dot(x, hf.asarray(np.ones(4)))
    with pytest.raises(ValueError, match="shapes differ"):
        nn.dot(x, hf.asarray(np.ones((3, 1))))
    with pytest.raises(TypeError, match="dtypes differ"):
        nn.dot(x, hf.asarray(np.ones(3, np.float32)))
    with pytest.raises(TypeError, match="float32 or float64"):
        nn.sum(hf.asarray(np.ones(3, np.int64)))
    with pytest.raises(TypeError, match="hipfer Tensor"):
        nn.sum([1.0, 2.0])


# --------------------------------------------------------- column_sums, accumulate_rows
ROW_SHAPES = [(1, 1), (7, 5), (33, 65), (300, 3), (0, 5), (5, 0), (2000, 40), (3, 2049)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", ROW_SHAPES)
def test_column_sums(be, rng, dtype, shape):
    x = rand(rng, shape, dtype)
    X = hf.asarray(x)
    r = nn.column_sums(X)
    assert r.shape == shape[1:] and r.dtype == dtype
    assert_sums(host(r), x, axis=0)
    out = rand(rng, shape[1:], dtype)
    O = hf.asarray(out.copy())
    assert nn.column_sums(X, O, beta=-0.5) is O
    assert_sums(host(O), np.concatenate([x, -0.5 * out[None]]), axis=0)
    O = hf.asarray(np.full(shape[1:], np.nan, dtype))  # beta == 0 never reads out
    nn.column_sums(X, O)
    assert_sums(host(O), x, axis=0)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", ROW_SHAPES + [(4, 1024), (2, 600), (40, 7)])
def test_accumulate_rows(be, rng, dtype, shape):
    x = rand(rng, shape, dtype)
    X = hf.asarray(x)
    out = rand(rng, shape[:1], dtype)
    O = hf.asarray(out.copy())
    assert nn.accumulate_rows(X, O) is O  # beta = 1: accumulate
    assert_sums(host(O), np.concatenate([x, out[:, None]], axis=1), axis=1)
    O = hf.asarray(out.copy())
    nn.accumulate_rows(X, O, beta=2.5)
    assert_sums(host(O), np.concatenate([x, 2.5 * out[:, None]], axis=1), axis=1)
    O = hf.asarray(np.full(shape[:1], np.nan, dtype))  # beta == 0 never reads out
    nn.accumulate_rows(X, O, beta=0.0)
    assert_sums(host(O), x, axis=1)


def test_row_reductions_bad_input(be):
    x = hf.asarray(np.ones((3, 4)))
    with pytest.raises(ValueError, match="x's columns and out"):
        nn.column_sums(x, hf.asarray(np.ones(3)))
    with pytest.raises(ValueError, match="x's rows and out"):
        nn.accumulate_rows(x, hf.asarray(np.ones(4)))
    with pytest.raises(ValueError, match="2-d"):
        nn.column_sums(hf.asarray(np.ones(4)))
    with pytest.raises(ValueError, match="2-d"):
        nn.accumulate_rows(hf.asarray(np.ones((2, 3, 4))), hf.asarray(np.ones(2)))
    with pytest.raises(ValueError, match="out must be given"):
        nn.column_sums(x, beta=1.0)
    with pytest.raises(TypeError, match="dtypes differ"):
        nn.accumulate_rows(x, hf.asarray(np.ones(3, np.float32)))
    with pytest.raises(ValueError, match="in place"):
        nn.column_sums(x, hf.asarray(np.ones((4, 2)))[:, 0])
    with pytest.raises(TypeError, match="hipfer Tensor"):
        nn.accumulate_rows(x, np.ones(3))


# ----------------------------------------------------------------- vector additions
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(1, 1), (5, 7), (33, 65), (0, 3), (3, 0), (1000, 3)])
def test_add_row_vector(be, rng, dtype, shape):
    x, v = rand(rng, shape, dtype), rand(rng, shape[1:], dtype)
    X, V = hf.asarray(x.copy()), hf.asarray(v)
    r = nn.add_row_vector(X, V)
    np.testing.assert_array_equal(host(r), x + v)  # one rounding: exact on every backend
    np.testing.assert_array_equal(host(X), x)  # out of place
    assert nn.add_row_vector(X, V, out=X) is X
    np.testing.assert_array_equal(host(X), x + v)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(2, 3), (1, 1, 1, 1), (2, 3, 5), (3, 5, 7, 9), (2, 4, 3, 5, 2), (0, 3, 2, 2),
                                   (64, 17, 31)])
def test_add_channel_vector(be, rng, dtype, shape):
    x, v = rand(rng, shape, dtype), rand(rng, shape[1:2], dtype)
    ref = x + v.reshape((-1,) + (1,) * (len(shape) - 2))
    X, V = hf.asarray(x.copy()), hf.asarray(v)
    np.testing.assert_array_equal(host(nn.add_channel_vector(X, V)), ref)
    np.testing.assert_array_equal(host(X), x)
    assert nn.add_channel_vector(X, V, out=X) is X
    np.testing.assert_array_equal(host(X), ref)


def test_add_vector_bad_input(be):
    x = hf.asarray(np.ones((3, 4)))
    with pytest.raises(ValueError, match="x's columns and v"):
        nn.add_row_vector(x, hf.asarray(np.ones(3)))
    with pytest.raises(ValueError, match="2-d"):
        nn.add_row_vector(hf.asarray(np.ones((2, 3, 4))), hf.asarray(np.ones(4)))
    with pytest.raises(ValueError, match="x's channels and v"):
        nn.add_channel_vector(hf.asarray(np.ones((2, 3, 4, 4))), hf.asarray(np.ones(4)))
    with pytest.raises(ValueError, match=r"\(N, C, \*spatial\)"):
        nn.add_channel_vector(hf.asarray(np.ones(3)), hf.asarray(np.ones(3)))
    with pytest.raises(TypeError, match="dtypes differ"):
        nn.add_row_vector(x, hf.asarray(np.ones(4, np.float32)))
    with pytest.raises(ValueError, match=r"out must have shape \(3, 4\)"):
        nn.add_row_vector(x, hf.asarray(np.ones(4)), out=hf.asarray(np.ones((4, 3))))
    with pytest.raises(ValueError, match="in place"):
        nn.add_channel_vector(x, hf.asarray(np.ones(4)), out=hf.asarray(np.ones((4, 3))).T)


def test_out_on_another_device(be):
    if be.name != "cupy":
        pytest.skip("needs a GPU and the CPU")
    x = hf.asarray(np.ones((3, 4)))
    cpu = hf.asarray(np.ones((3, 4)), device="cpu")
    with pytest.raises(ValueError, match="is on cpu"):
        nn.add_row_vector(x, hf.asarray(np.ones(4)), out=cpu)
    with pytest.raises(ValueError, match="different devices"):
        nn.accumulate_rows(x, hf.asarray(np.ones(3), device="cpu"))


# -------------------------------------------------------------------------- adam_step
def adam_reference(p, g, m, v, lr, beta1, beta2, eps, bc1, bc2, wd):
    """Adam in float64 (PyTorch's formulas, not its rounding)."""
    p, g, m, v = (a.astype(np.float64) for a in (p, g, m, v))
    g = g + wd * p
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    p = p - (lr / bc1) * m / (np.sqrt(v) / math.sqrt(bc2) + eps)
    return p, m, v


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(), (0,), (1,), (7,), (33, 65), (3, 1001)])
@pytest.mark.parametrize("wd", [0.0, 0.01])
def test_adam_step(be, rng, dtype, shape, wd):
    p, g, m = (rand(rng, shape, dtype) for _ in range(3))
    v = np.abs(rand(rng, shape, dtype)) + dtype(0.1)
    P, G, M, V = (hf.asarray(a.copy()) for a in (p, g, m, v))
    for t in (1, 2, 3):
        kw = dict(lr=1e-2, beta1=0.9, beta2=0.999, eps=1e-8, bc1=1 - 0.9 ** t, bc2=1 - 0.999 ** t, wd=wd)
        res = nn.adam_step(P, G, M, V, lr=kw["lr"], beta1=0.9, beta2=0.999, eps=1e-8,
                           bias_correction1=kw["bc1"], bias_correction2=kw["bc2"], weight_decay=wd)
        assert res[0] is P and res[1] is M and res[2] is V
        p, m, v = (a.astype(dtype) for a in adam_reference(p, g, m, v, **kw))
        for got, want in ((P, p), (M, m), (V, v)):
            np.testing.assert_allclose(host(got), want, rtol=2e-6 if dtype == np.float32 else 1e-13,
                                       atol=1e-6 if dtype == np.float32 else 1e-14)
    np.testing.assert_array_equal(host(G), g)  # grad is read only


def test_adam_step_bad_input(be):
    t = [hf.asarray(np.ones(3)) for _ in range(4)]
    good = dict(lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, bias_correction1=0.1, bias_correction2=0.001)
    for name, bad in (("lr", -1.0), ("lr", math.nan), ("beta1", 1.0), ("beta2", -0.1), ("eps", -1e-8),
                      ("bias_correction1", 0.0), ("bias_correction2", 1.5), ("weight_decay", -0.1)):
        with pytest.raises(ValueError, match=f"{name}="):
            nn.adam_step(*t, **{**good, name: bad})
    with pytest.raises(ValueError, match="param and m"):
        nn.adam_step(t[0], t[1], hf.asarray(np.ones(4)), t[3], **good)
    with pytest.raises(TypeError, match="dtypes differ"):
        nn.adam_step(t[0], hf.asarray(np.ones(3, np.float32)), t[2], t[3], **good)
    with pytest.raises(ValueError, match="in place"):
        nn.adam_step(hf.asarray(np.ones((3, 2)))[:, 0], *t[1:], **good)
    np.testing.assert_array_equal(host(t[0]), np.ones(3))  # nothing was written


# ---------------------------------------------------------------------- determinism
def test_sums_repeat_bitwise(be, rng):
    """Every sum adds in a fixed order: two runs give the same bits (on the GPU too, where
    the work spreads over many blocks)."""
    for dtype in FLOATS:
        x, y = rand(rng, (300_001,), dtype), rand(rng, (300_001,), dtype)
        X, Y = hf.asarray(x), hf.asarray(y)
        assert bits(nn.sum(X)) == bits(nn.sum(X))
        assert bits(nn.dot(X, Y)) == bits(nn.dot(X, Y))
        for shape in ((5000, 37), (37, 5000), (3, 100_000)):
            M = hf.asarray(rand(rng, shape, dtype))
            assert bits(nn.column_sums(M)) == bits(nn.column_sums(M))
            runs = []
            for _ in range(2):
                O = hf.asarray(np.ones(shape[0], dtype))
                runs.append(bits(nn.accumulate_rows(M, O, beta=0.5)))
            assert runs[0] == runs[1]


# ------------------------------------------------------------------- the MLP example
def test_train_mlp_example():
    path = Path(__file__).resolve().parents[1] / "examples" / "train_mlp.py"
    spec = importlib.util.spec_from_file_location("train_mlp", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    losses = mod.train(steps=60, every=20, device="cpu", log=lambda *a: None)
    assert len(losses) == 4 and all(np.isfinite(l) for _, l in losses)
    assert losses[-1][1] < 0.5 * losses[0][1]
