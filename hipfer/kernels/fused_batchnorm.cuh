// fused_batchnorm.cuh -- batch norm and group norm of hipfer.nn
// (hipfer/prims/fused_ops/batchnorm.py). Operands are C-contiguous; x is (n, c, s).
//
// Statistics are reduced in a fixed order, so results repeat bit for bit: the values of
// each statistic are cut into chunks (one block each, `bn_visit`), each block merges its
// threads' partials in shared memory in a fixed order and stores one partial per
// (statistic, chunk), and a finish kernel merges those in order. The geometry depends on
// the shapes alone (hipfer/kernels/fused_batchnorm.py `tiling`); no float atomics.
#pragma once
#include "common.cuh"

// Threads per block of every kernel here (fused_batchnorm.py BLOCK): a multiple of 64, so
// warps are whole for warp sizes 32 and 64, and the size of the per-thread scratch.
#define HF_BN_BLOCK 256

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
template <int V, class T>
__device__ __forceinline__ void bn_load(const T* p, i64 i, bool vec, T (&r)[V]) {
  if (V > 1 && vec) {
    const pack<T, V> q = *reinterpret_cast<const pack<T, V>*>(p + i);
#pragma unroll
    for (int k = 0; k < V; ++k) r[k] = q.v[k];
  } else {
#pragma unroll
    for (int k = 0; k < V; ++k) r[k] = p[i + k];
  }
}

template <int V, class T>
__device__ __forceinline__ void bn_store(T* p, i64 i, bool vec, const T (&r)[V]) {
  if (V > 1 && vec) {
    pack<T, V> q;
#pragma unroll
    for (int k = 0; k < V; ++k) q.v[k] = r[k];
    *reinterpret_cast<pack<T, V>*>(p + i) = q;
  } else {
#pragma unroll
    for (int k = 0; k < V; ++k) p[i + k] = r[k];
  }
}

// ---- the work split: x as (n, c, s) -----------------------------------------------------
// A task (one block) is one chunk of a group of g channels; n_chunks chunks per group.
//   g == 1: rows of s >= 32 values. The chunk is `chunk` consecutive values of the
//           channel in (n, s) order, which the threads walk side by side, V values each
//           when s and chunk are multiples of V ("packed", 16-byte loads when aligned); a
//           warp's values span one row or two, so loads stay coalesced.
//   g > 1 : short rows. The g channels' pieces of a row are w = g s contiguous values
//           (w <= block): thread t takes column t % w of rows t / w, + lanes, ... of the
//           chunk's `chunk` rows (lanes = block / w), so every load is coalesced.
// A thread stays in one channel for the whole task.
struct bn_tiling { i64 n, c, s, g, chunk, n_chunks; };

__device__ __forceinline__ i64 bn_n_tasks(const bn_tiling& tl) {
  return (tl.c + tl.g - 1) / tl.g * tl.n_chunks;
}

// Calls f.row(n, c) before each value (or V neighbours) of row n of channel c that this
// thread takes in the task, then f.at<V>(i, vec) with its flat index i.
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

