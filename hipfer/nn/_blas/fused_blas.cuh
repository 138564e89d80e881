// fused_blas.cuh -- BLAS-like fused ops of hipfer.nn (hipfer/prims/fused_ops/blas.py).
// Operands are C-contiguous; an output may alias an input where the op says so.
//
// Every sum has a fixed order that depends only on the shapes (the launch geometry is
// derived from them in hipfer/backends/cupy/fused_blas.py), never on timing, the warp
// size or the alignment of the data: no atomics, results repeat bit for bit.
#pragma once
#include "common.cuh"

// Lanes of one butterfly: a warp on NVIDIA and RDNA, half a wavefront on CDNA, so the
// tree is the same on every GPU.
#define HF_BLAS_LANES 32

namespace hf {

// out = alpha * x + beta * y; beta == 0 never reads y. out may be y.
template <class T>
__global__ void fused_axpby(const T* __restrict__ x, const T* y, T* out, i64 n, T alpha, T beta) {
  HF_GRID_LOOP(i, n) {
    out[i] = beta == T(0) ? alpha * x[i] : alpha * x[i] + beta * y[i];
  }
}

// ---- sums in a fixed order ---------------------------------------------------------------

// The sum of v over a group of threads: HF_BLAS_LANES consecutive lanes, or the whole
// block with WHOLE_BLOCK (blockDim.x a multiple of HF_BLAS_LANES). Butterflies within each
// HF_BLAS_LANES lanes (every lane ends with the same bits: a + b == b + a), then thread 0
// adds those sums in order. Valid in the group's first thread. With WHOLE_BLOCK every
// thread of the block must call it (it synchronises). (fused_lrp.cuh uses both.)
template <bool WHOLE_BLOCK, class T>
__device__ __forceinline__ T group_sum(T v) {
  for (int m = HF_BLAS_LANES / 2; m > 0; m >>= 1) v += HF_SHFL_XOR(v, m);
  if (!WHOLE_BLOCK) return v;
  __shared__ T lane_sums[HF_MAX_WARPS_PER_BLOCK];
  __syncthreads();  // the previous call's reader is done
  if (threadIdx.x % HF_BLAS_LANES == 0) lane_sums[threadIdx.x / HF_BLAS_LANES] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int g = 1; g < (int)(blockDim.x / HF_BLAS_LANES); ++g) v += lane_sums[g];
  }
  return v;
}

// A pack (hf::pack of common.cuh): the 16 bytes one vector load moves (4 floats, 2
// doubles), P<T> elements. Pack q of an array is elements [q * P, q * P + P); past n it
// reads as zeros. Whether it is loaded as a vector (vec: the array is 16-byte aligned) or
// element by element does not change the values, so the order of a sum over packs does
// not depend on alignment.
template <class T> struct blas_p { static const int value = 16 / (int)sizeof(T); };
template <class T> using blas_pack = pack<T, blas_p<T>::value>;

template <class T>
__device__ __forceinline__ blas_pack<T> blas_load_pack(const T* p, i64 q, i64 n, bool vec) {
  constexpr int P = blas_p<T>::value;
  blas_pack<T> r;
  const i64 i = q * P;
  if (vec && i + P <= n) return *reinterpret_cast<const blas_pack<T>*>(p + i);
#pragma unroll
  for (int k = 0; k < P; ++k) r.v[k] = i + k < n ? p[i + k] : T(0);
  return r;
}

// acc + the pack's elements in order (times y's with DOT).
template <bool DOT, class T>
__device__ __forceinline__ T add_pack(T acc, const blas_pack<T>& a, const blas_pack<T>& b) {
#pragma unroll
  for (int k = 0; k < blas_p<T>::value; ++k) acc += DOT ? a.v[k] * b.v[k] : a.v[k];
  return acc;
}

// Thread t of `threads` adds packs t, t + threads, t + 2 threads, ... of x (x * y with DOT)
// in that order. Four packs are loaded before they are added, for more loads in flight.
template <bool DOT, class T>
__device__ __forceinline__ T sum_packs(const T* x, const T* y, i64 n, bool vec, i64 t, i64 threads) {
  const i64 n_packs = (n + blas_p<T>::value - 1) / blas_p<T>::value;
  T acc = T(0);
  for (i64 q = t; q < n_packs; q += 4 * threads) {
    blas_pack<T> a[4], b[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      const i64 qu = q + u * threads;
      a[u] = blas_load_pack(x, qu, qu < n_packs ? n : 0, vec);
      if (DOT) b[u] = blas_load_pack(y, qu, qu < n_packs ? n : 0, vec);
    }
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      if (q + u * threads < n_packs) acc = add_pack<DOT>(acc, a[u], b[u]);
    }
  }
  return acc;
}

