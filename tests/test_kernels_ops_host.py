"""The device functors of kernels/ops.cuh, compiled as host C++ (g++) and checked
against NumPy on the CPU: every op row x every dtype it accepts, random values plus the
special values (signed zeros, +-inf, NaN, huge, tiny) where NumPy follows C99 Annex G.

This checks the formulas themselves (branch cuts, overflow-free scaling, accuracy near
0 and |z| = 1) without a GPU; the GPU suite then checks the kernels around them.
Skipped when no C++ compiler is installed.
"""
from __future__ import annotations

import ctypes
import itertools
import shutil
import subprocess
import warnings

import numpy as np
import pytest

from hipfer.kernels import KERNEL_DIR, ctype, dtypes_of_kinds
from hipfer.prims.infer import real_dtype
from hipfer.prims.optable import BinaryOp, UnaryOp

CXX = shutil.which("g++") or shutil.which("clang++")
pytestmark = pytest.mark.skipif(CXX is None, reason="no host C++ compiler")

_PRELUDE = """
#include <math.h>
#define __device__
#define __host__
#define __forceinline__ inline
#include <string.h>
static inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
static inline double __longlong_as_double(long long i) { double f; memcpy(&f, &i, 8); return f; }
static inline int __float_as_int(float f) { int i; memcpy(&i, &f, 4); return i; }
static inline long long __double_as_longlong(double f) { long long i; memcpy(&i, &f, 8); return i; }
#include "ops.cuh"
template <class Op, class T, class R> void map1(const void* x, void* y, long n) {
  for (long i = 0; i < n; ++i) ((R*)y)[i] = hf::op_call<Op>(((const T*)x)[i]);
}
template <class Op, class T, class R> void map2(const void* a, const void* b, void* y, long n) {
  for (long i = 0; i < n; ++i) ((R*)y)[i] = hf::op_call<Op>(((const T*)a)[i], ((const T*)b)[i]);
}
"""


def _result(row, dt):
    if row.result == "bool":
        return np.dtype(np.bool_)
    return real_dtype(dt) if row.result == "real" else dt


def _symbol(row, dt):
    return f"{row.name}_{dt.name}"


def _cases():
    for op in list(UnaryOp) + list(BinaryOp):
        for dt in dtypes_of_kinds(op.row.kinds):
            yield op.row, dt


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    lines = [_PRELUDE]
    for row, dt in _cases():
        t, r = ctype(dt), ctype(_result(row, dt))
        if row.arity == 1:
            lines.append(f'extern "C" void {_symbol(row, dt)}(const void* x, void* y, long n) '
                         f'{{ map1<hf::op_{row.name}, {t}, {r}>(x, y, n); }}')
        else:
            lines.append(f'extern "C" void {_symbol(row, dt)}(const void* a, const void* b, void* y, '
                         f'long n) {{ map2<hf::op_{row.name}, {t}, {r}>(a, b, y, n); }}')
    d = tmp_path_factory.mktemp("ops_host")
    src, so = d / "ops_host.cpp", d / "ops_host.so"
    src.write_text("\n".join(lines) + "\n")
    subprocess.run([CXX, "-std=c++17", "-O1", "-fPIC", "-shared", "-ffp-contract=off",
                    f"-I{KERNEL_DIR}", str(src), "-o", str(so)], check=True)
    return ctypes.CDLL(str(so))


def _call(lib, row, dt, *xs):
    out = np.empty(xs[0].shape, _result(row, dt))
    fn = getattr(lib, _symbol(row, dt))
    args = [ctypes.c_void_p(np.ascontiguousarray(x).ctypes.data) for x in xs]
    fn(*args, ctypes.c_void_p(out.ctypes.data), ctypes.c_long(out.size))
    return out


# ------------------------------------------------------------------ references
def _xlogy(x, y):
    return np.where((x == 0) & ~np.isnan(y), np.zeros_like(x), x * np.log(y))


def _log1p(z):
    """NumPy's log(hypot(1 + x, y)) loses the digits of small z: the real part in long
    double from 2x + x^2 + y^2 instead (the kernels are accurate there)."""
    if z.dtype.kind != "c":
        return np.log1p(z)
    ref = np.log1p(z)
    x, y = z.real.astype(np.longdouble), z.imag.astype(np.longdouble)
    s = 2 * x + x * x + y * y
    near0 = np.isfinite(z) & (s > -0.5)
    re = np.where(near0, 0.5 * np.log1p(s), ref.real)
    ref.real = re
    return ref


def _backend_ref(name):
    """The NumPy backend's own function, where it departs from NumPy's (integer power
    with negative exponents, the standard's complex sign of NaN, expm1 at infinities and
    zeros, floor_divide at infinities, older NumPys' complex inverse functions at special
    values)."""
    from hipfer.backends.numpy.elementwise import numpy_impl

    def ref(*xs):
        out = np.empty(np.broadcast_shapes(*(x.shape for x in xs)), xs[0].dtype)
        numpy_impl(name, xs[0].dtype)(*xs, out=out)
        return out
    return ref