template <class T, class F>
__device__ void bn_visit(const bn_tiling& tl, i64 task, bool vec, F& f) {
  constexpr int V = 16 / sizeof(T);
  const i64 grp = task / tl.n_chunks, r = task - grp * tl.n_chunks;
  const i64 t = threadIdx.x, B = blockDim.x;
  if (tl.g == 1) {
    const i64 k0 = r * tl.chunk, k1 = bn_min(tl.n * tl.s, k0 + tl.chunk);
    if (tl.s % V == 0 && tl.chunk % V == 0) bn_walk<V>(tl, grp, k0 + t * V, k1, vec, f);
    else bn_walk<1>(tl, grp, k0 + t, k1, false, f);
  } else {
    const i64 w = tl.g * tl.s, lanes = B / w, col = t % w, lane = t / w;
    const i64 c = grp * tl.g + col / tl.s;
    if (lane >= lanes || c >= tl.c) return;
    const i64 n1 = bn_min(tl.n, (r + 1) * tl.chunk), first = grp * tl.g * tl.s + col;
    for (i64 n = r * tl.chunk + lane; n < n1; n += lanes) {
      f.row(n, c);
      f.template at<1>(n * tl.c * tl.s + first, false);
    }
  }
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

// ---- fixed-order merges within a block ------------------------------------------------------
// One accumulator slot per thread (HF_BN_BLOCK threads).
template <class A>
__device__ __forceinline__ A* bn_scratch() {
  __shared__ __align__(16) unsigned char raw[HF_BN_BLOCK * sizeof(A)];
  return reinterpret_cast<A*>(raw);
}

// Called by a whole warp: merges slots e = 0 .. count - 1, slot e being thread
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
template <class A>
__device__ A bn_block_merge(A mine) {
  A* slot = bn_scratch<A>();
  __syncthreads();  // the previous task's readers are done
  slot[threadIdx.x] = mine;
  __syncthreads();
  if (threadIdx.x < (unsigned)warpSize) mine = bn_merge_slots(slot, blockDim.x, blockDim.x, 0, 0);
  return mine;
}

// After bn_visit: store the merge of each channel's threads of the task in
// part[channel * n_chunks + chunk].
template <class A>
__device__ void bn_store_partials(const bn_tiling& tl, i64 task, A mine, A* part) {
  const i64 grp = task / tl.n_chunks, r = task - grp * tl.n_chunks;
  if (tl.g == 1) {
    mine = bn_block_merge(mine);
    if (threadIdx.x == 0) part[grp * tl.n_chunks + r] = mine;
    return;
  }
  A* slot = bn_scratch<A>();
  __syncthreads();
  slot[threadIdx.x] = mine;
  __syncthreads();
  const int ws = warpSize, lane = threadIdx.x % ws;
  const i64 w = tl.g * tl.s, lanes = blockDim.x / w;
  for (i64 j = threadIdx.x / ws; j < tl.g && grp * tl.g + j < tl.c; j += blockDim.x / ws) {
    const A v = bn_merge_slots(slot, lanes * tl.s, tl.s, w, j * tl.s);
    if (lane == 0) part[(grp * tl.g + j) * tl.n_chunks + r] = v;
  }
}

// Result i of n_out merges its n_terms terms f.term(i, r) in order and stores them with
// f.emit(i, merged). Few terms (n_terms <= HF_BN_FEW): one thread per result, sequentially;
// more: one block per result (the launch follows suit: fused_batchnorm.py finish_grid).
#define HF_BN_FEW 32
template <class A, class F>
__device__ void bn_finish(i64 n_out, i64 n_terms, const F& f) {
  if (n_terms <= HF_BN_FEW) {
    HF_GRID_LOOP(i, n_out) {
      A a = A::empty();
      for (i64 r = 0; r < n_terms; ++r) a = bn_merge(a, f.term(i, r));
      f.emit(i, a);
    }
    return;
  }
  for (i64 i = blockIdx.x; i < n_out; i += gridDim.x) {
    A a = A::empty();
    for (i64 r = threadIdx.x; r < n_terms; r += blockDim.x) a = bn_merge(a, f.term(i, r));
    a = bn_block_merge(a);
    if (threadIdx.x == 0) f.emit(i, a);
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

template <class T>
struct bn_stats_op {
  const T* x;
  bn_moments<T> acc;
  __device__ void row(i64, i64) {}
  template <int V> __device__ void at(i64 i, bool vec) {
    T v[V];
    bn_load<V>(x, i, vec, v);
    acc = bn_merge(acc, bn_moments_of<V>(v));
  }
};

// y = (x - mean) * (invstd * gamma) + beta
template <class T, bool FROM_VAR>
struct bn_apply_op {
  const T *x, *mean, *istd, *gamma, *beta;
  T* y;
  T eps, mu, k, b;
  bn_stat_cache at_;
  __device__ void row(i64 n, i64 c) {
    i64 si;
    if (at_.moved(n, c, si)) {
      mu = mean[si];
      k = bn_invstd<FROM_VAR>(istd[si], eps) * gamma[c];
      b = beta[c];
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

// Sums of g and g * xhat, xhat = (x - mean) * invstd. EVAL (running statistics, invstd
// from var + eps) also writes dx = g * (gamma * invstd): batch_norm_eval_backward's one pass.
template <class T, bool EVAL>
struct bn_grad_op {
  const T *g, *x, *mean, *istd, *gamma;
  T* dx;
  T eps, mu, is, kdx;
  bn_sums<T> acc;
  bn_stat_cache at_;
  __device__ void row(i64 n, i64 c) {
    i64 si;
    if (at_.moved(n, c, si)) {
      mu = mean[si];
      is = bn_invstd<EVAL>(istd[si], eps);
      if (EVAL) kdx = gamma[c] * is;
    }
  }
  template <int V> __device__ void at(i64 i, bool vec) {
    T gv[V], xv[V];
    bn_load<V>(g, i, vec, gv);
    bn_load<V>(x, i, vec, xv);
#pragma unroll
    for (int q = 0; q < V; ++q) {
      acc.g += gv[q];
      acc.gx += gv[q] * ((xv[q] - mu) * is);
    }
    if (EVAL) {
#pragma unroll
      for (int q = 0; q < V; ++q) gv[q] *= kdx;
      bn_store<V>(dx, i, vec, gv);
    }
  }
};

// dx = invstd * (gamma * g - u - xhat * v): u, v are the means of gamma * g and
// gamma * g * xhat over the values of each statistic.
template <class T>
struct bn_dx_op {
  const T *g, *x, *mean, *istd, *gamma, *u, *v;
  T* dx;
  T mu, is, gm, uu, vv;
  bn_stat_cache at_;
  __device__ void row(i64 n, i64 c) {
    i64 si;
    if (at_.moved(n, c, si)) {
      mu = mean[si];
      is = istd[si];
      gm = gamma[c];
      uu = u[si];
      vv = v[si];
    }
  }
  template <int V> __device__ void at(i64 i, bool vec) {
    T gv[V], xv[V];
    bn_load<V>(g, i, vec, gv);
    bn_load<V>(x, i, vec, xv);
#pragma unroll
    for (int q = 0; q < V; ++q) gv[q] = is * (gm * gv[q] - uu - (xv[q] - mu) * is * vv);
    bn_store<V>(dx, i, vec, gv);
  }
};

// ---- the kernels (blockDim.x == HF_BN_BLOCK) -------------------------------------------------
// Partial moments of x per (channel, chunk).
template <class T>
__global__ void bn_stats(const T* __restrict__ x, bn_moments<T>* __restrict__ part, bn_tiling tl,
                         bool vec) {
  for (i64 task = blockIdx.x; task < bn_n_tasks(tl); task += gridDim.x) {
    bn_stats_op<T> f;
    f.x = x;
    f.acc = bn_moments<T>::empty();
    bn_visit<T>(tl, task, vec, f);
    bn_store_partials(tl, task, f.acc, part);
  }
}

// Statistic i of n_stats: its n_chunks partials merged in order (bn_finish) -> mean, var
// (biased), invstd = 1 / sqrt(var + eps). No values give NaN (0 / 0, as NumPy).
template <class T>
struct bn_stats_emit {
  const bn_moments<T>* part;
  i64 n_chunks;
  T eps;
  T *mean, *invstd, *var;
  __device__ bn_moments<T> term(i64 i, i64 r) const { return part[i * n_chunks + r]; }
  __device__ void emit(i64 i, const bn_moments<T>& m) const {
    const T vr = m.n ? m.m2 / (T)m.n : bn_nan(T(0));
    mean[i] = m.n ? m.mean : vr;
    var[i] = vr;
    invstd[i] = T(1) / bn_sqrt(vr + eps);
  }
};

template <class T>
__global__ void bn_stats_finish(const bn_moments<T>* __restrict__ part, i64 n_chunks, i64 n_stats,
                                T eps, T* __restrict__ mean, T* __restrict__ invstd,
                                T* __restrict__ var) {
  const bn_stats_emit<T> f = {part, n_chunks, eps, mean, invstd, var};
  bn_finish<bn_moments<T> >(n_stats, n_chunks, f);
}

// y = (x - mean) * (invstd * gamma) + beta (FROM_VAR: `istd` holds variances).
template <class T, bool FROM_VAR>
__global__ void bn_apply(const T* __restrict__ x, T* __restrict__ y, bn_tiling tl, bool vec,
                         const T* __restrict__ mean, const T* __restrict__ istd,
                         const T* __restrict__ gamma, const T* __restrict__ beta, i64 stat_n,
                         i64 cg, T eps) {
  const i64 n_tasks = bn_n_tasks(tl);
  for (i64 b = blockIdx.x; b < n_tasks; b += gridDim.x) {
    const i64 task = n_tasks - 1 - b;  // backwards: the statistics pass left the end in cache
    bn_apply_op<T, FROM_VAR> f;
    f.x = x; f.y = y; f.mean = mean; f.istd = istd; f.gamma = gamma; f.beta = beta; f.eps = eps;
    f.at_.init(stat_n, cg);
    bn_visit<T>(tl, task, vec, f);
  }
}

// Partial sums of g and g * xhat per (channel, chunk); EVAL also writes dx.
template <class T, bool EVAL>
__global__ void bn_grad_sums(const T* __restrict__ g, const T* __restrict__ x, bn_tiling tl,
                             bool vec, const T* __restrict__ mean, const T* __restrict__ istd,
                             const T* __restrict__ gamma, i64 stat_n, i64 cg, T eps,
                             T* __restrict__ dx, bn_sums<T>* __restrict__ part) {
  for (i64 task = blockIdx.x; task < bn_n_tasks(tl); task += gridDim.x) {
    bn_grad_op<T, EVAL> f;
    f.g = g; f.x = x; f.mean = mean; f.istd = istd; f.gamma = gamma; f.eps = eps; f.dx = dx;
    f.acc = bn_sums<T>::empty();
    f.at_.init(stat_n, cg);
    bn_visit<T>(tl, task, vec, f);
    bn_store_partials(tl, task, f.acc, part);
  }
}

// Channel c: dbeta = sum g, dgamma = sum g * xhat from its partials in order (bn_finish);
// UV (batch norm's dx) also u = gamma * dbeta / count, v = gamma * dgamma / count.
template <class T, bool UV>
struct bn_grad_emit {
  const bn_sums<T>* part;
  i64 n_chunks;
  T *dgamma, *dbeta;
  const T* gamma;
  T inv_count;
  T *u, *v;
  __device__ bn_sums<T> term(i64 c, i64 r) const { return part[c * n_chunks + r]; }
  __device__ void emit(i64 c, const bn_sums<T>& s) const {
    dbeta[c] = s.g;
    dgamma[c] = s.gx;
    if (UV) {
      u[c] = gamma[c] * s.g * inv_count;
      v[c] = gamma[c] * s.gx * inv_count;
    }
  }
};

template <class T, bool UV>
__global__ void bn_grad_finish(const bn_sums<T>* __restrict__ part, i64 n_chunks, i64 n_channels,
                               T* __restrict__ dgamma, T* __restrict__ dbeta,
                               const T* __restrict__ gamma, T inv_count, T* __restrict__ u,
                               T* __restrict__ v) {
  const bn_grad_emit<T, UV> f = {part, n_chunks, dgamma, dbeta, gamma, inv_count, u, v};
  bn_finish<bn_sums<T> >(n_channels, n_chunks, f);
}

// Group norm, (sample, group) i: u, v = sums over the group's cg channels of
// gamma * (sum g), gamma * (sum g * xhat) of that sample (part: per (channel, sample)),
// divided by the values per group.
template <class T>
struct gn_grad_emit {
  const bn_sums<T>* part;
  i64 n, groups, cg;
  const T* gamma;
  T inv_count;
  T *u, *v;
  __device__ bn_sums<T> term(i64 i, i64 j) const {
    const i64 smp = i / groups, ch = (i - smp * groups) * cg + j;
    const bn_sums<T> p = part[ch * n + smp];
    bn_sums<T> r;
    r.g = gamma[ch] * p.g;
    r.gx = gamma[ch] * p.gx;
    return r;
  }
  __device__ void emit(i64 i, const bn_sums<T>& s) const {
    u[i] = s.g * inv_count;
    v[i] = s.gx * inv_count;
  }
};

template <class T>
__global__ void gn_grad_finish(const bn_sums<T>* __restrict__ part, i64 n, i64 c, i64 groups,
                               const T* __restrict__ gamma, T inv_count, T* __restrict__ u,
                               T* __restrict__ v) {
  const gn_grad_emit<T> f = {part, n, groups, c / groups, gamma, inv_count, u, v};
  bn_finish<bn_sums<T> >(n * groups, c / groups, f);
}

// dx of the training norms (see bn_dx_op).
template <class T>
__global__ void bn_dx(const T* __restrict__ g, const T* __restrict__ x, bn_tiling tl, bool vec,
                      const T* __restrict__ mean, const T* __restrict__ istd,
                      const T* __restrict__ gamma, const T* __restrict__ u,
                      const T* __restrict__ v, i64 stat_n, i64 cg, T* __restrict__ dx) {
  const i64 n_tasks = bn_n_tasks(tl);
  for (i64 b = blockIdx.x; b < n_tasks; b += gridDim.x) {
    const i64 task = n_tasks - 1 - b;  // backwards, as bn_apply
    bn_dx_op<T> f;
    f.g = g; f.x = x; f.mean = mean; f.istd = istd; f.gamma = gamma; f.u = u; f.v = v; f.dx = dx;
    f.at_.init(stat_n, cg);
    bn_visit<T>(tl, task, vec, f);
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

}  // namespace hf
