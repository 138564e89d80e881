"""The NumPy backend's chunked evaluation (backends/numpy/_common.by_chunks): formulas of
several passes run over cache-sized chunks of the output. With the chunk made a few
elements long here, every chunked path -- activations, conjugated operands written into
the output, broadcast scalars, views that cannot be chunked -- must give bit for bit what
the one-call evaluation gives, special values included."""
import numpy as np
import pytest

import hipfer as hf
from hipfer import nn
from hipfer.backends.numpy import _common
from hipfer.nn._activation import reference as fa

SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 88.0, -88.0, 1e-30, -1e-30, 710.0, -710.0]


def _data(rng, n, dt):
    x = (rng.standard_normal(n) * 5).astype(dt)
    x[: len(SPECIAL)] = SPECIAL
    return x


@pytest.fixture
def tiny_chunks(monkeypatch):
    monkeypatch.setattr(_common, "CHUNK_BYTES", 24)  # a few elements: many chunks and a tail


def _cpu(x):
    return hf.asarray(x, device="cpu")


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["relu", "sigmoid", "silu", "tanh", "exp", "neg"])
def test_chunked_activations_match_one_call(rng, tiny_chunks, name, dt):
    x = _data(rng, 257, dt)
    with np.errstate(all="ignore"):
        want = fa.FORWARD[name](x.copy())
    got = getattr(nn, name)(_cpu(x))._host()
    np.testing.assert_array_equal(got, want)
    # signed zeros agree; a NaN's sign bit is not (NumPy 2.2's SIMD and scalar loops differ)
    num = ~np.isnan(want)
    assert np.array_equal(np.signbit(got[num]), np.signbit(want[num]))
    # a strided view is not chunked, and gives the same
    got_view = getattr(nn, name)(_cpu(np.repeat(x, 2))[::2])._host()
    np.testing.assert_array_equal(got_view, want)


def test_sigmoid_formula(rng):
    """max(e, [x >= 0]) / (1 + e) is the branchy formula exactly, NaN and -0.0 included."""
    for dt in (np.float32, np.float64):
        x = _data(rng, 1000, dt)
        with np.errstate(all="ignore"):
            e = np.exp(-np.abs(x))
            want = np.where(x < 0, e / (1 + e), 1 / (1 + e))
            np.testing.assert_array_equal(fa.sigmoid(x), want)
            assert fa.sigmoid(np.array(-3.0, dt)).shape == ()


def test_relu_probe_and_values():
    for dt in (np.float16, np.float32, np.float64):
        x = np.array(SPECIAL * 3, dt)
        r = fa._relu(x)
        nan = np.isnan(x)
        assert np.isnan(r[nan]).all() and not np.signbit(r[~nan]).any()
        np.testing.assert_array_equal(r[~nan], np.where(x[~nan] > 0, x[~nan], 0))
        assert isinstance(fa._max_is_relu(np.dtype(dt)), bool)


@pytest.mark.parametrize("op", ["multiply", "add", "subtract", "divide", "equal"])
@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_chunked_conjugated_operands(rng, tiny_chunks, op, dt):
    n = 301
    with np.errstate(invalid="ignore"):  # 1j * inf
        a = (_data(rng, n, np.float64) + 1j * _data(rng, n, np.float64)[::-1]).astype(dt)
    b = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dt)
    f = getattr(hf, op)
    with np.errstate(all="ignore"):
        ref = getattr(np, op)
        cases = [(f(hf.conj(_cpu(a)), _cpu(b)), ref(np.conj(a), b)),
                 (f(_cpu(b), hf.conj(_cpu(a))), ref(b, np.conj(a))),
                 (f(hf.conj(_cpu(a)), hf.conj(_cpu(b))), ref(np.conj(a), np.conj(b))),
                 (f(hf.conj(_cpu(a)), _cpu(b[:1])), ref(np.conj(a), b[:1])),        # broadcast scalar
                 (f(hf.conj(_cpu(a[::2])), _cpu(b[::2])), ref(np.conj(a[::2]), b[::2])),  # views
                 (f(hf.conj(_cpu(a.reshape(7, 43))), _cpu(b[:43])), ref(np.conj(a.reshape(7, 43)), b[:43]))]
    for got, want in cases:
        if op in ("multiply", "divide"):
            # NumPy's own complex products differ in the last bit between its SIMD body
            # and its scalar tail, so chunking moves them by an ulp: no bitwise promise
            np.testing.assert_allclose(got._host(), want, rtol=4 * np.finfo(dt).eps, atol=0)
        else:
            np.testing.assert_array_equal(got._host(), want)


def test_conjugated_operand_in_place(rng, tiny_chunks):
    """x += conj(y) and x *= conj(x): out is an input, so conj is not written into it."""
    n = 97
    x = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex128)
    y = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex128)
    t = _cpu(x.copy())
    t += hf.conj(_cpu(y))
    np.testing.assert_array_equal(t._host(), x + np.conj(y))
    t = _cpu(x.copy())
    t *= hf.conj(t)
    np.testing.assert_allclose(t._host(), x * np.conj(x), rtol=4e-16, atol=0)


def test_take_checks_bounds_before_wrapping(rng):
    x = _cpu(rng.standard_normal((50, 3)))
    for bad in ([0, 50], [-51], [49, 3, 200]):
        with pytest.raises(IndexError, match=f"index {[b for b in bad if not -50 <= b < 50][0]} is out of bounds"):
            hf.take(x, hf.asarray(np.array(bad), device="cpu"), axis=0)
    idx = np.array([-50, -1, 0, 49, 7])
    np.testing.assert_array_equal(hf.take(x, hf.asarray(idx, device="cpu"), axis=0)._host(),
                                  np.take(x._host(), idx, axis=0))
