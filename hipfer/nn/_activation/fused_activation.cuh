// fused_activation.cuh -- activation fused ops of hipfer.nn (hipfer/prims/fused_ops/activation.py).
//
// Operands are C-contiguous with n elements; an output may alias its input (in place).
// Every kernel walks chunks of V = 16 / sizeof(T) consecutive elements in a grid-stride
// loop, then a scalar tail covers n % V. kAligned (the host checked every pointer) reads
// and writes a chunk as one 16-byte access; otherwise element by element, in the same
// order, so both variants compute the same thing (the mean BCE sums the same way too).
// Formulas are evaluated in the order of the NumPy reference
// (hipfer/backends/numpy/fused_activation.py). Instantiations: fused_activation.py.
#pragma once
#include "common.cuh"
#include "rng.cuh"

namespace hf {

// ---- real math: f32 -> the f-suffixed builtin, f64 -> the plain one ---------------
namespace act_math {
__device__ __forceinline__ f32 exp(f32 x) { return ::expf(x); }
__device__ __forceinline__ f64 exp(f64 x) { return ::exp(x); }
__device__ __forceinline__ f32 tanh(f32 x) { return ::tanhf(x); }
__device__ __forceinline__ f64 tanh(f64 x) { return ::tanh(x); }
__device__ __forceinline__ f32 log1p(f32 x) { return ::log1pf(x); }
__device__ __forceinline__ f64 log1p(f64 x) { return ::log1p(x); }
__device__ __forceinline__ f32 fabs(f32 x) { return ::fabsf(x); }
__device__ __forceinline__ f64 fabs(f64 x) { return ::fabs(x); }
}  // namespace act_math

// Logistic without overflow: exp only ever of -|x|. NaN fails x >= 0 and stays NaN.
template <class T> __device__ __forceinline__ T act_logistic(T x) {
  if (x >= T(0)) return T(1) / (T(1) + act_math::exp(-x));
  const T e = act_math::exp(x);
  return e / (T(1) + e);
}

// ---- forward functors: out = f(x) ---------------------------------------------------
struct act_relu {  // NaN <= 0 is false, so NaN passes; -0.0 gives +0
  template <class T> __device__ __forceinline__ T operator()(T x) const { return x <= T(0) ? T(0) : x; }
};
struct act_tanh {
  template <class T> __device__ __forceinline__ T operator()(T x) const { return act_math::tanh(x); }
};
struct act_sigmoid {
  template <class T> __device__ __forceinline__ T operator()(T x) const { return act_logistic(x); }
};
struct act_silu {  // silu(-inf) = -inf * 0 = NaN
  template <class T> __device__ __forceinline__ T operator()(T x) const { return x * act_logistic(x); }
};
struct act_exp {
  template <class T> __device__ __forceinline__ T operator()(T x) const { return act_math::exp(x); }
};
struct act_neg {
  template <class T> __device__ __forceinline__ T operator()(T x) const { return -x; }
};

// ---- backward functors: grad * f'(.) from g and the saved v (x or y: BACKWARD_ARG) ----
struct act_relu_backward {  // v = x; the gradient passes only where x > 0 (not at 0, not NaN)
  template <class T> __device__ __forceinline__ T operator()(T g, T x) const { return x > T(0) ? g : T(0); }
};
struct act_silu_backward {  // v = x
  template <class T> __device__ __forceinline__ T operator()(T g, T x) const {
    const T s = act_logistic(x);
    return g * (s * (T(1) + x * (T(1) - s)));
  }
};
struct act_tanh_backward {  // v = y = tanh(x)
  template <class T> __device__ __forceinline__ T operator()(T g, T y) const { return g * (T(1) - y * y); }
};
struct act_sigmoid_backward {  // v = y = sigmoid(x)
  template <class T> __device__ __forceinline__ T operator()(T g, T y) const { return g * (y * (T(1) - y)); }
};
struct act_exp_backward {  // v = y = exp(x)
  template <class T> __device__ __forceinline__ T operator()(T g, T y) const { return g * y; }
};

// ---- chunks of V elements -----------------------------------------------------------------

template <bool kAligned, int V, class T>
__device__ __forceinline__ pack<T, V> act_load(const T* p, i64 k) {
  if constexpr (kAligned) {
    return reinterpret_cast<const pack<T, V>*>(p)[k];
  } else {
    pack<T, V> r;
#pragma unroll
    for (int j = 0; j < V; ++j) r.v[j] = p[k * V + j];
    return r;
  }
}
template <bool kAligned, int V, class T>
__device__ __forceinline__ void act_store(T* p, i64 k, const pack<T, V>& r) {
  if constexpr (kAligned) {
    reinterpret_cast<pack<T, V>*>(p)[k] = r;
  } else {
#pragma unroll
    for (int j = 0; j < V; ++j) p[k * V + j] = r.v[j];
  }
}

// The scalar tail: elements n / V * V .. n - 1, one per thread.
#define HF_ACT_TAIL(t, n, V) \
  for (i64 t = (n) / (V) * (V) + (i64)blockIdx.x * blockDim.x + threadIdx.x; t < (n); \
       t += (i64)blockDim.x * gridDim.x)

// ---- activation: out = Op(x); out may be x ------------------------------------------
template <class Op, class T, bool kAligned>
__global__ void fused_act(const T* x, T* out, i64 n) {
  constexpr int V = 16 / sizeof(T);
  HF_GRID_LOOP(k, n / V) {
    pack<T, V> a = act_load<kAligned, V>(x, k);
#pragma unroll
    for (int j = 0; j < V; ++j) a.v[j] = Op()(a.v[j]);
    act_store<kAligned, V>(out, k, a);
  }
  HF_ACT_TAIL(t, n, V) out[t] = Op()(x[t]);
}

// ---- activation backward: out = Op(g, v); out may be g ------------------------------
template <class Op, class T, bool kAligned>
__global__ void fused_act_backward(const T* g, const T* v, T* out, i64 n) {
  constexpr int V = 16 / sizeof(T);
  HF_GRID_LOOP(k, n / V) {
    pack<T, V> a = act_load<kAligned, V>(g, k);
    const pack<T, V> b = act_load<kAligned, V>(v, k);
#pragma unroll
    for (int j = 0; j < V; ++j) a.v[j] = Op()(a.v[j], b.v[j]);
    act_store<kAligned, V>(out, k, a);
  }
  HF_ACT_TAIL(t, n, V) out[t] = Op()(g[t], v[t]);
}

// ---- dropout ---------------------------------------------------------------------------------
// Element i is kept iff rng_uniform32(seed, offset + i) >= thr. The host sets thr to the
// smallest multiple of 2^-24 not below p: uniform32 only takes such values, so this is
// exactly "u >= p" with p in double, in float arithmetic. Dropped elements are 0 by
// selection (an inf or NaN input still gives 0); kept ones x * scale. out may be x.
__device__ __forceinline__ bool dropout_keep(u64 seed, u64 counter, f32 thr) {
  return rng_uniform32(rng_bits(seed, counter)) >= thr;
}

template <class T, bool kAligned>
__global__ void fused_dropout(const T* x, T* out, bool* mask, i64 n, u64 seed, u64 offset,
                              f32 thr, T scale) {
  constexpr int V = 16 / sizeof(T);
  HF_GRID_LOOP(k, n / V) {
    pack<T, V> a = act_load<kAligned, V>(x, k);
    pack<bool, V> m;
#pragma unroll
    for (int j = 0; j < V; ++j) {
      m.v[j] = dropout_keep(seed, offset + (u64)(k * V + j), thr);
      a.v[j] = m.v[j] ? a.v[j] * scale : T(0);
    }
    act_store<kAligned, V>(out, k, a);
    act_store<kAligned, V>(mask, k, m);
  }
  HF_ACT_TAIL(t, n, V) {
    const bool keep = dropout_keep(seed, offset + (u64)t, thr);
    mask[t] = keep;
    out[t] = keep ? x[t] * scale : T(0);
  }
}

// out = mask ? g * scale : 0; out may be g.
template <class T, bool kAligned>
__global__ void fused_dropout_backward(const T* g, const bool* mask, T* out, i64 n, T scale) {
  constexpr int V = 16 / sizeof(T);
  HF_GRID_LOOP(k, n / V) {
    pack<T, V> a = act_load<kAligned, V>(g, k);
    const pack<bool, V> m = act_load<kAligned, V>(mask, k);
#pragma unroll
    for (int j = 0; j < V; ++j) a.v[j] = m.v[j] ? a.v[j] * scale : T(0);
    act_store<kAligned, V>(out, k, a);
  }
  HF_ACT_TAIL(t, n, V) out[t] = mask[t] ? g[t] * scale : T(0);
}

// ---- binary cross-entropy with logits ----------------------------------------------------
// max(x, 0) - x * y + log1p(exp(-|x|)): exp never overflows.
template <class T> __device__ __forceinline__ T bce_loss(T x, T y) {
  return ((x > T(0) ? x : T(0)) - x * y) + act_math::log1p(act_math::exp(-act_math::fabs(x)));
}

template <class T, bool kAligned>
__global__ void fused_bce(const T* x, const T* y, T* out, i64 n) {
  constexpr int V = 16 / sizeof(T);
  HF_GRID_LOOP(k, n / V) {
    pack<T, V> a = act_load<kAligned, V>(x, k);
    const pack<T, V> b = act_load<kAligned, V>(y, k);
#pragma unroll
    for (int j = 0; j < V; ++j) a.v[j] = bce_loss(a.v[j], b.v[j]);
    act_store<kAligned, V>(out, k, a);
  }
  HF_ACT_TAIL(t, n, V) out[t] = bce_loss(x[t], y[t]);
}

// Sum of one value per thread, in a fixed order (shuffle tree in each warp, then warp 0
// folds the warps' sums); thread 0 gets it. blockDim.x is a multiple of 64, so warps
// are whole for warp sizes 32 and 64. No atomics: the result repeats bit for bit.
template <class T> __device__ T act_block_sum(T v) {
  __shared__ T partial[HF_MAX_WARPS_PER_BLOCK];
  const int ws = warpSize;
  for (int o = ws >> 1; o > 0; o >>= 1) v += HF_SHFL_DOWN(v, o);
  const int n_warps = blockDim.x / ws, lane = threadIdx.x % ws, warp = threadIdx.x / ws;
  if (n_warps == 1) return v;
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < n_warps ? partial[lane] : T(0);
    for (int o = ws >> 1; o > 0; o >>= 1) v += HF_SHFL_DOWN(v, o);
  }
  return v;
}

