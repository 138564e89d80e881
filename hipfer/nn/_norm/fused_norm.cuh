// fused_norm.cuh -- row-wise ops of hipfer.nn (hipfer/prims/fused_ops/norm.py): softmax,
// logsumexp, layer norm and RMS norm, forward and backward.
//
// Operands are C-contiguous (rows, cols). A *team* of tpr threads (a power of two) owns one
// row at a time:
//   tpr <= 32:              blockDim.x / tpr teams per block, reducing with XOR shuffles
//                           (a team never straddles a warp, whose size is 32 or 64);
//   tpr == blockDim.x > 32: one team per block, finishing its reductions across warps
//                           through shared memory.
// Block b takes the row groups g = b, b + gridDim.x, ...; team t of the block takes row
// g * teams + t. Every thread of a block runs the same loop (a team past the last row joins
// with no columns), so shuffles and __syncthreads always see whole warps and blocks.
//
// Rows live in registers. A thread holds V values of its row per *tile* (V a template
// argument, kernels/fused_norm.py VALUES), as V / W vectors of W = 16 / sizeof(T)
// neighbours: in tile t, value e of vector k of thread `lane` is column
//     t * tpr * V + (k * tpr + lane) * W + e,
// so neighbouring lanes take neighbouring 16-byte vectors (coalesced). With `vec` (every
// row operand 16-byte aligned and cols % W == 0) a vector is one 16-byte load or store,
// otherwise W scalar ones; both give the same values in the same registers, so the
// results do not depend on alignment. The host picks tpr so that a row fits one tile
// (tpr * V >= cols) up to the kernel's largest team. Longer rows take several tiles: pass 1 reads them
// all, merging each tile's statistics into the thread's; pass 2 walks them backwards, so
// the last tile is still in registers and the others are read again, most recent first
// (from cache).
//
// Each row operand is read from memory once (per tile pass) and each result written once;
// softmax takes one exp per value. Every sum runs in an order fixed by (cols, tpr, V,
// blockDim, gridDim, warp size), which the host derives from the shapes and the device
// alone: results repeat bit for bit, and no float is ever accumulated with atomics.
#pragma once
#include "common.cuh"

// Largest block (kernels/fused_norm.py MAX_BLOCK): nvcc must keep a 1024-thread block
// within the register file (<= 64 registers a thread), or the launch fails.
#define HF_NORM_MAX_BLOCK 1024
// The forward kernels' launch bounds, for blocks of up to MB threads (MB a template
// argument: kernels/fused_norm.py FWD_BOUNDS). The largest is 512: a row of 32 four-byte
// values a thread needs more than 64 registers, and spilling the rest cost a third of the
// bandwidth on an H200 (softmax 0.67 -> 0.88 of the floor at 65536 x 1000 float32 with
// 512); longer rows take several tiles instead. Blocks of up to 256 also ask CUDA for 3
// blocks an SM: <= 80 registers (96-124 unbounded), 24 warps resident instead of 16
// (softmax only: kernels/fused_norm.py FWD_BOUNDS). logsumexp's blocks (at most 256
// threads) ask for 4 with 4-byte values (HF_NORM_LSE_BOUNDS): <= 64 registers, unspilled;
// 32 warps took it from 0.80 to 0.83 of the copy floor at 65536 x 1000 float32 (H200).
// float64 spills a little at 64 and keeps 3.
// HIP's second argument means something else (waves per EU): the block size alone there.
#if HF_HIP
#  define HF_NORM_FWD_BOUNDS(MB) __launch_bounds__(MB)
#  define HF_NORM_LSE_BOUNDS(T, MB) __launch_bounds__(MB)
#else
#  define HF_NORM_FWD_BOUNDS(MB) __launch_bounds__(MB, (MB) <= 256 ? 3 : 1)
#  define HF_NORM_LSE_BOUNDS(T, MB) __launch_bounds__(MB, sizeof(T) == 4 ? 4 : 3)
#endif
// Columns a block of fused_norm_column_sums / _column_products covers: 32 lanes of one
// vector each (a tile width, not the warp size).
#define HF_NORM_COL_LANES 32

namespace hf {

__device__ __forceinline__ f32 norm_exp(f32 v) { return expf(v); }
__device__ __forceinline__ f64 norm_exp(f64 v) { return exp(v); }
__device__ __forceinline__ f32 norm_log(f32 v) { return logf(v); }
__device__ __forceinline__ f64 norm_log(f64 v) { return log(v); }
__device__ __forceinline__ f32 norm_sqrt(f32 v) { return sqrtf(v); }
__device__ __forceinline__ f64 norm_sqrt(f64 v) { return sqrt(v); }
template <class T> __device__ T norm_neg_inf();
template <> __device__ __forceinline__ f32 norm_neg_inf<f32>() {
  return __int_as_float((int)0xff800000u);
}
template <> __device__ __forceinline__ f64 norm_neg_inf<f64>() {
  return __longlong_as_double((i64)0xfff0000000000000ull);
}
// NaN wins, so a row with a NaN has a NaN max.
template <class T> __device__ __forceinline__ T norm_max(T a, T b) {
  return (a > b || a != a) ? a : b;
}
// The same in one instruction where there is one (CUDA sm_80+: max.NaN.f32, whose NaN is
// the canonical one rather than a's or b's) instead of two compares and a select.
template <class T> __device__ __forceinline__ T norm_max_nan(T a, T b) { return norm_max(a, b); }
#if !HF_HIP && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
template <> __device__ __forceinline__ f32 norm_max_nan<f32>(f32 a, f32 b) {
  f32 d;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b));
  return d;
}
#endif

