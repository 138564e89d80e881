// gemm.cuh -- batched GEMM over the tropical semirings (BatchedGemm with MAX_PLUS,
// MIN_PLUS, MAX_MUL). Standard (+, x) GEMM goes to hipBLAS/cuBLAS instead.
//
//   C[b] = A[b] (x) B[b]         (beta == 0)
//   C[b] = C[b] (+) (A (x) B)    (beta == 1)      (+) the semiring's sum, (x) its product
//
// Operands are read through element strides, so transposed operands (op T), broadcast
// batches (batch stride 0) and any output view need no copies. One block computes a
// 64 x 64 tile of C with 256 threads, each a 4 x 4 micro-tile; k runs in slabs of 16
// staged in shared memory. Every output element is reduced in increasing k order, so
// results repeat bit-for-bit.
//
// With ARG (BatchedGemm argmax=True, beta 0): each accumulator keeps the k of its
// winning product next to it. k runs in increasing order and only a strictly better
// product (S::better) replaces the winner, so ties go to the smallest k and the first
// NaN wins, as np.argmax; k == 0 gives -1.
#pragma once
#include "common.cuh"

#define HF_GEMM_TM 64        // rows of C per block
#define HF_GEMM_TN 64        // columns of C per block
#define HF_GEMM_TK 16        // depth of one shared-memory slab
#define HF_GEMM_THREADS 256  // 16 x 16 threads, each HF_GEMM_R x HF_GEMM_R outputs
#define HF_GEMM_R 4