// Mean loss, pass 1: block b writes the sum over its grid-stride share of chunks to
// part[b]. The host fixes the grid from n alone, so the order does not depend on the
// device or on alignment.
template <class T, bool kAligned>
__global__ void fused_bce_mean_partial(const T* x, const T* y, T* part, i64 n) {
  constexpr int V = 16 / sizeof(T);
  T s = T(0);
  HF_GRID_LOOP(k, n / V) {
    const pack<T, V> a = act_load<kAligned, V>(x, k), b = act_load<kAligned, V>(y, k);
#pragma unroll
    for (int j = 0; j < V; ++j) s += bce_loss(a.v[j], b.v[j]);
  }
  HF_ACT_TAIL(t, n, V) s += bce_loss(x[t], y[t]);
  s = act_block_sum(s);
  if (threadIdx.x == 0) part[blockIdx.x] = s;
}

// Pass 2, one block: the parts in order, divided by n (n > 0).
template <class T>
__global__ void fused_bce_mean_final(const T* part, i64 n_part, T* out, i64 n) {
  T s = T(0);
  for (i64 i = threadIdx.x; i < n_part; i += blockDim.x) s += part[i];
  s = act_block_sum(s);
  if (threadIdx.x == 0) out[0] = s / (T)n;
}

// d loss / d x = g * (sigmoid(x) - y); out may be g. kMean: g is the 0-d gradient of the
// mean, divided by n once (as the reference does).
template <class T, bool kAligned, bool kMean>
__global__ void fused_bce_backward(const T* g, const T* x, const T* y, T* out, i64 n) {
  constexpr int V = 16 / sizeof(T);
  const T g_mean = kMean ? g[0] / (T)n : T(0);
  HF_GRID_LOOP(k, n / V) {
    pack<T, V> a = act_load<kAligned, V>(x, k);
    const pack<T, V> b = act_load<kAligned, V>(y, k);
    pack<T, V> c;
    if constexpr (!kMean) c = act_load<kAligned, V>(g, k);
#pragma unroll
    for (int j = 0; j < V; ++j) a.v[j] = (kMean ? g_mean : c.v[j]) * (act_logistic(a.v[j]) - b.v[j]);
    act_store<kAligned, V>(out, k, a);
  }
  HF_ACT_TAIL(t, n, V) out[t] = (kMean ? g_mean : g[t]) * (act_logistic(x[t]) - y[t]);
}

}  // namespace hf
