// fused_batchnorm.cuh -- batch norm and group norm of hipfer.nn
// (hipfer/prims/fused_ops/batchnorm.py). Operands are C-contiguous; x is (n, c, s).
//
// Statistics are reduced in a fixed order, so results repeat bit for bit: the values of
// each statistic are cut into chunks (one task, i.e. one block, each: `bn_visit`; short
// rows in tiles of several channels, each thread holding a few rows of a few of them in
// registers), each block merges its threads' partials in shared memory in a fixed order,
// and then:
//  - a statistic of one chunk is finished by its block, which goes on to normalise (or
//    form dx from) the same values in the same launch;
//  - else each block stores one partial per (statistic, chunk) and takes a ticket from
//    its group's counter (`bn_last_done`); the block that draws the last ticket merges
//    the group's partials in chunk order (`bn_finish_group`): the same order whichever
//    block that is, so no finish launch is needed and results still repeat.
// Group norm's short statistics (fewer values than a block has threads) are reduced by
// teams of lanes instead (gn_team_*). The geometry depends on the shapes alone
// (hipfer/kernels/fused_batchnorm.py); no float atomics.
#pragma once
#include "common.cuh"

// Threads per block of every kernel here (fused_batchnorm.py BLOCK): a multiple of 64, so
// warps are whole for warp sizes 32 and 64, and the size of the per-thread scratch.
#define HF_BN_BLOCK 256
// A finish of at most this many chunks per statistic is one thread's (fused_batchnorm.py FEW).
#define HF_BN_FEW 32
// Values a team lane holds in registers (gn_team_*: fused_batchnorm.py SLOTS).
#define HF_BN_SLOTS 8
// Rows of a tile a thread holds at a time, of one operand (fused_batchnorm.py HOLD).
#define HF_BN_HOLD 8

