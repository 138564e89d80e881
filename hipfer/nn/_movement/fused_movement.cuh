// fused_movement.cuh -- data movement ops of hipfer.nn (hipfer/prims/fused_ops/movement.py).
// Operands are C-contiguous; copy_2d and scatter_add_rows update their output in place.
//
// Pure copies (permute_0213, copy_2d, gather_rows) move bytes, not values: they are
// instantiated on a copy *unit* U of 4, 8 or 16 bytes, the widest that divides every row
// and every pointer of the call (hipfer.backends.cupy.fused_movement picks it), so a
// float32 row of 4k elements moves as 16-byte loads and stores.
//
// Rows go to groups of G = 2^group_log2 consecutive threads (R = blockDim / G groups per
// block): a group strides through its row, so every access of a warp is contiguous
// whether rows are short or long.
//
// Indices are checked before use: a bad one is never dereferenced but its position p is
// recorded as 1 + p in the device error flag (atomicCAS from 0), which the host reads and
// turns into IndexError (scatter_add_rows: radix_count checks them). scatter_add_rows and
// top_k_rows use no float atomics: their results do not depend on scheduling.
#pragma once
#include "common.cuh"
#include "radix.cuh"

namespace hf {

struct alignas(16) mv_u128 { u64 lo, hi; };  // the 16-byte copy unit

__device__ __forceinline__ void mv_report(i64* err, i64 pos) {
  atomicCAS(reinterpret_cast<unsigned long long*>(err), 0ull, (unsigned long long)(pos + 1));
}

// dst[u] = src[u] for u < n units, by the lane tg of a group of G threads.
template <class U>
__device__ __forceinline__ void mv_copy_row(U* dst, const U* src, i64 n, i64 tg, i64 G) {
  for (i64 u = tg; u < n; u += G) dst[u] = src[u];
}

// ---- rope -------------------------------------------------------------------------
// x is slices x pairs interleaved pairs (pairs = seq_len * head_dim / 2), the tables are
// pairs long: pair t of every slice turns by angle t. grid.y walks the slices, so no
// thread divides.
template <class T>
__global__ void fused_rope(const T* x, const T* cos, const T* sin, T* out, i64 slices,
                           i64 pairs, bool inverse) {
  for (i64 s = blockIdx.y; s < slices; s += gridDim.y) {
    const T* xs = x + 2 * s * pairs;
    T* os = out + 2 * s * pairs;
    for (i64 t = (i64)blockIdx.x * blockDim.x + threadIdx.x; t < pairs;
         t += (i64)blockDim.x * gridDim.x) {
      const T a = xs[2 * t], b = xs[2 * t + 1], c = cos[t];
      const T sn = inverse ? -sin[t] : sin[t];  // the opposite angle: exact negation
      os[2 * t] = a * c - b * sn;
      os[2 * t + 1] = a * sn + b * c;
    }
  }
}

// ---- permute_0213: (A, B, C, D) -> (A, C, B, D), in units (D = du units) ---------------
// Long D vectors (more than 16 bytes): a group per output vector (a, c, b); reads and
// writes are runs of whole vectors.
template <class U>
__global__ void fused_permute_0213_rows(const U* x, U* out, i64 A, i64 B, i64 C, i64 du,
                                        int group_log2) {
  const i64 G = 1 << group_log2, R = blockDim.x >> group_log2;
  const i64 tg = threadIdx.x & (G - 1);
  for (i64 v = (i64)blockIdx.x * R + (threadIdx.x >> group_log2); v < A * C * B;
       v += (i64)gridDim.x * R) {
    const i64 ac = v / B, b = v - ac * B, a = ac / C, c = ac - a * C;
    mv_copy_row(out + v * du, x + ((a * B + b) * C + c) * du, du, tg, G);
  }
}

// Short D vectors (up to 16 bytes): a B x C tile of vectors is a transpose through
// shared memory, read along C and written along B, both coalesced. The tile row is
// padded by one unit so the column reads of the write phase spread over the banks.
template <class U>
__global__ void fused_permute_0213_tiled(const U* x, U* out, i64 A, i64 B, i64 C, int du,
                                         int tile_log2) {
  HF_DYN_SHARED(U, tile);
  const int ts = 1 << tile_log2, span = ts * du, row = span + 1;  // row: padded, in units
  const i64 nbt = (B + ts - 1) / ts, nct = (C + ts - 1) / ts;
  for (i64 blk = blockIdx.x; blk < A * nbt * nct; blk += gridDim.x) {
    const i64 a = blk / (nbt * nct), bt = (blk - a * nbt * nct) / nct;
    const i64 b0 = bt * ts, c0 = (blk - a * nbt * nct - bt * nct) * ts;
    const int nb = B - b0 < ts ? (int)(B - b0) : ts, nc = C - c0 < ts ? (int)(C - c0) : ts;
    // read: element e of the tile is (lb, lcu = lc * du + u), contiguous in x along lcu
    const U* xt = x + ((a * B + b0) * C + c0) * du;
    for (int e = threadIdx.x; e < ts * span; e += blockDim.x) {
      const int lb = e / span, lcu = e - lb * span;
      if (lb < nb && lcu < nc * du) tile[lb * row + lcu] = xt[(i64)lb * C * du + lcu];
    }
    __syncthreads();
    // write: element e is (lc, lbu = lb * du + u), contiguous in out along lbu
    U* ot = out + ((a * C + c0) * B + b0) * du;
    for (int e = threadIdx.x; e < ts * span; e += blockDim.x) {
      const int lc = e / span, lbu = e - lc * span;
      if (lc < nc && lbu < nb * du) {
        const int lb = lbu / du;
        ot[(i64)lc * B * du + lbu] = tile[lb * row + lc * du + (lbu - lb * du)];
      }
    }
    __syncthreads();
  }
}

// ---- copy_2d: rows x cu units between strided rows (offsets and strides in units) ----
template <class U>
__global__ void fused_copy_2d(const U* src, U* dst, i64 rows, i64 cu, i64 src_offset,
                              i64 src_stride, i64 dst_offset, i64 dst_stride, int group_log2) {
  const i64 G = 1 << group_log2, R = blockDim.x >> group_log2;
  const i64 tg = threadIdx.x & (G - 1);
  for (i64 r = (i64)blockIdx.x * R + (threadIdx.x >> group_log2); r < rows; r += (i64)gridDim.x * R)
    mv_copy_row(dst + dst_offset + r * dst_stride, src + src_offset + r * src_stride, cu, tg, G);
}

// ---- gather_rows: out[i] = x[index[i]], rows of du units -------------------------------
// The indices are checked by fused_check_rows, launched before: the host waits for that
// check only, while this kernel runs behind it. A bad row is skipped here too (never
// read), so out is left unwritten there -- and never returned: the host raises.
template <class U>
__global__ void fused_gather_rows(const U* x, const i64* index, U* out, i64 m, i64 n, i64 du,
                                  int group_log2) {
  const i64 G = 1 << group_log2, R = blockDim.x >> group_log2;
  const i64 tg = threadIdx.x & (G - 1);
  for (i64 i = (i64)blockIdx.x * R + (threadIdx.x >> group_log2); i < m; i += (i64)gridDim.x * R) {
    const i64 r = index[i];
    if (r < 0 || r >= n) continue;
    mv_copy_row(out + i * du, x + r * du, du, tg, G);
  }
}

// Every index[i] (i < m) in [0, n); else a bad position goes to the error flag.
__global__ void fused_check_rows(const i64* index, i64 m, i64 n, i64* err) {
  HF_GRID_LOOP(i, m) {
    const i64 r = index[i];
    if (r < 0 || r >= n) mv_report(err, i);
  }
}

// ---- scatter_add_rows ----------------------------------------------------------------
// out[r] += src[i] for every i with index[i] == r, in increasing i. The backend sorts the
// indices first (radix.cuh): perm lists the i in a stable order of their indices, and
// row r's run there has runs[2r] of them, ending at runs[2r + 1]. Rows are du vectors of V
// elements (16-byte loads where the rows and pointers allow: a 4-byte load per thread
// kept too few bytes in flight, 117 us against 82 for float32 rows of 512 on an H200);
// each thread of the row's group adds its vectors in run order, every element exactly as
// a sequential loop does (np.add.at).
template <class T, int V>
__global__ void fused_scatter_add_rows(const T* src, const u32* perm, const u32* runs, T* out,
                                       i64 n, i64 du, int group_log2) {
  const i64 G = 1 << group_log2, R = blockDim.x >> group_log2;
  const i64 tg = threadIdx.x & (G - 1);
  for (i64 r = (i64)blockIdx.x * R + (threadIdx.x >> group_log2); r < n; r += (i64)gridDim.x * R) {
    const u32 count = runs[2 * r], end = runs[2 * r + 1];
    if (!count) continue;  // no source row: out[r] is not even read
    T* row = out + r * du * V;
    for (i64 c = tg; c < du; c += G) {
      pack<T, V> acc = load_pack<V>(row, c);
#pragma unroll 4
      for (u32 j = end - count; j < end; ++j) {
        const pack<T, V> s = load_pack<V>(src + (i64)perm[j] * du * V, c);
#pragma unroll
        for (int v = 0; v < V; ++v) acc.v[v] += s.v[v];
      }
      store_pack<V>(row, c, acc);
    }
  }
}

// ---- top_k_rows ------------------------------------------------------------------------
// The rank key: an unsigned integer as wide as T whose order is the ranking of largest
// (NaN above +inf, -0.0 == +0.0); smallest ranks by its complement (NaN last). Ties
// go to the lower column.
template <class T> struct mv_key;
template <> struct mv_key<f32> {
  typedef u32 type;
  static __device__ __forceinline__ u32 of(f32 v) {
    if (v != v) return 0xffffffffu;
    const u32 b = v == 0.0f ? 0u : (u32)__float_as_int(v);
    return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
  }
};
template <> struct mv_key<f64> {
  typedef u64 type;
  static __device__ __forceinline__ u64 of(f64 v) {
    if (v != v) return 0xffffffffffffffffull;
    const u64 b = v == 0.0 ? 0ull : (u64)__double_as_longlong(v);
    return (b & 0x8000000000000000ull) ? ~b : (b | 0x8000000000000000ull);
  }
};

// The number of threads below this one (in the block) whose flag is set; total: all of
// them. Every thread of the block must call it (ballots and barriers).
__device__ __forceinline__ i64 mv_count_before(bool flag, int* warp_total, i64& total) {
  const int ws = warpSize, lane = threadIdx.x % ws, warp = threadIdx.x / ws;
  const int nw = blockDim.x / ws;
  const u64 bits = HF_BALLOT(flag);
  if (lane == 0) warp_total[warp] = __popcll(bits);
  __syncthreads();
  i64 before = 0, all = 0;
  for (int w = 0; w < nw; ++w) {
    before += w < warp ? warp_total[w] : 0;
    all += warp_total[w];
  }
  __syncthreads();  // warp_total is reused by the next call
  total = all;
  return before + __popcll(bits & ((1ull << lane) - 1ull));
}

// One block per task: a row, or one of the `splits` segments of a row (long rows on few
// blocks; blockDim a multiple of the warp size, at most 1024). A segment is `chunk`
// columns from s * chunk, the last one to the row's end; it holds at least k of them.
// Without x_idx a column is its position; with it (the second stage over the segments'
// candidates, laid out segment after segment) it is x_idx[row * cols + position], and
// equal keys rank by position, which is their column order too. Per task:
//  1. radix select, 8 bits a pass from the top: find the key prefix of the k-th ranked
//     element. Elements above the prefix are in; of those equal to it, the first `need`
//     columns are (stops early once the prefix's bin holds exactly `need`).
//  2. collect those k elements in column order (block-wide counts, no atomics),
//  3. bitonic-sort them in shared memory by (key descending, column ascending): sort_n
//     (a power of two >= k, at most hipfer.kernels.fused_movement.TOP_K_SORT_MAX) slots,
//     padded with entries that rank last;
//  4. write values (the elements themselves, bit for bit) and columns.
// Dynamic shared memory: sort_n * (8 + sizeof(key)) bytes.
template <class T>
__global__ void fused_top_k_rows(const T* x, const i64* x_idx, T* values, i64* indices, i64 rows,
                                 i64 cols, i64 splits, i64 chunk, i64 k, int sort_n, bool largest) {
  typedef typename mv_key<T>::type K;
  const int bits = 8 * (int)sizeof(K);
  __shared__ unsigned int hist[256];
  __shared__ int warp_total[HF_MAX_WARPS_PER_BLOCK];
  __shared__ K s_prefix, s_mask;
  __shared__ i64 s_need;
  __shared__ bool s_done;
  HF_DYN_SHARED(i64, s_col);
  K* s_key = reinterpret_cast<K*>(s_col + sort_n);
  const K flip = largest ? K(0) : ~K(0);

  for (i64 task = blockIdx.x; task < rows * splits; task += gridDim.x) {
    const i64 row = task / splits, first = (task - row * splits) * chunk;
    const i64 n = task - row * splits == splits - 1 ? cols - first : chunk;
    const T* xr = x + row * cols + first;
    K prefix = 0, mask = 0;
    i64 need = k;
    for (int shift = bits - 8; shift >= 0; shift -= 8) {
      for (int b = threadIdx.x; b < 256; b += blockDim.x) hist[b] = 0;
      __syncthreads();
      for (i64 j = threadIdx.x; j < n; j += blockDim.x) {
        const K u = mv_key<T>::of(xr[j]) ^ flip;
        if ((u & mask) == prefix) atomicAdd(&hist[(int)(u >> shift) & 255], 1u);  // counts: exact
      }
      __syncthreads();
      if (threadIdx.x == 0) {
        i64 above = 0;
        int b = 255;
        for (; b > 0 && above + hist[b] < need; --b) above += hist[b];
        s_prefix = prefix | ((K)b << shift);
        s_mask = mask | ((K)255 << shift);
        s_need = need - above;
        s_done = hist[b] == (unsigned int)(need - above);
      }
      __syncthreads();
      prefix = s_prefix;
      mask = s_mask;
      need = s_need;
      if (s_done) break;  // uniform: every thread read the same s_done
    }

    i64 eq_seen = 0, taken = 0, total;
    for (i64 base = 0; base < n && taken < k; base += blockDim.x) {
      const i64 j = base + threadIdx.x;
      const K u = j < n ? mv_key<T>::of(xr[j]) ^ flip : K(0);
      const bool above = j < n && (u & mask) > prefix, eq = j < n && (u & mask) == prefix;
      const i64 eq_rank = eq_seen + mv_count_before(eq, warp_total, total);
      eq_seen += total;
      const bool take = above || (eq && eq_rank < need);
      const i64 pos = taken + mv_count_before(take, warp_total, total);
      taken += total;
      if (take) {
        s_col[pos] = j;
        s_key[pos] = u;
      }
    }
    for (i64 p = k + threadIdx.x; p < sort_n; p += blockDim.x) {
      s_col[p] = 0x7fffffffffffffffll;  // key 0, last column: after every element
      s_key[p] = K(0);
    }
    __syncthreads();

    for (int size = 2; size <= sort_n; size <<= 1) {
      for (int stride = size >> 1; stride > 0; stride >>= 1) {
        for (int t = threadIdx.x; t < sort_n / 2; t += blockDim.x) {
          const int i = 2 * t - (t & (stride - 1)), j = i + stride;
          const K ki = s_key[i], kj = s_key[j];
          const i64 ci = s_col[i], cj = s_col[j];
          const bool j_first = kj > ki || (kj == ki && cj < ci);
          if (j_first == ((i & size) == 0)) {  // this half sorts up: j belongs before i
            s_key[i] = kj; s_key[j] = ki;
            s_col[i] = cj; s_col[j] = ci;
          }
        }
        __syncthreads();
      }
    }

    for (i64 p = threadIdx.x; p < k; p += blockDim.x) {
      const i64 j = s_col[p];
      indices[task * k + p] = x_idx ? x_idx[row * cols + first + j] : first + j;
      values[task * k + p] = xr[j];
    }
    __syncthreads();
  }
}

}  // namespace hf
