"""Helpers for the backend-generic prims tests.

Everything here touches backend arrays only through ``be.asarray`` / ``be.asnumpy`` /
``be.xp`` and slicing, so a test written with it runs on every backend.
"""
from __future__ import annotations

import numpy as np

BOOL = [np.dtype(np.bool_)]
INTS = [np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64)]
UINTS = [np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64)]
FLOATS = [np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)]
COMPLEX = [np.dtype(np.complex64), np.dtype(np.complex128)]
ALL_DTYPES = BOOL + INTS + UINTS + FLOATS + COMPLEX
INDEX_DTYPES = [np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64, np.uint8,
                                      np.uint32, np.uint64)]

# elementwise float ops: GPU math libraries differ from NumPy's by a few ulps (float16
# computes in float32 and rounds once: a float32 ulp can move it by one float16 ulp)
RTOL = {np.dtype(np.float16): 2e-3, np.dtype(np.float32): 2e-6, np.dtype(np.float64): 1e-14,
        np.dtype(np.complex64): 1e-5, np.dtype(np.complex128): 1e-12}
# accumulations (sums, products, GEMM): relative to the sum of magnitudes
ACC_RTOL = {np.dtype(np.float16): 2e-3, np.dtype(np.float32): 1e-5, np.dtype(np.float64): 1e-12,
            np.dtype(np.complex64): 1e-5, np.dtype(np.complex128): 1e-12}


def dtypes_of(kinds: str) -> list:
    """The test dtypes whose kind is in kinds (e.g. 'iuf')."""
    return [t for t in ALL_DTYPES if t.kind in kinds]


def ids(dtypes) -> list:
    return [str(t) for t in dtypes]


# ------------------------------------------------------------------ random data
def random_array(rng, shape, dtype, *, special=False, scale=3.0, low=None, high=None):
    """Random NumPy data of dtype: bools half True, integers over the full range (or
    [low, high]), floats normal(0, scale), complex with both parts random. special=True
    sprinkles NaN, +-inf, -0.0 and 0.0 into real floats."""
    dt = np.dtype(dtype)
    shape = tuple(shape)
    if dt.kind == "b":
        return np.asarray(rng.random(shape) < 0.5)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        lo = info.min if low is None else low
        hi = info.max if high is None else high
        return np.asarray(rng.integers(lo, hi, size=shape, endpoint=True, dtype=dt))
    if dt.kind == "f":
        x = np.asarray(rng.standard_normal(shape) * scale).astype(dt)
        if special and x.size:
            flat = x.reshape(-1)
            specials = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0], dt)
            pos = rng.choice(flat.size, size=min(flat.size, len(specials)), replace=False)
            flat[pos] = specials[:len(pos)]
        return x
    re = rng.standard_normal(shape) * scale
    im = rng.standard_normal(shape) * scale
    return np.asarray(re + 1j * im).astype(dt)


def with_ties(rng, x, y):
    """y with about a third of its entries copied from x (same shape), so that
    comparisons and equality see equal pairs."""
    y = y.copy()
    if y.shape == x.shape and y.size:
        mask = rng.random(y.shape) < 0.35
        y[mask] = x[mask]
    return y


# ----------------------------------------------------------------------- layouts
def layouts(be, rng, shape, dtype, **kw):
    """[(name, backend view, NumPy equivalent)] for one logical shape: contiguous,
    stepped (x[::2]), reversed (x[::-1]) and transposed; 0-d shapes only contiguous."""
    shape = tuple(shape)
    x = random_array(rng, shape, dtype, **kw)
    out = [("contig", be.asarray(x), x)]
    if not shape:
        return out
    big = random_array(rng, tuple(2 * n for n in shape), dtype, **kw)
    step = tuple(slice(None, None, 2) for _ in shape)
    out.append(("step", be.asarray(big)[step], big[step]))
    rev = tuple(slice(None, None, -1) for _ in shape)
    r = random_array(rng, shape, dtype, **kw)
    out.append(("reversed", be.asarray(r)[rev], r[rev]))
    t = random_array(rng, shape[::-1], dtype, **kw)
    out.append(("transposed", be.asarray(t).T, t.T))
    return out


def broadcast_view(be, x_np, shape):
    """A stride-0 backend view of x_np broadcast to shape, and its NumPy equivalent."""
    return be.xp.broadcast_to(be.asarray(x_np), shape), np.broadcast_to(x_np, shape)


class StridedOut:
    """An output view into a larger zero-filled buffer: every other row (or the
    transpose of a buffer), so a test can check the result and that the gaps are
    untouched."""

    def __init__(self, be, shape, dtype, kind="step"):
        shape = tuple(shape)
        self.be, self.kind = be, kind
        if kind == "step" and shape:
            self.buf = be.asarray(np.zeros((2 * shape[0],) + shape[1:], dtype))
            self.view = self.buf[::2]
        elif kind == "transposed":
            self.buf = be.asarray(np.zeros(shape[::-1], dtype))
            self.view = self.buf.T
        else:
            self.buf = be.asarray(np.zeros(shape, dtype))
            self.view = self.buf

    def check_gaps(self):
        """The buffer entries outside the view are still zero."""
        if self.kind == "step" and self.view.ndim:
            gaps = self.be.asnumpy(self.buf)[1::2]
            assert not np.any(gaps), "wrote outside the strided output view"


