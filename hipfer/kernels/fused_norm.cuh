// fused_norm.cuh -- row-wise ops of hipfer.nn (hipfer/prims/fused_ops/norm.py): softmax,
// logsumexp, layer norm and RMS norm, forward and backward.
//
// Operands are C-contiguous (rows, cols). A *team* of tpr threads (a power of two) owns one
// row at a time, and thread `lane` of a team always takes columns lane, lane + tpr, ...
// (neighbouring lanes read neighbouring columns: coalesced).
//   tpr <= 32:              blockDim.x / tpr teams per block, reducing with XOR shuffles
//                           (a team never straddles a warp, whose size is 32 or 64);
//   tpr == blockDim.x > 32: one team per block, reducing across warps in shared memory.
// Block b takes the row groups g = b, b + gridDim.x, ...; team t of the block takes row
// g * teams + t. Every thread of a block runs the same loop (a team past the last row joins
// with no columns), so shuffles and __syncthreads always see whole warps and blocks.
// Each sum runs in an order fixed by (cols, tpr, blockDim, gridDim, warp size), which the
// host derives from the shapes and the device alone: results repeat bit for bit, and no
// float is ever accumulated with atomics.
//
// Dynamic shared memory, per team (the host decides what fits: kernels/fused_norm.py):
//   cache       the row's operands, so that the later passes over a row read shared memory
//               instead of global memory (each input is read from memory once);
//   acc_shared  the backward ops' column accumulators (dgamma, dbeta), summed over the
//               block's teams in team order at the end into the block's row of `part`;
//               without it (one team per block) the team accumulates in `part` directly.
// The passes read through generic pointers, which may point at shared or global memory.
#pragma once
#include "common.cuh"

// Largest block (kernels/fused_norm.py MAX_BLOCK): nvcc must keep a 1024-thread block
// within the register file (<= 64 registers a thread), or the launch fails.
#define HF_NORM_MAX_BLOCK 1024

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

struct norm_add { template <class T> __device__ static T apply(T a, T b) { return a + b; } };
// NaN wins, so a row with a NaN has a NaN max.
struct norm_max {
  template <class T> __device__ static T apply(T a, T b) { return (a > b || a != a) ? a : b; }
};

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

// Op over the team's values, returned to every thread of the team. The order is fixed, and
// all threads agree bit for bit (a butterfly adds the same two values on both sides).
template <class Op, class T>
__device__ T norm_team_reduce(T v, int tpr) {
  __shared__ T partial[HF_MAX_WARPS_PER_BLOCK];
  const int ws = warpSize;
  for (int m = (tpr < ws ? tpr : ws) >> 1; m > 0; m >>= 1) v = Op::apply(v, HF_SHFL_XOR(v, m));
  if (tpr <= ws) return v;
  __syncthreads();  // the previous reduction's readers of `partial` are done
  if (threadIdx.x % ws == 0) partial[threadIdx.x / ws] = v;
  __syncthreads();
  const int n_warps = blockDim.x / ws;
  v = partial[0];
  for (int w = 1; w < n_warps; ++w) v = Op::apply(v, partial[w]);
  return v;
}

// The block's row of the column sums: its teams' accumulators (`stride` apart in shared
// memory) summed in team order. Nothing to do when the team accumulated in `part` itself.
template <class T>
__device__ void norm_store_partial(const T* acc0, i64 stride, T* part, i64 width, int teams,
                                   int acc_shared) {
  if (!acc_shared) return;
  __syncthreads();
  for (i64 c = threadIdx.x; c < width; c += blockDim.x) {
    T v = acc0[c];
    for (int t = 1; t < teams; ++t) v += acc0[t * stride + c];
    part[blockIdx.x * width + c] = v;
  }
}

