// ops.cuh -- one device functor per elementwise op row of hipfer/prims/optable.py.
//
// The functor for row `name` is hf::op_<name>; its call operator is templated on the
// element type and returns the row's result type (same / real / bool). Adding an op is
// one row in optable.py plus one functor here. Results follow NumPy: principal
// branches, C99 Annex G special values where NumPy (glibc) has them, integer
// arithmetic wrapping (two's complement), bool add = or, bool mul = and.
//
// Only builtins are used (no <cmath>): float calls the f-suffixed function, double the
// plain one, through the hf::fm wrappers below. The file also compiles as host C++
// (tests/test_kernels_ops_host.py checks the formulas against NumPy on the CPU).
// (inlined once by hipfer.kernels.module_source: no include guard needed)
#include "common.cuh"

#define HF_OP __device__ __forceinline__

namespace hf {

// ---- type classes --------------------------------------------------------------
template <class A, class B> struct is_same { static const bool value = false; };
template <class A> struct is_same<A, A> { static const bool value = true; };
template <class T> struct is_float {
  static const bool value = is_same<T, f32>::value || is_same<T, f64>::value || is_same<T, half>::value;
};
template <class T> struct is_bool { static const bool value = is_same<T, bool>::value; };
template <class T> struct is_int {
  static const bool value = !is_bool<T>::value && !is_float<T>::value && !is_complex<T>::value;
};
template <class T> struct is_signed_int { static const bool value = is_int<T>::value && T(-1) < T(0); };

// ---- real math: f32 -> the f-suffixed builtin, f64 -> the plain one ---------------
namespace fm {
#define HF_FM1(name) \
  HF_OP f32 name(f32 x) { return ::name##f(x); } \
  HF_OP f64 name(f64 x) { return ::name(x); }
#define HF_FM2(name) \
  HF_OP f32 name(f32 x, f32 y) { return ::name##f(x, y); } \
  HF_OP f64 name(f64 x, f64 y) { return ::name(x, y); }
HF_FM1(fabs) HF_FM1(sqrt) HF_FM1(exp) HF_FM1(expm1) HF_FM1(log) HF_FM1(log1p)
HF_FM1(sin) HF_FM1(cos) HF_FM1(tan) HF_FM1(sinh) HF_FM1(cosh) HF_FM1(tanh)
HF_FM1(asin) HF_FM1(acos) HF_FM1(atan) HF_FM1(asinh) HF_FM1(acosh) HF_FM1(atanh)
HF_FM2(atan2) HF_FM2(pow)
HF_FM1(ceil) HF_FM1(floor) HF_FM1(trunc) HF_FM1(rint) HF_FM1(log2) HF_FM1(log10)
HF_FM1(cbrt) HF_FM1(exp2)
HF_FM2(fmod)
#undef HF_FM1
#undef HF_FM2
HF_OP f32 ldexp(f32 x, int n) { return ::ldexpf(x, n); }
HF_OP f64 ldexp(f64 x, int n) { return ::ldexp(x, n); }
HF_OP f32 frexp(f32 x, int* e) { return ::frexpf(x, e); }
HF_OP f64 frexp(f64 x, int* e) { return ::frexp(x, e); }
HF_OP f32 fma(f32 a, f32 b, f32 c) { return ::fmaf(a, b, c); }
HF_OP f64 fma(f64 a, f64 b, f64 c) { return ::fma(a, b, c); }

// From bit patterns: NVRTC lacks __builtin_huge_val/__builtin_nan (nvcc and hipcc have them).
template <class R> HF_OP R inf();
template <class R> HF_OP R nan();
template <> HF_OP f32 inf<f32>() { return __int_as_float(0x7f800000); }
template <> HF_OP f64 inf<f64>() { return __longlong_as_double(0x7ff0000000000000LL); }
template <> HF_OP f32 nan<f32>() { return __int_as_float(0x7fc00000); }
template <> HF_OP f64 nan<f64>() { return __longlong_as_double(0x7ff8000000000000LL); }
template <class R> HF_OP bool is_nan(R x) { return x != x; }
template <class R> HF_OP bool is_inf(R x) { return fabs(x) == inf<R>(); }
template <class R> HF_OP bool is_finite(R x) { return fabs(x) < inf<R>(); }
// copysign by bit pattern: exact for signed zeros and NaN signs on every target.
HF_OP f32 copysign(f32 a, f32 b) {
  return __int_as_float((__float_as_int(a) & 0x7fffffff) | (__float_as_int(b) & (int)0x80000000u));
}
HF_OP f64 copysign(f64 a, f64 b) {
  return __longlong_as_double((__double_as_longlong(a) & 0x7fffffffffffffffLL) |
                              (__double_as_longlong(b) & (long long)0x8000000000000000ULL));
}
// hypot: f32 through f64 (no overflow, correctly rounded in practice); f64 scaled by the
// larger magnitude so nothing overflows before the result does (CUDA's hypot returned inf
// for hypot(1, DBL_MAX) on the H200). An infinite component wins over NaN (C99).
HF_OP f32 hypot(f32 x, f32 y) {
  f64 a = x, b = y;
  if (fabs(x) == inf<f32>() || fabs(y) == inf<f32>()) return inf<f32>();
  return (f32)::sqrt(a * a + b * b);
}
HF_OP f64 hypot(f64 x, f64 y) {
  f64 a = fabs(x), b = fabs(y);
  if (a == inf<f64>() || b == inf<f64>()) return inf<f64>();
  if (a != a || b != b) return a + b;
  f64 m = a > b ? a : b, n = a > b ? b : a;
  if (m == 0) return 0;
  f64 r = n / m;
  return m * ::sqrt(1 + r * r);
}

// Constants in R; eps is the spacing of R at 1.
template <class R> struct K;
template <> struct K<f32> {
  static HF_OP f32 eps() { return 1.1920929e-7f; }
  static HF_OP f32 max() { return 3.4028235e38f; }
  static HF_OP f32 exp_max() { return 88.0f; }           // exp(x) is finite below this
  static HF_OP f32 tanh_big() { return 9.0f; }           // tanh(x) == 1 in f32 above this
  static HF_OP f32 sqrt_scale() { return 0x1.a82798p+126f; }  // csqrt scales above max / (1 + sqrt 2)
};
template <> struct K<f64> {
  static HF_OP f64 eps() { return 2.220446049250313e-16; }
  static HF_OP f64 max() { return 1.7976931348623157e308; }
  static HF_OP f64 exp_max() { return 709.0; }
  static HF_OP f64 tanh_big() { return 22.0; }
  static HF_OP f64 sqrt_scale() { return 0x1.a827999fcef32p+1022; }
};
template <class R> HF_OP R ln2() { return (R)0.69314718055994530942; }
template <class R> HF_OP R pi_2() { return (R)1.57079632679489661923; }
template <class R> HF_OP R log2e() { return (R)1.44269504088896340736; }
template <class R> HF_OP R log10e() { return (R)0.43429448190325182765; }

// NumPy's npy_divmod: the floor quotient of a / b (returned) and the remainder with
// the divisor's sign (mod), paired so that a == mod + b * floor(a / b) up to rounding.
// b == 0 gives a / b and fmod(a, 0) (inf or nan).
template <class R> HF_OP R divmod(R a, R b, R& mod) {
  mod = fmod(a, b);
  if (b == R(0)) return a / b;
  R div = (a - mod) / b;
  if (mod != R(0)) {
    if ((b < R(0)) != (mod < R(0))) { mod += b; div -= R(1); }
  } else {
    mod = copysign(R(0), b);
  }
  if (div == R(0)) return copysign(R(0), a / b);
  R fl = floor(div);  // snap to the nearest integral value
  return div - fl > R(0.5) ? fl + R(1) : fl;
}

// a * b rounded on its own, never fused with a following add into an fma (the
// error-free sums below rely on it). nvcc/NVRTC fuse unless told; hipcc honours the
// clang pragma.
#if HF_HIP
HF_OP f32 mul_rn(f32 a, f32 b) {
  _Pragma("clang fp contract(off)")
  return a * b;
}
HF_OP f64 mul_rn(f64 a, f64 b) {
  _Pragma("clang fp contract(off)")
  return a * b;
}
#elif defined(__CUDACC__)
HF_OP f32 mul_rn(f32 a, f32 b) { return __fmul_rn(a, b); }
HF_OP f64 mul_rn(f64 a, f64 b) { return __dmul_rn(a, b); }
#else  // host compilers do not contract by default
HF_OP f32 mul_rn(f32 a, f32 b) { return a * b; }
HF_OP f64 mul_rn(f64 a, f64 b) { return a * b; }
#endif

// c + x^2 + y^2 to full relative accuracy even when the terms cancel (|z| ~ 1 in log,
// |1 + z| ~ 1 in log1p); c must be exact (-1 or 2x). f32 works in f64, where the
// products are exact; f64 uses error-free products (fma) and sums (two-sum).
HF_OP f32 sum_sq(f32 c, f32 x, f32 y) { return (f32)((f64)c + (f64)x * (f64)x + (f64)y * (f64)y); }
HF_OP void two_sum(f64 a, f64 b, f64& s, f64& e) {
  s = a + b;
  f64 bb = s - a;
  e = (a - (s - bb)) + (b - bb);
}
HF_OP f64 sum_sq(f64 c, f64 x, f64 y) {
  f64 px = mul_rn(x, x), ex = fma(x, x, -px);
  f64 py = mul_rn(y, y), ey = fma(y, y, -py);
  f64 s1, e1, s2, e2;
  two_sum(c, px, s1, e1);
  two_sum(s1, py, s2, e2);
  return s2 + (e1 + e2 + ex + ey);
}

// log|x + iy| without overflow, accurate near |z| = 1.
template <class R> HF_OP R log_abs(R x, R y) {
  R ax = fabs(x), ay = fabs(y);
  if (ax < ay) { R t = ax; ax = ay; ay = t; }
  if (ax > R(0.5) && ax < R(2)) return R(0.5) * log1p(sum_sq(R(-1), ax, ay));
  if (ax > fm::K<R>::max() * R(0.25)) return log(hypot(ax * R(0.25), ay * R(0.25))) + R(2) * ln2<R>();
  return log(hypot(ax, ay));
}
}  // namespace fm

// ---- complex functions (NumPy's results: glibc's for the C99 functions) ------------
namespace cx {
template <class R> HF_OP complex<R> mk(R re, R im) { return complex<R>(re, im); }

// NumPy's reciprocal (Smith's formula with 1 as the numerator; 1/0 is nan + nan j).
template <class R> HF_OP complex<R> reciprocal(complex<R> z) {
  if (fm::fabs(z.im) <= fm::fabs(z.re)) {
    R r = z.im / z.re, d = z.re + z.im * r;
    return mk(R(1) / d, -r / d);
  }
  R r = z.re / z.im, d = z.re * r + z.im;
  return mk(r / d, R(-1) / d);
}

template <class R> HF_OP complex<R> exp(complex<R> z) {
  R x = z.re, y = z.im;
  if (y == 0) return mk(fm::exp(x), y);
  if (fm::is_inf(x) && !fm::is_finite(y)) return x > 0 ? mk(x, y - y) : mk(R(0), R(0));
  R c = fm::cos(y), s = fm::sin(y);
  if (x > fm::K<R>::exp_max()) {  // exp(x) overflows; exp(x) * cos(y) may not
    R h = fm::exp(x * R(0.5));
    return mk((h * c) * h, (h * s) * h);
  }
  R e = fm::exp(x);
  return mk(e * c, e * s);
}

template <class R> HF_OP complex<R> log(complex<R> z) {
  return mk(fm::log_abs(z.re, z.im), fm::atan2(z.im, z.re));
}

// Principal square root without overflow (FreeBSD's csqrt, as NumPy's npy_csqrt).
template <class R> HF_OP complex<R> sqrt(complex<R> z) {
  R a = z.re, b = z.im;
  if (a == 0 && b == 0) return mk(R(0), b);
  if (fm::is_inf(b)) return mk(fm::inf<R>(), b);
  if (fm::is_nan(a)) return mk(a, (b - b) / (b - b));
  if (fm::is_inf(a)) {
    if (a < 0) return mk(fm::fabs(b - b), fm::copysign(a, b));
    return mk(a, fm::copysign(b - b, b));
  }
  bool scale = fm::fabs(a) >= fm::K<R>::sqrt_scale() || fm::fabs(b) >= fm::K<R>::sqrt_scale();
  if (scale) { a *= R(0.25); b *= R(0.25); }
  complex<R> r;
  if (a >= 0) {
    R t = fm::sqrt((a + fm::hypot(a, b)) * R(0.5));
    r = mk(t, b / (R(2) * t));
  } else {
    R t = fm::sqrt((-a + fm::hypot(a, b)) * R(0.5));
    r = mk(fm::fabs(b) / (R(2) * t), fm::copysign(t, b));
  }
  return scale ? mk(r.re * R(2), r.im * R(2)) : r;
}

// NumPy's formula for finite z: accurate near 0 (no exp(z) - 1 cancellation); a real z
// keeps a signed-zero imaginary part even where exp(x) overflows. Infinite or NaN parts:
// exp(z) - 1, which gives the standard's special values (NumPy's formula gives
// inf + nan j at inf + 0j).
template <class R> HF_OP complex<R> expm1(complex<R> z) {
  R x = z.re, y = z.im;
  if (!fm::is_finite(x) || !fm::is_finite(y)) {
    complex<R> e = exp(z);
    return mk(e.re - R(1), e.im);
  }
  if (x == R(0) && y == R(0)) return mk(R(0), y);  // the standard: +0 + 0j at -0 + 0j too
  R h = fm::sin(y * R(0.5));
  return mk(fm::expm1(x) * fm::cos(y) - R(2) * h * h, y == R(0) ? y : fm::exp(x) * fm::sin(y));
}

// log(1 + z) with |1 + z|^2 - 1 = 2x + x^2 + y^2 summed exactly: accurate near 0 and
// near |1 + z| = 1 (NumPy's log(hypot(1 + x, y)) loses the digits of small z).
template <class R> HF_OP complex<R> log1p(complex<R> z) {
  R x = z.re, y = z.im;
  R big = fm::sqrt(fm::K<R>::max()) * R(0.25);
  R s = (fm::fabs(x) < big && fm::fabs(y) < big) ? fm::sum_sq(R(2) * x, x, y) : R(-1);
  // |1 + z|^2 < 0.5: no cancellation left, and 1 + x is exact or nearly
  R re = s > R(-0.5) ? R(0.5) * fm::log1p(s) : fm::log_abs(R(1) + x, y);
  return mk(re, fm::atan2(y, R(1) + x));
}

template <class R> HF_OP complex<R> sinh(complex<R> z) {
  R x = z.re, y = z.im;
  if (y == 0) return mk(fm::sinh(x), y);
  if (x == 0) return mk(fm::is_finite(y) ? x * fm::cos(y) : x, fm::sin(y));
  if (fm::is_inf(x) && !fm::is_finite(y)) return mk(fm::inf<R>(), y - y);  // glibc's sign
  R c = fm::cos(y), s = fm::sin(y);
  if (fm::fabs(x) > fm::K<R>::exp_max()) {  // sinh ~ cosh ~ exp(|x|) / 2, computed without overflow
    R h = fm::exp(fm::fabs(x) * R(0.5));
    R hc = (R(0.5) * h * c) * h;
    return mk(x < 0 ? -hc : hc, (R(0.5) * h * s) * h);
  }
  return mk(fm::sinh(x) * c, fm::cosh(x) * s);
}

template <class R> HF_OP complex<R> cosh(complex<R> z) {
  R x = z.re, y = z.im;
  if (y == 0) return mk(fm::cosh(x), fm::copysign(R(0), x) * y);
  if (x == 0) return mk(fm::cos(y), fm::is_finite(y) ? x * fm::sin(y) : R(0));
  if (fm::is_inf(x) && !fm::is_finite(y)) return mk(fm::fabs(x), y - y);
  R c = fm::cos(y), s = fm::sin(y);
  if (fm::fabs(x) > fm::K<R>::exp_max()) {
    R h = fm::exp(fm::fabs(x) * R(0.5));
    R hs = (R(0.5) * h * s) * h;
    return mk((R(0.5) * h * c) * h, x < 0 ? -hs : hs);
  }
  return mk(fm::cosh(x) * c, fm::sinh(x) * s);
}

// FreeBSD's ctanh (Kahan's formula), as glibc.
template <class R> HF_OP complex<R> tanh(complex<R> z) {
  R x = z.re, y = z.im;
  if (fm::is_nan(x)) return mk(x, y == 0 ? y : x);
  if (fm::is_inf(x))
    return mk(fm::copysign(R(1), x), fm::copysign(R(0), fm::is_inf(y) ? y : fm::sin(y) * fm::cos(y)));
  if (!fm::is_finite(y)) return mk(x == 0 ? x : y - y, y - y);
  if (fm::fabs(x) >= fm::K<R>::tanh_big()) {
    R e = fm::exp(-fm::fabs(x));
    return mk(fm::copysign(R(1), x), R(4) * fm::sin(y) * fm::cos(y) * e * e);
  }
  R t = fm::tan(y), beta = R(1) + t * t, s = fm::sinh(x), rho = fm::sqrt(R(1) + s * s);
  R den = R(1) + beta * s * s;
  return mk((beta * rho * s) / den, t / den);
}

// sin z = -i sinh(iz), cos z = cosh(iz), tan z = -i tanh(iz)
template <class R> HF_OP complex<R> sin(complex<R> z) {
  if (fm::is_inf(z.im) && !fm::is_finite(z.re)) return mk(z.re - z.re, fm::inf<R>());  // glibc's sign
  complex<R> w = sinh(mk(-z.im, z.re));
  return mk(w.im, -w.re);
}
template <class R> HF_OP complex<R> cos(complex<R> z) { return cosh(mk(-z.im, z.re)); }
template <class R> HF_OP complex<R> tan(complex<R> z) { complex<R> w = tanh(mk(-z.im, z.re)); return mk(w.im, -w.re); }

// Above this |z| the inverse functions use their log(2z) asymptotics (exact in R).
template <class R> HF_OP R inv_big() { return R(1) / fm::K<R>::eps(); }

// Kahan's asin for finite, moderate z (accurate everywhere, signed zeros respected).
template <class R> HF_OP complex<R> asin_kahan(complex<R> z) {
  complex<R> sm = sqrt(mk(R(1) - z.re, -z.im)), sp = sqrt(mk(R(1) + z.re, z.im));
  R den = sm.re * sp.re - sm.im * sp.im;  // Re(sm * sp)
  R im = sm.re * sp.im - sm.im * sp.re;   // Im(conj(sm) * sp)
  return mk(fm::atan2(z.re, den), fm::asinh(im));
}

template <class R> HF_OP complex<R> asinh(complex<R> z) {
  R x = z.re, y = z.im;
  if (fm::is_nan(x) || fm::is_nan(y)) {  // glibc's special values
    if (fm::is_inf(x)) return mk(x, y + y);
    if (fm::is_inf(y)) return mk(fm::copysign(fm::inf<R>(), x), x + x);
    if (y == 0) return mk(x + x, y);
    return mk(x + y, x + y);
  }
  if (fm::fabs(x) > inv_big<R>() || fm::fabs(y) > inv_big<R>()) {  // asinh z ~ log(2z) on |x|, |y|
    R ax = fm::fabs(x), ay = fm::fabs(y);
    return mk(fm::copysign(fm::log_abs(ax, ay) + fm::ln2<R>(), x), fm::copysign(fm::atan2(ay, ax), y));
  }
  complex<R> w = asin_kahan(mk(-y, x));  // asinh z = -i asin(iz)
  return mk(w.im, -w.re);
}

template <class R> HF_OP complex<R> asin(complex<R> z) {  // asin z = -i asinh(iz)
  if (fm::is_nan(z.re) || fm::is_nan(z.im)) {  // glibc's special values
    if (z.re == 0) return z;
    if (fm::is_inf(z.re) || fm::is_inf(z.im)) return mk(z.re + z.im, fm::copysign(fm::inf<R>(), z.im));
    return mk(z.re + z.im, z.re + z.im);
  }
  complex<R> w = asinh(mk(-z.im, z.re));
  return mk(w.im, -w.re);
}

template <class R> HF_OP complex<R> acos(complex<R> z) {
  R x = z.re, y = z.im;
  if (fm::is_nan(x) || fm::is_nan(y)) {
    if (fm::is_inf(x)) return mk(y + y, -fm::inf<R>());
    if (fm::is_inf(y)) return mk(x + x, -y);
    if (x == 0) return mk(fm::pi_2<R>(), y + y);
    return mk(x + y, x + y);
  }
  if (fm::fabs(x) > inv_big<R>() || fm::fabs(y) > inv_big<R>())  // acos z ~ -i log(2z), Re in [0, pi]
    return mk(fm::atan2(fm::fabs(y), x), -fm::copysign(fm::log_abs(x, y) + fm::ln2<R>(), y));
  // Kahan: Re = 2 atan2(Re sqrt(1 - z), Re sqrt(1 + z)), Im = asinh(Im(conj(sqrt(1 + z)) sqrt(1 - z)))
  complex<R> sm = sqrt(mk(R(1) - x, -y)), sp = sqrt(mk(R(1) + x, y));
  return mk(R(2) * fm::atan2(sm.re, sp.re), fm::asinh(sp.re * sm.im - sp.im * sm.re));
}

template <class R> HF_OP complex<R> acosh(complex<R> z) {  // from acos, as FreeBSD's cacosh
  if (z.re == 0 && fm::is_nan(z.im)) return mk(z.im, fm::pi_2<R>());  // glibc's value
  complex<R> w = acos(z);
  if (fm::is_nan(w.re) && fm::is_nan(w.im)) return mk(w.im, w.re);
  if (fm::is_nan(w.re)) return mk(fm::fabs(w.im), w.re);
  if (fm::is_nan(w.im)) return mk(w.im, w.im);
  return mk(fm::fabs(w.im), fm::copysign(w.re, z.im));
}

// Re(1 / (x + iy)) without overflow.
template <class R> HF_OP R real_recip(R x, R y) {
  if (fm::is_inf(x) || fm::is_inf(y)) return fm::copysign(R(0), x);
  if (fm::fabs(x) >= fm::fabs(y)) { R t = y / x; return (R(1) / x) / (R(1) + t * t); }
  R t = x / y;
  return (t / y) / (R(1) + t * t);
}

// FreeBSD's catanh, as glibc: odd in x and y, so work on |x|, |y|.
template <class R> HF_OP complex<R> atanh(complex<R> z) {
  R x = z.re, y = z.im, ax = fm::fabs(x), ay = fm::fabs(y);
  if (y == 0 && ax <= 1) return mk(fm::atanh(x), y);
  if (x == 0) return mk(x, fm::atan(y));
  if (fm::is_nan(x) || fm::is_nan(y)) {
    if (fm::is_inf(x)) return mk(fm::copysign(R(0), x), y + y);
    if (fm::is_inf(y)) return mk(fm::copysign(R(0), x), fm::copysign(fm::pi_2<R>(), y));
    return mk(x + y, x + y);
  }
  if (ax > inv_big<R>() || ay > inv_big<R>()) return mk(real_recip(x, y), fm::copysign(fm::pi_2<R>(), y));
  R rx, ry;
  if (ax == 1 && ay < fm::K<R>::eps()) rx = (fm::ln2<R>() - fm::log(ay)) * R(0.5);
  else rx = fm::log1p(R(4) * ax / ((ax - R(1)) * (ax - R(1)) + ay * ay)) * R(0.25);
  if (ax == 1) ry = fm::atan2(R(2), -ay) * R(0.5);
  else if (ay < fm::K<R>::eps()) ry = fm::atan2(R(2) * ay, (R(1) - ax) * (R(1) + ax)) * R(0.5);
  else ry = fm::atan2(R(2) * ay, (R(1) - ax) * (R(1) + ax) - ay * ay) * R(0.5);
  return mk(fm::copysign(rx, x), fm::copysign(ry, y));
}

template <class R> HF_OP complex<R> atan(complex<R> z) {  // atan z = -i atanh(iz)
  complex<R> w = atanh(mk(-z.im, z.re));
  return mk(w.im, -w.re);
}

// C99 Annex G complex multiply (what C's z * w does): infinities that the plain formula
// turns into nan + nan j are recovered.
template <class R> HF_OP complex<R> mul_annex_g(complex<R> z, complex<R> w) {
  R a = z.re, b = z.im, c = w.re, d = w.im;
  R ac = a * c, bd = b * d, ad = a * d, bc = b * c;
  R x = ac - bd, y = ad + bc;
  if (!(fm::is_nan(x) && fm::is_nan(y))) return mk(x, y);
  bool again = false;
  if (fm::is_inf(a) || fm::is_inf(b)) {  // box the infinity, NaNs of the other factor -> 0
    a = fm::copysign(fm::is_inf(a) ? R(1) : R(0), a);
    b = fm::copysign(fm::is_inf(b) ? R(1) : R(0), b);
    if (fm::is_nan(c)) c = fm::copysign(R(0), c);
    if (fm::is_nan(d)) d = fm::copysign(R(0), d);
    again = true;
  }
  if (fm::is_inf(c) || fm::is_inf(d)) {
    c = fm::copysign(fm::is_inf(c) ? R(1) : R(0), c);
    d = fm::copysign(fm::is_inf(d) ? R(1) : R(0), d);
    if (fm::is_nan(a)) a = fm::copysign(R(0), a);
    if (fm::is_nan(b)) b = fm::copysign(R(0), b);
    again = true;
  }
  if (!again && (fm::is_inf(ac) || fm::is_inf(bd) || fm::is_inf(ad) || fm::is_inf(bc))) {
    if (fm::is_nan(a)) a = fm::copysign(R(0), a);
    if (fm::is_nan(b)) b = fm::copysign(R(0), b);
    if (fm::is_nan(c)) c = fm::copysign(R(0), c);
    if (fm::is_nan(d)) d = fm::copysign(R(0), d);
    again = true;
  }
  if (!again) return mk(x, y);
  return mk(fm::inf<R>() * (a * c - b * d), fm::inf<R>() * (a * d + b * c));
}

// NumPy's complex power: exact small integer exponents by repeated squaring, else
// exp(b log a) (glibc's cpow, whose product is C's).
template <class R> HF_OP complex<R> pow(complex<R> a, complex<R> b) {
  if (b.re == 0 && b.im == 0) return mk(R(1), R(0));
  if (a.re == 0 && a.im == 0) {
    if (b.re > 0) return mk(R(0), R(0));
    return mk(fm::nan<R>(), fm::nan<R>());
  }
  if (b.im == 0 && b.re > R(-100) && b.re < R(100) && b.re == (R)(int)b.re) {
    int n = (int)b.re;
    if (n == 1) return a;
    if (n == 2) return a * a;
    if (n == 3) return a * (a * a);
    int m = n < 0 ? -n : n;
    complex<R> acc(R(1), R(0)), p = a;
    for (int mask = 1;; mask <<= 1) {
      if (m & mask) acc = acc * p;
      if (m < (mask << 1)) break;
      p = p * p;
    }
    return n < 0 ? complex<R>(R(1), R(0)) / acc : acc;
  }
  return exp(mul_annex_g(b, log(a)));
}

// x / |x| (NumPy's, with the standard's rule that a NaN part gives nan + nan j): an
// infinite part gives its sign on that axis, both infinite nan + nan j, 0 gives 0.
template <class R> HF_OP complex<R> sign(complex<R> z) {
  R n = fm::nan<R>();
  if (fm::is_nan(z.re) || fm::is_nan(z.im)) return mk(n, n);
  bool ire = fm::is_inf(z.re), iim = fm::is_inf(z.im);
  if (ire && iim) return mk(n, n);
  if (ire) return mk(z.re > 0 ? R(1) : R(-1), R(0));
  if (iim) return mk(R(0), z.im > 0 ? R(1) : R(-1));
  R a = fm::hypot(z.re, z.im);
  if (a == R(0)) return mk(R(0), R(0));
  return mk(z.re / a, z.im / a);
}
}  // namespace cx

// ============================ the op functors ======================================
// Unary: T -> T ("same"), T -> real_of<T> ("real").

struct op_negative {
  template <class T> HF_OP T operator()(T x) const {
    if constexpr (is_int<T>::value) return wrap_sub(T(0), x);
    else return -x;
  }
};

struct op_conjugate {
  template <class T> HF_OP T operator()(T x) const { return conj(x); }
};

struct op_absolute {
  template <class T> HF_OP typename real_of<T>::type operator()(T x) const {
    if constexpr (is_complex<T>::value) return fm::hypot(x.re, x.im);
    else if constexpr (is_float<T>::value) return fm::fabs(x);
    else if constexpr (is_int<T>::value) return x < T(0) ? wrap_sub(T(0), x) : x;
    else return x;
  }
};

struct op_real {
  template <class T> HF_OP typename real_of<T>::type operator()(T x) const {
    if constexpr (is_complex<T>::value) return x.re;
    else return x;
  }
};

struct op_imag {
  template <class T> HF_OP typename real_of<T>::type operator()(T x) const {
    if constexpr (is_complex<T>::value) return x.im;
    else return T(0);
  }
};

struct op_square {
  template <class T> HF_OP T operator()(T x) const {
    if constexpr (is_complex<T>::value) return T(x.re * x.re - x.im * x.im, x.re * x.im + x.im * x.re);
    else if constexpr (is_float<T>::value) return x * x;
    else return wrap_mul(x, x);
  }
};

struct op_reciprocal {
  template <class T> HF_OP T operator()(T x) const {
    if constexpr (is_complex<T>::value) return cx::reciprocal(x);
    else return T(1) / x;
  }
};

struct op_rsqrt {
  template <class T> HF_OP T operator()(T x) const {
    if constexpr (is_complex<T>::value) return T(1) / cx::sqrt(x);
    else return T(1) / fm::sqrt(x);
  }
};

// Analytic unary ops on float and complex: the real builtin or the cx:: function.
#define HF_ANALYTIC(opname, fn) \
  struct opname { \
    template <class T> HF_OP T operator()(T x) const { \
      if constexpr (is_complex<T>::value) return cx::fn(x); \
      else return fm::fn(x); \
    } \
  };
HF_ANALYTIC(op_sqrt, sqrt)
HF_ANALYTIC(op_exp, exp)
HF_ANALYTIC(op_expm1, expm1)
HF_ANALYTIC(op_log, log)
HF_ANALYTIC(op_log1p, log1p)
HF_ANALYTIC(op_sin, sin)
HF_ANALYTIC(op_cos, cos)
HF_ANALYTIC(op_tan, tan)
HF_ANALYTIC(op_sinh, sinh)
HF_ANALYTIC(op_cosh, cosh)
HF_ANALYTIC(op_tanh, tanh)
HF_ANALYTIC(op_arcsin, asin)
HF_ANALYTIC(op_arccos, acos)
HF_ANALYTIC(op_arctan, atan)
HF_ANALYTIC(op_arcsinh, asinh)
HF_ANALYTIC(op_arccosh, acosh)
HF_ANALYTIC(op_arctanh, atanh)
#undef HF_ANALYTIC

// Real only (NumPy's cbrt has no complex loop): the correctly signed real cube root.
struct op_cbrt {
  template <class T> HF_OP T operator()(T x) const { return fm::cbrt(x); }
};

// Binary: (T, T) -> T, or bool for comparisons.

struct op_add {
  template <class T> HF_OP T operator()(T a, T b) const {
    if constexpr (is_bool<T>::value) return a || b;
    else if constexpr (is_int<T>::value) return wrap_add(a, b);
    else return a + b;
  }
};

struct op_subtract {
  template <class T> HF_OP T operator()(T a, T b) const {
    if constexpr (is_int<T>::value) return wrap_sub(a, b);
    else return a - b;
  }
};

struct op_multiply {
  template <class T> HF_OP T operator()(T a, T b) const {
    if constexpr (is_bool<T>::value) return a && b;
    else if constexpr (is_int<T>::value) return wrap_mul(a, b);
    else return a * b;
  }
};

struct op_divide {
  template <class T> HF_OP T operator()(T a, T b) const { return a / b; }
};

// NaN from either side propagates; ties give b (NumPy's _NPY_MAX / _NPY_MIN).
struct op_maximum {
  template <class T> HF_OP T operator()(T a, T b) const {
    if constexpr (is_float<T>::value) return (a > b || fm::is_nan(a)) ? a : b;
    else return a > b ? a : b;
  }
};

struct op_minimum {
  template <class T> HF_OP T operator()(T a, T b) const {
    if constexpr (is_float<T>::value) return (a < b || fm::is_nan(a)) ? a : b;
    else return a < b ? a : b;
  }
};

// NaN in x passes through; a NaN bound is ignored.
struct op_clamp_min {
  template <class T> HF_OP T operator()(T x, T lo) const { return x < lo ? lo : x; }
};

struct op_clamp_max {
  template <class T> HF_OP T operator()(T x, T hi) const { return x > hi ? hi : x; }
};

struct op_greater {
  template <class T> HF_OP bool operator()(T a, T b) const { return a > b; }
};

struct op_greater_equal {
  template <class T> HF_OP bool operator()(T a, T b) const { return a >= b; }
};

struct op_equal {
  template <class T> HF_OP bool operator()(T a, T b) const { return a == b; }
};

struct op_not_equal {
  template <class T> HF_OP bool operator()(T a, T b) const { return a != b; }
};

struct op_bitwise_and {
  template <class T> HF_OP T operator()(T a, T b) const { return (T)(a & b); }
};

// Integer power: exact modulo 2^bits (wrapping), by repeated squaring. NumPy refuses
// negative exponents; here they give the truncated 1 / a^|b|: 1 for a == 1, +-1 for
// a == -1, else 0.
template <class T> HF_OP T int_pow(T a, T b) {
  if constexpr (is_signed_int<T>::value) {
    if (b < T(0)) {
      if (a == T(1)) return T(1);
      if (a == T(-1)) return (b & T(1)) ? T(-1) : T(1);
      return T(0);
    }
  }
  T acc = T(1), p = a;
  for (u64 e = (u64)b; e != 0; e >>= 1) {
    if (e & 1) acc = wrap_mul(acc, p);
    if (e > 1) p = wrap_mul(p, p);
  }
  return acc;
}

struct op_power {
  template <class T> HF_OP T operator()(T a, T b) const {
    if constexpr (is_complex<T>::value) return cx::pow(a, b);
    else if constexpr (is_float<T>::value) return fm::pow(a, b);
    else return int_pow(a, b);
  }
};

struct op_arctan2 {
  template <class T> HF_OP T operator()(T y, T x) const { return fm::atan2(y, x); }
};

struct op_hypot {
  template <class T> HF_OP T operator()(T a, T b) const { return fm::hypot(a, b); }
};

// xlogy(x, y) = 0 where x == 0 and y is not NaN, else x * log(y) (PyTorch's rule).
struct op_xlogy {
  template <class T> HF_OP T operator()(T x, T y) const {
    if constexpr (is_complex<T>::value) {
      if (x == T(0) && !fm::is_nan(y.re) && !fm::is_nan(y.im)) return T(0);
      return x * cx::log(y);
    } else {
      if (x == T(0) && !fm::is_nan(y)) return T(0);
      return x * fm::log(y);
    }
  }
};


// ---- the rest of the array API's elementwise functions ---------------------------

struct op_positive {
  template <class T> HF_OP T operator()(T x) const { return x; }
};

struct op_bitwise_invert {
  template <class T> HF_OP T operator()(T x) const {
    if constexpr (is_bool<T>::value) return !x;
    else return (T)~x;
  }
};

struct op_logical_not {
  template <class T> HF_OP T operator()(T x) const { return !x; }
};

// Rounding: integers are already integral.
struct op_ceil {
  template <class T> HF_OP T operator()(T x) const {
    if constexpr (is_float<T>::value) return fm::ceil(x);
    else return x;
  }
};

struct op_floor {
  template <class T> HF_OP T operator()(T x) const {
    if constexpr (is_float<T>::value) return fm::floor(x);
    else return x;
  }
};

struct op_trunc {
  template <class T> HF_OP T operator()(T x) const {
    if constexpr (is_float<T>::value) return fm::trunc(x);
    else return x;
  }
};

// Half to even (rint in the default rounding mode); complex: each part.
struct op_round {
  template <class T> HF_OP T operator()(T x) const {
    if constexpr (is_complex<T>::value) return T(fm::rint(x.re), fm::rint(x.im));
    else if constexpr (is_float<T>::value) return fm::rint(x);
    else return x;
  }
};

// -1, 0 or 1 (NaN stays NaN, -0.0 gives 0.0); complex: x / |x|.
struct op_sign {
  template <class T> HF_OP T operator()(T x) const {
    if constexpr (is_complex<T>::value) return cx::sign(x);
    else if constexpr (is_float<T>::value) return x > T(0) ? T(1) : (x < T(0) ? T(-1) : (x == T(0) ? T(0) : x));
    else if constexpr (is_signed_int<T>::value) return x > T(0) ? T(1) : (x < T(0) ? T(-1) : T(0));
    else return x > T(0) ? T(1) : T(0);
  }
};

struct op_signbit {
  template <class T> HF_OP bool operator()(T x) const { return fm::copysign(T(1), x) < T(0); }
};

struct op_isnan {
  template <class T> HF_OP bool operator()(T x) const {
    if constexpr (is_complex<T>::value) return fm::is_nan(x.re) || fm::is_nan(x.im);
    else if constexpr (is_float<T>::value) return fm::is_nan(x);
    else return false;
  }
};

struct op_isinf {
  template <class T> HF_OP bool operator()(T x) const {
    if constexpr (is_complex<T>::value) return fm::is_inf(x.re) || fm::is_inf(x.im);
    else if constexpr (is_float<T>::value) return fm::is_inf(x);
    else return false;
  }
};

struct op_isfinite {
  template <class T> HF_OP bool operator()(T x) const {
    if constexpr (is_complex<T>::value) return fm::is_finite(x.re) && fm::is_finite(x.im);
    else if constexpr (is_float<T>::value) return fm::is_finite(x);
    else return true;
  }
};

// NumPy's complex log2 / log10: log(z) scaled by log2(e) / log10(e).
struct op_log2 {
  template <class T> HF_OP T operator()(T x) const {
    if constexpr (is_complex<T>::value) {
      T l = cx::log(x);
      return T(l.re * fm::log2e<decltype(l.re)>(), l.im * fm::log2e<decltype(l.re)>());
    } else {
      return fm::log2(x);
    }
  }
};

struct op_log10 {
  template <class T> HF_OP T operator()(T x) const {
    if constexpr (is_complex<T>::value) {
      T l = cx::log(x);
      return T(l.re * fm::log10e<decltype(l.re)>(), l.im * fm::log10e<decltype(l.re)>());
    } else {
      return fm::log10(x);
    }
  }
};

struct op_bitwise_or {
  template <class T> HF_OP T operator()(T a, T b) const { return (T)(a | b); }
};

struct op_bitwise_xor {
  template <class T> HF_OP T operator()(T a, T b) const { return (T)(a ^ b); }
};

// NumPy's shifts, without C's undefined behaviour: a shift by the width or more (a
// negative count reads as huge) gives 0, or -1 for a right shift of a negative value.
struct op_bitwise_left_shift {
  template <class T> HF_OP T operator()(T a, T b) const {
    typedef typename wrap_of<T>::type W;  // shift unsigned: a negative a is no UB
    return (u64)b < (u64)(sizeof(T) * 8) ? (T)((W)a << (W)b) : T(0);
  }
};

struct op_bitwise_right_shift {
  template <class T> HF_OP T operator()(T a, T b) const {
    if ((u64)b < (u64)(sizeof(T) * 8)) return (T)(a >> b);  // arithmetic for signed a
    if constexpr (is_signed_int<T>::value) return a < T(0) ? T(-1) : T(0);
    else return T(0);
  }
};

struct op_logical_and {
  template <class T> HF_OP T operator()(T a, T b) const { return a && b; }
};

struct op_logical_or {
  template <class T> HF_OP T operator()(T a, T b) const { return a || b; }
};

struct op_logical_xor {
  template <class T> HF_OP T operator()(T a, T b) const { return a != b; }
};

// NumPy's floor division: integers round toward -inf, x // 0 == 0 and MIN // -1 wraps
// to MIN; floats through npy_divmod (so x // 0 is +-inf or nan), except where an operand
// is infinite: there the standard's floor(a / b), which a / b already is (+-inf, +-0 or
// nan; npy_divmod gives nan for inf // 2 and -1 for 2 // -inf).
struct op_floor_divide {
  template <class T> HF_OP T operator()(T a, T b) const {
    if constexpr (is_float<T>::value) {
      if (fm::is_inf(a) || fm::is_inf(b)) return a / b;
      T mod;
      return fm::divmod(a, b, mod);
    } else {
      if (b == T(0)) return T(0);
      if constexpr (is_signed_int<T>::value) {
        if (b == T(-1)) return wrap_sub(T(0), a);
        T q = (T)(a / b);
        return ((a > T(0)) != (b > T(0)) && (T)(q * b) != a) ? (T)(q - 1) : q;
      } else {
        return (T)(a / b);
      }
    }
  }
};

// NumPy's remainder: the divisor's sign; integers x % 0 == 0 (and MIN % -1 == 0).
struct op_remainder {
  template <class T> HF_OP T operator()(T a, T b) const {
    if constexpr (is_float<T>::value) {
      T mod;
      fm::divmod(a, b, mod);
      return mod;
    } else {
      if (b == T(0)) return T(0);
      if constexpr (is_signed_int<T>::value) {
        if (b == T(-1)) return T(0);
        T r = (T)(a % b);
        return (r != T(0) && ((r < T(0)) != (b < T(0)))) ? (T)(r + b) : r;
      } else {
        return (T)(a % b);
      }
    }
  }
};

struct op_copysign {
  template <class T> HF_OP T operator()(T a, T b) const { return fm::copysign(a, b); }
};

// By bit pattern, not the math library's nextafterf: CUDA's returns FLT_MIN instead of
// the smallest subnormal for nextafter(0, 1), and IEEE-754 order is the bits' order.
HF_OP f32 next_toward(f32 a, f32 b) {
  if (a != a || b != b) return a + b;
  if (a == b) return b;
  if (a == 0) return __int_as_float(b > 0 ? 1 : (int)0x80000001u);
  int i = __float_as_int(a);
  return __int_as_float((a < b) == (a > 0) ? i + 1 : i - 1);
}
HF_OP f64 next_toward(f64 a, f64 b) {
  if (a != a || b != b) return a + b;
  if (a == b) return b;
  if (a == 0) return __longlong_as_double(b > 0 ? 1LL : (long long)0x8000000000000001ULL);
  long long i = __double_as_longlong(a);
  return __longlong_as_double((a < b) == (a > 0) ? i + 1 : i - 1);
}

// half steps in half ulps (NumPy's npy_half_nextafter): through float it would round
// back to a.
HF_OP half next_toward(half a, half b) {
  if (a != a || b != b) return (f32)a + (f32)b;
  if ((f32)a == (f32)b) return b;
  if ((f32)a == 0) return half::from_bits(b > 0 ? 1 : 0x8001);
  return half::from_bits((u16)((a < b) == (a > 0) ? a.bits + 1 : a.bits - 1));
}

struct op_nextafter {
  template <class T> HF_OP T operator()(T a, T b) const { return next_toward(a, b); }
};

// NumPy's npy_logaddexp: log(exp(x) + exp(y)) without overflow.
struct op_logaddexp {
  template <class T> HF_OP T operator()(T x, T y) const {
    if (x == y) return x + fm::ln2<T>();  // equal infinities included
    T d = x - y;
    if (d > T(0)) return x + fm::log1p(fm::exp(-d));
    if (d <= T(0)) return y + fm::log1p(fm::exp(d));
    return d;  // NaN
  }
};

// ---- NumPy's own elementwise functions (beyond the standard) -----------------------

// 2 ** x; complex: exp(x ln 2).
struct op_exp2 {
  template <class T> HF_OP T operator()(T x) const {
    if constexpr (is_complex<T>::value) {
      typedef decltype(x.re) R;
      return cx::exp(T(x.re * fm::ln2<R>(), x.im * fm::ln2<R>()));
    } else {
      return fm::exp2(x);
    }
  }
};

// sin(pi x) / (pi x), 1 at 0 (NumPy's sinc, which evaluates it at 1e-20 there).
struct op_sinc {
  template <class T> HF_OP T operator()(T x) const {
    if constexpr (is_complex<T>::value) {
      typedef decltype(x.re) R;
      if (x.re == R(0) && x.im == R(0)) return T(1);
      const R pi = fm::pi_2<R>() * R(2);
      T y(pi * x.re, pi * x.im);
      return cx::sin(y) / y;
    } else {
      if (x == T(0)) return T(1);
      T y = fm::pi_2<T>() * T(2) * x;
      return fm::sin(y) / y;
    }
  }
};

// The modified Bessel function of order 0: NumPy's Chebyshev series (Cephes' i0), in
// double for every dtype.
HF_OP f64 chbevl(f64 x, const f64* c, int n) {
  f64 b0 = c[0], b1 = 0, b2 = 0;
  for (int i = 1; i < n; ++i) { b2 = b1; b1 = b0; b0 = x * b1 - b2 + c[i]; }
  return 0.5 * (b0 - b2);
}
HF_OP f64 bessel_i0(f64 x) {
  const f64 a[30] = {
    -4.4153416464793395e-18, 3.3307945188222384e-17, -2.431279846547955e-16,
    1.715391285555133e-15, -1.1685332877993451e-14, 7.676185498604936e-14,
    -4.856446783111929e-13, 2.95505266312964e-12, -1.726826291441556e-11,
    9.675809035373237e-11, -5.189795601635263e-10, 2.6598237246823866e-09,
    -1.300025009986248e-08, 6.046995022541919e-08, -2.670793853940612e-07,
    1.1173875391201037e-06, -4.4167383584587505e-06, 1.6448448070728896e-05,
    -5.754195010082104e-05, 0.00018850288509584165, -0.0005763755745385824,
    0.0016394756169413357, -0.004324309995050576, 0.010546460394594998,
    -0.02373741480589947, 0.04930528423967071, -0.09490109704804764,
    0.17162090152220877, -0.3046826723431984, 0.6767952744094761};
  const f64 b[25] = {
    -7.233180487874754e-18, -4.830504485944182e-18, 4.46562142029676e-17,
    3.461222867697461e-17, -2.8276239805165836e-16, -3.425485619677219e-16,
    1.7725601330565263e-15, 3.8116806693526224e-15, -9.554846698828307e-15,
    -4.150569347287222e-14, 1.54008621752141e-14, 3.8527783827421426e-13,
    7.180124451383666e-13, -1.7941785315068062e-12, -1.3215811840447713e-11,
    -3.1499165279632416e-11, 1.1889147107846439e-11, 4.94060238822497e-10,
    3.3962320257083865e-09, 2.266668990498178e-08, 2.0489185894690638e-07,
    2.8913705208347567e-06, 6.889758346916825e-05, 0.0033691164782556943,
    0.8044904110141088};
  x = fm::fabs(x);
  if (x <= 8.0) return fm::exp(x) * chbevl(x / 2.0 - 2.0, a, 30);
  return fm::exp(x) * chbevl(32.0 / x - 2.0, b, 25) / fm::sqrt(x);
}

struct op_i0 {
  template <class T> HF_OP T operator()(T x) const { return (T)bessel_i0((f64)x); }
};

// NumPy's constants: pi / 180 divided in T itself (npy_deg2radf: NPY_PIf / 180.0f), so a
// float32 result is NumPy's to the bit
struct op_deg2rad {
  template <class T> HF_OP T operator()(T x) const { return x * ((T)3.14159265358979323846 / (T)180.0); }
};

struct op_rad2deg {
  template <class T> HF_OP T operator()(T x) const { return x * ((T)180.0 / (T)3.14159265358979323846); }
};

// NumPy's spacing: the distance to the next value away from zero (f32, f64; +-0 give the
// smallest subnormal), +-inf and NaN give NaN. float16 is NumPy's npy_half_spacing: the
// distance to the next value toward +inf, for negative x too.
struct op_spacing {
  template <class T> HF_OP T operator()(T x) const {
    if constexpr (is_same<T, half>::value) {
      f32 v = x;
      if (!fm::is_finite(v)) return half(fm::nan<f32>());
      return half((f32)next_toward(x, half(fm::inf<f32>())) - v);
    } else {
      if (!fm::is_finite(x)) return fm::nan<T>();
      return next_toward(x, x < T(0) ? -fm::inf<T>() : fm::inf<T>()) - x;
    }
  }
};

// frexp's two outputs, one functor each: the mantissa in [0.5, 1) (x itself at 0, inf,
// NaN) and the exponent as a float (0 at 0, inf, NaN, as NumPy).
struct op_frexp_mantissa {
  template <class T> HF_OP T operator()(T x) const {
    if (!fm::is_finite(x)) return x;
    int e;
    return fm::frexp(x, &e);
  }
};

struct op_frexp_exponent {
  template <class T> HF_OP T operator()(T x) const {
    if (!fm::is_finite(x)) return T(0);
    int e;
    fm::frexp(x, &e);
    return (T)e;
  }
};

// The number of 1 bits of |x| (NumPy's bitwise_count; bool: x itself).
struct op_bitwise_count {
  template <class T> HF_OP T operator()(T x) const {
    if constexpr (is_bool<T>::value) {
      return x;
    } else {
      u64 v = (u64)x;
      if constexpr (is_signed_int<T>::value) { if (x < T(0)) v = ~v + 1; }
      v = v - ((v >> 1) & 0x5555555555555555ULL);
      v = (v & 0x3333333333333333ULL) + ((v >> 2) & 0x3333333333333333ULL);
      v = (v + (v >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
      return (T)((v * 0x0101010101010101ULL) >> 56);
    }
  }
};

// NumPy's npy_logaddexp2: log2(2**x + 2**y) without overflow.
struct op_logaddexp2 {
  template <class T> HF_OP T operator()(T x, T y) const {
    if (x == y) return x + T(1);  // equal infinities included
    T d = x - y;
    if (d > T(0)) return x + fm::log2e<T>() * fm::log1p(fm::exp2(-d));
    if (d <= T(0)) return y + fm::log2e<T>() * fm::log1p(fm::exp2(d));
    return d;  // NaN
  }
};

// C's fmod (the dividend's sign); integers truncate, x % 0 == 0 and MIN % -1 == 0.
struct op_fmod {
  template <class T> HF_OP T operator()(T a, T b) const {
    if constexpr (is_float<T>::value) {
      return fm::fmod(a, b);
    } else {
      if (b == T(0)) return T(0);
      if constexpr (is_signed_int<T>::value) { if (b == T(-1)) return T(0); }
      return (T)(a % b);
    }
  }
};

// C's fmax / fmin: a NaN operand gives the other one. Complex: NumPy's lexicographic
// order, a NaN part makes the number NaN.
template <class T> HF_OP bool any_nan(T x) {
  if constexpr (is_complex<T>::value) return fm::is_nan(x.re) || fm::is_nan(x.im);
  else if constexpr (is_float<T>::value) return fm::is_nan(x);
  else return false;
}

struct op_fmax {
  template <class T> HF_OP T operator()(T a, T b) const {
    if (any_nan(b)) return a;
    if (any_nan(a)) return b;
    if constexpr (is_complex<T>::value) return (a.re > b.re || (a.re == b.re && a.im >= b.im)) ? a : b;
    else return a >= b ? a : b;
  }
};

struct op_fmin {
  template <class T> HF_OP T operator()(T a, T b) const {
    if (any_nan(b)) return a;
    if (any_nan(a)) return b;
    if constexpr (is_complex<T>::value) return (a.re < b.re || (a.re == b.re && a.im <= b.im)) ? a : b;
    else return a <= b ? a : b;
  }
};

// NumPy's floor division everywhere (divmod's quotient, paired with op_remainder):
// floats through npy_divmod also at infinities (inf // 2 is nan, 2 // -inf is -1).
struct op_divmod_quotient {
  template <class T> HF_OP T operator()(T a, T b) const {
    if constexpr (is_float<T>::value) {
      T mod;
      return fm::divmod(a, b, mod);
    } else {
      return op_floor_divide()(a, b);
    }
  }
};

// 0 for x < 0, h0 at x == 0, 1 for x > 0, NaN for NaN x.
struct op_heaviside {
  template <class T> HF_OP T operator()(T x, T h0) const {
    if (fm::is_nan(x)) return x;
    return x == T(0) ? h0 : (x < T(0) ? T(0) : T(1));
  }
};

// |a| and |b| in the unsigned type of their width (|MIN| wraps back to MIN, as NumPy's).
template <class T> struct unsigned_of { typedef T type; };
template <> struct unsigned_of<i8> { typedef u8 type; };
template <> struct unsigned_of<i16> { typedef u16 type; };
template <> struct unsigned_of<i32> { typedef u32 type; };
template <> struct unsigned_of<i64> { typedef u64 type; };
template <class T> HF_OP typename unsigned_of<T>::type uabs(T x) {
  typedef typename unsigned_of<T>::type U;
  if constexpr (is_signed_int<T>::value) return x < T(0) ? (U)(U(0) - (U)x) : (U)x;
  else return x;
}
template <class U> HF_OP U ugcd(U a, U b) {
  while (a != U(0)) { U c = a; a = (U)(b % a); b = c; }
  return b;
}

struct op_gcd {
  template <class T> HF_OP T operator()(T a, T b) const { return (T)ugcd(uabs(a), uabs(b)); }
};

struct op_lcm {
  template <class T> HF_OP T operator()(T a, T b) const {
    typedef typename unsigned_of<T>::type U;
    U x = uabs(a), y = uabs(b), g = ugcd(x, y);
    return g == U(0) ? T(0) : (T)(U)((x / g) * y);
  }
};

// x * 2**n; n is an integer held in x's float dtype (clamped: beyond +-100000 every
// finite x over- or underflows already).
struct op_ldexp {
  template <class T> HF_OP T operator()(T x, T n) const {
    if (fm::is_nan(n)) return x + n;  // not reached from hipfer.ldexp (integer n)
    T m = n > T(100000) ? T(100000) : (n < T(-100000) ? T(-100000) : n);
    return fm::ldexp(x, (int)m);
  }
};

// ---- applying an op: float16 computes in float -----------------------------------------
// A half operand reaches the op as float, and the result rounds once where it is stored,
// as NumPy's float16 loops do (half to float, the float function, float to half). An op
// that must see the half itself says so with an op_arg specialization (nextafter here,
// cast_op in elementwise.cuh).
template <class Op, class T> struct op_arg { typedef typename calc_of<T>::type type; };
template <> struct op_arg<op_nextafter, half> { typedef half type; };
template <> struct op_arg<op_spacing, half> { typedef half type; };  // npy_half_spacing
template <class Op, class... T> HF_OP auto op_call(T... x) { return Op()((typename op_arg<Op, T>::type)x...); }

}  // namespace hf
