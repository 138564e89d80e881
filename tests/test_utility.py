"""diff and the constants, against NumPy."""
import math

import numpy as np
import pytest

import hipfer as hf

from test_tensor import host, rand


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.int64, np.float32, np.complex128])
def test_diff(be, rng, dtype):
    a = rand(rng, (4, 6), dtype)
    x = hf.asarray(a)
    for kw in [{}, {"axis": 0}, {"n": 2}, {"n": 0}, {"axis": -2, "n": 3}, {"n": 9}]:
        np.testing.assert_array_equal(host(hf.diff(x, **kw)), np.diff(a, **kw))
    np.testing.assert_array_equal(host(hf.diff(x[:, ::-2])), np.diff(a[:, ::-2]))
    pre, app = rand(rng, (4, 1), dtype), rand(rng, (4, 2), dtype)
    np.testing.assert_array_equal(
        host(hf.diff(x, prepend=hf.asarray(pre), append=hf.asarray(app))),
        np.diff(a, prepend=pre, append=app))


def test_diff_conj_and_errors(be, rng):
    a = rand(rng, (5,), np.complex64)
    np.testing.assert_array_equal(host(hf.diff(hf.conj(hf.asarray(a)))), np.diff(np.conj(a)))
    with pytest.raises(ValueError):
        hf.diff(hf.asarray(1.0))
    with pytest.raises(IndexError):
        hf.diff(hf.asarray(a), axis=1)
    with pytest.raises(ValueError):
        hf.diff(hf.asarray(a), n=-1)


def test_constants():
    assert hf.e == math.e and hf.pi == math.pi and hf.inf == math.inf
    assert math.isnan(hf.nan) and hf.newaxis is None
    assert isinstance(hf.pi, float)