// ---- softmax and logsumexp ---------------------------------------------------------------
// m = max and s = sum(exp(x - m)) of the team's row (n columns at xr), in every thread;
// with cache, the row is kept in c for the caller's next pass.
template <class T>
__device__ __forceinline__ void norm_softmax_stats(const T* xr, T* c, int cache, i64 n,
                                                   const norm_team& tm, T& m, T& s) {
  m = norm_neg_inf<T>();
  for (i64 j = tm.lane; j < n; j += tm.tpr) {
    const T v = xr[j];
    if (cache) c[j] = v;
    m = norm_max::apply(m, v);
  }
  m = norm_team_reduce<norm_max>(m, tm.tpr);
  const T* src = cache ? c : xr;
  s = T(0);
  for (i64 j = tm.lane; j < n; j += tm.tpr) s += norm_exp(src[j] - m);
  s = norm_team_reduce<norm_add>(s, tm.tpr);
}

// out may be x (in place): each element is read and then written by the same thread.
template <class T>
__global__ void __launch_bounds__(HF_NORM_MAX_BLOCK)
fused_softmax_rows(const T* x, T* out, i64 rows, i64 cols, int tpr, int cache) {
  HF_DYN_SHARED(T, smem);
  const norm_team tm = norm_team_of(tpr);
  T* c = smem + tm.team * cols;
  for (i64 g = blockIdx.x; g < norm_groups(rows, tm); g += gridDim.x) {
    const i64 r = g * tm.teams + tm.team, n = r < rows ? cols : 0, base = n ? r * cols : 0;
    T m, s;
    norm_softmax_stats(x + base, c, cache, n, tm, m, s);
    const T* src = cache ? c : x + base;
    const T inv = T(1) / s;
    for (i64 j = tm.lane; j < n; j += tpr) out[base + j] = norm_exp(src[j] - m) * inv;
  }
}

// A row whose max is not finite (all -inf, a +inf, a NaN) has that max as its result;
// no columns give -inf.
template <class T>
__global__ void __launch_bounds__(HF_NORM_MAX_BLOCK)
fused_logsumexp_rows(const T* x, T* out, i64 rows, i64 cols, int tpr, int cache) {
  HF_DYN_SHARED(T, smem);
  const norm_team tm = norm_team_of(tpr);
  T* c = smem + tm.team * cols;
  for (i64 g = blockIdx.x; g < norm_groups(rows, tm); g += gridDim.x) {
    const i64 r = g * tm.teams + tm.team, n = r < rows ? cols : 0, base = n ? r * cols : 0;
    T m, s;
    norm_softmax_stats(x + base, c, cache, n, tm, m, s);
    if (tm.lane == 0 && r < rows) out[r] = m - m == T(0) ? m + norm_log(s) : m;  // m - m: 0 iff finite
  }
}

// dx = y * (grad - sum(grad * y)); the cache holds grad then y.
template <class T>
__global__ void __launch_bounds__(HF_NORM_MAX_BLOCK)
fused_softmax_rows_backward(const T* grad, const T* y, T* dx, i64 rows, i64 cols,
                            int tpr, int cache) {
  HF_DYN_SHARED(T, smem);
  const norm_team tm = norm_team_of(tpr);
  T* cg = smem + 2 * tm.team * cols;
  T* cy = cg + cols;
  for (i64 g = blockIdx.x; g < norm_groups(rows, tm); g += gridDim.x) {
    const i64 r = g * tm.teams + tm.team, n = r < rows ? cols : 0, base = n ? r * cols : 0;
    T dot = T(0);
    for (i64 j = tm.lane; j < n; j += tpr) {
      const T a = grad[base + j], b = y[base + j];
      if (cache) { cg[j] = a; cy[j] = b; }
      dot += a * b;
    }
    dot = norm_team_reduce<norm_add>(dot, tpr);
    const T* sg = cache ? cg : grad + base;
    const T* sy = cache ? cy : y + base;
    for (i64 j = tm.lane; j < n; j += tpr) dx[base + j] = sy[j] * (sg[j] - dot);
  }
}

