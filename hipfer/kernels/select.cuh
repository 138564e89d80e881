// select.cuh -- order statistics without a sort: an MSD radix select on sort.cuh's keys
// (hipfer/kernels/select.py plans the launches).
//
// The k-th smallest value of a row (0-based; -0.0 == +0.0, NaN last, as Sort orders) is
// found digit by digit, 8 bits at a time from the top of its unsigned key: a pass counts
// the digit of every element whose higher bits equal the query's prefix so far
// (select_count), then the query takes the digit where its rank falls and keeps its rank
// among that digit (select_pick). After bits / 8 passes the prefix is the whole key of
// the answer, which select_store turns back into a value. Each pass reads the row once,
// so a float32 median of n values costs 4 reads of them where a sort moves them 4 times
// with an index. Every row answers up to HF_SELECT_MAX_Q queries (their ranks per row) in
// the same passes. Counts are integers: the result is exact and independent of
// scheduling. select_tally and select_split then lay out a partition around the answers.
#pragma once
#include "sort.cuh"

#define HF_SELECT_BLOCK 256
#define HF_SELECT_DIGITS 256
#define HF_SELECT_MAX_Q 8

namespace hf {

// The unsigned key of x: sort_key_of(x) with its sign bit flipped where it is signed, so
// unsigned order is hipfer's order; bits of the key: 8 * sizeof(sort_key<T>::type).
template <class T> __device__ __forceinline__ u64 select_key(T x) {
  typedef typename sort_key<T>::type K;
  const int bits = 8 * (int)sizeof(K);
  const u64 mask = bits == 64 ? ~0ull : (1ull << bits) - 1ull;
  u64 u = (u64)(i64)sort_key_of(x) & mask;
  if ((K)-1 < (K)0) u ^= 1ull << (bits - 1);
  return u;
}

// The value with unsigned key u (every NaN's key gives the one NaN, -0.0's gives +0.0).
template <class T> __device__ __forceinline__ T select_value_of(typename sort_key<T>::type k) {
  return (T)k;
}
template <> __device__ __forceinline__ bool select_value_of<bool>(u8 k) { return k != 0; }
template <> __device__ __forceinline__ half select_value_of<half>(i16 k) {
  return half::from_bits(k < 0 ? (u16)(0x8000 | (u16)-k) : (u16)k);
}
template <> __device__ __forceinline__ f32 select_value_of<f32>(i32 k) {
  return __int_as_float(k < 0 ? (i32)(0x80000000u | (u32)-k) : k);
}
template <> __device__ __forceinline__ f64 select_value_of<f64>(i64 k) {
  return __longlong_as_double(k < 0 ? (i64)(0x8000000000000000ull | (u64)-k) : k);
}
template <class T> __device__ __forceinline__ T select_value(u64 u) {
  typedef typename sort_key<T>::type K;
  const int bits = 8 * (int)sizeof(K);
  if ((K)-1 < (K)0) u ^= 1ull << (bits - 1);
  return select_value_of<T>((K)u);
}

// One pass over rows of n contiguous values (row r at x + r * n), tiles blocks a row:
// block b takes tile b % tiles of row b / tiles. counts[(r * q + j) * 256 + d] (zeroed)
// gains the elements of the tile whose key has digit d at `shift` and the bits above it
// equal to those of prefix[r * q + j]. (Adding a warp's lanes of one digit together --
// 8 ballots to match them -- took 2.5x as long on an H200 as these plain shared atomics,
// even for normal data, whose top digits take few values.)
template <class T>
__global__ void __launch_bounds__(HF_SELECT_BLOCK)
select_count(const T* x, i64 n, i64 tiles, i64 tile_size, int q, const u64* prefix,
             int shift, u32* counts) {
  __shared__ u32 hist[HF_SELECT_MAX_Q * HF_SELECT_DIGITS];
  __shared__ u64 high[HF_SELECT_MAX_Q];
  const i64 row = blockIdx.x / tiles, t = blockIdx.x - row * tiles;
  const int top = shift + 8;  // the bits at and above `top` must match the prefix
  for (int k = threadIdx.x; k < q * HF_SELECT_DIGITS; k += blockDim.x) hist[k] = 0;
  if (threadIdx.x < q) high[threadIdx.x] = top >= 64 ? 0ull : prefix[row * q + threadIdx.x] >> top;
  __syncthreads();
  const T* xr = x + row * n;
  const i64 first = t * tile_size, end = n - first < tile_size ? n : first + tile_size;
  for (i64 i = first + threadIdx.x; i < end; i += blockDim.x) {
    const u64 key = select_key(xr[i]);
    const u64 h = top >= 64 ? 0ull : key >> top;
    const u32 digit = (u32)(key >> shift) & (HF_SELECT_DIGITS - 1);
    for (int j = 0; j < q; ++j)
      if (h == high[j]) atomicAdd(&hist[j * HF_SELECT_DIGITS + digit], 1u);  // exact counts
  }
  __syncthreads();
  u32* c = counts + row * q * HF_SELECT_DIGITS;
  for (int k = threadIdx.x; k < q * HF_SELECT_DIGITS; k += blockDim.x)
    if (hist[k]) atomicAdd(c + k, hist[k]);
}

// After a pass at `shift`: query i (of m = rows * q) takes the digit its rank falls in,
// keeps its rank among the elements of that digit, and zeroes its counts for the next pass.
__global__ void select_pick(u32* counts, u64* prefix, i64* rank, i64 m, int shift) {
  HF_GRID_LOOP(i, m) {
    u32* c = counts + i * HF_SELECT_DIGITS;
    const i64 k = rank[i];
    i64 below = 0;
    int d = 0;
    for (; d < HF_SELECT_DIGITS - 1; ++d) {
      if (k < below + (i64)c[d]) break;
      below += c[d];
    }
    prefix[i] |= (u64)d << shift;
    rank[i] = k - below;
    for (int e = 0; e < HF_SELECT_DIGITS; ++e) c[e] = 0u;
  }
}

// out[i] = the value whose key is prefix[i] (the last pass done), i < m.
template <class T>
__global__ void select_store(T* out, const u64* prefix, i64 m) {
  HF_GRID_LOOP(i, m) out[i] = select_value<T>(prefix[i]);
}

// ---- partition around the answers --------------------------------------------------
// The class of a value in its row, around the row's q answers (keys, ascending):
// 2 * (answers below it) + (1 if it equals one). Laid out by class, in index order within
// a class, a row is partitioned: every answer at its rank, smaller-or-equal values before
// it and larger-or-equal after (NumPy's partition around those ranks).
#define HF_SELECT_CLASSES (2 * HF_SELECT_MAX_Q + 1)

template <class T> __device__ __forceinline__ int select_class_of(T x, const u64* keys, int q) {
  const u64 key = select_key(x);
  int below = 0, equal = 0;
  for (int j = 0; j < q; ++j) {
    below += keys[j] < key ? 1 : 0;
    equal |= keys[j] == key ? 1 : 0;
  }
  return 2 * below + equal;
}

// counts[(row * tiles + t) * (2q + 1) + c]: the values of class c in tile t of each row
// (the tiles of select_count).
template <class T>
__global__ void __launch_bounds__(HF_SELECT_BLOCK)
select_tally(const T* x, i64 n, i64 tiles, i64 tile_size, const u64* keys, int q,
             u32* counts) {
  __shared__ u32 hist[HF_SELECT_CLASSES];
  const i64 row = blockIdx.x / tiles, t = blockIdx.x - row * tiles;
  const int classes = 2 * q + 1;
  if (threadIdx.x < classes) hist[threadIdx.x] = 0u;
  __syncthreads();
  const T* xr = x + row * n;
  const u64* kr = keys + row * q;
  const i64 first = t * tile_size, end = n - first < tile_size ? n : first + tile_size;
  for (i64 i = first + threadIdx.x; i < end; i += blockDim.x)
    atomicAdd(&hist[select_class_of(xr[i], kr, q)], 1u);  // exact counts
  __syncthreads();
  if (threadIdx.x < classes) counts[blockIdx.x * classes + threadIdx.x] = hist[threadIdx.x];
}

// Every value of the tile to its place in its row: after the row's values of smaller
// classes and those of its class in earlier tiles (the tally), then its rank among the
// tile's earlier values of its class, found chunk by chunk (blockDim values) as
// radix_scatter ranks digits: ballots match the lanes of a class, per-warp counts in
// shared memory order the warps. values (x's dtype) and/or indices (int64, the position
// in the row) take rows x n; either may be null. Integer counts only: one order for any
// warp size and schedule.
template <class T>
__global__ void __launch_bounds__(HF_SELECT_BLOCK)
select_split(const T* x, T* values, i64* indices, i64 n, i64 tiles, i64 tile_size,
             const u64* keys, int q, const u32* counts) {
  __shared__ u32 warp_count[HF_SELECT_BLOCK / 32][HF_SELECT_CLASSES];
  __shared__ u32 warp_place[HF_SELECT_BLOCK / 32][HF_SELECT_CLASSES];
  __shared__ u32 class_total[HF_SELECT_CLASSES];
  const int ws = warpSize, lane = threadIdx.x % ws, warp = threadIdx.x / ws;
  const int warps = blockDim.x / ws, classes = 2 * q + 1;
  const i64 row = blockIdx.x / tiles, t = blockIdx.x - row * tiles;
  const u64 lanes_below = (1ull << lane) - 1ull;
  // thread c < classes: the row's values of class c in earlier tiles, and in all
  u32 before = 0, total = 0;
  if (threadIdx.x < classes) {
    const u32* cr = counts + row * tiles * classes + threadIdx.x;
    for (i64 u = 0; u < tiles; ++u) {
      const u32 c = cr[u * classes];
      before += u < t ? c : 0u;
      total += c;
    }
    class_total[threadIdx.x] = total;
  }
  for (int k = threadIdx.x; k < warps * HF_SELECT_CLASSES; k += blockDim.x)
    warp_count[k / HF_SELECT_CLASSES][k % HF_SELECT_CLASSES] = 0u;
  __syncthreads();
  u32 next = before;  // thread c: where the tile's next value of class c goes
  if (threadIdx.x < classes)
    for (int c = 0; c < (int)threadIdx.x; ++c) next += class_total[c];
  const T* xr = x + row * n;
  const u64* kr = keys + row * q;
  const i64 first = t * tile_size, end = n - first < tile_size ? n : first + tile_size;
  for (i64 base = first; base < end; base += blockDim.x) {  // uniform: every thread loops
    const i64 i = base + threadIdx.x;
    const bool live = i < end;
    const T v = live ? xr[i] : xr[first];
    const u32 cls = (u32)select_class_of(v, kr, q);
    u64 same = HF_BALLOT(live);  // the live lanes of this warp whose class is this lane's
    for (int b = 0; b < 5; ++b) {  // classes < 2^5
      const bool bit = (cls >> b) & 1u;
      const u64 set = HF_BALLOT(bit);
      same &= bit ? set : ~set;
    }
    const u32 rank = __popcll(same & lanes_below);
    if (live && rank == 0) warp_count[warp][cls] = __popcll(same);
    __syncthreads();
    if (threadIdx.x < classes) {
      for (int w = 0; w < warps; ++w) {
        const u32 c = warp_count[w][threadIdx.x];
        warp_count[w][threadIdx.x] = 0u;  // ready for the next chunk
        warp_place[w][threadIdx.x] = next;
        next += c;
      }
    }
    __syncthreads();  // (warp_place is next written after the next chunk's first barrier)
    if (live) {
      const i64 place = row * n + warp_place[warp][cls] + rank;
      if (values) values[place] = v;
      if (indices) indices[place] = i;
    }
  }
}

}  // namespace hf
