"""float16 in the kernels: the software half of common.cuh against NumPy's conversions.

* host: common.cuh compiled with g++ (as test_kernels_ops_host.py does): every one of the
  65536 half bit patterns to float and back, and float / double -> half rounding (ties,
  subnormals, overflow, NaN) against NumPy's astype;
* every backend: the same through PointwiseCast (on the GPU: the kernels themselves),
  float32 accumulation of sums and scans;
* CPU: every prims kernel family that instantiates float instantiates hf::half too, and
  no source includes a vendor fp16 header.
"""
from __future__ import annotations

import ctypes
import importlib
import re
import subprocess

import numpy as np
import pytest

from hipfer.kernels import KERNEL_DIR, all_instances, module_source
from hipfer.prims import descriptors as d
from hipfer.prims.optable import BinaryOp, ReduceOp

from _util import run_prim
from test_kernels_ops_host import _PRELUDE, CXX

ALL_HALF = np.arange(1 << 16, dtype=np.uint16).view(np.float16)


def _ties() -> np.ndarray:
    """The midpoints between neighbouring finite halfs (exact in float32), 65520 included."""
    finite = ALL_HALF[np.isfinite(ALL_HALF)]
    with np.errstate(over="ignore"):
        up = np.nextafter(finite, np.float16(np.inf)).astype(np.float64)
    mid = (finite.astype(np.float64) + up) / 2
    return mid[np.isfinite(mid)]


def _edge_floats() -> np.ndarray:
    """float32 values where rounding to half is delicate: the ties and their neighbours at
    every half exponent (normal and subnormal), the overflow and underflow thresholds."""
    mid = _ties().astype(np.float32)
    ties = np.concatenate([mid, np.nextafter(mid, np.float32(np.inf)),
                           np.nextafter(mid, np.float32(-np.inf))])
    thresholds = np.array([65504, 65519.996, 65520, 65536, 1e30, 2.0 ** -24, 2.0 ** -25,
                           np.nextafter(np.float32(2.0 ** -25), np.float32(1)), 2.0 ** -26,
                           1e-30, 1e-45, 0.0], np.float32)
    edges = np.concatenate([ties, thresholds])
    return np.concatenate([edges, -edges])


