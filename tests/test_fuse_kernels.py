"""hipfer.fuse's GPU kernel sources: what the tracer lowers to, the text generated, and
NVRTC compiling it (no GPU needed) with contraction off, as the backend compiles it."""
import numpy as np
import pytest

import hipfer as hf
from hipfer._fuse._trace import trace
from hipfer.kernels import fuse as K
from hipfer.prims.optable import BinaryOp, UnaryOp

import test_kernel_rtc as rtc


def _lowered(fn, *args):
    graph, _, _ = trace(fn, args, None)
    return K.lower(graph)


def _t(dt, shape=(3,)):
    return hf.asarray(np.ones(shape, dt))


def test_samples_are_what_the_tracer_produces():
    """The dumped samples (hipfer dump-kernels) stay the specs these functions trace to."""
    f4 = [_t(np.float32) for _ in range(5)]
    assert _lowered(lambda a, b, c, w, t: a * hf.exp(-b * t) + c * hf.sin(w * t), *f4) \
        == K.SAMPLES["damped_f32"]
    assert _lowered(lambda x, s: hf.tanh(x * s) + 0.5, _t(np.float16), 2.0) \
        == K.SAMPLES["half_scale"]
    assert _lowered(lambda x, y: hf.sqrt(hf.where(x > 3, x.astype(hf.float64), y)),
                    _t(np.int32), _t(np.float64)) == K.SAMPLES["where_i32"]
    assert _lowered(lambda a, b: hf.abs(a * b), _t(np.complex64), _t(np.complex64)) \
        == K.SAMPLES["conj_c64"]


def test_source_calls_the_op_table_functors_in_order():
    src = K.source(K.SAMPLES["damped_f32"])
    body = src[src.index("namespace hf { namespace fx_"):]
    calls = [line.split("hf::op_call<hf::op_")[1].split(">")[0]
             for line in body.splitlines() if "hf::op_call<hf::op_" in line]
    assert calls == ["negative", "multiply", "exp", "multiply", "multiply", "sin", "multiply",
                     "add"]
    assert "float t7;" in body and "return t7;" in body
    vec, nd = K.names(K.SAMPLES["damped_f32"])
    assert f'extern "C" __global__ void {vec}(long long n' in src
    assert f'extern "C" __global__ void {nd}(long long n, hf::Shape shape' in src
    assert "hf::nd_offsets_outer(i, shape, shape.ndim, off, so, st0, st1, st2, st3, st4)" in src
    # the headers are inlined (no include path at run time)
    assert not [ln for ln in src.splitlines() if ln.lstrip().startswith('#include "')]


def test_half_steps_round_at_every_op():
    body = K.source(K.SAMPLES["half_scale"]).split("namespace hf { namespace fx_")[1]
    assert body.count("hf::half t") == 3  # each op's result stored as half, as eagerly


def test_conj_folds_at_load_and_scalars_are_arguments():
    src = K.source(K.SAMPLES["half_scale"])
    assert "hf::half s0, hf::half s1, int splat, int conj)" in src
    assert "hf::maybe_conj(v0_0.v[j], (conj >> 0) & 1)" in src
    spec = K.SAMPLES["conj_c64"]
    assert "(conj >> 1) & 1" in K.source(spec)


def test_a_new_scalar_value_keeps_the_source():
    a = _lowered(lambda x: x * 2.0 + 1.0, _t(np.float32))
    b = _lowered(lambda x: x * -7.5 + 3.0, _t(np.float32))
    assert a == b and K.source(a) == K.source(b)


def test_every_row_has_a_step():
    names = {s[1] for t in ("float32", "int32", "complex64", "bool")
             for s in K.row_spec(np.dtype(t)).steps}
    assert {op.row.name for op in (*UnaryOp, *BinaryOp)} <= names


def test_dump_writes_the_fused_groups(tmp_path):
    paths = K.dump(tmp_path, only="fuse_damped")
    assert [p.name for p in paths] == ["fuse_damped_f32.hip", "fuse_damped_f32_sum.hip",
                                       "fuse_damped_f32_sum_axes.hip",
                                       "fuse_damped_f32_max.hip", "fuse_damped_f32_max_axes.hip"]
    text = paths[0].read_text()
    assert "hf_instances[]" in text and K.names(K.SAMPLES["damped_f32"])[0] in text