// Full reduction, stage 1: block b writes part[b], the sum of its threads' packs (x * y
// with DOT). With one block, part is the 0-d result; else fused_sum over the partials
// (one block) finishes in order.
template <class T, bool DOT>
__global__ void fused_sum(const T* __restrict__ x, const T* __restrict__ y, T* part, i64 n, int vec) {
  const i64 threads = (i64)gridDim.x * blockDim.x;
  T acc = sum_packs<DOT>(x, y, n, vec != 0, (i64)blockIdx.x * blockDim.x + threadIdx.x, threads);
  acc = group_sum<true>(acc);
  if (threadIdx.x == 0) part[blockIdx.x] = acc;
}

// Column sums of x (m, n), over rows [p * rows_per_part, (p + 1) * rows_per_part) for
// part p = blockIdx.y. A block is HF_BLAS_LANES columns x (blockDim.x / HF_BLAS_LANES)
// row phases: a row's columns are read by neighbouring threads (coalesced); each thread
// adds its rows in order, then thread row 0 adds the phases in order. With one part it
// writes out[j] = sum + beta * out[j] (beta == 0 never reads out), else part[p, j].
template <class T>
__global__ void fused_column_sums(const T* __restrict__ x, T* out, i64 m, i64 n,
                                  i64 rows_per_part, T beta) {
  __shared__ T phase_sums[HF_MAX_WARPS_PER_BLOCK][HF_BLAS_LANES];
  const int lane = threadIdx.x % HF_BLAS_LANES, phase = threadIdx.x / HF_BLAS_LANES;
  const int phases = blockDim.x / HF_BLAS_LANES;
  const i64 j = (i64)blockIdx.x * HF_BLAS_LANES + lane;
  const i64 r0 = (i64)blockIdx.y * rows_per_part;
  const i64 r1 = r0 + rows_per_part < m ? r0 + rows_per_part : m;
  T acc = T(0);
  if (j < n) {
#pragma unroll 4
    for (i64 i = r0 + phase; i < r1; i += phases) acc += x[i * n + j];
  }
  phase_sums[phase][lane] = acc;
  __syncthreads();
  if (phase == 0 && j < n) {
    for (int p = 1; p < phases; ++p) acc += phase_sums[p][lane];
    if (gridDim.y > 1) out[(i64)blockIdx.y * n + j] = acc;
    else out[j] = beta == T(0) ? acc : acc + beta * out[j];
  }
}

// out[j] = (part[0, j] + part[1, j] + ... + part[parts - 1, j]) + beta * out[j].
template <class T>
__global__ void fused_column_sums_finish(const T* __restrict__ part, T* out, i64 parts, i64 n, T beta) {
  HF_GRID_LOOP(j, n) {
    T s = part[j];
    for (i64 p = 1; p < parts; ++p) s += part[p * n + j];
    out[j] = beta == T(0) ? s : s + beta * out[j];
  }
}

// ---- elementwise ---------------------------------------------------------------------------

// out[i] = x[i] + v[(i / inner) % c]: a row vector (c = n columns, inner = 1) or a channel
// vector of NCHW (inner = H * W). Each thread steps its (position in the plane, channel)
// along with i instead of dividing every time. out may be x.
template <class T>
__global__ void fused_add_vector(const T* x, const T* __restrict__ v, T* out, i64 size, i64 c, i64 inner) {
  const i64 first = (i64)blockIdx.x * blockDim.x + threadIdx.x;
  const i64 stride = (i64)blockDim.x * gridDim.x;
  const i64 d_pos = stride % inner, d_ch = (stride / inner) % c;
  i64 pos = first % inner, ch = (first / inner) % c;
  for (i64 i = first; i < size; i += stride) {
    out[i] = x[i] + v[ch];
    pos += d_pos;
    ch += d_ch;
    if (pos >= inner) { pos -= inner; ch += 1; }
    if (ch >= c) ch -= c;
  }
}

// One Adam step in place (PyTorch's expression order; scalars from
// hipfer.prims.fused_ops.blas.adam_scalars): g = grad (+ weight_decay * param);
// m = beta1 m + (1 - beta1) g; v = beta2 v + (1 - beta2) g g;
// param -= step m / (sqrt(v) / sqrt(bias_correction2) + eps).
template <class T>
__global__ void fused_adam_step(T* param, const T* __restrict__ grad, T* m, T* v, i64 n, T step,
                                T beta1, T one_minus_beta1, T beta2, T one_minus_beta2,
                                T sqrt_bc2, T eps, T weight_decay) {
  HF_GRID_LOOP(i, n) {
    const T p = param[i];
    const T g = weight_decay == T(0) ? grad[i] : grad[i] + weight_decay * p;
    const T mi = beta1 * m[i] + one_minus_beta1 * g;
    const T vi = beta2 * v[i] + one_minus_beta2 * g * g;
    m[i] = mi;
    v[i] = vi;
    param[i] = p - step * mi / (sqrt(vi) / sqrt_bc2 + eps);
  }
}

}  // namespace hf
