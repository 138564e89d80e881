"""hipfer/backends/cupy/_launch.py: the packed argument buffer of the direct driver
launch (on the CPU: the byte layout), and on the GPU the same results as
cupy.RawKernel for every kind of argument the kernels take."""
import ctypes

import numpy as np
import pytest

from hipfer.backends.cupy import _launch as L  # noqa: E402  (imports no CuPy at module level)


class _Ptr:
    """Stands in for a device array: its 'address'."""
    def __init__(self, p):
        self.p = p


def test_layout_places_each_argument_at_its_alignment():
    shape = np.zeros((), np.dtype([("dim", "<i8", (3,)), ("ndim", "<i4")], align=True))[()]
    args = [_Ptr(0x1000), np.bool_(True), np.int64(-5), np.int32(7), np.float64(2.5),
            np.complex64(1 - 2j), shape, np.int8(3), _Ptr(0x2000)]
    sig, lay = L.layout_of(args, lambda a: isinstance(a, _Ptr))
    offs = [o for o, _, _ in lay.slots]
    assert offs == [0, 8, 16, 24, 32, 40, 48, 80, 88]
    assert lay.size == 96 and lay.size % 8 == 0
    vals = [a.p if isinstance(a, _Ptr) else a.tobytes() for a in args]
    lay.fill(vals)
    raw = bytes(lay.view)
    assert int.from_bytes(raw[0:8], "little") == 0x1000
    assert raw[8] == 1
    assert np.frombuffer(raw[16:24], np.int64)[0] == -5
    assert np.frombuffer(raw[24:28], np.int32)[0] == 7
    assert np.frombuffer(raw[32:40], np.float64)[0] == 2.5
    assert np.frombuffer(raw[40:48], np.complex64)[0] == np.complex64(1 - 2j)
    assert raw[48:80] == shape.tobytes()
    assert int.from_bytes(raw[88:96], "little") == 0x2000
    base = ctypes.addressof(lay.buf)
    assert [lay.params[i] for i in range(len(args))] == [base + o for o in offs]
    assert sig[0] == "p" and sig[2] == np.dtype(np.int64)


def test_unknown_arguments_are_not_packed():
    assert L.layout_of([np.int32(1), 3], lambda a: False) == (None, None)
    assert L.layout_of([np.int32(1), "x"], lambda a: False) == (None, None)


def test_switch(monkeypatch):
    monkeypatch.delenv("HIPFER_RAW_LAUNCH", raising=False)
    assert L.enabled()
    monkeypatch.setenv("HIPFER_RAW_LAUNCH", "1")
    assert not L.enabled()


_SRC = r"""
struct S { long long dim[3]; int ndim; };
struct C { float re, im; };
extern "C" __global__ void probe(const double* x, double* out, long long n, int k, bool flag,
                                 S s, C c, float f, signed char b) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] * k + (flag ? 1.0 : 0.0) + s.dim[0] + s.dim[2] * 10 + s.ndim * 100
                      + c.re * 1000 + c.im * 10000 + f + b * 0.5;
}
"""


def test_fast_launch_matches_rawkernel():
    cupy = pytest.importorskip("cupy")
    from hipfer.prims.registry import gpu_status
    if not gpu_status().usable:
        pytest.skip("no GPU")
    raw = cupy.RawKernel(_SRC, "probe")
    fast = L.FastKernel(raw, cupy)
    rng = np.random.default_rng(0)
    x = cupy.asarray(rng.standard_normal(1000))
    st = np.zeros((), np.dtype([("dim", "<i8", (3,)), ("ndim", "<i4")], align=True))
    st["dim"] = (3, 4, 5)
    st["ndim"] = 3
    for k in (2, -3):
        args_tail = (np.int64(1000), np.int32(k), np.bool_(k > 0), st[()], np.complex64(0.25 - 0.5j),
                     np.float32(1.5), np.int8(-7))
        a, b = cupy.empty_like(x), cupy.empty_like(x)
        raw((4,), (256,), (x, a) + args_tail)
        fast((4,), (256,), (x, b) + args_tail)
        fast(4, 256, (x[10:], b[10:], np.int64(990)) + args_tail[1:])  # other pointers, ints as grid
        cupy.testing.assert_array_equal(a[:10], b[:10])
        raw((4,), (256,), (x[10:], a[10:], np.int64(990)) + args_tail[1:])
        cupy.testing.assert_array_equal(a, b)
    # a Python int argument is not packable: the RawKernel path takes it
    c = cupy.empty_like(x)
    fast((4,), (256,), (x, c, 1000, np.int32(2), np.bool_(True), st[()], np.complex64(0), np.float32(0), np.int8(0)))
    assert float(c[0]) == pytest.approx(float(x[0]) * 2 + 1 + 3 + 50 + 300)