_REF = {
    "power": _backend_ref("power"),
    "sign": _backend_ref("sign"),
    "expm1": _backend_ref("expm1"),
    "floor_divide": _backend_ref("floor_divide"),  # the standard's cases at infinities
    # NumPy < 2.3 departs from the standard at a few complex special values; the backend
    # puts them right (backends/numpy/elementwise._ANNEX_G)
    "arccosh": _backend_ref("arccosh"),
    "arcsin": _backend_ref("arcsin"),
    "arcsinh": _backend_ref("arcsinh"),
    "log1p": _log1p,
    "rsqrt": lambda x: 1 / np.sqrt(x),
    "clamp_min": lambda x, lo: np.where(x < lo, lo, x),
    "clamp_max": lambda x, hi: np.where(x > hi, hi, x),
    "xlogy": _xlogy,
    # NumPy's own functions that the backend computes as the kernels do (float16 sinc in
    # float32, i0 in float64, frexp's two outputs, ldexp's float exponent)
    "sinc": _backend_ref("sinc"),
    "i0": _backend_ref("i0"),
    "frexp_mantissa": _backend_ref("frexp_mantissa"),
    "frexp_exponent": _backend_ref("frexp_exponent"),
    "ldexp": _backend_ref("ldexp"),
    "fmod": _backend_ref("fmod"),
    "divmod_quotient": _backend_ref("divmod_quotient"),
}


def _reference(row, dt, *xs):
    fn = _REF.get(row.name) or getattr(np, row.name)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return np.asarray(fn(*xs)).astype(_result(row, dt))


# ---------------------------------------------------------------------- inputs
_SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 1e-30, -3e-20, 1e30, -2e25,
            np.inf, -np.inf, np.nan, 0.7, -1.3, 3.5, 1.0 + 2 ** -20, 0.99]


# NumPy multiplies complex numbers with fmas on some CPUs: overflowing intermediates then
# give inf where the plain formula (and the GPU) gives nan. Not tested there.
_PLAIN_PRODUCT = {"square", "multiply"}
# A power with a finite exponent of 1e25 or more is all rounding noise.
_NOISE = {"power"}


def _inputs(op_name, dt, arity, rng):
    if dt.kind == "b":
        vals = np.array([False, True])
        return [a.ravel() for a in np.meshgrid(*[vals] * arity)]
    if dt.kind in "iu":
        info = np.iinfo(dt)
        edge = [0, 1, 2, 3, info.max, info.max - 1, info.min, info.min + 1, 7, 100]
        vals = np.concatenate([np.array(edge, dtype=dt),
                               rng.integers(info.min, info.max, 40, endpoint=True, dtype=dt)])
        return [a.ravel() for a in np.meshgrid(*[vals] * arity)]
    real = real_dtype(dt)
    with np.errstate(all="ignore"):
        spec = np.array(_SPECIAL, dtype=real)
        rnd = np.concatenate([rng.standard_normal(30) * 3, rng.uniform(-1.2, 1.2, 30),
                              np.exp(rng.uniform(-40, 40, 10))]).astype(real)
    if dt.kind == "f":
        vals = np.concatenate([spec, rnd])
        return [a.ravel() for a in np.meshgrid(*[vals] * arity)]
    # complex: every pair of specials, random points, points near |z| = 1
    parts = np.concatenate([spec, rnd[:20]])
    grid = np.array([complex(a, b) for a, b in itertools.product(parts, parts)])
    ang = rng.uniform(-np.pi, np.pi, 50)
    ring = (1 + rng.standard_normal(50) * 1e-4) * np.exp(1j * ang)
    z = np.concatenate([grid, rng.standard_normal(200) * 2 + 1j * rng.standard_normal(200) * 2, ring]
                       ).astype(dt)
    if op_name in _PLAIN_PRODUCT:
        z = z[np.isfinite(z) & (np.abs(z) < 1e15)]
    if op_name in _NOISE:
        z = z[~np.isfinite(z) | (np.abs(z) < 1e15)]
    if arity == 1:
        return [z]
    w = rng.permutation(z)
    return [z, w]


# ------------------------------------------------------------------- comparing
def _close_real(got, ref, tol, scale):
    """NaN where NumPy has NaN, the same infinities, finite values within tol * scale."""
    gn, rn = np.isnan(got), np.isnan(ref)
    bad = gn != rn
    ri = np.isinf(ref)
    bad |= ri & (got != ref)
    fin = ~rn & ~ri
    with np.errstate(all="ignore"):
        err = np.abs(got.astype(np.float64) - ref.astype(np.float64))
        bad |= fin & ~(err <= tol * scale + np.finfo(ref.dtype).tiny * 16)
    return bad


def _mismatches(got, ref, dt):
    if got.dtype.kind in "biu":
        return got != ref
    real = real_dtype(got.dtype)
    tol = {np.float16: 1e-3, np.float32: 2e-6}.get(real.type, 4e-15)  # float16: one ulp
    if got.dtype.kind == "c":
        with np.errstate(all="ignore"):  # the larger finite part sets the scale
            re, im = (np.abs(np.where(np.isfinite(p), p, 0)).astype(np.float64) for p in (ref.real, ref.imag))
            scale = np.maximum(re, im)
        return _close_real(got.real, ref.real, tol, scale) | _close_real(got.imag, ref.imag, tol, scale)
    with np.errstate(all="ignore"):
        scale = np.abs(ref.astype(np.float64))
    return _close_real(got, ref, tol, scale)


@pytest.mark.parametrize("row,dt", list(_cases()), ids=lambda v: getattr(v, "name", str(v)))
def test_functor_matches_numpy(lib, row, dt, rng):
    xs = _inputs(row.name, dt, row.arity, rng)
    got = _call(lib, row, dt, *xs)
    ref = _reference(row, dt, *xs)
    bad = _mismatches(got, ref, dt)
    if bad.any():
        i = np.flatnonzero(bad)[:8]
        rows = "\n".join(f"  {tuple(x[k] for x in xs)}: got {got[k]!r}, numpy {ref[k]!r}" for k in i)
        pytest.fail(f"{row.name}[{dt}]: {bad.sum()} of {bad.size} differ, e.g.\n{rows}")