def _float_cases(rng) -> np.ndarray:
    """Edge values, NaNs with payloads and random float32 bit patterns."""
    nans = np.array([0x7fc00000, 0xffc00000, 0x7f800001, 0x7fa00000, 0xff801234, 0x7fffffff,
                     0x7f800000, 0xff800000], np.uint32).view(np.float32)
    rand = rng.integers(0, 1 << 32, 200_000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    return np.concatenate([_edge_floats(), nans, rand])


def _double_cases(rng) -> np.ndarray:
    """Doubles where double -> half differs from double -> float -> half (double rounding:
    just off a half tie by less than a float ulp), plus random ones over the half range."""
    mid = _ties()
    off = np.abs(mid) * 2.0 ** -30 + 2.0 ** -60
    rand = rng.standard_normal(100_000) * np.exp(rng.uniform(-20, 12, 100_000))
    cases = np.concatenate([mid, mid + off, mid - off, rand,
                            [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 65520.0, 2.0 ** -25]])
    return cases


def _assert_same_half(got, want):
    """Bit-identical halfs, except that NaNs need only agree on being NaN and on the sign
    (NumPy may use F16C, which quiets signalling NaNs)."""
    got, want = np.asarray(got, np.float16), np.asarray(want, np.float16)
    gb, wb = got.view(np.uint16), want.view(np.uint16)
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    np.testing.assert_array_equal(gb[nan] >> 15, wb[nan] >> 15)
    bad = np.flatnonzero((gb != wb) & ~nan)
    assert bad.size == 0, f"{bad.size} differ, e.g. {[(hex(gb[i]), hex(wb[i])) for i in bad[:5]]}"


# -------------------------------------------------------------------- the host build
@pytest.fixture(scope="module")
def host(tmp_path_factory):
    if CXX is None:
        pytest.skip("no host C++ compiler")
    src = _PRELUDE + """
extern "C" void h2f(const unsigned short* h, float* f, long n) {
  for (long i = 0; i < n; ++i) f[i] = hf::half::from_bits(h[i]);
}
extern "C" void f2h(const float* f, unsigned short* h, long n) {
  for (long i = 0; i < n; ++i) h[i] = hf::half(f[i]).bits;
}
extern "C" void d2h(const double* x, unsigned short* h, long n) {
  for (long i = 0; i < n; ++i) h[i] = hf::half(x[i]).bits;
}
"""
    tmp = tmp_path_factory.mktemp("half_host")
    (tmp / "half.cpp").write_text(src)
    subprocess.run([CXX, "-std=c++17", "-O1", "-fPIC", "-shared", f"-I{KERNEL_DIR}",
                    str(tmp / "half.cpp"), "-o", str(tmp / "half.so")], check=True)
    return ctypes.CDLL(str(tmp / "half.so"))


def _host_map(lib, fn, x, out_dtype):
    x = np.ascontiguousarray(x)
    out = np.empty(x.shape, out_dtype)
    getattr(lib, fn)(ctypes.c_void_p(x.ctypes.data), ctypes.c_void_p(out.ctypes.data),
                     ctypes.c_long(x.size))
    return out


def test_host_half_to_float_and_back(host):
    f = _host_map(host, "h2f", ALL_HALF.view(np.uint16), np.float32)
    ref = ALL_HALF.astype(np.float32)
    nan = np.isnan(ALL_HALF)
    np.testing.assert_array_equal(f.view(np.uint32)[~nan], ref.view(np.uint32)[~nan])
    assert np.isnan(f[nan]).all() and (np.signbit(f[nan]) == np.signbit(ALL_HALF[nan])).all()
    back = _host_map(host, "f2h", f, np.uint16)  # every pattern, NaN payloads included
    np.testing.assert_array_equal(back, ALL_HALF.view(np.uint16))


def test_host_float_to_half_rounding(host, rng):
    x = _float_cases(rng)
    with np.errstate(over="ignore"):
        _assert_same_half(_host_map(host, "f2h", x, np.uint16).view(np.float16), x.astype(np.float16))


def test_host_double_to_half_rounds_once(host, rng):
    x = _double_cases(rng)
    with np.errstate(over="ignore"):
        want = x.astype(np.float16)
    _assert_same_half(_host_map(host, "d2h", x, np.uint16).view(np.float16), want)
    with np.errstate(over="ignore"):  # the cases do tell double -> half from double -> float -> half
        assert (x.astype(np.float32).astype(np.float16) != want).any()


# --------------------------------------------------------------- every backend
def _cast(be, x, dt):
    return run_prim(be, d.PointwiseCast(np.dtype(dt)), [be.asarray(x)])


@pytest.mark.parametrize("via", [np.float32, np.float64, np.complex64, np.complex128])
def test_every_half_round_trips(be, via):
    wide = _cast(be, ALL_HALF, via)
    np.testing.assert_array_equal(wide, ALL_HALF.astype(via))  # NaN == NaN here
    back = _cast(be, wide, np.float16)
    if be.name == "numpy":  # NumPy's own casts may quiet signalling NaNs (F16C)
        _assert_same_half(back, ALL_HALF)
    else:
        np.testing.assert_array_equal(back.view(np.uint16), ALL_HALF.view(np.uint16))


def test_float_and_double_to_half(be, rng):
    x = _float_cases(rng)
    with np.errstate(over="ignore"):
        _assert_same_half(_cast(be, x, np.float16), x.astype(np.float16))
    x = _double_cases(rng)
    with np.errstate(over="ignore"):
        _assert_same_half(_cast(be, x, np.float16), x.astype(np.float16))
    z = (x[:1000] + 1j * x[1000:2000]).astype(np.complex128)
    with np.errstate(over="ignore"), pytest.warns(np.exceptions.ComplexWarning):
        _assert_same_half(_cast(be, z, np.float16), z.astype(np.float16))


@pytest.mark.parametrize("dt", [np.int8, np.uint8, np.int16, np.int32, np.int64, np.uint64, np.bool_])
def test_integer_casts(be, dt, rng):
    if dt == np.bool_:
        x = np.array([True, False])
    else:
        info = np.iinfo(dt)
        x = np.concatenate([rng.integers(info.min, info.max, 1000, dtype=dt, endpoint=True),
                            np.array([0, 1, info.max, info.min], dt)])
        if info.max > 70000:
            x = np.concatenate([x, np.arange(65500, 65540, dtype=dt)])
    with np.errstate(over="ignore"):
        _assert_same_half(_cast(be, x, np.float16), x.astype(np.float16))
    h = ALL_HALF[np.isfinite(ALL_HALF)]
    if dt != np.bool_:  # values in range only: C leaves out-of-range conversions undefined
        w = h.astype(np.float64)
        h = h[(w >= np.iinfo(dt).min) & (w <= np.iinfo(dt).max)]
    np.testing.assert_array_equal(_cast(be, h, dt), h.astype(dt))


def test_nextafter_steps_in_half_ulps(be):
    a = ALL_HALF
    for b in (np.float16(np.inf), np.float16(-np.inf), np.float16(0), np.float16(-0.0)):
        bb = np.full_like(a, b)
        got = run_prim(be, d.ScalarBinary(BinaryOp.NEXTAFTER), [be.asarray(a), be.asarray(bb)])
        with np.errstate(over="ignore"):
            _assert_same_half(got, np.nextafter(a, bb))


def test_sums_accumulate_in_float32(be):
    ones = np.ones(10_000, np.float16)
    total = run_prim(be, d.ScalarReduce(ReduceOp.SUM, ("i",), ()), [be.asarray(ones)])
    assert total == 10_000  # a float16 running sum would stop at 2048
    if be.name == "numpy":
        return  # NumPy's float16 cumsum rounds every step (and stops at 2048)
    for n in (50, 5000):  # one thread per line, and tiles with carries
        got = run_prim(be, d.Cumulative(d.ScanOp.SUM, 0), [be.asarray(ones[:n])])
        np.testing.assert_array_equal(got, np.arange(1, n + 1).astype(np.float16))


# ------------------------------------------------------------------- CPU: the lists
#: the kernel modules of the prims families (the fused ops of hipfer.nn list their own dtypes)
PRIMS_MODULES = ("elementwise", "reduction", "indexing", "rng", "gemm", "sort", "scan", "search")


def test_every_float_kernel_has_a_half_twin():
    """float as an element type (complex<float> aside: there is no complex half, but
    casts between complex64 and float16 exist)."""
    exprs = {e for m in PRIMS_MODULES
             for _, _, es in importlib.import_module(f"hipfer.kernels.{m}").instances() for e in es}
    # histogram's third type is NumPy's result type of its first two (int16 and float16
    # compare in float32), not an element type: its (data, edges) pairs are checked below
    floats = [e for e in exprs if re.search(r"(?<!complex<)\bfloat\b", e)
              and ("complex<float>" not in e or "cast_op" in e)
              and not e.startswith("hf::histogram<")]
    assert len(floats) > 200
    missing = [e for e in floats
               if re.sub(r"(?<!complex<)\bfloat\b", "hf::half", e) not in exprs]
    assert not missing, missing[:10]


def test_every_float_histogram_pair_has_a_half_twin():
    from hipfer.kernels import indexing as K
    pairs = set(K.histogram_pairs())
    f2, f4 = np.dtype(np.float16), np.dtype(np.float32)
    for x, e in pairs:
        if f4 in (x, e):
            twin = (f2 if x == f4 else x, f2 if e == f4 else e)
            assert twin in pairs, (x, e)


def test_no_vendor_half_headers():
    for _, file, _ in all_instances():
        assert not re.search(r"#\s*include\s*[<\"][^>\"]*fp16", module_source(file)), file
