"""The Polyval kernel of kernels/polyval.cuh without a GPU: its own source compiled for the
CPU with tests/data/host_gpu.h (every thread a fiber), launched as
hipfer.backends.cupy.elementwise._Polyval launches it (element strides of p, x and out,
N-d shape), compared bitwise with numpy.polyval on every kernel dtype, special values
(inf, NaN, -0.0) and layouts (strided, reversed, broadcast x, strided out).

Skipped when no C++ compiler is installed.
"""
from __future__ import annotations

import numpy as np
import pytest

from hipfer.kernels import ctype
from hipfer.kernels import polyval as P

from _host_kernels import CXX, I64 as _I64, INT as _INT, PTR as _PTR, build

pytestmark = pytest.mark.skipif(CXX is None, reason="no host C++ compiler")
BLOCK = 256


def _symbol(dt) -> str:
    return "emu_polyval_" + np.dtype(dt).name


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    """A launcher per dtype that builds the kernel's Shape and Strides from arrays."""
    wrappers = []
    for dt in P.POLYVAL_DTYPES:
        t = ctype(dt)
        wrappers.append(
            f'extern "C" const char* {_symbol(dt)}(unsigned grid, unsigned block, int warp,\n'
            f'    unsigned seed, const {t}* p, long long np_, long long p_st, const {t}* x,\n'
            f'    {t}* out, long long n, const long long* dims, int ndim, const long long* xs,\n'
            f'    const long long* os) {{\n'
            f'  hf::Shape shape{{}}; hf::Strides x_st{{}}, out_st{{}};\n'
            f'  shape.ndim = ndim;\n'
            f'  for (int k = 0; k < ndim; ++k) {{ shape.dim[k] = dims[k]; x_st.s[k] = xs[k];'
            f' out_st.s[k] = os[k]; }}\n'
            f'  return hf_emu::launch(grid, block, warp, seed, [=] {{\n'
            f'    {P.polyval_expr(dt)}(p, np_, p_st, x, out, n, shape, x_st, out_st); }});\n}}')
    args = (_PTR, _I64, _I64, _PTR, _PTR, _I64, _PTR, _INT, _PTR, _PTR)
    return build(tmp_path_factory.mktemp("polyval_host"), P.FILE, {}, "\n".join(wrappers),
                 {_symbol(dt): args for dt in P.POLYVAL_DTYPES})


def _est(a):
    return [s // a.itemsize for s in a.strides]


def emulate(lib, p: np.ndarray, x: np.ndarray, out: np.ndarray, warp=64, seed=0, blocks=3):
    """out[...] = polyval(p, x) by the kernel; p 1-d, x and out views of x's shape (x may
    be a broadcast view); geometry as the handler's (grid capped: the grid loop runs)."""
    assert p.ndim == 1 and x.shape == out.shape and p.dtype == x.dtype == out.dtype
    n = x.size
    if n == 0:
        return out
    shape = np.array(x.shape or (1,), np.int64)
    xs = np.array(_est(x) or [0], np.int64)
    os_ = np.array(_est(out) or [0], np.int64)
    grid = max(1, min(-(-n // BLOCK), blocks))
    msg = getattr(lib, _symbol(x.dtype))(
        grid, BLOCK, warp, seed, p.ctypes.data, p.shape[0], _est(p)[0], x.ctypes.data,
        out.ctypes.data, n, shape.ctypes.data, max(x.ndim, 1) if x.ndim else 0,
        xs.ctypes.data, os_.ctypes.data)
    assert msg is None, msg.decode()
    return out


SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5]


def _values(dt, shape, rng, special=True):
    dt = np.dtype(dt)
    if dt.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, shape, dtype=dt, endpoint=True)
    def real(s):
        v = rng.standard_normal(s) * 4
        if special and v.size:
            m = rng.random(s) < 0.2
            v[m] = rng.choice(SPECIAL, int(m.sum()))
        return v
    if dt.kind != "c":
        return real(shape).astype(dt)
    v = np.empty(shape, dt)
    v.real, v.imag = real(shape), real(shape)
    return v


def polyval_ref(p, x):
    """np.polyval, except complex: Horner with the plain product (re*re - im*im, re*im +
    im*re: the eager GPU kernel's and hf::complex's), since NumPy multiplies complex
    numbers with fmas on some CPUs (see tests/test_kernels_ops_host.py)."""
    if x.dtype.kind != "c":
        return np.polyval(p, x)
    y = np.zeros_like(x)
    for pv in p:
        re = y.real * x.real - y.imag * x.imag
        im = y.real * x.imag + y.imag * x.real
        y = np.empty_like(x)
        y.real, y.imag = re + pv.real, im + pv.imag
    return y


def _same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    if got.dtype.kind in "fc":  # bitwise, NaN payloads aside (NaN == NaN)
        for part in ((got.real, want.real), (got.imag, want.imag)) if got.dtype.kind == "c" \
                else ((got, want),):
            g, w = part
            nan = np.isnan(w)
            assert (np.isnan(g) == nan).all()
            assert (g[~nan].view(f"u{g.itemsize}") == w[~nan].view(f"u{w.itemsize}")).all(), \
                (g, w)
    else:
        assert (got == want).all()


@pytest.mark.parametrize("dt", [np.dtype(t).name for t in P.POLYVAL_DTYPES])
@pytest.mark.parametrize("n_p", [1, 2, 7])
def test_polyval_contiguous(lib, dt, n_p):
    rng = np.random.default_rng(n_p * 31 + len(dt))
    p, x = _values(dt, (n_p,), rng), _values(dt, (1000,), rng)
    out = np.empty_like(x)
    with np.errstate(all="ignore"):
        _same(emulate(lib, p, x, out), polyval_ref(p, x))


@pytest.mark.parametrize("dt", ["float16", "float32", "float64", "complex64", "int32", "bool"])
@pytest.mark.parametrize("layout", ["0d", "strided", "reversed", "transposed", "broadcast",
                                    "empty", "strided_p", "strided_out"])
def test_polyval_layouts(lib, dt, layout):
    rng = np.random.default_rng(len(layout) * 7 + len(dt))
    p = _values(dt, (5,), rng)
    base = _values(dt, (6, 40), rng)
    x = {"0d": base[0, 0], "strided": base[::2, ::3], "reversed": base[::-1, ::-1],
         "transposed": base.T, "empty": base[:0], "strided_p": base,
         "strided_out": base,
         "broadcast": np.broadcast_to(base[:1], (6, 40))}[layout]
    x = np.asarray(x)
    if layout == "strided_p":
        p = _values(dt, (10,), rng)[::-2]
    out = np.empty(x.shape, x.dtype)
    if layout == "strided_out":
        out = np.empty((x.shape[1], x.shape[0]), x.dtype).T
    with np.errstate(all="ignore"):
        want = polyval_ref(p, x)
        _same(emulate(lib, p, x, out, warp=32), want)


def test_polyval_specials_bitwise(lib):
    """every pair of special values of p and x in float64 and float16 (0 * inf = NaN on
    the first step; -0.0 kept)."""
    for dt in ("float64", "float16", "float32"):
        sp = np.array(SPECIAL, dt)
        p = np.array(np.meshgrid(sp, sp)).reshape(2, -1)
        x = np.repeat(sp, 1)
        for k in range(p.shape[1]):
            out = np.empty_like(x)
            with np.errstate(all="ignore"):
                _same(emulate(lib, p[:, k].copy(), x, out), polyval_ref(p[:, k], x))
