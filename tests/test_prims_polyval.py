"""Polyval against NumPy's polyval: every kernel dtype, layouts of p and x (contiguous,
stepped, reversed, transposed, broadcast), 0-d and empty x, special values, strided and
transposed outputs, conjugated complex operands, and the rules."""
import numpy as np
import pytest

from hipfer.prims import descriptors as d
from hipfer.prims.infer import infer

from _util import ALL_DTYPES, StridedOut, layouts, random_array, run_prim


def _check(got, want):
    """Bitwise for real dtypes (NaN equal to NaN); complex within a few ulps, since
    NumPy multiplies complex numbers with fmas on some CPUs and the kernel does not
    (tests/test_kernels_polyval_host.py holds the kernel to the plain product bitwise)."""
    want = np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.dtype, want.dtype)
    if want.dtype.kind == "c":
        np.testing.assert_allclose(got, want, rtol=1e-5 if want.dtype == np.complex64
                                   else 1e-13, atol=0)
    else:
        np.testing.assert_array_equal(got, want)


def _ref(p, x):
    with np.errstate(all="ignore"):
        return np.asarray(np.polyval(p, x))


@pytest.mark.parametrize("dt", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(), (0,), (37,), (3, 4, 5)], ids=str)
def test_values_and_layouts(be, rng, dt, shape):
    special = np.dtype(dt).kind == "f"
    ps = layouts(be, rng, (6,), dt, special=special, scale=1.5)
    xs = layouts(be, rng, shape, dt, special=special, scale=1.5)
    for (_, p, pn), (_, x, xn) in zip(ps * 4, xs):
        _check(run_prim(be, d.Polyval(), [p, x]), _ref(pn, xn))


@pytest.mark.parametrize("dt", [np.dtype(np.float16), np.dtype(np.float32),
                                np.dtype(np.float64), np.dtype(np.int16)], ids=str)
def test_special_values_bitwise(be, dt):
    """0 * inf = NaN on the first step, -0.0 kept, float16 rounded every step."""
    sp = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, 3.0] if dt.kind == "f" \
        else [0, 1, -1, 300, -32768, 32767]
    sp = np.array(sp).astype(dt)
    x = np.repeat(sp, len(sp))
    for p in ([sp[i], sp[j]] for i in range(len(sp)) for j in range(len(sp))):
        p = np.array(p, dt)
        _check(run_prim(be, d.Polyval(), [be.asarray(p), be.asarray(x)]), _ref(p, x))


def test_broadcast_x_and_empty_p(be, rng):
    p = random_array(rng, (4,), np.float32)
    xn = random_array(rng, (1, 5), np.float32)
    x = be.asarray(xn)
    xb = be.xp.broadcast_to(x, (3, 5))  # stride 0 on the first axis
    _check(run_prim(be, d.Polyval(), [be.asarray(p), xb]), _ref(p, np.broadcast_to(xn, (3, 5))))
    _check(run_prim(be, d.Polyval(), [be.asarray(p[:0]), x]), _ref(p[:0], xn))


@pytest.mark.parametrize("kind", ["step", "transposed"])
def test_strided_out(be, rng, kind):
    p = random_array(rng, (5,), np.float64)
    xn = random_array(rng, (6, 4), np.float64, special=True)
    out = StridedOut(be, (6, 4), np.float64, kind)
    got = run_prim(be, d.Polyval(), [be.asarray(p), be.asarray(xn)], out=out.view)
    _check(got, _ref(p, xn))
    out.check_gaps()


def test_conjugated_operands(be, rng):
    p = random_array(rng, (3,), np.complex128)
    xn = random_array(rng, (4, 3), np.complex128)[::-1]
    for conj in ((True, False), (False, True), (True, True)):
        want = _ref(np.conj(p) if conj[0] else p, np.conj(xn) if conj[1] else xn)
        _check(run_prim(be, d.Polyval(), [be.asarray(p), be.asarray(xn)], conj=conj), want)


def test_rules():
    f4, f8 = np.dtype(np.float32), np.dtype(np.float64)
    assert infer(d.Polyval(), (f4, f4), ((3,), (2, 5))) == (((2, 5), f4),)
    with pytest.raises(TypeError, match="Polyval: dtypes differ"):
        infer(d.Polyval(), (f4, f8), ((3,), (2,)))
    with pytest.raises(ValueError, match="Polyval: p must be 1-d"):
        infer(d.Polyval(), (f4, f4), ((3, 1), (2,)))
    with pytest.raises(ValueError):
        infer(d.Polyval(), (f4,), ((3,),))
    with pytest.raises(TypeError, match="Polyval"):
        infer(d.Polyval(), (np.dtype("M8[s]"),) * 2, ((3,), (2,)))
