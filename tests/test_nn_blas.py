"""hipfer.nn BLAS-like fused ops against NumPy on each backend."""
import numpy as np
import pytest

import hipfer as hf
import hipfer.nn as nn

from test_tensor import host, rand

FLOATS = [np.float32, np.float64]


def tol(dt):
    return dict(rtol=1e-5, atol=1e-6) if np.dtype(dt) == np.float32 else dict(rtol=1e-12, atol=1e-12)


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
