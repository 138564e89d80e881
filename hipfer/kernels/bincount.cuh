// bincount.cuh -- Bincount without weights (hipfer.backends.cupy.indexing).
//
// Counts with 64-bit integer atomics: the counts do not depend on the order the atomics
// land in, so they repeat bit for bit run to run. Weighted bincount uses no float
// atomics: it is Scatter's keyed accumulation (indexing.cuh), each bin summed in C order.
#pragma once
#include "common.cuh"

namespace hf {

// Block-private counts into counts (bins int64, zeroed by the host): with at most
// HF_BINCOUNT_SHARED bins and under 2^31 elements a block (both uniform over the launch),
// a block counts in shared memory with 32-bit atomics and adds its non-zero bins to
// counts at the end; otherwise every element takes a 64-bit atomic of counts. Integer
// counts: exact and independent of scheduling.
#ifndef HF_BINCOUNT_SHARED
#define HF_BINCOUNT_SHARED 2048
#endif
struct block_counts {
  u32* priv;
  unsigned long long* out;
  i64 bins;
  bool shared;
  __device__ __forceinline__ block_counts(u32* scratch, i64* counts, i64 bins_, i64 n)
      : priv(scratch), out(reinterpret_cast<unsigned long long*>(counts)), bins(bins_),
        shared(bins_ <= HF_BINCOUNT_SHARED && n / gridDim.x < (1ll << 31)) {
    if (shared) {
      for (i64 k = threadIdx.x; k < bins; k += blockDim.x) priv[k] = 0u;
      __syncthreads();
    }
  }
  __device__ __forceinline__ void add(i64 b) {
    if (shared) {
      atomicAdd(priv + b, 1u);
    } else {
      atomicAdd(out + b, 1ull);
    }
  }
  __device__ __forceinline__ void flush() {
    if (!shared) return;
    __syncthreads();
    for (i64 k = threadIdx.x; k < bins; k += blockDim.x) {
      const u32 c = priv[k];
      if (c) atomicAdd(out + k, (unsigned long long)c);
    }
  }
};

// Bincount without weights: counts[v] += 1 for every element v of x (N-d strided, element
// strides over `shape`) with 0 <= v < length; other values are skipped (the caller never
// passes them).
template <class I>
__global__ void bincount(i64* counts, const I* x, i64 n, Shape shape, Strides x_st,
                         i64 length) {
  __shared__ u32 priv[HF_BINCOUNT_SHARED];
  block_counts c(priv, counts, length, n);
  HF_GRID_LOOP(i, n) {
    const i64 v = (i64)x[offset_of(i, shape, x_st)];
    if (v >= 0 && v < length) c.add(v);
  }
  c.flush();
}

}  // namespace hf

namespace hf {

// Histogram: counts[b] += 1 for every element v of x with edges[b] <= v < edges[b + 1]
// (b < bins = n_edges - 1; the last bin also takes v == edges[bins]), v and the edges
// compared as C (NumPy's result type of x and edges; float16 through float, exactly):
// the composition searchsorted(edges, v, 'right') + bincount in one read of x, with no
// index array. The number of edges <= v comes from a binary search of the edges, or, with
// `uniform` (edges about evenly spaced: np.histogram's int bins), from the interpolated
// bin walked to the exact edges, as NumPy's equal-width path corrects its guess; the
// walk makes it exact for any increasing edges. NaN and values outside the edges are
// dropped. Counts: block_counts.
template <class T, class E, class C>
__global__ void histogram(i64* counts, const T* x, i64 n, Shape shape, Strides x_st,
                          const E* edges, i64 n_edges, bool uniform) {
  typedef typename calc_of<C>::type K;
  __shared__ u32 priv[HF_BINCOUNT_SHARED];
  const i64 bins = n_edges - 1;
  block_counts c(priv, counts, bins, n);
  const K first = cast<K>(cast<C>(edges[0])), last = cast<K>(cast<C>(edges[bins]));
  const f64 scale = (f64)bins / ((f64)last - (f64)first);
  const bool guess = uniform && scale > 0.0 && scale * 0.0 == 0.0;  // finite, positive
  HF_GRID_LOOP(i, n) {
    const K v = cast<K>(cast<C>(x[offset_of(i, shape, x_st)]));
    i64 lo;  // the number of edges <= v
    if (guess) {
      if (!(v == v)) continue;  // NaN
      const f64 f = ((f64)v - (f64)first) * scale;
      lo = f < 0.0 ? 0 : f >= (f64)bins ? n_edges : (i64)f + 1;
      while (lo > 0 && cast<K>(cast<C>(edges[lo - 1])) > v) --lo;
      while (lo < n_edges && cast<K>(cast<C>(edges[lo])) <= v) ++lo;
    } else {
      i64 hi = n_edges;
      lo = 0;
      while (lo < hi) {
        const i64 mid = (lo + hi) >> 1;
        if (cast<K>(cast<C>(edges[mid])) <= v) lo = mid + 1; else hi = mid;
      }
    }
    const i64 b = lo - 1 - (v == last ? 1 : 0);
    if (b >= 0 && b < bins) c.add(b);
  }
  c.flush();
}

}  // namespace hf