// ---- layer norm ----------------------------------------------------------------------------
// Mean first, then the variance from the kept row (no sum-of-squares cancellation);
// xhat = (x - mean) / std, std = sqrt(var + eps), y = xhat * gamma + beta.
template <class T>
__global__ void __launch_bounds__(HF_NORM_MAX_BLOCK)
fused_layer_norm(const T* x, const T* gamma, const T* beta, T* y, T* xhat, T* std_,
                 i64 rows, i64 cols, int tpr, int cache, T eps) {
  HF_DYN_SHARED(T, smem);
  const norm_team tm = norm_team_of(tpr);
  T* c = smem + tm.team * cols;
  for (i64 g = blockIdx.x; g < norm_groups(rows, tm); g += gridDim.x) {
    const i64 r = g * tm.teams + tm.team, n = r < rows ? cols : 0, base = n ? r * cols : 0;
    T s = T(0);
    for (i64 j = tm.lane; j < n; j += tpr) {
      const T v = x[base + j];
      if (cache) c[j] = v;
      s += v;
    }
    const T mean = norm_team_reduce<norm_add>(s, tpr) / T(cols);
    const T* src = cache ? c : x + base;
    T ss = T(0);
    for (i64 j = tm.lane; j < n; j += tpr) {
      const T d = src[j] - mean;
      ss += d * d;
    }
    const T sd = norm_sqrt(norm_team_reduce<norm_add>(ss, tpr) / T(cols) + eps), rs = T(1) / sd;
    for (i64 j = tm.lane; j < n; j += tpr) {
      const T h = (src[j] - mean) * rs;
      xhat[base + j] = h;
      y[base + j] = h * gamma[j] + beta[j];
    }
    if (tm.lane == 0 && r < rows) std_[r] = sd;
  }
}

// dx = (g - mean(g) - xhat * mean(g * xhat)) / std with g = grad * gamma; the partial
// column sums dgamma = sum grad * xhat, dbeta = sum grad go to part (gridDim.x, 2 * cols),
// summed by fused_norm_column_sums. Per team: [grad, xhat cache][dgamma, dbeta accumulators].
template <class T>
__global__ void __launch_bounds__(HF_NORM_MAX_BLOCK)
fused_layer_norm_backward(const T* grad, const T* xhat, const T* std_, const T* gamma,
                          T* dx, T* part, i64 rows, i64 cols, int tpr, int cache,
                          int acc_shared) {
  HF_DYN_SHARED(T, smem);
  const norm_team tm = norm_team_of(tpr);
  const i64 stride = ((cache ? 2 : 0) + (acc_shared ? 2 : 0)) * cols;
  T* cg = smem + tm.team * stride;
  T* ch = cg + cols;
  T* acc = acc_shared ? cg + (cache ? 2 : 0) * cols : part + blockIdx.x * 2 * cols;
  for (i64 j = tm.lane; j < cols; j += tpr) acc[j] = acc[cols + j] = T(0);
  for (i64 g = blockIdx.x; g < norm_groups(rows, tm); g += gridDim.x) {
    const i64 r = g * tm.teams + tm.team, n = r < rows ? cols : 0, base = n ? r * cols : 0;
    T a = T(0), b = T(0);
    for (i64 j = tm.lane; j < n; j += tpr) {
      const T gr = grad[base + j], h = xhat[base + j], gg = gr * gamma[j];
      if (cache) { cg[j] = gr; ch[j] = h; }
      a += gg;
      b += gg * h;
    }
    const T ma = norm_team_reduce<norm_add>(a, tpr) / T(cols);
    const T mb = norm_team_reduce<norm_add>(b, tpr) / T(cols);
    const T rs = n ? T(1) / std_[r] : T(0);
    const T* sg = cache ? cg : grad + base;
    const T* sh = cache ? ch : xhat + base;
    for (i64 j = tm.lane; j < n; j += tpr) {
      const T gr = sg[j], h = sh[j];
      dx[base + j] = (gr * gamma[j] - ma - h * mb) * rs;
      acc[j] += gr * h;
      acc[cols + j] += gr;
    }
  }
  norm_store_partial(smem + (cache ? 2 : 0) * cols, stride, part, 2 * cols, tm.teams, acc_shared);
}

