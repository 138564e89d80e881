// rng.cuh -- the counter-based random numbers of hipfer/prims/counter_rng.py.
//
// Every number is a pure function of (seed, counter): output element i (C order of
// the output's shape) uses counter offset + i (mod 2^64), so any backend and any
// launch geometry give the same stream. Uniform and Integer are bit-identical to
// counter_rng.py; Normal computes Box-Muller in double (log1p, sqrt, cos, sin) and
// rounds, so it agrees to the last few ulps of each platform's math library.
// tests/test_kernels_rng_sources.py checks the constants below against counter_rng.py.
#pragma once
#include "common.cuh"

namespace hf {

constexpr u64 RNG_GOLDEN = 0x9E3779B97F4A7C15ull;  // counter step (2^64 / golden ratio)
constexpr u64 RNG_M1 = 0xBF58476D1CE4E5B9ull;      // SplitMix64 output multipliers
constexpr u64 RNG_M2 = 0x94D049BB133111EBull;

// SplitMix64's output function.
__device__ __forceinline__ u64 rng_mix(u64 z) {
  z ^= z >> 30;
  z *= RNG_M1;
  z ^= z >> 27;
  z *= RNG_M2;
  z ^= z >> 31;
  return z;
}

__device__ __forceinline__ u64 rng_bits(u64 seed, u64 counter) {
  return rng_mix(seed + (counter + 1) * RNG_GOLDEN);
}

// The top 11 (24, 53) bits scaled by 2^-11 (2^-24, 2^-53): exact, in [0, 1).
__device__ __forceinline__ f32 rng_uniform16(u64 b) { return (f32)(b >> 53) * 0x1p-11f; }
__device__ __forceinline__ f32 rng_uniform32(u64 b) { return (f32)(b >> 40) * 0x1p-24f; }
__device__ __forceinline__ f64 rng_uniform64(u64 b) { return (f64)(b >> 11) * 0x1p-53; }

template <class T> __device__ __forceinline__ T rng_uniform(u64 b);
template <> __device__ __forceinline__ half rng_uniform<half>(u64 b) { return half(rng_uniform16(b)); }
template <> __device__ __forceinline__ f32 rng_uniform<f32>(u64 b) { return rng_uniform32(b); }
template <> __device__ __forceinline__ f64 rng_uniform<f64>(u64 b) { return rng_uniform64(b); }

// Offset of output element i: merged contiguous outputs (one axis) skip the division.
__device__ __forceinline__ i64 rng_offset(i64 i, const Shape& shape, const Strides& st) {
  return shape.ndim == 1 ? i * st.s[0] : offset_of(i, shape, st);
}

template <class T>
__global__ void rng_uniform_kernel(T* out, i64 n, Shape shape, Strides st, u64 seed,
                                   u64 offset) {
  HF_GRID_LOOP(i, n) {
    out[rng_offset(i, shape, st)] = rng_uniform<T>(rng_bits(seed, offset + (u64)i));
  }
}

constexpr int RNG_INT_TRIES = 64;  // draws per integer before the last one is kept

// low + mulhi64(b, span) (mod 2^64, then cast): span == 0 stands for 2^64. Lemire's
// unbiased rejection: while the low word of b * span is below thresh = (2^64 - span)
// mod span, b = rng_mix(b + RNG_GOLDEN), the element's private retry stream.
template <class T>
__global__ void rng_integer_kernel(T* out, i64 n, Shape shape, Strides st, u64 seed,
                                   u64 offset, u64 low, u64 span, u64 thresh) {
  HF_GRID_LOOP(i, n) {
    u64 b = rng_bits(seed, offset + (u64)i);
    u64 r = b;
    if (span) {
      for (int j = 1; b * span < thresh && j < RNG_INT_TRIES; ++j) b = rng_mix(b + RNG_GOLDEN);
      r = __umul64hi(b, span);
    }
    out[rng_offset(i, shape, st)] = (T)(r + low);
  }
}

// Box-Muller: pair p (outputs 2p, 2p+1) uses counters offset + 2p and offset + 2p + 1.
template <class T>
__global__ void rng_normal_kernel(T* out, i64 n, Shape shape, Strides st, u64 seed,
                                  u64 offset) {
  const i64 npairs = (n + 1) / 2;
  HF_GRID_LOOP(p, npairs) {
    u64 c = offset + 2 * (u64)p;
    f64 u1 = rng_uniform64(rng_bits(seed, c));
    f64 u2 = rng_uniform64(rng_bits(seed, c + 1));
    f64 r = sqrt(-2.0 * log1p(-u1));
    f64 t = 6.283185307179586 * u2;  // 2 pi, as NumPy's 2.0 * np.pi
    out[rng_offset(2 * p, shape, st)] = (T)(r * cos(t));
    if (2 * p + 1 < n) out[rng_offset(2 * p + 1, shape, st)] = (T)(r * sin(t));
  }
}

// ---------------------------------------------------------------- parametric samplers
// Element i owns a private SplitMix64 stream seeded by rng_bits(seed, offset + i): its
// draws do not depend on the launch geometry, and a rejection loop takes as many as it
// needs (at most RNG_TRIES attempts, then a fixed fallback: the mode or log(d)). The
// reference is hipfer/prims/counter_rng.py (log_gamma, poisson, binomial).
constexpr int RNG_TRIES = 16;   // rejection attempts per element (acceptance >= ~0.9)
constexpr int RNG_TABLE = 48;   // inversion steps for small means (tail < 1e-16)
constexpr f64 RNG_SMALL = 10.0; // means below this: inversion

struct RngChain {
  u64 s;
  __device__ __forceinline__ f64 next() { s += RNG_GOLDEN; return rng_uniform64(rng_mix(s)); }
};

// log(k!) for k >= 0: Stirling's series at k + 9, stepped down by eight logs.
__device__ __forceinline__ f64 rng_log_factorial(f64 k) {
  f64 z = k + 9.0;
  f64 r = 1.0 / z;
  f64 r2 = r * r;
  f64 series = r * (0.08333333333333333 + r2 * (-0.002777777777777778 +
                    r2 * (0.0007936507936507937 + r2 * -0.0005952380952380953)));
  f64 lg = (z - 0.5) * log(z) - z + 0.9189385332046728 + series;
  for (int i = 1; i <= 8; ++i) lg = lg - log(k + (f64)i);
  return lg;
}

// log of a standard gamma variate of shape a >= 0: Marsaglia-Tsang on a (a >= 1) or on
// a + 1 boosted by u^(1/a) (a < 1), kept in log space (beta and dirichlet normalise it).
__device__ __forceinline__ f64 rng_log_gamma(RngChain& c, f64 a) {
  f64 boost = c.next();
  bool small = a < 1.0;
  f64 d = (small ? a + 1.0 : a) - 1.0 / 3.0;
  f64 cc = 1.0 / sqrt(9.0 * d);
  f64 r = log(d);
  for (int t = 0; t < RNG_TRIES; ++t) {
    f64 u1 = c.next(), u2 = c.next(), u3 = c.next();
    f64 z = sqrt(-2.0 * log1p(-u1)) * cos(6.283185307179586 * u2);
    f64 v = 1.0 + cc * z;
    v = v * v * v;
    if (v > 0.0 && log1p(-u3) < 0.5 * z * z + d - d * v + d * log(v)) { r = log(d * v); break; }
  }
  if (small) r += a == 0.0 ? -__longlong_as_double(0x7ff0000000000000LL) : log1p(-boost) / a;
  return r;
}

// Poisson: inversion (lam < RNG_SMALL) or PTRS, Hormann's transformed rejection (NumPy's).
__device__ __forceinline__ f64 rng_poisson(RngChain& c, f64 lam) {
  if (lam < RNG_SMALL) {
    f64 u = c.next(), p = exp(-lam), cdf = p, k = 0.0;
    while (u >= cdf && k < RNG_TABLE - 1) { k += 1.0; p = p * (lam / k); cdf = cdf + p; }
    return k;
  }
  f64 slam = sqrt(lam), loglam = log(lam);
  f64 b = 0.931 + 2.53 * slam;
  f64 a = -0.059 + 0.02483 * b;
  f64 invalpha = 1.1239 + 1.1328 / (b - 3.4);
  f64 vr = 0.9277 - 3.6224 / (b - 2.0);
  for (int t = 0; t < RNG_TRIES; ++t) {
    f64 u = c.next() - 0.5, v = c.next();
    f64 us = fmax(0.5 - fabs(u), 1e-300);
    f64 k = floor((2.0 * a / us + b) * u + lam + 0.43);
    if (us >= 0.07 && v <= vr) return fmax(k, 0.0);
    if (k < 0.0 || (us < 0.013 && v > us)) continue;
    if (log(fmax(v, 1e-300)) + log(invalpha) - log(a / (us * us) + b) <=
        -lam + k * loglam - rng_log_factorial(k)) return k;
  }
  return floor(lam);
}

// Binomial: B(n, p) = n - B(n, 1 - p) for p > 1/2; inversion (n p < RNG_SMALL) or BTRS,
// Hormann's transformed rejection.
__device__ __forceinline__ f64 rng_binomial(RngChain& c, f64 n, f64 p0) {
  bool flip = p0 > 0.5;
  f64 p = flip ? 1.0 - p0 : p0;
  f64 k = 0.0;
  if (n * p < RNG_SMALL) {
    f64 q = 1.0 - p, r = p / q;
    f64 u = c.next(), pr = exp(n * log1p(-p)), cdf = pr;
    f64 top = fmin(n, (f64)(RNG_TABLE - 1));
    while (u >= cdf && k < top) { k += 1.0; pr = pr * (r * (n - k + 1.0) / k); cdf = cdf + pr; }
  } else {
    f64 q = 1.0 - p;
    f64 spq = sqrt(n * p * q);
    f64 b = 1.15 + 2.53 * spq;
    f64 a = -0.0873 + 0.0248 * b + 0.01 * p;
    f64 cc = n * p + 0.5;
    f64 vr = 0.92 - 4.2 / b;
    f64 alpha = (2.83 + 5.1 / b) * spq;
    f64 lpq = log(p / q);
    f64 m = floor((n + 1.0) * p);
    f64 h = rng_log_factorial(m) + rng_log_factorial(n - m);
    k = m;
    for (int t = 0; t < RNG_TRIES; ++t) {
      f64 u = c.next() - 0.5, v = c.next();
      f64 us = fmax(0.5 - fabs(u), 1e-300);
      f64 kk = floor((2.0 * a / us + b) * u + cc);
      if (kk < 0.0 || kk > n) continue;
      if (us >= 0.07 && v <= vr) { k = kk; break; }
      f64 lv = log(fmax(v, 1e-300) * alpha / (a / (us * us) + b));
      if (lv <= h - rng_log_factorial(kk) - rng_log_factorial(n - kk) + (kk - m) * lpq) {
        k = kk;
        break;
      }
    }
  }
  return flip ? n - k : k;
}

// out[i] = sampler(params at i): one (log_gamma, poisson) or two (binomial) f64 inputs,
// any strides (broadcast ones included); f64 (log_gamma) or i64 (counts) output.
template <class T>
__global__ void rng_log_gamma_kernel(T* out, const f64* a, i64 n, Shape shape, Strides st,
                                     Strides ast, u64 seed, u64 offset) {
  HF_GRID_LOOP(i, n) {
    RngChain c{rng_bits(seed, offset + (u64)i)};
    out[rng_offset(i, shape, st)] = (T)rng_log_gamma(c, a[rng_offset(i, shape, ast)]);
  }
}

template <class T>
__global__ void rng_poisson_kernel(T* out, const f64* lam, i64 n, Shape shape, Strides st,
                                   Strides lst, u64 seed, u64 offset) {
  HF_GRID_LOOP(i, n) {
    RngChain c{rng_bits(seed, offset + (u64)i)};
    out[rng_offset(i, shape, st)] = (T)rng_poisson(c, lam[rng_offset(i, shape, lst)]);
  }
}

template <class T>
__global__ void rng_binomial_kernel(T* out, const f64* nn, const f64* p, i64 n, Shape shape,
                                    Strides st, Strides nst, Strides pst, u64 seed,
                                    u64 offset) {
  HF_GRID_LOOP(i, n) {
    RngChain c{rng_bits(seed, offset + (u64)i)};
    out[rng_offset(i, shape, st)] =
        (T)rng_binomial(c, nn[rng_offset(i, shape, nst)], p[rng_offset(i, shape, pst)]);
  }
}

}  // namespace hf
