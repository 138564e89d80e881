// bincount.cuh -- Bincount without weights (hipfer.backends.cupy.indexing).
//
// Counts with 64-bit integer atomics: the counts do not depend on the order the atomics
// land in, so they repeat bit for bit run to run. Weighted bincount uses no float
// atomics: it is Scatter's keyed accumulation (indexing.cuh), each bin summed in C order.
#pragma once
#include "common.cuh"

namespace hf {

// Bincount without weights: counts[v] += 1 for every element v of x (N-d strided, element
// strides over `shape`) with 0 <= v < length; other values are skipped (the caller never
// passes them). counts (length int64, zeroed by the host) take 64-bit integer atomics, so
// the result is exact and independent of scheduling. With few bins each block first
// counts into shared memory and then adds its non-zero bins to counts.
#ifndef HF_BINCOUNT_SHARED
#define HF_BINCOUNT_SHARED 2048
#endif
template <class I>
__global__ void bincount(i64* counts, const I* x, i64 n, Shape shape, Strides x_st,
                         i64 length) {
  __shared__ unsigned long long priv[HF_BINCOUNT_SHARED];
  unsigned long long* out = reinterpret_cast<unsigned long long*>(counts);
  const bool shared = length <= HF_BINCOUNT_SHARED;  // uniform over the block
  if (shared) {
    for (i64 k = threadIdx.x; k < length; k += blockDim.x) priv[k] = 0ull;
    __syncthreads();
  }
  HF_GRID_LOOP(i, n) {
    const i64 v = (i64)x[offset_of(i, shape, x_st)];
    if (v < 0 || v >= length) continue;
    if (shared) {
      atomicAdd(priv + v, 1ull);
    } else {
      atomicAdd(out + v, 1ull);
    }
  }
  if (shared) {
    __syncthreads();
    for (i64 k = threadIdx.x; k < length; k += blockDim.x) {
      const unsigned long long c = priv[k];
      if (c) atomicAdd(out + k, c);
    }
  }
}

}  // namespace hf