// ---- teams, rows and tiles -----------------------------------------------------------------
struct norm_team {
  int tpr, lane, team, teams;  // threads per row, lane in the team, team in the block, teams per block
};
__device__ __forceinline__ norm_team norm_team_of(int tpr) {
  norm_team t;
  t.tpr = tpr;
  t.lane = threadIdx.x % tpr;
  t.team = threadIdx.x / tpr;
  t.teams = blockDim.x / tpr;
  return t;
}
__device__ __forceinline__ i64 norm_groups(i64 rows, const norm_team& tm) {
  return (rows + tm.teams - 1) / tm.teams;
}

// The team's row in group g: its index r, its columns n (0 past the last row) and where
// it starts in a (rows, cols) operand.
struct norm_row {
  i64 r, n, base;
};
__device__ __forceinline__ norm_row norm_row_of(i64 g, const norm_team& tm, i64 rows, i64 cols) {
  norm_row rw;
  rw.r = g * tm.teams + tm.team;
  rw.n = rw.r < rows ? cols : 0;
  rw.base = rw.n ? rw.r * cols : 0;
  return rw;
}

// Tiles of tpr * V columns a row of cols takes (at least one, so that rows of no columns
// still run the loops).
template <int V> __device__ __forceinline__ int norm_tiles(i64 cols, int tpr) {
  const i64 per = (i64)tpr * V;
  return cols > per ? (int)((cols + per - 1) / per) : 1;
}

// One thread's columns of tile t in a row of n columns: value i is column
// c0 + (i / W) * step + i % W; the values past n are not there. Columns within a row are
// 32-bit (the host keeps cols < 2^31 - tpr * V).
template <class T, int V>
struct norm_tile {
  static constexpr int W = 16 / (int)sizeof(T);
  static_assert(V % W == 0, "a thread holds whole 16-byte vectors");
  int c0, step, n;
  __device__ __forceinline__ norm_tile(int t, const norm_team& tm, i64 n_)
      : c0(t * tm.tpr * V + tm.lane * W), step(tm.tpr * W), n((int)n_) {}
  __device__ __forceinline__ bool has(int i) const { return c0 + (i / W) * step + i % W < n; }
};


// r = the tile's values of the row at p, `fill` where the row has none.
template <class T, int V>
__device__ __forceinline__ void norm_load(const T* p, const norm_tile<T, V>& tl, int vec,
                                          T (&r)[V], T fill = T(0)) {
  constexpr int W = norm_tile<T, V>::W;
  if (vec) {
#pragma unroll
    for (int k = 0; k < V / W; ++k) {
      const int c = tl.c0 + k * tl.step;
      pack<T, W> q;
#pragma unroll
      for (int e = 0; e < W; ++e) q.v[e] = fill;
      if (c < tl.n) q = *reinterpret_cast<const pack<T, W>*>(p + c);
#pragma unroll
      for (int e = 0; e < W; ++e) r[k * W + e] = q.v[e];
    }
  } else {
#pragma unroll
    for (int k = 0; k < V / W; ++k)
#pragma unroll
      for (int e = 0; e < W; ++e) {
        const int c = tl.c0 + k * tl.step + e;
        r[k * W + e] = c < tl.n ? p[c] : fill;
      }
  }
}

// The tile's values of the row at p = r (only the columns the row has).
template <class T, int V>
__device__ __forceinline__ void norm_store(T* p, const norm_tile<T, V>& tl, int vec,
                                           const T (&r)[V]) {
  constexpr int W = norm_tile<T, V>::W;
  if (vec) {
#pragma unroll
    for (int k = 0; k < V / W; ++k) {
      const int c = tl.c0 + k * tl.step;
      pack<T, W> q;
#pragma unroll
      for (int e = 0; e < W; ++e) q.v[e] = r[k * W + e];
      if (c < tl.n) *reinterpret_cast<pack<T, W>*>(p + c) = q;
    }
  } else {
#pragma unroll
    for (int k = 0; k < V / W; ++k)
#pragma unroll
      for (int e = 0; e < W; ++e) {
        const int c = tl.c0 + k * tl.step + e;
        if (c < tl.n) p[c] = r[k * W + e];
      }
  }
}

// Vector k of the tile, for per-column operands (gamma, beta) taken a vector at a time
// (few registers): r = its W values of the row at p (0 where the row has none), and back.
template <class T, int V>
__device__ __forceinline__ void norm_load_vec(const T* p, const norm_tile<T, V>& tl, int k,
                                              int vec, T (&r)[norm_tile<T, V>::W]) {
  constexpr int W = norm_tile<T, V>::W;
  const int c = tl.c0 + k * tl.step;
  if (vec) {
    pack<T, W> q = {};
    if (c < tl.n) q = *reinterpret_cast<const pack<T, W>*>(p + c);
#pragma unroll
    for (int e = 0; e < W; ++e) r[e] = q.v[e];
  } else {
#pragma unroll
    for (int e = 0; e < W; ++e) r[e] = c + e < tl.n ? p[c + e] : T(0);
  }
}
template <class T, int V>
__device__ __forceinline__ void norm_store_vec(T* p, const norm_tile<T, V>& tl, int k, int vec,
                                               const T (&r)[norm_tile<T, V>::W]) {
  constexpr int W = norm_tile<T, V>::W;
  const int c = tl.c0 + k * tl.step;
  if (vec) {
    pack<T, W> q;
#pragma unroll
    for (int e = 0; e < W; ++e) q.v[e] = r[e];
    if (c < tl.n) *reinterpret_cast<pack<T, W>*>(p + c) = q;
  } else {
#pragma unroll
    for (int e = 0; e < W; ++e)
      if (c + e < tl.n) p[c + e] = r[e];
  }
}

