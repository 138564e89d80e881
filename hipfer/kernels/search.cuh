// search.cuh -- ArgReduce (argmax / argmin) and SearchSorted.
//
// Both order values as sort does: NaN above every number, -0.0 == 0.0.
//   search_arg_lines -- one thread per output, a sequential scan of its line (short axes);
//   search_arg_block -- one block per output: threads fold strided parts, then a tree merge
//                       in shared memory. The merge keeps the extreme and, among equals, the
//                       lower index: it is associative and commutative, so the answer does
//                       not depend on the order (first extreme; NaN counts as the extreme).
//   search_sorted    -- one thread per x2 element, a binary search in the 1-d x1.
#pragma once
#include "common.cuh"

// Threads per search_arg_block block (kernels/search.py BLOCK).
#define HF_SEARCH_BLOCK 256

namespace hf {

template <class T> __device__ __forceinline__ bool search_isnan(T v) { return v != v; }
template <> __device__ __forceinline__ bool search_isnan<bool>(bool) { return false; }

// a < b with NaN last (NaN equals NaN).
template <class T> __device__ __forceinline__ bool search_less(T a, T b) {
  return a < b || (search_isnan(b) && !search_isnan(a));
}

// Is candidate a strictly better than b? MAX: greater (NaN greatest); MIN: smaller, but
// NaN still wins (NumPy's argmin returns the first NaN).
template <bool IsMax> struct search_better;
template <> struct search_better<true> {
  template <class T> __device__ static bool of(T a, T b) { return search_less(b, a); }
};
template <> struct search_better<false> {
  template <class T> __device__ static bool of(T a, T b) {
    if (search_isnan(a) || search_isnan(b)) return search_isnan(a) && !search_isnan(b);
    return a < b;
  }
};

// Fold candidate (v, i) into the running best (bv, bi): strictly better, or as good with
// a lower index.
template <bool IsMax, class T>
__device__ __forceinline__ void search_pick(T& bv, i64& bi, T v, i64 i) {
  if (bi < 0 || search_better<IsMax>::of(v, bv) ||
      (!search_better<IsMax>::of(bv, v) && i < bi)) {
    bv = v;
    bi = i;
  }
}

// Shared arguments: x, out (int64), n_out outputs over `lines` (N-d shape, element strides
// into x and out), len elements along the reduced axis with stride x_ax.
#define HF_SEARCH_ARGS \
  const T* x, i64* out, i64 n_out, i64 len, Shape lines, Strides x_lines, Strides out_lines, i64 x_ax

template <bool IsMax, class T>
__global__ void search_arg_lines(HF_SEARCH_ARGS) {
  HF_GRID_LOOP(m, n_out) {
    const T* xl = x + offset_of(m, lines, x_lines);
    T bv = xl[0];
    i64 bi = 0;
    for (i64 k = 1; k < len; ++k) {
      const T v = xl[k * x_ax];
      if (search_better<IsMax>::of(v, bv)) {
        bv = v;
        bi = k;
      }
    }
    out[offset_of(m, lines, out_lines)] = bi;
  }
}

template <bool IsMax, class T>
__global__ void search_arg_block(HF_SEARCH_ARGS) {
  __shared__ __align__(16) unsigned char raw_v[HF_SEARCH_BLOCK * sizeof(T)];
  __shared__ i64 sh_i[HF_SEARCH_BLOCK];
  T* sh_v = reinterpret_cast<T*>(raw_v);
  for (i64 m = blockIdx.x; m < n_out; m += gridDim.x) {
    const T* xl = x + offset_of(m, lines, x_lines);
    T bv = xl[0];
    i64 bi = -1;  // nothing yet
    for (i64 k = threadIdx.x; k < len; k += blockDim.x) search_pick<IsMax>(bv, bi, xl[k * x_ax], k);
    __syncthreads();  // the previous output's readers are done
    sh_v[threadIdx.x] = bv;
    sh_i[threadIdx.x] = bi;
    __syncthreads();
    for (int s = blockDim.x >> 1; s > 0; s >>= 1) {
      if (threadIdx.x < s && sh_i[threadIdx.x + s] >= 0) {
        T v = sh_v[threadIdx.x];
        i64 i = sh_i[threadIdx.x];
        search_pick<IsMax>(v, i, sh_v[threadIdx.x + s], sh_i[threadIdx.x + s]);
        sh_v[threadIdx.x] = v;
        sh_i[threadIdx.x] = i;
      }
      __syncthreads();
    }
    if (threadIdx.x == 0) out[offset_of(m, lines, out_lines)] = sh_i[0];
  }
}
#undef HF_SEARCH_ARGS

// out[offset(j, out_st)] = number of x1 elements before which x2[j] goes: side left
// counts x1[i] < v, right counts x1[i] <= v (x1 ascending with NaN last, stride x1_st).
template <class T, bool Right>
__global__ void search_sorted(const T* x1, i64 n1, i64 x1_st, const T* x2, i64* out, i64 n,
                              Shape shape, Strides x2_st, Strides out_st) {
  HF_GRID_LOOP(j, n) {
    const T v = x2[offset_of(j, shape, x2_st)];
    i64 lo = 0, hi = n1;
    while (lo < hi) {
      const i64 mid = lo + ((hi - lo) >> 1);
      const T e = x1[mid * x1_st];
      const bool before = Right ? !search_less(v, e) : search_less(e, v);
      if (before) lo = mid + 1; else hi = mid;
    }
    out[offset_of(j, shape, out_st)] = lo;
  }
}

}  // namespace hf