def test_reduction_kernels_fold_in_a_fixed_order():
    spec = K.SAMPLES["damped_f32"]
    src = K.reduce_source(spec, "sum", np.dtype(np.float32))
    red1, red2 = K.reduce_names(spec, "sum")
    assert f"void __launch_bounds__({K.RED_BLOCK}) {red1}(long long n, long long chunk" in src
    assert f"{red2}(long long m" in src
    assert "atomic" not in src  # partials, then one block: the same result every run
    assert "a = hf::op_add()(a, (A)v);" in src
    mean = K.reduce_source(K.SAMPLES["half_scale"], "mean", np.dtype(np.float16))
    assert "typedef hf::calc_of<hf::half>::type A;" in mean  # float16 accumulates in float
    assert "hf::op_call<hf::op_divide>(sh[0], hf::cast<A>((hf::f64)count))" in mean
    assert "out[0] = hf::cast<hf::half>(" in mean
    # max / min start at the dtype's extreme (floats: -inf / inf; NaN still propagates)
    assert "A a = -hf::fm::inf<A>();" in K.reduce_source(spec, "max", np.dtype(np.float32))
    i8 = K.Spec((np.dtype(np.int8),), (), (), ("x", 0))
    assert "A a = A(127LL);" in K.reduce_source(i8, "min", np.dtype(np.int8))
    i64 = K.Spec((np.dtype(np.int64),), (), (), ("x", 0))
    assert "A a = A(-9223372036854775807LL - 1);" in K.reduce_source(i64, "max",
                                                                      np.dtype(np.int64))


GROUPS = K.instances()


@pytest.mark.gpu_compile
@pytest.mark.skipif(rtc._NVRTC is None, reason="NVRTC not installed (pip install nvidia-cuda-nvrtc)")
@pytest.mark.parametrize("group,text,exprs", GROUPS, ids=[g[0] for g in GROUPS])
def test_nvrtc_compiles(group, text, exprs):
    ok, log, binary, lowered = rtc._compile(rtc._NVRTC, "nvrtc", text, exprs,
                                            rtc.NVRTC_OPTIONS + ["--fmad=false"])
    assert ok, log
    assert not rtc.missing_kernels(binary, lowered, amdgpu=False)


@pytest.mark.gpu_compile
@pytest.mark.skipif(rtc._NVRTC is None, reason="NVRTC not installed")
def test_a_bad_functor_fails_to_compile():
    spec = K.Spec((np.dtype(np.float32),), (), (("op", "no_such_op", np.dtype(np.float32),
                                                 (("x", 0),)),), ("t", 0))
    ok, log, _, _ = rtc._compile(rtc._NVRTC, "nvrtc", K.source(spec), list(K.names(spec)),
                                 rtc.NVRTC_OPTIONS)
    assert not ok and "no_such_op" in log


@pytest.mark.gpu_compile
@pytest.mark.skipif(rtc._hiprtc() is None, reason="hiprtc not installed")
@pytest.mark.parametrize("group,text,exprs", GROUPS, ids=[g[0] for g in GROUPS])
def test_hiprtc_compiles(group, text, exprs):
    ok, log, binary, lowered = rtc._compile(rtc._hiprtc(), "hiprtc", text, exprs,
                                            rtc.HIPRTC_OPTIONS + ["-ffp-contract=off"])
    assert ok, log
    assert not rtc.missing_kernels(binary, lowered, amdgpu=True)