def nan_filled(be, shape, dtype):
    """A backend output pre-filled with NaN (or the dtype's max for ints): beta == 0
    must never read it."""
    dt = np.dtype(dtype)
    fill = np.nan if dt.kind in "fc" else (True if dt.kind == "b" else np.iinfo(dt).max)
    return be.asarray(np.full(shape, fill, dt))


# --------------------------------------------------------------------- running
_OUTPUT_ONLY = ("Generate", "Uniform", "Normal", "Integer")  # dtypes/shapes describe the output


def plan_shapes(be, desc, dtypes, shapes):
    """Plan from dtypes and shapes alone, as for C-contiguous inputs (strides included
    where the backend wants them)."""
    B = be.backend
    strides = None
    if B.wants_strides:
        n_in = 0 if type(desc).__name__ in _OUTPUT_ONLY else len(dtypes)
        strides = tuple(_c_strides(s, t) for s, t in zip(shapes[:n_in], dtypes[:n_in]))
    return B.plan(desc, dtypes, shapes, strides=strides)


def _c_strides(shape, dtype):
    strides, step = [], np.dtype(dtype).itemsize
    for n in reversed(tuple(shape)):
        strides.append(step)
        step *= max(int(n), 1)
    return tuple(reversed(strides))


def plan_for(be, desc, inputs, conj=None, *, spec=None, out_shape=None):
    """The backend plan for desc over backend arrays inputs (shapes/dtypes/strides taken
    from them); spec=(shape, dtype) for output-only prims, out_shape for AntiTrace."""
    B = be.backend
    inputs = tuple(inputs)
    if spec is not None:
        dtypes, shapes = (np.dtype(spec[1]),), (tuple(spec[0]),)
    else:
        dtypes = tuple(a.dtype for a in inputs)
        shapes = tuple(tuple(a.shape) for a in inputs)
        if out_shape is not None:
            shapes += (tuple(out_shape),)
    strides = tuple(tuple(a.strides) for a in inputs) if B.wants_strides else None
    return B.plan(desc, dtypes, shapes, strides=strides,
                  conj=tuple(conj) if conj is not None else None)


def run_prim(be, desc, inputs, conj=None, out=None, *, spec=None, out_shape=None, **params):
    """Plan, allocate (unless out is given), execute; the output(s) as NumPy arrays
    (a tuple for Topk)."""
    B = be.backend
    inputs = tuple(inputs)
    plan = plan_for(be, desc, inputs, conj, spec=spec, out_shape=out_shape)
    if out is None:
        outs = tuple(B.empty(s, t) for s, t in plan.outs)
        out = outs[0] if len(outs) == 1 else outs
    B.execute(plan, inputs, out, **params)
    if isinstance(out, tuple):
        return tuple(be.asnumpy(o) for o in out)
    return be.asnumpy(out)


# ------------------------------------------------------------------ comparisons
def assert_same(actual, expected):
    """Exact equality, dtype and shape included (NaN equal to NaN)."""
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    np.testing.assert_array_equal(actual, expected)


def assert_elementwise(actual, expected, dtype=None, rtol=None):
    """Exact for bool/int results, rtol (RTOL of the dtype) for float/complex ones."""
    dt = np.dtype(dtype or actual.dtype)
    expected = np.asarray(expected).astype(dt)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    assert actual.dtype == dt, (actual.dtype, dt)
    if dt.kind in "fc":
        # atol: a float32 subnormal result comes back as 0 from GPU kernels, which compile
        # with flush-to-zero as CuPy's do (docs/numpy.md, "Known divergences")
        atol = np.finfo(np.float32).tiny if dt in (np.float32, np.complex64) else 0
        np.testing.assert_allclose(actual, expected, rtol=rtol or RTOL[dt], atol=atol,
                                   equal_nan=True)
    else:
        np.testing.assert_array_equal(actual, expected)


def assert_accumulated(actual, expected, magnitude, dtype):
    """Float accumulations: |actual - expected| <= ACC_RTOL * magnitude (the sum of the
    magnitudes of the terms), elementwise; NaN where expected is NaN."""
    dt = np.dtype(dtype)
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    if dt.kind not in "fc":
        np.testing.assert_array_equal(actual, expected.astype(dt))
        return
    nan = np.isnan(expected)
    np.testing.assert_array_equal(np.isnan(actual), nan)
    ok = nan | (np.abs(actual - expected) <= ACC_RTOL[dt] * np.asarray(magnitude) + 1e-30)
    ok |= actual == expected  # equal infinities
    assert ok.all(), (f"mismatch at {np.argwhere(~ok)[:5].tolist()}: "
                      f"{actual[~ok][:5]} vs {expected[~ok][:5]}")