// ---- team reductions -----------------------------------------------------------------------
// The reduced values: plain structs (they live in __shared__ arrays) with merge(lo, hi) and
// a field-by-field shuffle.
template <class T> struct norm_sum {
  T s;
  static __device__ __forceinline__ norm_sum merge(norm_sum a, norm_sum b) { return {a.s + b.s}; }
  __device__ __forceinline__ norm_sum shfl_xor(int m) const { return {HF_SHFL_XOR(s, m)}; }
};
template <class T> struct norm_sum2 {
  T a, b;
  static __device__ __forceinline__ norm_sum2 merge(norm_sum2 x, norm_sum2 y) {
    return {x.a + y.a, x.b + y.b};
  }
  __device__ __forceinline__ norm_sum2 shfl_xor(int m) const {
    return {HF_SHFL_XOR(a, m), HF_SHFL_XOR(b, m)};
  }
};
template <class T> struct norm_max_of {
  T m;
  static __device__ __forceinline__ norm_max_of merge(norm_max_of a, norm_max_of b) {
    return {norm_max(a.m, b.m)};
  }
  __device__ __forceinline__ norm_max_of shfl_xor(int k) const { return {HF_SHFL_XOR(m, k)}; }
};
// A max m and the sum s of exp(v - m) over the values seen; m = -inf with s = 0 when no
// value was above -inf.
template <class T> struct norm_exp_sum {
  T m, s;
  // What a sum taken relative to m is relative to M >= m (1 when equal, also -inf == -inf).
  static __device__ __forceinline__ T rescale(T m, T M) { return m == M ? T(1) : norm_exp(m - M); }
  static __device__ __forceinline__ norm_exp_sum merge(norm_exp_sum x, norm_exp_sum y) {
    const T m = norm_max(x.m, y.m);
    return {m, x.s * rescale(x.m, m) + y.s * rescale(y.m, m)};
  }
  __device__ __forceinline__ norm_exp_sum shfl_xor(int k) const {
    return {HF_SHFL_XOR(m, k), HF_SHFL_XOR(s, k)};
  }
};
// Count, mean and sum of squared deviations from the mean, merged as Chan et al.
template <class T> struct norm_moments {
  T n, mean, m2;
  static __device__ __forceinline__ norm_moments merge(norm_moments x, norm_moments y) {
    if (y.n == T(0)) return x;
    if (x.n == T(0)) return y;
    const T n = x.n + y.n, d = y.mean - x.mean, f = y.n / n;
    return {n, x.mean + d * f, x.m2 + y.m2 + d * d * x.n * f};
  }
  __device__ __forceinline__ norm_moments shfl_xor(int k) const {
    return {HF_SHFL_XOR(n, k), HF_SHFL_XOR(mean, k), HF_SHFL_XOR(m2, k)};
  }
};

// The merge of the team's values, returned to every thread of the team. Butterflies: each
// step merges the lower lane's value with the upper lane's (the same call on both sides),
// so the order is fixed and every thread ends with the same bits. A team wider than a warp
// finishes over its warps' results in shared memory, every warp running the same butterfly.
template <class A>
__device__ A norm_team_reduce(A v, int tpr) {
  __shared__ A partial[HF_MAX_WARPS_PER_BLOCK];
  const int ws = warpSize, lane = threadIdx.x % ws;
  for (int m = (tpr < ws ? tpr : ws) >> 1; m > 0; m >>= 1) {
    const A o = v.shfl_xor(m);
    v = (lane & m) ? A::merge(o, v) : A::merge(v, o);
  }
  if (tpr <= ws) return v;
  const int n_warps = blockDim.x / ws;  // a power of two <= 32 <= ws
  __syncthreads();  // the previous reduction's readers of `partial` are done
  if (lane == 0) partial[threadIdx.x / ws] = v;
  __syncthreads();
  v = partial[lane & (n_warps - 1)];
  for (int m = n_warps >> 1; m > 0; m >>= 1) {
    const A o = v.shfl_xor(m);
    v = (lane & m) ? A::merge(o, v) : A::merge(v, o);
  }
  return v;
}

// ---- the backward ops' column sums ---------------------------------------------------------
// With a one-tile row, a thread keeps the same columns for every row, so it sums its
// columns' terms (dgamma, dbeta) in registers; at the end the block's row of part
// (N * cols values: sum j at j * cols) gets the sum over its teams, in team order, through
// shared memory (teams * N * cols values) when there are several.
template <class T, int V, int N>
__device__ void norm_flush_sums(const T (&acc)[N][V], T* part, T* smem, i64 cols,
                                const norm_team& tm, int vec) {
  const i64 width = N * cols;
  T* row = part + blockIdx.x * width;
  const norm_tile<T, V> tl(0, tm, cols);
  if (tm.teams == 1) {
#pragma unroll
    for (int j = 0; j < N; ++j) norm_store(row + j * cols, tl, vec, acc[j]);
    return;
  }
#pragma unroll
  for (int j = 0; j < N; ++j) norm_store(smem + tm.team * width + j * cols, tl, vec, acc[j]);
  __syncthreads();
  for (i64 c = threadIdx.x; c < width; c += blockDim.x) {
    T v = smem[c];
    for (int t = 1; t < tm.teams; ++t) v += smem[t * width + c];
    row[c] = v;
  }
}