namespace hf {

__device__ __forceinline__ i64 bn_min(i64 a, i64 b) { return a < b ? a : b; }
__device__ __forceinline__ f32 bn_sqrt(f32 v) { return sqrtf(v); }
__device__ __forceinline__ f64 bn_sqrt(f64 v) { return sqrt(v); }
__device__ __forceinline__ f32 bn_nan(f32) { return __int_as_float(0x7fc00000); }
__device__ __forceinline__ f64 bn_nan(f64) { return __longlong_as_double(0x7ff8000000000000LL); }

// 1 / sqrt(var + eps) when the statistic is a variance (running statistics), else the
// statistic is invstd already.
template <bool FROM_VAR, class T>
__device__ __forceinline__ T bn_invstd(T s, T eps) {
  return FROM_VAR ? T(1) / bn_sqrt(s + eps) : s;
}

// ---- 16-byte loads and stores of V = 16 / sizeof(T) neighbours (hf::pack) ---------------
// (m < V: the first m, one at a time: the end of a row that is not packed)
template <int V, class T>
__device__ __forceinline__ void bn_load(const T* p, i64 i, bool vec, T (&r)[V], int m = V) {
  if (V > 1 && vec) {
    const pack<T, V> q = *reinterpret_cast<const pack<T, V>*>(p + i);
#pragma unroll
    for (int k = 0; k < V; ++k) r[k] = q.v[k];
  } else {
#pragma unroll
    for (int k = 0; k < V; ++k)
      if (k < m) r[k] = p[i + k];
  }
}

template <int V, class T>
__device__ __forceinline__ void bn_store(T* p, i64 i, bool vec, const T (&r)[V], int m = V) {
  if (V > 1 && vec) {
    pack<T, V> q;
#pragma unroll
    for (int k = 0; k < V; ++k) q.v[k] = r[k];
    *reinterpret_cast<pack<T, V>*>(p + i) = q;
  } else {
#pragma unroll
    for (int k = 0; k < V; ++k)
      if (k < m) p[i + k] = r[k];
  }
}

// The same for H rows, di apart: every load is issued before any use.
template <int H, int V, class T>
__device__ __forceinline__ void bn_load_rows(const T* p, i64 i, i64 di, int m, bool vec,
                                             T (&r)[H][V]) {
#pragma unroll
  for (int h = 0; h < H; ++h) bn_load<V>(p, i + h * di, vec, r[h], m);
}

template <int H, int V, class T>
__device__ __forceinline__ void bn_store_rows(T* p, i64 i, i64 di, int m, bool vec,
                                              const T (&r)[H][V]) {
#pragma unroll
  for (int h = 0; h < H; ++h) bn_store<V>(p, i + h * di, vec, r[h], m);
}

// ---- the work split: x as (n, c, s) -----------------------------------------------------
// A task (one block) is one chunk of a group of g channels; n_chunks chunks per group.
//   g == 1: rows of s >= 32 values. The chunk is `chunk` consecutive values of the
//           channel in (n, s) order, which the threads walk side by side, V values each
//           when s and chunk are multiples of V ("packed", 16-byte loads when aligned); a
//           warp's values span one row or two, so loads stay coalesced.
//   g > 1 : short rows, in tiles. The g channels' pieces of a row are w = g s contiguous
//           values (about a 128-byte line); thread t holds positions j .. j + V - 1 of
//           them, j = (t % tpr) V (tpr = w / V rounded up: 16-byte loads when the rows are
//           packed and aligned), in rows lane = t / tpr, + lanes, ... of the chunk's
//           `chunk` rows (lanes = block / tpr), F::H rows at a time: their loads first,
//           then the work, so that many loads are in flight.
// A thread stays in one channel (g == 1) or one set of positions (g > 1) for the whole task.
struct bn_tiling { i64 n, c, s, g, chunk, n_chunks; };

__device__ __forceinline__ i64 bn_n_tasks(const bn_tiling& tl) {
  return (tl.c + tl.g - 1) / tl.g * tl.n_chunks;
}

// g == 1: calls f.row(n, c) before each value (or V neighbours) of row n of channel c that
// this thread takes in the task, then f.at<V>(i, vec) with its flat index i.
template <int V, class F>
__device__ __forceinline__ void bn_walk(const bn_tiling& tl, i64 c, i64 k, i64 k1, bool vec, F& f) {
  // (n, j) of k = n s + j, advanced by the stride without dividing
  const i64 step = (i64)blockDim.x * V, dn = step / tl.s, dj = step - dn * tl.s;
  i64 n = k / tl.s, j = k - n * tl.s;
#pragma unroll 4
  for (; k < k1; k += step) {
    f.row(n, c);
    f.template at<V>((n * tl.c + c) * tl.s + j, vec);
    j += dj;
    n += dn;
    if (j >= tl.s) { j -= tl.s; ++n; }
  }
}

// g > 1: calls f.cols(ch, m) once, ch[p] the channel of the thread's position j + p (p < m,
// the positions it holds), then f.rows<H>(n, dn, i, di, m, vec) for rows n, n + dn, ...,
// n + (H - 1) dn it holds, i the flat index of the first value: H = F::H for each whole
// step, H = 1 for each row of the chunk's last step when that is not whole, and for every
// row of a thread that holds fewer than V positions (the end of a row that is not packed).
// Which rows go together depends on the shapes alone.
template <class T, class F>
__device__ void bn_tile(const bn_tiling& tl, i64 grp, i64 r, bool vec, F& f) {
  constexpr int V = 16 / sizeof(T), H = F::H;
  const int w = (int)(tl.g * tl.s), tpr = (w + V - 1) / V, lanes = blockDim.x / tpr;
  const int lane = threadIdx.x / tpr, j = (threadIdx.x - lane * tpr) * V;
  const i64 len = tl.c * tl.s, q = grp * w + j;  // a row's values; the first held
  const int m = (int)bn_min(V, bn_min(w, len - grp * w) - j);
  if (lane >= lanes || m <= 0) return;
  i64 ch[V], c = q / tl.s, k = q - c * tl.s;  // position q is value k of channel c
#pragma unroll
  for (int p = 0; p < V; ++p) {
    ch[p] = c;
    if (p + 1 < m && ++k == tl.s) { k = 0; ++c; }
  }
  f.cols(ch, m);
  vec = vec && m == V && len % V == 0 && q % V == 0;  // whole aligned packs
  const i64 n1 = bn_min(tl.n, (r + 1) * tl.chunk), di = lanes * len;
  for (i64 n = r * tl.chunk + lane; n < n1; n += H * lanes) {
    if (m == V && n + (H - 1) * lanes < n1) {
      f.template rows<H>(n, lanes, n * len + q, di, V, vec);
      continue;
    }
    for (i64 k = n; k < bn_min(n1, n + H * lanes); k += lanes) {
      f.template rows<1>(k, lanes, k * len + q, di, m, vec);
    }
  }
}

// TILE: the tiling has g > 1 (bn_tile), else g == 1 (bn_walk).
template <class T, bool TILE, class F>
__device__ void bn_visit(const bn_tiling& tl, i64 task, bool vec, F& f) {
  constexpr int V = 16 / sizeof(T);
  const i64 grp = task / tl.n_chunks, r = task - grp * tl.n_chunks, t = threadIdx.x;
  if (TILE) {
    bn_tile<T>(tl, grp, r, vec, f);
    return;
  }
  const i64 k0 = r * tl.chunk, k1 = bn_min(tl.n * tl.s, k0 + tl.chunk);
  if (tl.s % V == 0 && tl.chunk % V == 0) bn_walk<V>(tl, grp, k0 + t * V, k1, vec, f);
  else bn_walk<1>(tl, grp, k0 + t, k1, false, f);
}

// Group norm's statistic view: x as (1, n * groups, k), statistic st (sample, group) the
// k = cg * s contiguous values of channels q cg .. q cg + cg - 1, q = st % groups. Its
// tiling (fused_batchnorm.py) has k >= HF_BN_BLOCK, so g == 1: a task is one chunk of one
// statistic. gn_visit walks the chunk as bn_visit does, but over the statistic's (cg, s)
// rows, and calls f.row(st, j) with j the channel within the group, then f.at<V>(i, vec)
// (V neighbours of one channel: packed only when s is).
template <class F>
struct gn_rows {
  F& f;
  i64 st, base;
  __device__ void row(i64 j, i64) { f.row(st, j); }
  template <int V> __device__ void at(i64 i, bool vec) { f.template at<V>(base + i, vec); }
};

template <class T, class F>
__device__ void gn_visit(const bn_tiling& tl, i64 s, i64 task, bool vec, F& f) {
  constexpr int V = 16 / sizeof(T);
  const i64 st = task / tl.n_chunks, r = task - st * tl.n_chunks, k = tl.s;
  const i64 k0 = r * tl.chunk, k1 = bn_min(k, k0 + tl.chunk), t = threadIdx.x;
  const bn_tiling rows = {k / s, 1, s, 1, tl.chunk, 1};
  gn_rows<F> a = {f, st, st * k};
  if (s % V == 0 && tl.chunk % V == 0) bn_walk<V>(rows, 0, k0 + t * V, k1, vec, a);
  else bn_walk<1>(rows, 0, k0 + t, k1, false, a);
}


// ---- accumulators: empty(), bn_merge (fixed operand order), bn_shfl_down ------------------
// Moments of a set of values: mean, m2 = sum of squared deviations, count. Chan et al.'s
// merge is stable for any mean; a value is merged as a set of one (a Welford step).
template <class T> struct bn_moments {
  T mean, m2;
  i64 n;
  __device__ static bn_moments empty() {
    bn_moments a;
    a.mean = T(0);
    a.m2 = T(0);
    a.n = 0;
    return a;
  }
};

template <class T>
__device__ __forceinline__ bn_moments<T> bn_merge(bn_moments<T> a, const bn_moments<T>& b) {
  if (b.n == 0) return a;
  if (a.n == 0) return b;
  const i64 n = a.n + b.n;
  const T fb = (T)b.n / (T)n, d = b.mean - a.mean;
  a.mean += d * fb;
  a.m2 += b.m2 + d * d * ((T)a.n * fb);
  a.n = n;
  return a;
}

template <class T>
__device__ __forceinline__ bn_moments<T> bn_shfl_down(bn_moments<T> v, int d) {
  v.mean = HF_SHFL_DOWN(v.mean, d);
  v.m2 = HF_SHFL_DOWN(v.m2, d);
  v.n = HF_SHFL_DOWN(v.n, d);
  return v;
}

// The moments of V values (two passes over registers).
template <int V, class T>
__device__ __forceinline__ bn_moments<T> bn_moments_of(const T (&v)[V]) {
  bn_moments<T> m;
  T sum = v[0];
#pragma unroll
  for (int k = 1; k < V; ++k) sum += v[k];
  m.mean = sum / T(V);  // V is a power of two: exact
  m.m2 = T(0);
#pragma unroll
  for (int k = 0; k < V; ++k) m.m2 += (v[k] - m.mean) * (v[k] - m.mean);
  m.n = V;
  return m;
}

// The sums of the backward passes: sum g and sum g * xhat.
template <class T> struct bn_sums {
  T g, gx;
  __device__ static bn_sums empty() { bn_sums a; a.g = T(0); a.gx = T(0); return a; }
};

template <class T>
__device__ __forceinline__ bn_sums<T> bn_merge(bn_sums<T> a, const bn_sums<T>& b) {
  a.g += b.g;
  a.gx += b.gx;
  return a;
}

template <class T>
__device__ __forceinline__ bn_sums<T> bn_shfl_down(bn_sums<T> v, int d) {
  v.g = HF_SHFL_DOWN(v.g, d);
  v.gx = HF_SHFL_DOWN(v.gx, d);
  return v;
}

template <int K, class A>
__device__ __forceinline__ void bn_empty(A (&a)[K]) {
#pragma unroll
  for (int k = 0; k < K; ++k) a[k] = A::empty();
}

// ---- fixed-order merges within a block ------------------------------------------------------
// K accumulator slots per thread (HF_BN_BLOCK threads): one scratch per kernel, so every
// block merge of a kernel takes the K of its tiles (bn_tile: K = V).
template <class A, int K = 1>
__device__ __forceinline__ A* bn_scratch() {
  __shared__ __align__(16) unsigned char raw[HF_BN_BLOCK * K * sizeof(A)];
  return reinterpret_cast<A*>(raw);
}

// Called by a whole warp: merges slots e = 0 .. count - 1, slot e being
// (e / run) * stride + first + e % run, lane-strided and then by a shuffle tree.
// The result is in lane 0.
template <class A>
__device__ A bn_merge_slots(const A* slot, i64 count, i64 run, i64 stride, i64 first) {
  const int ws = warpSize;
  A v = A::empty();
  for (i64 e = threadIdx.x % ws; e < count; e += ws) {
    v = bn_merge(v, slot[(e / run) * stride + first + e % run]);
  }
  for (int o = ws >> 1; o > 0; o >>= 1) v = bn_merge(v, bn_shfl_down(v, o));
  return v;
}

// Every thread passes its accumulator; thread 0 gets the block's merge.
template <int K = 1, class A>
__device__ A bn_block_merge(A mine) {
  A* slot = bn_scratch<A, K>();
  __syncthreads();  // the previous task's readers are done
  slot[threadIdx.x] = mine;
  __syncthreads();
  if (threadIdx.x < (unsigned)warpSize) mine = bn_merge_slots(slot, blockDim.x, blockDim.x, 0, 0);
  return mine;
}

// After bn_visit of a task of group grp, with the thread's K accumulators (g == 1: the
// first; tiles: one per position held): the merge of each of its channels' goes to
// put(channel, merged), called by thread 0 (g == 1) or by lane 0 of a warp per channel,
// which merges the channel's positions of every lane, lane by lane.
template <int K, class A, class P>
__device__ void bn_task_merge(const bn_tiling& tl, i64 grp, const A (&mine)[K], const P& put) {
  if (tl.g == 1) {
    const A a = bn_block_merge<K>(mine[0]);
    if (threadIdx.x == 0) put(grp, a);
    return;
  }
  A* slot = bn_scratch<A, K>();  // position j of lane l: slot l * span + j (bn_tile)
  __syncthreads();
#pragma unroll
  for (int k = 0; k < K; ++k) slot[threadIdx.x * K + k] = mine[k];
  __syncthreads();
  const int ws = warpSize, lane = threadIdx.x % ws;
  const i64 span = (tl.g * tl.s + K - 1) / K * K, lanes = blockDim.x / (span / K);
  for (i64 j = threadIdx.x / ws; j < tl.g && grp * tl.g + j < tl.c; j += blockDim.x / ws) {
    const A v = bn_merge_slots(slot, lanes * tl.s, tl.s, span, j * tl.s);
    if (lane == 0) put(grp * tl.g + j, v);
  }
}

// Partial of (channel, chunk r): part[channel * n_chunks + r].
template <class A>
struct bn_put {
  A* part;
  i64 n_chunks, r;
  __device__ void operator()(i64 ch, const A& v) const { part[ch * n_chunks + r] = v; }
};

// The last-block-done pattern (CUDA's threadFenceReduction sample), per group of n tasks:
// after storing its partials, a task takes a ticket from the group's counter; the one
// that draws n - 1 comes after every other task's partials are visible, and merges them.
// atomicInc wraps the counter to 0 at that draw, so it is ready for the next launch (the
// counters are zeroed once, when allocated: no memset per call). Called by the whole
// block; every thread gets the answer.
__device__ bool bn_last_done(unsigned* counter, i64 n) {
  __shared__ unsigned ticket;
  __threadfence();  // this thread's partial stores are seen device-wide before the ticket
  __syncthreads();
  if (threadIdx.x == 0) {
    ticket = atomicInc(counter, (unsigned)(n - 1));
    __threadfence();
  }
  __syncthreads();
  const bool last = ticket == (unsigned)(n - 1);
  // every reader fences: the other tasks' partials are read from the device, never from
  // a stale line of this CU's / SM's cache
  if (last) __threadfence();
  return last;
}

// In the group's last task: channels c0 .. c0 + nc - 1, each the merge of its n_chunks
// partials, go to emit(channel, merged). The order depends on the shapes alone: few
// chunks (<= HF_BN_FEW), one thread per channel, in chunk order; more, for one channel,
// the whole block (chunk r in thread r % blockDim.x, then bn_block_merge) -- both the
// order of the finish kernel this replaced; for several channels, tpc lanes per channel
// (chunk r in lane r % tpc, a power of two <= 32 that divides every warp size) merged
// by a shuffle tree. K: the kernel's scratch (bn_scratch).
template <int K = 1, class A, class E>
__device__ void bn_finish_group(const A* part, i64 c0, i64 nc, i64 n_chunks, const E& emit) {
  if (n_chunks <= HF_BN_FEW) {
    for (i64 j = threadIdx.x; j < nc; j += blockDim.x) {
      const A* p = part + (c0 + j) * n_chunks;
      A a = A::empty();
      for (i64 r = 0; r < n_chunks; ++r) a = bn_merge(a, p[r]);
      emit(c0 + j, a);
    }
    return;
  }
  if (nc == 1) {
    const A* p = part + c0 * n_chunks;
    A a = A::empty();
    for (i64 r = threadIdx.x; r < n_chunks; r += blockDim.x) a = bn_merge(a, p[r]);
    a = bn_block_merge<K>(a);
    if (threadIdx.x == 0) emit(c0, a);
    return;
  }
  int tpc = 1;
  while (tpc < 32 && 2 * tpc * nc <= (i64)blockDim.x) tpc *= 2;
  const i64 per = blockDim.x / tpc;
  const int sub = threadIdx.x % tpc;
  for (i64 j = threadIdx.x / tpc; j - threadIdx.x / tpc < nc; j += per) {  // same trips for all
    A a = A::empty();
    if (j < nc) {
      const A* p = part + (c0 + j) * n_chunks;
      for (i64 r = sub; r < n_chunks; r += tpc) a = bn_merge(a, p[r]);
    }
    for (int o = tpc >> 1; o > 0; o >>= 1) a = bn_merge(a, bn_shfl_down(a, o));
    if (sub == 0 && j < nc) emit(c0 + j, a);
  }
}

// The end of a task of a chunked split (n_chunks > 1) with the thread's accumulators:
// the task's (channel, chunk r) partials go to part, and the last task of group grp to
// take its ticket merges the group's (emit).
template <int K, class A, class E>
__device__ void bn_store_or_finish(const bn_tiling& tl, i64 grp, i64 r, const A (&mine)[K],
                                   A* part, unsigned* count, const E& emit) {
  const bn_put<A> put = {part, tl.n_chunks, r};
  bn_task_merge(tl, grp, mine, put);
  if (bn_last_done(count + grp, tl.n_chunks)) {
    bn_finish_group<K>(part, grp * tl.g, bn_min(tl.g, tl.c - grp * tl.g), tl.n_chunks, emit);
  }
}

// ---- per-value work ---------------------------------------------------------------------------
// Statistic of value (n, c): stat_n * n + c / cg (batch norm: c; group norm: (n, group)).
// The functors cache what they load per channel and per statistic: a thread mostly stays
// in one of each.
struct bn_stat_cache {
  i64 stat_n, cg, c_at, cq, si_at;
  __device__ void init(i64 stat_n_, i64 cg_) { stat_n = stat_n_; cg = cg_; c_at = -1; si_at = -1; }
  // true when (n, c) needs a reload; si is its statistic
  __device__ bool moved(i64 n, i64 c, i64& si) {
    if (c != c_at) { c_at = c; cq = c / cg; si_at = -1; }
    si = n * stat_n + cq;
    if (si == si_at) return false;
    si_at = si;
    return true;
  }
};

// Tiles (bn_tile): a functor keeps what it needs of each position it holds in arrays of
// V = 16 / sizeof(T) (position p of the thread's; g == 1: [0]), loaded by cols (batch norm,
// whose statistic is the channel: stat_n == 0, cg == 1) or per row (group norm: the
// statistic moves with the row).

// Moments per position: mean, m2 and one count n, the same for every position (each is
// merged with the same number of values at a time), so a merge divides once for all.
template <class T>
struct bn_stats_op {
  static constexpr int H = HF_BN_HOLD;
  const T* x;
  T mean[16 / sizeof(T)], m2[16 / sizeof(T)];
  i64 n;
  __device__ void clear() {
    const bn_moments<T> e = bn_moments<T>::empty();
#pragma unroll
    for (int p = 0; p < 16 / (int)sizeof(T); ++p) { mean[p] = e.mean; m2[p] = e.m2; }
    n = e.n;
  }
  __device__ bn_moments<T> get(int p) const {
    bn_moments<T> a;
    a.mean = mean[p];
    a.m2 = m2[p];
    a.n = n;
    return a;
  }
  __device__ void put(int p, const bn_moments<T>& a) {
    mean[p] = a.mean;
    m2[p] = a.m2;
  }
  __device__ void row(i64, i64) {}
  template <int V> __device__ void at(i64 i, bool vec) {
    T v[V];
    bn_load<V>(x, i, vec, v);
    put(0, bn_merge(get(0), bn_moments_of<V>(v)));
    n += V;
  }
  __device__ void cols(const i64 (&)[16 / sizeof(T)], int) {}
  // each position's H values: their moments (two passes over registers), then one merge
  template <int H_> __device__ void rows(i64, i64, i64 i, i64 di, int m, bool vec) {
    constexpr int V = 16 / sizeof(T);
    T v[H_][V];
    bn_load_rows(x, i, di, m, vec, v);
#pragma unroll
    for (int p = 0; p < V; ++p) {
      if (p >= m) continue;
      bn_moments<T> b;
      T sum = v[0][p];
#pragma unroll
      for (int h = 1; h < H_; ++h) sum += v[h][p];
      b.mean = sum / T(H_);  // H_ is a power of two: exact
      b.m2 = T(0);
#pragma unroll
      for (int h = 0; h < H_; ++h) b.m2 += (v[h][p] - b.mean) * (v[h][p] - b.mean);
      b.n = H_;
      put(p, bn_merge(get(p), b));
    }
    n += H_;
  }
};

// y = (x - mean) * (invstd * gamma) + beta; GN: group norm (in tiles, statistics per row)
template <class T, bool FROM_VAR, bool GN>
struct bn_apply_op {
  static constexpr int H = HF_BN_HOLD;
  const T *x, *mean, *istd, *gamma, *beta;
  T* y;
  T eps;
  T mu[16 / sizeof(T)], k[16 / sizeof(T)], b[16 / sizeof(T)], gm[16 / sizeof(T)];
  i64 cq[16 / sizeof(T)];
  bn_stat_cache at_;
  __device__ void set(int p, i64 si) {
    mu[p] = mean[si];
    k[p] = bn_invstd<FROM_VAR>(istd[si], eps) * gm[p];
  }
  __device__ void row(i64 n, i64 c) {
    i64 si;
    if (at_.moved(n, c, si)) {
      gm[0] = gamma[c];
      b[0] = beta[c];
      set(0, si);
    }
  }
  template <int V> __device__ void at(i64 i, bool vec) {
    T v[V];
    bn_load<V>(x, i, vec, v);
#pragma unroll
    for (int q = 0; q < V; ++q) v[q] = (v[q] - mu[0]) * k[0] + b[0];
    bn_store<V>(y, i, vec, v);
  }
  __device__ void cols(const i64 (&ch)[16 / sizeof(T)], int m) {
#pragma unroll
    for (int p = 0; p < 16 / (int)sizeof(T); ++p) {
      if (p >= m) continue;
      gm[p] = gamma[ch[p]];
      b[p] = beta[ch[p]];
      if (GN) cq[p] = ch[p] / at_.cg;
      else set(p, ch[p]);
    }
  }
  template <int H_> __device__ void rows(i64 n, i64 dn, i64 i, i64 di, int m, bool vec) {
    constexpr int V = 16 / sizeof(T);
    T v[H_][V];
    bn_load_rows(x, i, di, m, vec, v);
#pragma unroll
    for (int h = 0; h < H_; ++h) {
#pragma unroll
      for (int p = 0; p < V; ++p) {
        if (GN && p < m) set(p, (n + h * dn) * at_.stat_n + cq[p]);
        v[h][p] = (v[h][p] - mu[p]) * k[p] + b[p];
      }
    }
    bn_store_rows(y, i, di, m, vec, v);
  }
};

// Sums of g and g * xhat, xhat = (x - mean) * invstd:
//   BN_TRAIN  batch norm;
//   BN_EVAL   running statistics (invstd from var + eps); also writes dx = g * (gamma *
//             invstd): batch_norm_eval_backward's one pass;
//   GN_COLS   group norm's dgamma, dbeta (statistics per (sample, group): in tiles, per row).
enum { BN_TRAIN = 0, BN_EVAL = 1, GN_COLS = 2 };
template <class T, int MODE>
struct bn_grad_op {
  static constexpr int H = HF_BN_HOLD / 2;  // two operands
  static constexpr bool EVAL = MODE == BN_EVAL;
  const T *g, *x, *mean, *istd, *gamma;
  T* dx;
  T eps;
  T mu[16 / sizeof(T)], is[16 / sizeof(T)], kdx[16 / sizeof(T)];
  i64 cq[16 / sizeof(T)];
  bn_sums<T> acc[16 / sizeof(T)];
  bn_stat_cache at_;
  __device__ void set(int p, i64 si) {
    mu[p] = mean[si];
    is[p] = bn_invstd<EVAL>(istd[si], eps);
  }
  __device__ void row(i64 n, i64 c) {
    i64 si;
    if (at_.moved(n, c, si)) {
      set(0, si);
      if (EVAL) kdx[0] = gamma[c] * is[0];
    }
  }
  template <int V> __device__ void at(i64 i, bool vec) {
    T gv[V], xv[V];
    bn_load<V>(g, i, vec, gv);
    bn_load<V>(x, i, vec, xv);
#pragma unroll
    for (int q = 0; q < V; ++q) {
      acc[0].g += gv[q];
      acc[0].gx += gv[q] * ((xv[q] - mu[0]) * is[0]);
    }
    if (EVAL) {
#pragma unroll
      for (int q = 0; q < V; ++q) gv[q] *= kdx[0];
      bn_store<V>(dx, i, vec, gv);
    }
  }
  __device__ void cols(const i64 (&ch)[16 / sizeof(T)], int m) {
#pragma unroll
    for (int p = 0; p < 16 / (int)sizeof(T); ++p) {
      if (p >= m) continue;
      if (MODE == GN_COLS) {
        cq[p] = ch[p] / at_.cg;
        continue;
      }
      set(p, ch[p]);
      if (EVAL) kdx[p] = gamma[ch[p]] * is[p];
    }
  }
  template <int H_> __device__ void rows(i64 n, i64 dn, i64 i, i64 di, int m, bool vec) {
    constexpr int V = 16 / sizeof(T);
    T gv[H_][V], xv[H_][V];
    bn_load_rows(g, i, di, m, vec, gv);
    bn_load_rows(x, i, di, m, vec, xv);
#pragma unroll
    for (int h = 0; h < H_; ++h) {
#pragma unroll
      for (int p = 0; p < V; ++p) {
        if (p >= m) continue;
        if (MODE == GN_COLS) set(p, (n + h * dn) * at_.stat_n + cq[p]);
        acc[p].g += gv[h][p];
        acc[p].gx += gv[h][p] * ((xv[h][p] - mu[p]) * is[p]);
        if (EVAL) gv[h][p] *= kdx[p];
      }
    }
    if (EVAL) bn_store_rows(dx, i, di, m, vec, gv);
  }
};

// dx = invstd * (gamma * g - u - xhat * v): u, v are the means of gamma * g and
// gamma * g * xhat over the values of each statistic; GN: group norm (in tiles, per row).
template <class T, bool GN>
struct bn_dx_op {
  static constexpr int H = HF_BN_HOLD / 2;  // two operands
  const T *g, *x, *mean, *istd, *gamma, *u, *v;
  T* dx;
  T mu[16 / sizeof(T)], is[16 / sizeof(T)], gm[16 / sizeof(T)], uu[16 / sizeof(T)],
      vv[16 / sizeof(T)];
  i64 cq[16 / sizeof(T)];
  bn_stat_cache at_;
  __device__ void set(int p, i64 si) {
    mu[p] = mean[si];
    is[p] = istd[si];
    uu[p] = u[si];
    vv[p] = v[si];
  }
  __device__ void row(i64 n, i64 c) {
    i64 si;
    if (at_.moved(n, c, si)) {
      set(0, si);
      gm[0] = gamma[c];
    }
  }
  template <int V> __device__ void at(i64 i, bool vec) {
    T gv[V], xv[V];
    bn_load<V>(g, i, vec, gv);
    bn_load<V>(x, i, vec, xv);
#pragma unroll
    for (int q = 0; q < V; ++q)
      gv[q] = is[0] * (gm[0] * gv[q] - uu[0] - (xv[q] - mu[0]) * is[0] * vv[0]);
    bn_store<V>(dx, i, vec, gv);
  }
  __device__ void cols(const i64 (&ch)[16 / sizeof(T)], int m) {
#pragma unroll
    for (int p = 0; p < 16 / (int)sizeof(T); ++p) {
      if (p >= m) continue;
      gm[p] = gamma[ch[p]];
      if (GN) cq[p] = ch[p] / at_.cg;
      else set(p, ch[p]);
    }
  }
  template <int H_> __device__ void rows(i64 n, i64 dn, i64 i, i64 di, int m, bool vec) {
    constexpr int V = 16 / sizeof(T);
    T gv[H_][V], xv[H_][V];
    bn_load_rows(g, i, di, m, vec, gv);
    bn_load_rows(x, i, di, m, vec, xv);
#pragma unroll
    for (int h = 0; h < H_; ++h) {
#pragma unroll
      for (int p = 0; p < V; ++p) {
        if (GN && p < m) set(p, (n + h * dn) * at_.stat_n + cq[p]);
        gv[h][p] = is[p] * (gm[p] * gv[h][p] - uu[p] - (xv[h][p] - mu[p]) * is[p] * vv[p]);
      }
    }
    bn_store_rows(dx, i, di, m, vec, gv);
  }
};

// Group norm's per-value work on a statistic's values (gn_visit): the statistic's mean and
// rstd are set once per task, gamma (and beta) point at the group's first channel.
// y = (x - mean) * (rstd * gamma) + beta
template <class T>
struct gn_apply_op {
  const T *x, *gamma, *beta;
  T* y;
  T mu, rs, k, b;
  i64 ch_at;
  __device__ void row(i64, i64 ch) {
    if (ch != ch_at) {
      ch_at = ch;
      k = rs * gamma[ch];
      b = beta[ch];
    }
  }
  template <int V> __device__ void at(i64 i, bool vec) {
    T v[V];
    bn_load<V>(x, i, vec, v);
#pragma unroll
    for (int q = 0; q < V; ++q) v[q] = (v[q] - mu) * k + b;
    bn_store<V>(y, i, vec, v);
  }
};

// Sums of h = gamma * g and h * xhat (acc.g, acc.gx).
template <class T>
struct gn_sums_op {
  const T *g, *x, *gamma;
  T mu, rs, gm;
  i64 ch_at;
  bn_sums<T> acc[1];  // (g == 1)
  __device__ void row(i64, i64 ch) {
    if (ch != ch_at) { ch_at = ch; gm = gamma[ch]; }
  }
  template <int V> __device__ void at(i64 i, bool vec) {
    T gv[V], xv[V];
    bn_load<V>(g, i, vec, gv);
    bn_load<V>(x, i, vec, xv);
#pragma unroll
    for (int q = 0; q < V; ++q) {
      const T h = gm * gv[q];
      acc[0].g += h;
      acc[0].gx += h * ((xv[q] - mu) * rs);
    }
  }
};

// dx = rstd * (gamma * g - u - xhat * v) (as bn_dx_op)
template <class T>
struct gn_dx_op {
  const T *g, *x, *gamma;
  T* dx;
  T mu, rs, gm, uu, vv;
  i64 ch_at;
  __device__ void row(i64, i64 ch) {
    if (ch != ch_at) { ch_at = ch; gm = gamma[ch]; }
  }
  template <int V> __device__ void at(i64 i, bool vec) {
    T gv[V], xv[V];
    bn_load<V>(g, i, vec, gv);
    bn_load<V>(x, i, vec, xv);
#pragma unroll
    for (int q = 0; q < V; ++q) gv[q] = rs * (gm * gv[q] - uu - (xv[q] - mu) * rs * vv);
    bn_store<V>(dx, i, vec, gv);
  }
};

// ---- what a finished statistic writes -------------------------------------------------------
// Statistic i's moments -> mean, var (biased), invstd = 1 / sqrt(var + eps); no values give
// NaN (0 / 0, as NumPy). var may be null (group norm). With running statistics (rm not
// null): rm, rv = keep * running + take * batch, the variance made unbiased by corr =
// count / (count - 1), as bn_update_running.
template <class T>
struct bn_stats_emit {
  T eps;
  T *mean, *invstd, *var, *rm, *rv;
  T keep, take, corr;
  __device__ void operator()(i64 i, const bn_moments<T>& m) const {
    const T vr = m.n ? m.m2 / (T)m.n : bn_nan(T(0));
    const T mu = m.n ? m.mean : vr;
    mean[i] = mu;
    if (var) var[i] = vr;
    invstd[i] = T(1) / bn_sqrt(vr + eps);
    if (rm) {
      rm[i] = keep * rm[i] + take * mu;
      rv[i] = keep * rv[i] + take * (vr * corr);
    }
  }
};

// Channel c: dbeta = sum g, dgamma = sum g * xhat; UV (batch norm's dx) also
// u = gamma * dbeta / count, v = gamma * dgamma / count.
template <class T, bool UV>
struct bn_grad_emit {
  T *dgamma, *dbeta;
  const T* gamma;
  T inv_count;
  T *u, *v;
  __device__ void operator()(i64 c, const bn_sums<T>& s) const {
    dbeta[c] = s.g;
    dgamma[c] = s.gx;
    if (UV) {
      u[c] = gamma[c] * s.g * inv_count;
      v[c] = gamma[c] * s.gx * inv_count;
    }
  }
};

// Group norm, statistic i: u, v = the sums of gamma * g, gamma * g * xhat / its count.
template <class T>
struct gn_uv_emit {
  T *u, *v;
  T inv_count;
  __device__ void operator()(i64 i, const bn_sums<T>& s) const {
    u[i] = s.g * inv_count;
    v[i] = s.gx * inv_count;
  }
};

// ---- the kernels (blockDim.x == HF_BN_BLOCK) -------------------------------------------------
// ONE: every statistic is one chunk (tl.n_chunks == 1), so its block finishes it and goes
// on; else the partials go to part and the groups' ticket counters are count (null with
// ONE). TILE: the split has g > 1 (bn_visit). Two instances each rather than run-time
// branches: each keeps to the registers of its own path (the chunked one reads large
// inputs, where occupancy counts; tiles hold many values in registers).

// Accumulators a thread holds after bn_visit, one per position (bn_task_merge): the
// kernel's scratch has as many slots per thread.
template <class T, bool TILE>
__device__ constexpr int bn_held() { return TILE ? 16 / sizeof(T) : 1; }

// Statistics of x, finished in the launch (bn_stats_emit: mean, invstd, var and the
// running statistics when rm is not null). With ONE the block also writes
// y = (x - mean) * (invstd * gamma) + beta over its values; else bn_apply does, in a
// second launch.
// GN: group norm (x and tl in the statistic view, see gn_visit: never TILE); else batch
// norm.
template <class T, bool GN, bool ONE, bool TILE>
__global__ void bn_stats(const T* __restrict__ x, bn_tiling tl, bool vec,
                         bn_moments<T>* __restrict__ part, unsigned* __restrict__ count, T eps,
                         T* mean, T* invstd, T* var, T* rm, T* rv, T keep, T take, T corr,
                         T* __restrict__ y, const T* __restrict__ gamma,
                         const T* __restrict__ beta, i64 s, i64 groups) {
  const bn_stats_emit<T> emit = {eps, mean, invstd, var, rm, rv, keep, take, corr};
  const i64 n_tasks = bn_n_tasks(tl);
  for (i64 task = blockIdx.x; task < n_tasks; task += gridDim.x) {
    const i64 grp = task / tl.n_chunks, r = task - grp * tl.n_chunks;
    bn_stats_op<T> f;
    f.x = x;
    f.clear();
    bn_visit<T, TILE>(tl, task, vec, f);
    bn_moments<T> acc[bn_held<T, TILE>()];
#pragma unroll
    for (int p = 0; p < bn_held<T, TILE>(); ++p) acc[p] = f.get(p);
    if (!ONE) {
      bn_store_or_finish(tl, grp, r, acc, part, count, emit);
      continue;
    }
    bn_task_merge(tl, grp, acc, emit);
    __syncthreads();  // the task's statistics (global memory) are seen by the whole block
    if (GN) {
      gn_apply_op<T> a;
      const i64 q0 = grp % groups * (tl.s / s);
      a.x = x; a.y = y; a.gamma = gamma + q0; a.beta = beta + q0;
      a.mu = mean[grp]; a.rs = invstd[grp]; a.ch_at = -1;
      gn_visit<T>(tl, s, task, vec, a);
    } else {
      bn_apply_op<T, false, false> a;
      a.x = x; a.y = y; a.mean = mean; a.istd = invstd; a.gamma = gamma; a.beta = beta;
      a.eps = T(0);
      a.at_.init(0, 1);
      bn_visit<T, TILE>(tl, task, vec, a);
    }
  }
}

// y = (x - mean) * (invstd * gamma) + beta (FROM_VAR: `istd` holds variances; GN: group
// norm, statistics per (sample, group): stat_n, cg).
template <class T, bool FROM_VAR, bool GN, bool TILE>
__global__ void bn_apply(const T* __restrict__ x, T* __restrict__ y, bn_tiling tl, bool vec,
                         const T* __restrict__ mean, const T* __restrict__ istd,
                         const T* __restrict__ gamma, const T* __restrict__ beta, i64 stat_n,
                         i64 cg, T eps) {
  const i64 n_tasks = bn_n_tasks(tl);
  for (i64 b = blockIdx.x; b < n_tasks; b += gridDim.x) {
    const i64 task = n_tasks - 1 - b;  // backwards: the statistics pass left the end in cache
    bn_apply_op<T, FROM_VAR, GN> f;
    f.x = x; f.y = y; f.mean = mean; f.istd = istd; f.gamma = gamma; f.beta = beta; f.eps = eps;
    f.at_.init(stat_n, cg);
    bn_visit<T, TILE>(tl, task, vec, f);
  }
}

// Sums of g and g * xhat per channel (bn_grad_op), finished in the launch: dgamma, dbeta,
// and with BN_TRAIN u, v of dx; with BN_TRAIN and ONE the block then writes dx over its
// values (else bn_dx does, in a second launch). GN_COLS: stat_n, cg as bn_apply's.
template <class T, int MODE, bool ONE, bool TILE>
__global__ void bn_grad(const T* __restrict__ g, const T* __restrict__ x, bn_tiling tl,
                        bool vec, const T* __restrict__ mean, const T* __restrict__ istd,
                        const T* __restrict__ gamma, i64 stat_n, i64 cg, T eps,
                        T* __restrict__ dx, bn_sums<T>* __restrict__ part,
                        unsigned* __restrict__ count, T* __restrict__ dgamma,
                        T* __restrict__ dbeta, T inv_count, T* u, T* v) {
  const bn_grad_emit<T, MODE == BN_TRAIN> emit = {dgamma, dbeta, gamma, inv_count, u, v};
  const i64 n_tasks = bn_n_tasks(tl);
  for (i64 task = blockIdx.x; task < n_tasks; task += gridDim.x) {
    const i64 grp = task / tl.n_chunks, r = task - grp * tl.n_chunks;
    bn_grad_op<T, MODE> f;
    f.g = g; f.x = x; f.mean = mean; f.istd = istd; f.gamma = gamma; f.eps = eps; f.dx = dx;
    bn_empty(f.acc);
    f.at_.init(stat_n, cg);
    bn_visit<T, TILE>(tl, task, vec, f);
    bn_sums<T> acc[bn_held<T, TILE>()];
#pragma unroll
    for (int p = 0; p < bn_held<T, TILE>(); ++p) acc[p] = f.acc[p];
    if (!ONE) {
      bn_store_or_finish(tl, grp, r, acc, part, count, emit);
      continue;
    }
    bn_task_merge(tl, grp, acc, emit);
    if (MODE == BN_TRAIN) {
      __syncthreads();  // the task's u, v (global memory) are seen by the whole block
      bn_dx_op<T, false> d;
      d.g = g; d.x = x; d.mean = mean; d.istd = istd; d.gamma = gamma; d.u = u; d.v = v;
      d.dx = dx;
      d.at_.init(0, 1);
      bn_visit<T, TILE>(tl, task, vec, d);
    }
  }
}

// Group norm's u, v per (sample, group) (see bn_dx_op) over the statistic view (gn_visit),
// finished in the launch; with ONE the block then writes dx over its values, else bn_dx
// does, in a second launch.
template <class T, bool ONE>
__global__ void gn_grad(const T* __restrict__ g, const T* __restrict__ x, bn_tiling tl, i64 s,
                        i64 groups, bool vec, const T* __restrict__ mean,
                        const T* __restrict__ rstd, const T* __restrict__ gamma, T inv_count,
                        bn_sums<T>* __restrict__ part, unsigned* __restrict__ count, T* u,
                        T* v, T* __restrict__ dx) {
  const gn_uv_emit<T> emit = {u, v, inv_count};
  const i64 n_tasks = bn_n_tasks(tl), cg = tl.s / s;
  for (i64 task = blockIdx.x; task < n_tasks; task += gridDim.x) {
    const i64 st = task / tl.n_chunks, r = task - st * tl.n_chunks;
    const T* gm = gamma + st % groups * cg;
    gn_sums_op<T> f;
    f.g = g; f.x = x; f.gamma = gm; f.mu = mean[st]; f.rs = rstd[st]; f.ch_at = -1;
    bn_empty(f.acc);
    gn_visit<T>(tl, s, task, vec, f);
    if (!ONE) {  // (tl.g == 1, tl.c the statistics: group st is statistic st)
      bn_store_or_finish(tl, st, r, f.acc, part, count, emit);
      continue;
    }
    bn_task_merge(tl, st, f.acc, emit);
    __syncthreads();  // the statistic's u, v (global memory) are seen by the whole block
    gn_dx_op<T> d;
    d.g = g; d.x = x; d.gamma = gm; d.dx = dx; d.mu = f.mu; d.rs = f.rs; d.ch_at = -1;
    d.uu = u[st];
    d.vv = v[st];
    gn_visit<T>(tl, s, task, vec, d);
  }
}

// ---- group norm backward on rows of s >= 64 values (fused_batchnorm.py rows_tiling) -------
// x as n c rows of s values; statistic st = (sample, group q) is rows q cg .. q cg + cg - 1
// of its sample. A task is one chunk of one statistic: m whole rows (pieces == 1) or piece
// p (pc values) of one row. Besides the statistic's sums (u, v as gn_grad) the task stores
// its rows' (pieces') sums of g and g * xhat per (channel, sample, piece), so dgamma and
// dbeta are a merge of n * pieces partials a channel, finished by the last task of each
// group (a ticket per group), instead of a pass over g and x of their own (grad_cols).
struct gn_rows_tiling { i64 n, groups, cg, s, m, pieces, pc, n_chunks; };

// acc += sums of g and g * xhat over V neighbours at i
template <int V, class T>
__device__ __forceinline__ void gn_row_sums(const T* g, const T* x, i64 i, bool vec, T mu, T rs,
                                            bn_sums<T>& acc) {
  T gv[V], xv[V];
  bn_load<V>(g, i, vec, gv);
  bn_load<V>(x, i, vec, xv);
#pragma unroll
  for (int q = 0; q < V; ++q) {
    acc.g += gv[q];
    acc.gx += gv[q] * ((xv[q] - mu) * rs);
  }
}

// Lanes lane, lane + span / V, ... of [lo, hi) (V values each) of the row at `at`.
template <int V, class T>
__device__ __forceinline__ void gn_row_walk(const T* g, const T* x, i64 at, i64 lo, i64 hi,
                                            i64 span, bool vec, T mu, T rs, bn_sums<T>& acc) {
#pragma unroll 4
  for (i64 i = lo; i < hi; i += span) gn_row_sums<V>(g, x, at + i, vec, mu, rs, acc);
}

// u, v per statistic (finished in the launch: with ONE by the task, else by the last task
// of the statistic, from part), dgamma and dbeta (by the last task of each group, from
// part_ch); with ONE the block then writes dx over the statistic, else bn_dx does, in a
// second launch. count: the groups' counters, then (without ONE) the statistics'.
// Within a task, teams of tm lanes (a power of two <= warp size; fewer lanes for short
// rows) each reduce one item -- a piece of sub values of a segment, Q items a segment, so
// that a task of few segments still keeps every team busy -- by a shuffle tree; the
// segments' sums are their items' merged in order, the statistic's partial the warp merge
// of gamma-weighted segment sums. The order depends on the shapes and warp size alone.
// Blocks of HF_BN_BLOCK; on CUDA (nvcc 13, sm_90) float32 asks for 3 blocks an SM, as
// gn_grad gets: 80 registers (93 unbounded: 2 blocks; a minimum of 4 spills). HIP's
// second argument means something else (waves per EU): the block size alone there.
#if HF_HIP
#  define HF_BN_ROWS_BOUNDS(T) __launch_bounds__(HF_BN_BLOCK)
#else
#  define HF_BN_ROWS_BOUNDS(T) __launch_bounds__(HF_BN_BLOCK, sizeof(T) <= 4 ? 3 : 0)
#endif
template <class T, bool ONE>
__global__ void HF_BN_ROWS_BOUNDS(T)
gn_grad_rows(const T* __restrict__ g, const T* __restrict__ x, gn_rows_tiling tl, bool vec,
             const T* __restrict__ mean, const T* __restrict__ rstd,
             const T* __restrict__ gamma, T inv_count, bn_sums<T>* __restrict__ part,
             bn_sums<T>* __restrict__ part_ch, unsigned* __restrict__ count, T* u, T* v,
             T* __restrict__ dx, T* __restrict__ dgamma, T* __restrict__ dbeta) {
  constexpr int V = 16 / sizeof(T);
  const gn_uv_emit<T> emit = {u, v, inv_count};
  const bn_grad_emit<T, false> emit_ch = {dgamma, dbeta, gamma, T(0), nullptr, nullptr};
  const i64 stats = tl.n * tl.groups, k = tl.cg * tl.s, n_tasks = stats * tl.n_chunks;
  const bool packed = tl.s % V == 0;  // then pc is a multiple of V too
  const int vp = packed ? V : 1;
  bn_sums<T>* slot = bn_scratch<bn_sums<T> >();
  for (i64 task = blockIdx.x; task < n_tasks; task += gridDim.x) {
    const i64 st = task / tl.n_chunks, r = task - st * tl.n_chunks;
    const i64 smp = st / tl.groups, q = st - smp * tl.groups;
    // the task's segments: nseg rows from j0, values a0 .. a0 + len - 1 of each
    i64 j0 = r * tl.m, nseg = bn_min(tl.m, tl.cg - j0), a0 = 0, len = tl.s, p = 0;
    if (tl.pieces > 1) {
      j0 = r / tl.pieces;
      p = r - j0 * tl.pieces;
      nseg = 1;
      a0 = p * tl.pc;
      len = bn_min(tl.pc, tl.s - a0);
    }
    int tm = 1;
    while (tm < warpSize && (i64)tm * vp < len) tm *= 2;
    const i64 teams = blockDim.x / tm, team = threadIdx.x / tm, lane = threadIdx.x % tm;
    const i64 span = (i64)tm * vp, q_want = nseg < teams ? teams / nseg : 1;
    // sub: whole steps of a team, so only an item's last step has idle lanes
    const i64 sub = ((len + q_want - 1) / q_want + span - 1) / span * span;
    const i64 qn = (len + sub - 1) / sub, items = nseg * qn;  // items <= blockDim.x
    const T mu = mean[st], rs = rstd[st];
    const i64 base = st * k + j0 * tl.s + a0;
    __syncthreads();  // the previous task's readers of slot are done
    for (i64 e0 = 0; e0 < items; e0 += teams) {  // the same trips in every lane (shuffles)
      const i64 e = e0 + team;
      bn_sums<T> acc = bn_sums<T>::empty();
      if (e < items) {
        const i64 sg = e / qn, lo = (e - sg * qn) * sub, hi = bn_min(len, lo + sub);
        const i64 at = base + sg * tl.s;
        if (packed) gn_row_walk<V>(g, x, at, lo + lane * V, hi, span, vec, mu, rs, acc);
        else gn_row_walk<1>(g, x, at, lo + lane, hi, span, false, mu, rs, acc);
      }
      // lane 0 of a team gets its team's sum (offsets < tm stay within the team)
      for (int o = tm >> 1; o > 0; o >>= 1) acc = bn_merge(acc, bn_shfl_down(acc, o));
      if (lane == 0 && e < items) slot[e] = acc;
    }
    __syncthreads();
    bn_sums<T> seg = bn_sums<T>::empty();
    if (threadIdx.x < nseg) {  // segment threadIdx.x: its items in order
      for (i64 e = threadIdx.x * qn; e < (threadIdx.x + 1) * qn; ++e) {
        seg = bn_merge(seg, slot[e]);
      }
      const i64 ch = q * tl.cg + j0 + threadIdx.x;
      part_ch[(ch * tl.n + smp) * tl.pieces + p] = seg;
      const T gm = gamma[ch];  // the statistic's sums are of gamma g, gamma g xhat
      seg.g *= gm;
      seg.gx *= gm;
    }
    __syncthreads();
    if (threadIdx.x < nseg) slot[threadIdx.x] = seg;
    __syncthreads();
    if (threadIdx.x < (unsigned)warpSize) seg = bn_merge_slots(slot, nseg, nseg, 0, 0);
    if (!ONE) {
      if (threadIdx.x == 0) part[st * tl.n_chunks + r] = seg;
      if (bn_last_done(count + tl.groups + st, tl.n_chunks)) {
        bn_finish_group(part, st, 1, tl.n_chunks, emit);
      }
    } else if (threadIdx.x == 0) {
      emit(st, seg);
    }
    if (bn_last_done(count + q, tl.n * tl.n_chunks)) {
      bn_finish_group(part_ch, q * tl.cg, tl.cg, tl.n * tl.pieces, emit_ch);
    }
    if (ONE) {
      __syncthreads();  // the statistic's u, v (global memory) are seen by the whole block
      const bn_tiling view = {1, stats, k, 1, k, 1};
      gn_dx_op<T> d;
      d.g = g; d.x = x; d.gamma = gamma + q * tl.cg; d.dx = dx; d.mu = mu; d.rs = rs;
      d.ch_at = -1;
      d.uu = u[st];
      d.vv = v[st];
      gn_visit<T>(view, tl.s, st, vec, d);
    }
  }
}

// dx of the training norms (see bn_dx_op; GN: as bn_apply's).
template <class T, bool GN, bool TILE>
__global__ void bn_dx(const T* __restrict__ g, const T* __restrict__ x, bn_tiling tl, bool vec,
                      const T* __restrict__ mean, const T* __restrict__ istd,
                      const T* __restrict__ gamma, const T* __restrict__ u,
                      const T* __restrict__ v, i64 stat_n, i64 cg, T* __restrict__ dx) {
  const i64 n_tasks = bn_n_tasks(tl);
  for (i64 b = blockIdx.x; b < n_tasks; b += gridDim.x) {
    const i64 task = n_tasks - 1 - b;  // backwards, as bn_apply
    bn_dx_op<T, GN> f;
    f.g = g; f.x = x; f.mean = mean; f.istd = istd; f.gamma = gamma; f.u = u; f.v = v; f.dx = dx;
    f.at_.init(stat_n, cg);
    bn_visit<T, TILE>(tl, task, vec, f);
  }
}

// running = keep * running + take * batch, the variance made unbiased by corr = n / (n - 1).
// out_* may be the running operands (in place).
template <class T>
__global__ void bn_update_running(const T* rm, const T* rv, const T* __restrict__ mean,
                                  const T* __restrict__ var, T* out_mean, T* out_var, i64 c,
                                  T keep, T take, T corr) {
  HF_GRID_LOOP(i, c) {
    out_mean[i] = keep * rm[i] + take * mean[i];
    out_var[i] = keep * rv[i] + take * (var[i] * corr);
  }
}

// ---- group norm, short statistics (k = cg * s < HF_BN_BLOCK values): teams of lanes ---------
// A team of tm = min(32, k rounded up to a power of two) lanes (tm divides every warp size)
// holds whole statistics, each forward and backward in one launch: lane l takes the
// values e = l + j tm (j < M) of U = HF_BN_SLOTS / M statistics at a time, in registers,
// and the team's sums are XOR butterflies of adds, which leave the same bits in every lane
// (float addition commutes): no broadcast, no shared memory. Block b's teams take
// statistics base + u * teams + team (base = b * per, + gridDim.x * per each pass, per =
// teams * U), so that a pass reads per * k contiguous values. One team reduces each
// statistic in a fixed order: results do not depend on the grid.
struct gn_team {
  int lane, tm;
  i64 teams, team, per, cg;
  // statistic base + team's group q and its steps (without dividing in the loop)
  i64 q, dq_u, dq_pass, groups;
  __device__ gn_team(int tm_, i64 k, i64 s, i64 groups_, int U) {
    tm = tm_;
    lane = threadIdx.x % tm;
    teams = blockDim.x / tm;
    team = threadIdx.x / tm;
    per = teams * U;
    cg = k / s;
    groups = groups_;
    q = ((i64)blockIdx.x * per + team) % groups;
    dq_u = teams % groups;
    dq_pass = (i64)gridDim.x * per % groups;
  }
  __device__ i64 step(i64 a, i64 d) const { a += d; return a >= groups ? a - groups : a; }
};

template <int U, class T>
__device__ __forceinline__ void gn_team_sum(T (&a)[U], int tm) {
  for (int o = tm >> 1; o > 0; o >>= 1) {
#pragma unroll
    for (int u = 0; u < U; ++u) a[u] += HF_SHFL_XOR(a[u], o);
  }
}

// mean and rstd per (sample, group) (two passes over the registers), and y.
template <class T, int M>
__global__ void gn_team_forward(const T* __restrict__ x, T* __restrict__ y,
                                const T* __restrict__ gamma, const T* __restrict__ beta,
                                T* __restrict__ mean, T* __restrict__ rstd, i64 stats, i64 k,
                                i64 s, i64 groups, int tm, T eps) {
  constexpr int U = HF_BN_SLOTS / M;
  gn_team tt(tm, k, s, groups, U);
  i64 ch[M];  // this lane's channel within the group for value j, when it has one
  bool has[M];
#pragma unroll
  for (int j = 0; j < M; ++j) {
    const i64 e = tt.lane + (i64)j * tm;
    has[j] = e < k;
    ch[j] = has[j] ? e / s : 0;
  }
  const i64 stride = (i64)gridDim.x * tt.per;
  for (i64 base = (i64)blockIdx.x * tt.per; base < stats; base += stride) {
    T v[U][M], sum[U], sq[U], mu[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const i64 st = base + u * tt.teams + tt.team;
      const T* p = x + (st < stats ? st * k : 0) + tt.lane;
#pragma unroll
      for (int j = 0; j < M; ++j) v[u][j] = st < stats && has[j] ? p[j * tm] : T(0);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      sum[u] = v[u][0];
#pragma unroll
      for (int j = 1; j < M; ++j) sum[u] += v[u][j];
    }
    gn_team_sum<U>(sum, tm);
#pragma unroll
    for (int u = 0; u < U; ++u) {
      mu[u] = sum[u] / (T)k;
      sq[u] = T(0);
#pragma unroll
      for (int j = 0; j < M; ++j) {
        const T d = has[j] ? v[u][j] - mu[u] : T(0);
        sq[u] += d * d;
      }
    }
    gn_team_sum<U>(sq, tm);
    i64 q = tt.q;
#pragma unroll
    for (int u = 0; u < U; ++u, q = tt.step(q, tt.dq_u)) {
      const i64 st = base + u * tt.teams + tt.team;
      if (st >= stats) continue;
      const T rs = T(1) / bn_sqrt(sq[u] / (T)k + eps);
      if (tt.lane == 0) {
        mean[st] = mu[u];
        rstd[st] = rs;
      }
      const T *gm = gamma + q * tt.cg, *bt = beta + q * tt.cg;
      T* o = y + st * k + tt.lane;
#pragma unroll
      for (int j = 0; j < M; ++j)
        if (has[j]) o[j * tm] = (v[u][j] - mu[u]) * (rs * gm[ch[j]]) + bt[ch[j]];
    }
    tt.q = tt.step(tt.q, tt.dq_pass);
  }
}

// dx per (sample, group): u, v as gn_grad's, then dx as bn_dx_op (dgamma and dbeta are
// bn_grad<GN_COLS>'s).
template <class T, int M>
__global__ void gn_team_backward(const T* __restrict__ g, const T* __restrict__ x,
                                 const T* __restrict__ mean, const T* __restrict__ rstd,
                                 const T* __restrict__ gamma, T* __restrict__ dx, i64 stats,
                                 i64 k, i64 s, i64 groups, int tm, T inv_count) {
  constexpr int U = HF_BN_SLOTS / M;
  gn_team tt(tm, k, s, groups, U);
  i64 ch[M];
  bool has[M];
#pragma unroll
  for (int j = 0; j < M; ++j) {
    const i64 e = tt.lane + (i64)j * tm;
    has[j] = e < k;
    ch[j] = has[j] ? e / s : 0;
  }
  const i64 stride = (i64)gridDim.x * tt.per;
  for (i64 base = (i64)blockIdx.x * tt.per; base < stats; base += stride) {
    T gv[U][M], xh[U][M], gm[U][M], a[U], b[U], rs[U];
    i64 q = tt.q;
#pragma unroll
    for (int u = 0; u < U; ++u, q = tt.step(q, tt.dq_u)) {
      const i64 st = base + u * tt.teams + tt.team;
      const bool live = st < stats;
      const i64 at = (live ? st * k : 0) + tt.lane;
      const T mu = live ? mean[st] : T(0);
      rs[u] = live ? rstd[st] : T(0);
      a[u] = T(0);
      b[u] = T(0);
#pragma unroll
      for (int j = 0; j < M; ++j) {
        const bool in = live && has[j];
        gv[u][j] = in ? g[at + j * tm] : T(0);
        gm[u][j] = in ? gamma[q * tt.cg + ch[j]] : T(0);
        xh[u][j] = in ? (x[at + j * tm] - mu) * rs[u] : T(0);
        const T h = gm[u][j] * gv[u][j];
        a[u] += h;
        b[u] += h * xh[u][j];
      }
    }
    gn_team_sum<U>(a, tm);
    gn_team_sum<U>(b, tm);
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const i64 st = base + u * tt.teams + tt.team;
      if (st >= stats) continue;
      const T uu = a[u] * inv_count, vv = b[u] * inv_count;
      T* o = dx + st * k + tt.lane;
#pragma unroll
      for (int j = 0; j < M; ++j)
        if (has[j]) o[j * tm] = rs[u] * (gm[u][j] * gv[u][j] - uu - xh[u][j] * vv);
    }
    tt.q = tt.step(tt.q, tt.dq_pass);
  }
}

}  // namespace hf