// ---- RMS norm ------------------------------------------------------------------------------
// rms = sqrt(mean(x^2) + eps), y = x / rms * gamma.
template <class T>
__global__ void __launch_bounds__(HF_NORM_MAX_BLOCK)
fused_rms_norm(const T* x, const T* gamma, T* y, T* rms, i64 rows, i64 cols, int tpr,
               int cache, T eps) {
  HF_DYN_SHARED(T, smem);
  const norm_team tm = norm_team_of(tpr);
  T* c = smem + tm.team * cols;
  for (i64 g = blockIdx.x; g < norm_groups(rows, tm); g += gridDim.x) {
    const i64 r = g * tm.teams + tm.team, n = r < rows ? cols : 0, base = n ? r * cols : 0;
    T ss = T(0);
    for (i64 j = tm.lane; j < n; j += tpr) {
      const T v = x[base + j];
      if (cache) c[j] = v;
      ss += v * v;
    }
    const T rm = norm_sqrt(norm_team_reduce<norm_add>(ss, tpr) / T(cols) + eps), rr = T(1) / rm;
    const T* src = cache ? c : x + base;
    for (i64 j = tm.lane; j < n; j += tpr) y[base + j] = src[j] * rr * gamma[j];
    if (tm.lane == 0 && r < rows) rms[r] = rm;
  }
}

// dx = g / rms - x * sum(g * x) / (cols * rms^3) with g = grad * gamma (the per-row gamma
// term); the partial column sums dgamma = sum grad * x / rms go to part (gridDim.x, cols).
// Per team: [grad, x cache][dgamma accumulators].
template <class T>
__global__ void __launch_bounds__(HF_NORM_MAX_BLOCK)
fused_rms_norm_backward(const T* grad, const T* x, const T* rms, const T* gamma, T* dx,
                        T* part, i64 rows, i64 cols, int tpr, int cache, int acc_shared) {
  HF_DYN_SHARED(T, smem);
  const norm_team tm = norm_team_of(tpr);
  const i64 stride = ((cache ? 2 : 0) + (acc_shared ? 1 : 0)) * cols;
  T* cg = smem + tm.team * stride;
  T* cx = cg + cols;
  T* acc = acc_shared ? cg + (cache ? 2 : 0) * cols : part + blockIdx.x * cols;
  for (i64 j = tm.lane; j < cols; j += tpr) acc[j] = T(0);
  for (i64 g = blockIdx.x; g < norm_groups(rows, tm); g += gridDim.x) {
    const i64 r = g * tm.teams + tm.team, n = r < rows ? cols : 0, base = n ? r * cols : 0;
    T d = T(0);
    for (i64 j = tm.lane; j < n; j += tpr) {
      const T gr = grad[base + j], v = x[base + j];
      if (cache) { cg[j] = gr; cx[j] = v; }
      d += gr * gamma[j] * v;
    }
    d = norm_team_reduce<norm_add>(d, tpr);
    const T rr = n ? T(1) / rms[r] : T(0), k = d * rr * rr * rr / T(cols);
    const T* sg = cache ? cg : grad + base;
    const T* sx = cache ? cx : x + base;
    for (i64 j = tm.lane; j < n; j += tpr) {
      const T gr = sg[j], v = sx[j];
      dx[base + j] = gr * gamma[j] * rr - v * k;
      acc[j] += gr * v * rr;
    }
  }
  norm_store_partial(smem + (cache ? 2 : 0) * cols, stride, part, cols, tm.teams, acc_shared);
}

// Column c of the (n_part, width) partial rows, summed in row order: out0[c] for c < cols,
// out1[c - cols] beyond (dgamma then dbeta).
template <class T>
__global__ void __launch_bounds__(HF_NORM_MAX_BLOCK)
fused_norm_column_sums(const T* part, i64 n_part, i64 width, i64 cols, T* out0, T* out1) {
  HF_GRID_LOOP(c, width) {
    T v = T(0);
    for (i64 p = 0; p < n_part; ++p) v += part[p * width + c];
    if (c < cols) out0[c] = v;
    else out1[c - cols] = v;
  }
}

}  // namespace hf