// ---- softmax and logsumexp ---------------------------------------------------------------
// Merges the tile's values v into st, leaving v[i] = exp(v[i] - st.m): one exp per value
// (0 where the row has no value, and where st.m is -inf: no value so far above -inf).
template <class T, int V>
__device__ __forceinline__ void norm_exp_tile(norm_exp_sum<T>& st, T (&v)[V],
                                              const norm_tile<T, V>& tl) {
  T m = st.m;
#pragma unroll
  for (int i = 0; i < V; ++i)
    if (tl.has(i)) m = norm_max(m, v[i]);
  const bool live = m != norm_neg_inf<T>();
  T s = st.s * norm_exp_sum<T>::rescale(st.m, m);
#pragma unroll
  for (int i = 0; i < V; ++i) {
    const T e = norm_exp(v[i] - m);  // for every value: a select, not a branch, per value
    v[i] = live && tl.has(i) ? e : T(0);
    s += v[i];
  }
  st.m = m;
  st.s = s;
}

// A row held in one tile (the common case): its max first, then the sum of exp(v - max)
// relative to it -- two team reductions of one max or add per step, where merging
// (max, sum) pairs would take two exps per step on the reduction's critical path. Leaves
// v[i] = exp(v[i] - max) (0 where the row has no value, or no value above -inf) and
// returns the row's (max, sum).
template <class T, int V>
__device__ __forceinline__ norm_exp_sum<T> norm_exp_row(T (&v)[V], const norm_tile<T, V>& tl,
                                                        int tpr) {
  norm_max_of<T> mx = {norm_neg_inf<T>()};
#pragma unroll
  for (int i = 0; i < V; ++i)
    if (tl.has(i)) mx.m = norm_max(mx.m, v[i]);
  const T m = norm_team_reduce(mx, tpr).m;
  const bool live = m != norm_neg_inf<T>();
  norm_sum<T> s = {T(0)};
#pragma unroll
  for (int i = 0; i < V; ++i) {
    const T e = norm_exp(v[i] - m);
    v[i] = live && tl.has(i) ? e : T(0);
    s.s += v[i];
  }
  return {m, norm_team_reduce(s, tpr).s};
}

// y = exp(x - max) / sum(exp(x - max)). The thread's exps are relative to its own max, and
// rescaled to the row's once. out may be x (in place): each value is read, then written,
// by the same thread.
template <class T, int V, int MB>
__global__ void HF_NORM_FWD_BOUNDS(MB)
fused_softmax_rows(const T* x, T* out, i64 rows, i64 cols, int tpr, int vec) {
  const norm_team tm = norm_team_of(tpr);
  const int tiles = norm_tiles<V>(cols, tpr);
  const i64 groups = norm_groups(rows, tm);
  for (i64 g = blockIdx.x; g < groups; g += gridDim.x) {
    const norm_row rw = norm_row_of(g, tm, rows, cols);
    const T* xr = x + rw.base;
    T v[V];
    if (tiles == 1) {
      const norm_tile<T, V> tl(0, tm, rw.n);
      norm_load(xr, tl, vec, v);
      const T inv = T(1) / norm_exp_row(v, tl, tpr).s;
#pragma unroll
      for (int i = 0; i < V; ++i) v[i] *= inv;
      norm_store(out + rw.base, tl, vec, v);
      continue;
    }
    norm_exp_sum<T> st = {norm_neg_inf<T>(), T(0)};
    for (int t = 0; t < tiles; ++t) {
      const norm_tile<T, V> tl(t, tm, rw.n);
      norm_load(xr, tl, vec, v);
      norm_exp_tile(st, v, tl);
    }
    const norm_exp_sum<T> row = norm_team_reduce(st, tpr);
    const T inv = T(1) / row.s;  // inf for a row of -inf: 0 * inf gives its NaNs
    for (int t = tiles - 1; t >= 0; --t) {
      const norm_tile<T, V> tl(t, tm, rw.n);
      if (t == tiles - 1) {  // v holds exp(x - st.m)
        const T k = norm_exp_sum<T>::rescale(st.m, row.m) * inv;
#pragma unroll
        for (int i = 0; i < V; ++i) v[i] *= k;
      } else {
        norm_load(xr, tl, vec, v);
#pragma unroll
        for (int i = 0; i < V; ++i) v[i] = norm_exp(v[i] - row.m) * inv;
      }
      norm_store(out + rw.base, tl, vec, v);
    }
  }
}

