"""A user's script, type-checked by mypy in tests/test_public_api_hygiene.py (when mypy is
installed): hipfer's namespace, linalg, fft, random and nn as NumPy-style code uses them.
It runs too (the test runs it), so what mypy accepts here is what hipfer does."""
from __future__ import annotations

import pickle

import hipfer as hf
from hipfer import Tensor


def normalise(x: Tensor) -> Tensor:
    centred = hf.subtract(x, hf.mean(x, axis=0, keepdims=True))
    return hf.divide(centred, hf.add(hf.std(x, axis=0, keepdims=True), 1e-12))


def numpy_style(x: Tensor) -> Tensor:
    """The operators and NumPy-style methods (installed at import; hipfer/_tensor.pyi)."""
    y = (x - x.mean(axis=0, keepdims=True)) / (x.std(axis=0) + 1e-12)
    y[y > 3.0] = 3.0
    n: int = len(y) + y.ndim + y.shape[0] + y.nbytes
    return (y.T @ y).astype(hf.float32).ravel()[: n % 4 + 1]


def main() -> float:
    g = hf.random.default_rng(0)
    x = g.standard_normal((8, 3), dtype=hf.float64)
    y = hf.exp(hf.clip(normalise(x), min=-3.0, max=3.0))
    z = hf.where(hf.greater(y, 1.0), y, 0.0)
    u, s, vh = hf.linalg.svd(hf.matmul(hf.matrix_transpose(z), z), full_matrices=False)
    spec = hf.fft.rfft(hf.sum(z, axis=1))
    act = hf.nn.relu(x)
    w = numpy_style(x)
    assert w.dtype == hf.float32 and f"{w.sum():.3f}" and w.ndim == 1
    exp = pickle.loads(pickle.dumps(hf.exp))
    total: float = float(hf.sum(s)) + float(hf.max(hf.abs(spec))) + float(hf.sum(act))
    assert exp is hf.exp and u.shape == (3, 3) and vh.ndim == 2
    return total


if __name__ == "__main__":
    print(main())