# ------------------------------------------- the generated eval, run on the host
_HOST_PRELUDE = """
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
namespace hf {  // what eval uses from elementwise.cuh (its kernels do not compile on a host)
template <class R> struct cast_op {
  template <class T> R operator()(T x) const { return cast<R>(x); }
};
template <class R> struct op_arg<cast_op<R>, half> { typedef half type; };
}
"""
_HOST_CASES = {  # sample -> (function, argument makers: dtype or a scalar)
    "damped_f32": (lambda a, b, c, w, t: a * hf.exp(-b * t) + c * hf.sin(w * t),
                   ["float32"] * 5),
    "half_scale": (lambda x, s: hf.tanh(x * s) + 0.5, ["float16", 1.75]),
    "where_i32": (lambda x, y: hf.sqrt(hf.where(x > 3, x.astype(hf.float64), y)),
                  ["int32", "float64"]),
    "conj_c64": (lambda a, b: hf.abs(a * b), ["complex64", "complex64"]),
    "conj_sum": (lambda a, b: a * b + a - 1j, ["complex64", "complex64"]),  # conj-sensitive
    "int_wrap": (lambda x, y: (x * 3 + y) // 7 - (x % 5) * y, ["int8", "int8"]),
}


def _host_spec(name):
    """The spec of a host case, traced and lowered (SAMPLES where it is one)."""
    fn, makers = _HOST_CASES[name]
    args = [_t(np.dtype(m), (2,)) if isinstance(m, str) else m for m in makers]
    if name == "conj_sum":
        args[1] = hf.conj(args[1])
    spec = _lowered(fn, *args)
    assert name not in K.SAMPLES or spec == K.SAMPLES[name]
    return spec


@pytest.fixture(scope="module")
def host_lib(tmp_path_factory):
    import ctypes
    import shutil
    import subprocess
    from hipfer.kernels import KERNEL_DIR, ctype
    cxx = shutil.which("g++") or shutil.which("clang++")
    if cxx is None:
        pytest.skip("no host C++ compiler")
    lines = [_HOST_PRELUDE]
    for name in _HOST_CASES:
        spec = _host_spec(name)
        lines.append(K.eval_source(spec).replace("__device__ __forceinline__ ", "inline "))
        ins = ", ".join(f"const {ctype(t)}* p{k}" for k, t in enumerate(spec.inputs))
        scs = "".join(f", const {ctype(t)}* s{k}" for k, t in enumerate(spec.scalars))
        args = ", ".join([f"hf::load(p{k}, i, (conj >> {k}) & 1)"
                          for k in range(len(spec.inputs))]
                         + [f"*s{k}" for k in range(len(spec.scalars))])
        out_t = ctype(K._dtype_of(spec, spec.out))
        lines.append(f'extern "C" void run_{name}(long n, {out_t}* out, {ins}{scs}, int conj) '
                     f"{{ for (long i = 0; i < n; ++i) out[i] = hf::fx_{spec.key()}::eval({args}); }}")
    d = tmp_path_factory.mktemp("fuse_host")
    src, so = d / "fuse_host.cpp", d / "fuse_host.so"
    src.write_text("\n".join(lines) + "\n")
    subprocess.run([cxx, "-std=c++17", "-O1", "-fPIC", "-shared", "-ffp-contract=off",
                    f"-I{KERNEL_DIR}", str(src), "-o", str(so)], check=True)
    return ctypes.CDLL(str(so))


@pytest.mark.parametrize("name", sorted(_HOST_CASES))
def test_generated_eval_matches_the_numpy_backend(host_lib, name):
    """The generated steps (types, order, scalars, the conj fold) give the eager values:
    bitwise where every op is exact (sqrt, comparisons, casts, products), within the
    math libraries' last ulps where one is not (exp, sin, tanh, abs of complex)."""
    import ctypes
    from _util import RTOL, random_array
    fn, makers = _HOST_CASES[name]
    spec = _host_spec(name)
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    arrays, args, scalars = [], [], []
    for m in makers:
        if isinstance(m, str):
            a = random_array(rng, (257,), np.dtype(m), special=True)
            arrays.append(a)
            args.append(hf.asarray(a))
        else:
            args.append(m)
    conj = 2 if name.startswith("conj") else 0  # the second input read conjugated
    if conj:
        args[1] = hf.conj(args[1])
    graph, slots, _ = trace(fn, args, None)
    for n in graph.nodes:
        if n.kind == "scalar":
            src = slots[n.what]
            v = args[src[1]] if src[0] == "arg" else src[1]
            scalars.append(np.array(v, n.dtype))
    want = np.asarray(fn(*args), copy=True)
    got = np.empty(want.shape, K._dtype_of(spec, spec.out))
    ptr = [ctypes.c_void_p(x.ctypes.data) for x in arrays + scalars]
    getattr(host_lib, f"run_{name}")(ctypes.c_long(got.size), ctypes.c_void_p(got.ctypes.data),
                                      *ptr, ctypes.c_int(conj))
    assert got.dtype == want.dtype
    # exact ops only (NumPy's complex product may use FMA instructions: an ulp apart)
    if name in ("where_i32", "int_wrap"):
        assert got.tobytes() == want.tobytes()
    else:
        tol = RTOL[np.dtype(got.dtype.char.lower()) if got.dtype.kind == "c" else got.dtype]
        np.testing.assert_allclose(got, want, rtol=tol * 4, atol=tol, equal_nan=True)