// logsumexp reads a value and writes nothing, so it is bound by the instructions per value
// more than by memory (float32 on an H200, 1000 to 8192 columns: 0.59-0.69 of the copy
// floor, 0.81-0.89 with what follows). Its rows are loaded with -inf where they have no
// value: the max passes over it and its exp is 0, so no value needs the column test and
// selects of norm_exp_row / norm_exp_tile, which give the same sums bit for bit. The sum
// of a row whose max m is not finite is not used (the result is m), so its NaNs need no
// select either; the max takes norm_max_nan.
// A one-tile row: (max, sum of exp(v - max)), as norm_exp_row.
template <class T, int V>
__device__ __forceinline__ norm_exp_sum<T> norm_lse_row(const T (&v)[V], int tpr) {
  norm_max_of<T> mx = {norm_neg_inf<T>()};
#pragma unroll
  for (int i = 0; i < V; ++i) mx.m = norm_max_nan(mx.m, v[i]);
  const T m = norm_team_reduce(mx, tpr).m;
  norm_sum<T> s = {T(0)};
#pragma unroll
  for (int i = 0; i < V; ++i) s.s += norm_exp(v[i] - m);
  return {m, norm_team_reduce(s, tpr).s};
}
// The tile's values merged into st, as norm_exp_tile.
template <class T, int V>
__device__ __forceinline__ void norm_lse_tile(norm_exp_sum<T>& st, const T (&v)[V]) {
  T m = st.m;
#pragma unroll
  for (int i = 0; i < V; ++i) m = norm_max_nan(m, v[i]);
  T s = st.s * norm_exp_sum<T>::rescale(st.m, m);
#pragma unroll
  for (int i = 0; i < V; ++i) s += norm_exp(v[i] - m);
  st.m = m;
  st.s = m != norm_neg_inf<T>() ? s : T(0);  // no value yet above -inf: exp(-inf - -inf) is NaN
}
// The team's (max, sum): the max first, then each thread's sum rescaled to it once and
// added, as norm_lse_row -- one exp a thread, where merging the pairs takes two a step.
template <class T>
__device__ __forceinline__ norm_exp_sum<T> norm_lse_team(norm_exp_sum<T> st, int tpr) {
  const T m = norm_team_reduce(norm_max_of<T>{st.m}, tpr).m;
  const norm_sum<T> s = {st.s * norm_exp_sum<T>::rescale(st.m, m)};
  return {m, norm_team_reduce(s, tpr).s};
}

// A row whose max is not finite (all -inf, a +inf, a NaN) has that max as its result;
// no columns give -inf. The host keeps teams narrow and rows in several tiles
// (kernels/fused_norm.py lse_team_size): the reductions come once a row.
template <class T, int V, int MB>
__global__ void HF_NORM_LSE_BOUNDS(T, MB)
fused_logsumexp_rows(const T* x, T* out, i64 rows, i64 cols, int tpr, int vec) {
  const norm_team tm = norm_team_of(tpr);
  const int tiles = norm_tiles<V>(cols, tpr);
  const i64 groups = norm_groups(rows, tm);
  for (i64 g = blockIdx.x; g < groups; g += gridDim.x) {
    const norm_row rw = norm_row_of(g, tm, rows, cols);
    T v[V];
    norm_exp_sum<T> row;
    if (tiles == 1) {
      norm_load(x + rw.base, norm_tile<T, V>(0, tm, rw.n), vec, v, norm_neg_inf<T>());
      row = norm_lse_row(v, tpr);
    } else {
      norm_exp_sum<T> st = {norm_neg_inf<T>(), T(0)};
      for (int t = 0; t < tiles; ++t) {
        norm_load(x + rw.base, norm_tile<T, V>(t, tm, rw.n), vec, v, norm_neg_inf<T>());
        norm_lse_tile(st, v);
      }
      row = norm_lse_team(st, tpr);
    }
    if (tm.lane == 0 && rw.r < rows)  // m - m: 0 iff m is finite
      out[rw.r] = row.m - row.m == T(0) ? row.m + norm_log(row.s) : row.m;
  }
}

// dx = y * (grad - sum(grad * y)).
template <class T, int V>
__global__ void __launch_bounds__(HF_NORM_MAX_BLOCK)
fused_softmax_rows_backward(const T* grad, const T* y, T* dx, i64 rows, i64 cols, int tpr,
                            int vec) {
  const norm_team tm = norm_team_of(tpr);
  const int tiles = norm_tiles<V>(cols, tpr);
  const i64 groups = norm_groups(rows, tm);
  for (i64 g = blockIdx.x; g < groups; g += gridDim.x) {
    const norm_row rw = norm_row_of(g, tm, rows, cols);
    T a[V], b[V];  // grad, y
    norm_sum<T> dot = {T(0)};
    for (int t = 0; t < tiles; ++t) {
      const norm_tile<T, V> tl(t, tm, rw.n);
      norm_load(grad + rw.base, tl, vec, a);
      norm_load(y + rw.base, tl, vec, b);
#pragma unroll
      for (int i = 0; i < V; ++i) dot.s += a[i] * b[i];
    }
    const T d = norm_team_reduce(dot, tpr).s;
    for (int t = tiles - 1; t >= 0; --t) {
      const norm_tile<T, V> tl(t, tm, rw.n);
      if (t != tiles - 1) {
        norm_load(grad + rw.base, tl, vec, a);
        norm_load(y + rw.base, tl, vec, b);
      }
#pragma unroll
      for (int i = 0; i < V; ++i) a[i] = b[i] * (a[i] - d);
      norm_store(dx + rw.base, tl, vec, a);
    }
  }
}