namespace hf {

// ---- value range of each dtype: the identities of max and min ---------------------
template <class T> struct limits;
template <> struct limits<i8>  { __device__ static i8  lowest() { return (i8)-128; }      __device__ static i8  highest() { return (i8)127; } };
template <> struct limits<i16> { __device__ static i16 lowest() { return (i16)-32768; }   __device__ static i16 highest() { return (i16)32767; } };
template <> struct limits<i32> { __device__ static i32 lowest() { return -2147483647 - 1; } __device__ static i32 highest() { return 2147483647; } };
template <> struct limits<i64> { __device__ static i64 lowest() { return -9223372036854775807LL - 1; } __device__ static i64 highest() { return 9223372036854775807LL; } };
template <> struct limits<u8>  { __device__ static u8  lowest() { return 0; } __device__ static u8  highest() { return (u8)255; } };
template <> struct limits<u16> { __device__ static u16 lowest() { return 0; } __device__ static u16 highest() { return (u16)65535; } };
template <> struct limits<u32> { __device__ static u32 lowest() { return 0; } __device__ static u32 highest() { return 4294967295u; } };
template <> struct limits<u64> { __device__ static u64 lowest() { return 0; } __device__ static u64 highest() { return 18446744073709551615ull; } };
template <> struct limits<half> {
  __device__ static half lowest() { return half::from_bits(0xfc00u); }  // -inf
  __device__ static half highest() { return half::from_bits(0x7c00u); } };
template <> struct limits<f32> { __device__ static f32 lowest() { return -__int_as_float(0x7f800000); } __device__ static f32 highest() { return __int_as_float(0x7f800000); } };
template <> struct limits<f64> { __device__ static f64 lowest() { return -__longlong_as_double(0x7ff0000000000000LL); } __device__ static f64 highest() { return __longlong_as_double(0x7ff0000000000000LL); } };

// (wrapping integer arithmetic: hf::wrap_add / wrap_mul in common.cuh)

// NumPy's maximum / minimum: a NaN on either side wins (a != a only for NaN).
template <class T> __device__ __forceinline__ T max_nan(T a, T b) { return (a > b || a != a) ? a : b; }
template <class T> __device__ __forceinline__ T min_nan(T a, T b) { return (a < b || a != a) ? a : b; }

// ---- semirings: start (identity of the sum over the dtype), zero (what an empty
// contraction gives), add, mul. start differs from zero only for MAX_MUL, whose zero
// is 0 while max over products of negative numbers must not be clamped at 0.
struct sr_max_plus {
  template <class T> __device__ static T start() { return limits<T>::lowest(); }
  template <class T> __device__ static T zero()  { return limits<T>::lowest(); }
  template <class T> __device__ static T add(T a, T b) { return max_nan(a, b); }
  template <class T> __device__ static T mul(T a, T b) { return wrap_add(a, b); }
  template <class T> __device__ static bool better(T a, T b) { return a > b || (a != a && b == b); }
};
struct sr_min_plus {
  template <class T> __device__ static T start() { return limits<T>::highest(); }
  template <class T> __device__ static T zero()  { return limits<T>::highest(); }
  template <class T> __device__ static T add(T a, T b) { return min_nan(a, b); }
  template <class T> __device__ static T mul(T a, T b) { return wrap_add(a, b); }
  template <class T> __device__ static bool better(T a, T b) { return a < b || (a != a && b == b); }
};
struct sr_max_mul {
  template <class T> __device__ static T start() { return limits<T>::lowest(); }
  template <class T> __device__ static T zero()  { return T(0); }
  template <class T> __device__ static T add(T a, T b) { return max_nan(a, b); }
  template <class T> __device__ static T mul(T a, T b) { return wrap_mul(a, b); }
  template <class T> __device__ static bool better(T a, T b) { return a > b || (a != a && b == b); }
};

__device__ __forceinline__ i64 abs_i64(i64 v) { return v < 0 ? -v : v; }

// Stage a TK x TILE slab of a strided operand into shared memory as s[kk][i]:
// element (i, kk) of the slab is at p[(i0 + i) * s_i + (k0 + kk) * s_k]. Threads walk
// the index with the smaller stride fastest, so a unit-stride axis is read coalesced
// whichever way the operand is transposed. Rows past n_i and depths past k_n are left
// untouched (the first are never stored, the second never read).
template <int TILE, class T>
__device__ __forceinline__ void load_slab(T (*s)[TILE + 1], const T* p, i64 s_i, i64 s_k,
                                          i64 i0, i64 n_i, i64 k0, int k_n) {
  const bool k_fast = abs_i64(s_k) <= abs_i64(s_i);
#pragma unroll
  for (int e = 0; e < (TILE * HF_GEMM_TK) / HF_GEMM_THREADS; ++e) {
    const int idx = (int)threadIdx.x + HF_GEMM_THREADS * e;
    const int i = k_fast ? idx / HF_GEMM_TK : idx % TILE;
    const int kk = k_fast ? idx % HF_GEMM_TK : idx / TILE;
    if (i0 + i < n_i && kk < k_n) s[kk][i] = p[(i0 + i) * s_i + (k0 + kk) * s_k];
  }
}

// grid.x: output tiles (row-major over tiles_n columns of tiles), grid.y: batches
// (a grid-stride loop covers batch > gridDim.y). beta is 0 or 1 (0 with ARG). I, the
// argmax output (ARG only), is laid out like C (strides i_b, i_m, i_n).
template <class S, class T, bool ARG>
__global__ void __launch_bounds__(HF_GEMM_THREADS)
gemm_semiring(const T* __restrict__ A, i64 a_b, i64 a_m, i64 a_k,
              const T* __restrict__ B, i64 b_b, i64 b_k, i64 b_n,
              T* C, i64 c_b, i64 c_m, i64 c_n,
              i64* I, i64 i_b, i64 i_m, i64 i_n,
              i64 batch, i64 m, i64 n, i64 k, i64 tiles_n, int beta) {
  __shared__ T As[HF_GEMM_TK][HF_GEMM_TM + 1];
  __shared__ T Bs[HF_GEMM_TK][HF_GEMM_TN + 1];
  const int tx = (int)threadIdx.x % 16, ty = (int)threadIdx.x / 16;
  const i64 row0 = ((i64)blockIdx.x / tiles_n) * HF_GEMM_TM;
  const i64 col0 = ((i64)blockIdx.x % tiles_n) * HF_GEMM_TN;
  // an empty contraction (k == 0) gives the semiring zero
  const T init = k > 0 ? S::template start<T>() : S::template zero<T>();

  for (i64 bz = blockIdx.y; bz < batch; bz += gridDim.y) {
    const T* Ab = A + bz * a_b;
    const T* Bb = B + bz * b_b;
    T acc[HF_GEMM_R][HF_GEMM_R];
    i64 arg[HF_GEMM_R][HF_GEMM_R];  // the winning k (ARG only; unused otherwise)
#pragma unroll
    for (int r = 0; r < HF_GEMM_R; ++r)
#pragma unroll
      for (int c = 0; c < HF_GEMM_R; ++c) {
        acc[r][c] = init;
        arg[r][c] = k > 0 ? 0 : -1;
      }

    for (i64 k0 = 0; k0 < k; k0 += HF_GEMM_TK) {
      const int k_n = (int)(k - k0 < HF_GEMM_TK ? k - k0 : HF_GEMM_TK);
      load_slab<HF_GEMM_TM>(As, Ab, a_m, a_k, row0, m, k0, k_n);
      load_slab<HF_GEMM_TN>(Bs, Bb, b_n, b_k, col0, n, k0, k_n);
      __syncthreads();
      // only the valid depth is reduced: no padding value can leak into a result
      for (int kk = 0; kk < k_n; ++kk) {
        T av[HF_GEMM_R], bv[HF_GEMM_R];
#pragma unroll
        for (int r = 0; r < HF_GEMM_R; ++r) av[r] = As[kk][ty + 16 * r];
#pragma unroll
        for (int c = 0; c < HF_GEMM_R; ++c) bv[c] = Bs[kk][tx + 16 * c];
#pragma unroll
        for (int r = 0; r < HF_GEMM_R; ++r)
#pragma unroll
          for (int c = 0; c < HF_GEMM_R; ++c) {
            if (ARG) {
              const T p = S::mul(av[r], bv[c]);
              if (S::better(p, acc[r][c])) {
                acc[r][c] = p;
                arg[r][c] = k0 + kk;
              }
            } else {
              acc[r][c] = S::add(acc[r][c], S::mul(av[r], bv[c]));
            }
          }
      }
      __syncthreads();
    }

    T* Cb = C + bz * c_b;
#pragma unroll
    for (int r = 0; r < HF_GEMM_R; ++r) {
      const i64 gi = row0 + ty + 16 * r;
      if (gi >= m) continue;
#pragma unroll
      for (int c = 0; c < HF_GEMM_R; ++c) {
        const i64 gj = col0 + tx + 16 * c;
        if (gj >= n) continue;
        T* p = Cb + gi * c_m + gj * c_n;
        *p = beta ? S::add(*p, acc[r][c]) : acc[r][c];
        if (ARG) I[bz * i_b + gi * i_m + gj * i_n] = arg[r][c];
      }
    }
  }
}

}  // namespace hf
