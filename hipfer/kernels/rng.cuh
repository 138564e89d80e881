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

}  // namespace hf