// ---- layer norm ----------------------------------------------------------------------------
// The moments of the tile's values: the mean first, then the squared deviations from it
// (no sum-of-squares cancellation).
template <class T, int V>
__device__ __forceinline__ norm_moments<T> norm_tile_moments(const T (&v)[V],
                                                             const norm_tile<T, V>& tl) {
  T n = T(0), s = T(0);
#pragma unroll
  for (int i = 0; i < V; ++i)
    if (tl.has(i)) {
      n += T(1);
      s += v[i];
    }
  const T mean = n > T(0) ? s / n : T(0);
  T m2 = T(0);
#pragma unroll
  for (int i = 0; i < V; ++i)
    if (tl.has(i)) {
      const T d = v[i] - mean;
      m2 += d * d;
    }
  return {n, mean, m2};
}

// xhat = (x - mean) / std, std = sqrt(var + eps) (biased var), y = xhat * gamma + beta.
template <class T, int V, int MB>
__global__ void HF_NORM_FWD_BOUNDS(MB)
fused_layer_norm(const T* x, const T* gamma, const T* beta, T* y, T* xhat, T* std_,
                 i64 rows, i64 cols, int tpr, int vec, T eps) {
  constexpr int W = norm_tile<T, V>::W;
  const norm_team tm = norm_team_of(tpr);
  const int tiles = norm_tiles<V>(cols, tpr);
  const i64 groups = norm_groups(rows, tm);
  for (i64 g = blockIdx.x; g < groups; g += gridDim.x) {
    const norm_row rw = norm_row_of(g, tm, rows, cols);
    T v[V];
    T mean, m2;
    if (tiles == 1) {  // the row's mean, then its squared deviations: two plain sums
      const norm_tile<T, V> tl(0, tm, rw.n);
      norm_load(x + rw.base, tl, vec, v);
      norm_sum<T> s = {T(0)};
#pragma unroll
      for (int i = 0; i < V; ++i) s.s += v[i];  // 0 past the row's end
      mean = norm_team_reduce(s, tpr).s / T(cols);
      s.s = T(0);
#pragma unroll
      for (int i = 0; i < V; ++i)
        if (tl.has(i)) s.s += (v[i] - mean) * (v[i] - mean);
      m2 = norm_team_reduce(s, tpr).s;
    } else {  // tiles merged as they stream past (Chan et al.)
      norm_moments<T> st = {T(0), T(0), T(0)};
      for (int t = 0; t < tiles; ++t) {
        const norm_tile<T, V> tl(t, tm, rw.n);
        norm_load(x + rw.base, tl, vec, v);
        st = norm_moments<T>::merge(st, norm_tile_moments(v, tl));
      }
      const norm_moments<T> row = norm_team_reduce(st, tpr);
      mean = row.mean;
      m2 = row.m2;
    }
    const T sd = norm_sqrt(m2 / T(cols) + eps), rs = T(1) / sd;
    for (int t = tiles - 1; t >= 0; --t) {
      const norm_tile<T, V> tl(t, tm, rw.n);
      if (t != tiles - 1) norm_load(x + rw.base, tl, vec, v);
#pragma unroll
      for (int k = 0; k < V / W; ++k) {
        T w[W], b[W];
        norm_load_vec(gamma, tl, k, vec, w);
        norm_load_vec(beta, tl, k, vec, b);
#pragma unroll
        for (int e = 0; e < W; ++e) {
          T& h = v[k * W + e];
          h = (h - mean) * rs;
          w[e] = h * w[e] + b[e];
        }
        norm_store_vec(y + rw.base, tl, k, vec, w);
      }
      norm_store(xhat + rw.base, tl, vec, v);
    }
    if (tm.lane == 0 && rw.r < rows) std_[rw.r] = sd;
  }
}

// ---- the backward row walk (layer norm and RMS norm) ---------------------------------------
// dx from grad, b (xhat or x), a per-row value p (std or rms) and gamma, under a rule R:
//   R::Sum             the per-row sums, added per value by R::add(s, grad * gamma, b);
//   R::row(s, 1/p, c)  what dx needs of a row, from its reduced sums, 1 / p (0 past the
//                      last row) and the column count;
//   R::dx(r, grad, gamma, b)  and  R::acc(acc, r, grad, b)  per value: dx, and the
//                      R::N column sums (dgamma [, dbeta]) of one-tile rows.
// The column sums of one-tile rows go per block into part (gridDim.x, N * cols)
// (norm_flush_sums; shared memory: teams * N * cols values when teams > 1); longer rows
// leave them to fused_norm_column_products.
template <class R, class T, int V>
__device__ __forceinline__ void norm_backward_rows(const T* grad, const T* b, const T* p,
                                                   const T* gamma, T* dx, T* part, i64 rows,
                                                   i64 cols, int tpr, int vec) {
  constexpr int W = norm_tile<T, V>::W;
  HF_DYN_SHARED(T, smem);
  const norm_team tm = norm_team_of(tpr);
  const int tiles = norm_tiles<V>(cols, tpr);
  const i64 groups = norm_groups(rows, tm);
  T acc[R::N][V];
#pragma unroll
  for (int j = 0; j < R::N; ++j)
#pragma unroll
    for (int i = 0; i < V; ++i) acc[j][i] = T(0);
  for (i64 g = blockIdx.x; g < groups; g += gridDim.x) {
    const norm_row rw = norm_row_of(g, tm, rows, cols);
    T a[V], h[V];  // grad, b
    typename R::template Sum<T> s = {};
    for (int t = 0; t < tiles; ++t) {
      const norm_tile<T, V> tl(t, tm, rw.n);
      norm_load(grad + rw.base, tl, vec, a);
      norm_load(b + rw.base, tl, vec, h);
#pragma unroll
      for (int k = 0; k < V / W; ++k) {
        T w[W];
        norm_load_vec(gamma, tl, k, vec, w);
#pragma unroll
        for (int e = 0; e < W; ++e) R::add(s, a[k * W + e] * w[e], h[k * W + e]);
      }
    }
    const T inv = rw.n ? T(1) / p[rw.r] : T(0);
    const typename R::template Row<T> r = R::row(norm_team_reduce(s, tpr), inv, T(cols));
    for (int t = tiles - 1; t >= 0; --t) {
      const norm_tile<T, V> tl(t, tm, rw.n);
      if (t != tiles - 1) {
        norm_load(grad + rw.base, tl, vec, a);
        norm_load(b + rw.base, tl, vec, h);
      }
#pragma unroll
      for (int k = 0; k < V / W; ++k) {
        T w[W];
        norm_load_vec(gamma, tl, k, vec, w);
#pragma unroll
        for (int e = 0; e < W; ++e) w[e] = R::dx(r, a[k * W + e], w[e], h[k * W + e]);
        norm_store_vec(dx + rw.base, tl, k, vec, w);
      }
      if (tiles == 1)
#pragma unroll
        for (int i = 0; i < V; ++i) R::acc(acc, i, r, a[i], h[i]);
    }
  }
  if (tiles == 1) norm_flush_sums(acc, part, smem, cols, tm, vec);
}

