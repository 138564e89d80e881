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

namespace hf {

// Histogram: counts[b] += 1 for every element v of x with edges[b] <= v < edges[b + 1]
// (b < bins = n_edges - 1; the last bin also takes v == edges[bins]), v and the edges
// compared as C (NumPy's result type of x and edges; float16 through float, exactly),
// found by a binary search of the edges (searchsorted, side='right'): the composition
// searchsorted + bincount in one read of x, with no index array. NaN and values outside
// the edges are dropped. Counts as bincount's: shared memory for few bins, then 64-bit
// integer atomics, exact and independent of scheduling.
template <class T, class E, class C>
__global__ void histogram(i64* counts, const T* x, i64 n, Shape shape, Strides x_st,
                          const E* edges, i64 n_edges) {
  typedef typename calc_of<C>::type K;
  __shared__ unsigned long long priv[HF_BINCOUNT_SHARED];
  unsigned long long* out = reinterpret_cast<unsigned long long*>(counts);
  const i64 bins = n_edges - 1;
  const bool shared = bins <= HF_BINCOUNT_SHARED;  // uniform over the block
  if (shared) {
    for (i64 k = threadIdx.x; k < bins; k += blockDim.x) priv[k] = 0ull;
    __syncthreads();
  }
  const K last = cast<K>(cast<C>(edges[bins]));
  HF_GRID_LOOP(i, n) {
    const K v = cast<K>(cast<C>(x[offset_of(i, shape, x_st)]));
    i64 lo = 0, hi = n_edges;  // the number of edges <= v
    while (lo < hi) {
      const i64 mid = (lo + hi) >> 1;
      if (cast<K>(cast<C>(edges[mid])) <= v) lo = mid + 1; else hi = mid;
    }
    const i64 b = lo - 1 - (v == last ? 1 : 0);
    if (b < 0 || b >= bins) continue;
    if (shared) {
      atomicAdd(priv + b, 1ull);
    } else {
      atomicAdd(out + b, 1ull);
    }
  }
  if (shared) {
    __syncthreads();
    for (i64 k = threadIdx.x; k < bins; k += blockDim.x) {
      const unsigned long long c = priv[k];
      if (c) atomicAdd(out + k, c);
    }
  }
}

}  // namespace hf