// Layer norm: dx = (g - mean(g) - xhat * mean(g * xhat)) / std with g = grad * gamma;
// dgamma = sum grad * xhat, dbeta = sum grad.
struct norm_layer_rule {
  static constexpr int N = 2;
  template <class T> using Sum = norm_sum2<T>;  // sum g, sum g * xhat
  template <class T> struct Row { T ma, mb, rs; };
  template <class T> static __device__ __forceinline__ void add(Sum<T>& s, T g, T h) {
    s.a += g;
    s.b += g * h;
  }
  template <class T> static __device__ __forceinline__ Row<T> row(Sum<T> s, T rs, T cols) {
    return {s.a / cols, s.b / cols, rs};
  }
  template <class T> static __device__ __forceinline__ T dx(const Row<T>& r, T a, T w, T h) {
    return (a * w - r.ma - h * r.mb) * r.rs;
  }
  template <class T, int V>
  static __device__ __forceinline__ void acc(T (&acc)[N][V], int i, const Row<T>&, T a, T h) {
    acc[0][i] += a * h;
    acc[1][i] += a;
  }
};

template <class T, int V>
__global__ void __launch_bounds__(HF_NORM_MAX_BLOCK)
fused_layer_norm_backward(const T* grad, const T* xhat, const T* std_, const T* gamma,
                          T* dx, T* part, i64 rows, i64 cols, int tpr, int vec) {
  norm_backward_rows<norm_layer_rule, T, V>(grad, xhat, std_, gamma, dx, part, rows, cols, tpr, vec);
}

// ---- RMS norm ------------------------------------------------------------------------------
// rms = sqrt(mean(x^2) + eps), y = x / rms * gamma.
template <class T, int V, int MB>
__global__ void HF_NORM_FWD_BOUNDS(MB)
fused_rms_norm(const T* x, const T* gamma, T* y, T* rms, i64 rows, i64 cols, int tpr,
               int vec, T eps) {
  constexpr int W = norm_tile<T, V>::W;
  const norm_team tm = norm_team_of(tpr);
  const int tiles = norm_tiles<V>(cols, tpr);
  const i64 groups = norm_groups(rows, tm);
  for (i64 g = blockIdx.x; g < groups; g += gridDim.x) {
    const norm_row rw = norm_row_of(g, tm, rows, cols);
    T v[V];
    norm_sum<T> ss = {T(0)};
    if (tiles == 1) {
      norm_load(x + rw.base, norm_tile<T, V>(0, tm, rw.n), vec, v);
#pragma unroll
      for (int i = 0; i < V; ++i) ss.s += v[i] * v[i];
    } else {
      for (int t = 0; t < tiles; ++t) {
        norm_load(x + rw.base, norm_tile<T, V>(t, tm, rw.n), vec, v);
#pragma unroll
        for (int i = 0; i < V; ++i) ss.s += v[i] * v[i];
      }
    }
    const T rm = norm_sqrt(norm_team_reduce(ss, tpr).s / T(cols) + eps), rr = T(1) / rm;
    for (int t = tiles - 1; t >= 0; --t) {
      const norm_tile<T, V> tl(t, tm, rw.n);
      if (t != tiles - 1) norm_load(x + rw.base, tl, vec, v);
#pragma unroll
      for (int k = 0; k < V / W; ++k) {
        T w[W];
        norm_load_vec(gamma, tl, k, vec, w);
#pragma unroll
        for (int e = 0; e < W; ++e) w[e] = v[k * W + e] * rr * w[e];
        norm_store_vec(y + rw.base, tl, k, vec, w);
      }
    }
    if (tm.lane == 0 && rw.r < rows) rms[rw.r] = rm;
  }
}

// RMS norm: dx = g / rms - x * sum(g * x) / (cols * rms^3) with g = grad * gamma;
// dgamma = sum grad * x / rms.
struct norm_rms_rule {
  static constexpr int N = 1;
  template <class T> using Sum = norm_sum<T>;  // sum g * x
  template <class T> struct Row { T rr, k; };
  template <class T> static __device__ __forceinline__ void add(Sum<T>& s, T g, T x) { s.s += g * x; }
  template <class T> static __device__ __forceinline__ Row<T> row(Sum<T> s, T rr, T cols) {
    return {rr, s.s * rr * rr * rr / cols};
  }
  template <class T> static __device__ __forceinline__ T dx(const Row<T>& r, T a, T w, T x) {
    return a * w * r.rr - x * r.k;
  }
  template <class T, int V>
  static __device__ __forceinline__ void acc(T (&acc)[N][V], int i, const Row<T>& r, T a, T x) {
    acc[0][i] += a * x * r.rr;
  }
};

template <class T, int V>
__global__ void __launch_bounds__(HF_NORM_MAX_BLOCK)
fused_rms_norm_backward(const T* grad, const T* x, const T* rms, const T* gamma, T* dx,
                        T* part, i64 rows, i64 cols, int tpr, int vec) {
  norm_backward_rows<norm_rms_rule, T, V>(grad, x, rms, gamma, dx, part, rows, cols, tpr, vec);
}

// ---- column sums over partial rows ---------------------------------------------------------
// Rows longer than a tile: the backward ops' column sums read grad and b (xhat or x) again.
// Block (cb, p) covers the 32 vectors of columns from cb * 32 * W in the rows
// [p * chunk, (p + 1) * chunk); its thread (lane, j) sums the rows j, j + J, ...
// (J = HF_NORM_ROW_LANES), and the J sums of a column are added in j order:
//   part[p][c]        = sum grad[r][c] * b[r][c] (* 1 / rms[r] if scaled)  (dgamma)
//   part[p][cols + c] = sum grad[r][c]                                     (dbeta, n_acc 2)
// Each term is the one the row kernels add.
#define HF_NORM_ROW_LANES 8
template <class T>
__global__ void __launch_bounds__(HF_NORM_COL_LANES * HF_NORM_ROW_LANES)
fused_norm_column_products(const T* grad, const T* b, const T* rms, T* part, i64 rows,
                           i64 cols, i64 chunk, int n_acc, int scaled, int vec) {
  constexpr int W = 16 / (int)sizeof(T), L = HF_NORM_COL_LANES, J = HF_NORM_ROW_LANES;
  __shared__ T sums[2][J][L * W];
  norm_team lanes;  // the block's 32 column lanes as a team, for norm_tile
  lanes.tpr = L;
  lanes.lane = threadIdx.x % L;
  lanes.team = 0;
  lanes.teams = 1;
  const int j = threadIdx.x / L;
  const norm_tile<T, W> tl(blockIdx.x, lanes, cols);
  const i64 r0 = (i64)blockIdx.y * chunk, r1 = r0 + chunk < rows ? r0 + chunk : rows;
  T s0[W], s1[W];
#pragma unroll
  for (int e = 0; e < W; ++e) s0[e] = s1[e] = T(0);
#pragma unroll 4
  for (i64 r = r0 + j; r < r1; r += J) {
    T a[W], v[W];
    norm_load(grad + r * cols, tl, vec, a);
    norm_load(b + r * cols, tl, vec, v);
    const T k = scaled ? T(1) / rms[r] : T(1);
#pragma unroll
    for (int e = 0; e < W; ++e) {
      s0[e] += scaled ? a[e] * v[e] * k : a[e] * v[e];
      s1[e] += a[e];
    }
  }
#pragma unroll
  for (int e = 0; e < W; ++e) {
    sums[0][j][lanes.lane * W + e] = s0[e];
    sums[1][j][lanes.lane * W + e] = s1[e];
  }
  __syncthreads();
  if (j != 0) return;
  T* out = part + (i64)blockIdx.y * n_acc * cols;
#pragma unroll
  for (int e = 0; e < W; ++e) {
    const i64 c = tl.c0 + e;
    if (c >= cols) continue;
    for (int q = 0; q < n_acc; ++q) {
      T v = sums[q][0][lanes.lane * W + e];
      for (int jj = 1; jj < J; ++jj) v += sums[q][jj][lanes.lane * W + e];
      out[q * cols + c] = v;
    }
  }
}

// Column c of the (n_part, width) partial rows, summed in a fixed order: thread (lane, j)
// of a block (32 columns x J = blockDim.x / 32 row lanes) sums the rows j, j + J, ..., then
// the J sums are added in j order; out0[c] for c < cols, out1[c - cols] beyond (dgamma
// then dbeta).
template <class T>
__global__ void __launch_bounds__(HF_NORM_MAX_BLOCK)
fused_norm_column_sums(const T* part, i64 n_part, i64 width, i64 cols, T* out0, T* out1) {
  __shared__ T sums[HF_NORM_MAX_BLOCK];
  const int L = HF_NORM_COL_LANES, J = blockDim.x / L, lane = threadIdx.x % L,
            j = threadIdx.x / L;
  const i64 c = (i64)blockIdx.x * L + lane;
  T v = T(0);
  if (c < width)
#pragma unroll 8
    for (i64 p = j; p < n_part; p += J) v += part[p * width + c];
  sums[threadIdx.x] = v;
  __syncthreads();
  if (j != 0 || c >= width) return;
  for (int q = 1; q < J; ++q) v += sums[q * L + lane];
  if (c < cols) out0[c] = v;
  else out1[c - cols] = v;
}

}  // namespace hf
