// fused_logic.cuh -- soft logic, power-mean aggregator and RL row ops of hipfer.nn
// (hipfer/prims/fused_ops/logic.py; layouts and formulas in docs/nn_logic.md).
// Operands are C-contiguous. The NumPy reference (hipfer/backends/numpy/fused_logic.py)
// follows the same order of operations.
//
// Ops over k stacked operands, x (k, n): thread j owns column j and walks the k operands
// in order (neighbouring threads read neighbouring addresses: coalesced), so every sum
// and product has the operand order, whatever the GPU.
// Row ops (N rows of A values): a group of G = 2^group_log2 <= 32 consecutive lanes owns a
// row; lane l takes columns l, l + G, ... in order, then an XOR butterfly over the group
// combines the lanes (every lane ends with the same bits). G depends only on the row
// length (hipfer/backends/cupy/fused_logic.py), never on the warp size: results repeat
// bit for bit. No atomics except the error flag.
#pragma once
#include "common.cuh"

#define HF_LOGIC_LOG2 0.6931471805599453094
#define HF_LOGIC_HALF_LOG_2PI 0.9189385332046727418
// -inf as a float (no INFINITY macro under NVRTC/hiprtc); exact as a double too
#define HF_LOGIC_NEG_INF (-__int_as_float(0x7f800000))
// product backward: up to this many operands stay in registers (one pass over memory)
#define HF_LOGIC_REG_K 8

namespace hf {

// t-norm families (hipfer.prims.fused_ops.logic.NORMS order)
enum { LOGIC_PRODUCT = 0, LOGIC_LUKASIEWICZ = 1, LOGIC_MINMAX = 2 };
// power-mean modes (hipfer.prims.fused_ops.logic.p_mode)
enum { PMEAN_POWER = 0, PMEAN_GEOMETRIC = 1, PMEAN_MAX = 2, PMEAN_MIN = 3 };

// The device error flag: 1 + the first bad position met (atomicCAS from 0).
__device__ __forceinline__ void lg_report(i64* err, i64 pos) {
  atomicCAS(reinterpret_cast<unsigned long long*>(err), 0ull, (unsigned long long)(pos + 1));
}

// z + eps * sign(z), sign(0) = +1: the epsilon rule's denominator.
template <class T> __device__ __forceinline__ T lg_stab(T z, T eps) { return z + (z >= T(0) ? eps : -eps); }

// Index of the first largest (LARGEST) or smallest of x[0], x[n], ... x[(k-1) n].
template <bool LARGEST, class T>
__device__ __forceinline__ i64 lg_first_extreme(const T* x, i64 k, i64 n) {
  T best = x[0];
  i64 at = 0;
  for (i64 i = 1; i < k; ++i) {
    const T v = x[i * n];
    if (LARGEST ? v > best : v < best) { best = v; at = i; }
  }
  return at;
}

// ---- logic_pointwise: soft AND / OR over k operands ------------------------------------
// product:     AND = x0 x1 ... ; OR = 1 - (1 - x0)(1 - x1)...
// lukasiewicz: AND = max(0, sum - (k - 1)); OR = min(1, sum)
// minmax:      AND = min; OR = max

// The factor of operand v in the product t-norm: v for AND, 1 - v for OR.
template <bool OR, class T> __device__ __forceinline__ T lg_factor(T v) { return OR ? T(1) - v : v; }

template <class T, int NORM, bool OR>
__global__ void fused_logic_pointwise(const T* __restrict__ x, T* __restrict__ y, i64 k, i64 n) {
  HF_GRID_LOOP(j, n) {
    const T* xj = x + j;
    T r;
    if (NORM == LOGIC_PRODUCT) {
      T p = lg_factor<OR>(xj[0]);
      for (i64 i = 1; i < k; ++i) p *= lg_factor<OR>(xj[i * n]);
      r = OR ? T(1) - p : p;
    } else if (NORM == LOGIC_LUKASIEWICZ) {
      T s = xj[0];
      for (i64 i = 1; i < k; ++i) s += xj[i * n];
      r = OR ? (s < T(1) ? s : T(1)) : (s - (T(k) - T(1)) > T(0) ? s - (T(k) - T(1)) : T(0));
    } else {
      r = xj[lg_first_extreme<OR>(xj, k, n) * n];
    }
    y[j] = r;
  }
}

// gx[i] = g * d(AND/OR)/dx_i. product: g * (prefix_i * suffix_i), the exclusive products
// of the other factors (no division: zeros are fine); the prefixes are parked in gx.
// lukasiewicz: g where the clamp is inactive, else 0. minmax: g to the first min/max.
template <class T, int NORM, bool OR>
__global__ void fused_logic_pointwise_backward(const T* __restrict__ x, const T* __restrict__ g,
                                               T* __restrict__ gx, i64 k, i64 n) {
  HF_GRID_LOOP(j, n) {
    const T* xj = x + j;
    T* gj = gx + j;
    const T gv = g[j];
    if (NORM == LOGIC_PRODUCT && k <= HF_LOGIC_REG_K) {  // factors in registers: one pass
      T f[HF_LOGIC_REG_K], prefix[HF_LOGIC_REG_K];
      T p = T(1);
#pragma unroll
      for (int i = 0; i < HF_LOGIC_REG_K; ++i) {
        f[i] = i < k ? lg_factor<OR>(xj[i * n]) : T(1);  // padding with 1 is exact
        prefix[i] = p;
        p *= f[i];
      }
      T s = T(1);
#pragma unroll
      for (int i = HF_LOGIC_REG_K - 1; i >= 0; --i) {
        if (i < k) gj[i * n] = gv * (prefix[i] * s);
        s *= f[i];
      }
    } else if (NORM == LOGIC_PRODUCT) {  // many factors: the prefixes parked in gx
      T p = T(1);
      for (i64 i = 0; i < k; ++i) { gj[i * n] = p; p *= lg_factor<OR>(xj[i * n]); }
      T s = T(1);
      for (i64 i = k - 1; i >= 0; --i) {
        gj[i * n] = gv * (gj[i * n] * s);
        s *= lg_factor<OR>(xj[i * n]);
      }
    } else if (NORM == LOGIC_LUKASIEWICZ) {
      T s = xj[0];
      for (i64 i = 1; i < k; ++i) s += xj[i * n];
      const bool active = OR ? s < T(1) : s - (T(k) - T(1)) > T(0);
      for (i64 i = 0; i < k; ++i) gj[i * n] = active ? gv : T(0);
    } else {
      const i64 at = lg_first_extreme<OR>(xj, k, n);
      for (i64 i = 0; i < k; ++i) gj[i * n] = i == at ? gv : T(0);
    }
  }
}

// The contribution z_i of operand v to the LRP pass's linear form: product: log v for AND,
// log(1 - v) for OR (log y = sum z_i), clamped at log_tiny (log 0 = -inf); lukasiewicz: v.
template <class T, int NORM, bool OR>
__device__ __forceinline__ T lg_contribution(T v, T log_tiny) {
  if (NORM != LOGIC_PRODUCT) return v;
  const T z = OR ? log1p(-v) : log(v);
  return z < log_tiny ? log_tiny : z;  // NaN stays NaN
}

// rx[i] = z_i * (r / stab(sum_i z_i)) (epsilon rule), minmax: r to the first min/max.
template <class T, int NORM, bool OR>
__global__ void fused_logic_pointwise_lrp(const T* __restrict__ x, const T* __restrict__ r,
                                          T* __restrict__ rx, i64 k, i64 n, T eps, T log_tiny) {
  HF_GRID_LOOP(j, n) {
    const T* xj = x + j;
    T* rj = rx + j;
    if (NORM == LOGIC_MINMAX) {
      const i64 at = lg_first_extreme<OR>(xj, k, n);
      for (i64 i = 0; i < k; ++i) rj[i * n] = i == at ? r[j] : T(0);
    } else {
      T s = lg_contribution<T, NORM, OR>(xj[0], log_tiny);
      for (i64 i = 1; i < k; ++i) s += lg_contribution<T, NORM, OR>(xj[i * n], log_tiny);
      const T q = r[j] / lg_stab(s, eps);
      for (i64 i = 0; i < k; ++i) rj[i * n] = lg_contribution<T, NORM, OR>(xj[i * n], log_tiny) * q;
    }
  }
}

// ---- aggregator: the power mean over k operands ----------------------------------------
// The scale of a power mean's terms: the max for p > 0, the min for p < 0, so that every
// (x / m)^p lies in (0, 1] and their sum in (0, k]: no overflow for any p.
template <class T>
__device__ __forceinline__ T lg_scale(const T* xj, i64 k, i64 n, T p) {
  return xj[(p >= T(0) ? lg_first_extreme<true>(xj, k, n) : lg_first_extreme<false>(xj, k, n)) * n];
}

// M = m * (sum_i (x_i / m)^p / k)^(1/p); geometric: exp(sum_i log x_i / k); max; min.
template <class T>
__device__ __forceinline__ T lg_power_mean(const T* xj, i64 k, i64 n, T p, int mode) {
  if (mode == PMEAN_MAX) return xj[lg_first_extreme<true>(xj, k, n) * n];
  if (mode == PMEAN_MIN) return xj[lg_first_extreme<false>(xj, k, n) * n];
  if (mode == PMEAN_GEOMETRIC) {
    T s = log(xj[0]);
    for (i64 i = 1; i < k; ++i) s += log(xj[i * n]);
    return exp(s / T(k));
  }
  const T m = lg_scale(xj, k, n, p);
  T s = pow(xj[0] / m, p);
  for (i64 i = 1; i < k; ++i) s += pow(xj[i * n] / m, p);
  return m * pow(s / T(k), T(1) / p);
}

template <class T>
__global__ void fused_aggregator(const T* __restrict__ x, T* __restrict__ y, i64 k, i64 n, T p, int mode) {
  HF_GRID_LOOP(j, n) y[j] = lg_power_mean(x + j, k, n, p, mode);
}

// gx[i] = g * ((x_i / M)^(p - 1) / k) (p = 0 included: M / (k x_i)); max/min: g to the
// first max/min.
template <class T>
__global__ void fused_aggregator_backward(const T* __restrict__ x, const T* __restrict__ g,
                                          T* __restrict__ gx, i64 k, i64 n, T p, int mode) {
  HF_GRID_LOOP(j, n) {
    const T* xj = x + j;
    T* gj = gx + j;
    if (mode == PMEAN_MAX || mode == PMEAN_MIN) {
      const i64 at = mode == PMEAN_MAX ? lg_first_extreme<true>(xj, k, n) : lg_first_extreme<false>(xj, k, n);
      for (i64 i = 0; i < k; ++i) gj[i * n] = i == at ? g[j] : T(0);
    } else {
      const T M = lg_power_mean(xj, k, n, p, mode);
      for (i64 i = 0; i < k; ++i) gj[i * n] = g[j] * (pow(xj[i * n] / M, p - T(1)) / T(k));
    }
  }
}

// rx[i] = w_i * (r / sum_i w_i), w_i = (x_i / m)^p (p = 0: w_i = 1, equal shares);
// max/min: r to the first max/min (winner-take-all).
template <class T>
__global__ void fused_aggregator_lrp(const T* __restrict__ x, const T* __restrict__ r,
                                     T* __restrict__ rx, i64 k, i64 n, T p, int mode) {
  HF_GRID_LOOP(j, n) {
    const T* xj = x + j;
    T* rj = rx + j;
    if (mode == PMEAN_MAX || mode == PMEAN_MIN) {
      const i64 at = mode == PMEAN_MAX ? lg_first_extreme<true>(xj, k, n) : lg_first_extreme<false>(xj, k, n);
      for (i64 i = 0; i < k; ++i) rj[i * n] = i == at ? r[j] : T(0);
    } else {
      const T m = lg_scale(xj, k, n, p);
      T s = pow(xj[0] / m, p);
      for (i64 i = 1; i < k; ++i) s += pow(xj[i * n] / m, p);
      const T q = r[j] / s;
      for (i64 i = 0; i < k; ++i) rj[i * n] = pow(xj[i * n] / m, p) * q;
    }
  }
}

// ---- row groups ------------------------------------------------------------------------
// Rows are grid-strided over groups of G lanes; every lane of a block runs the same number
// of iterations (the row count rounded up), since the butterflies need the whole warp.
struct RowGroups {
  i64 first, stride, end;
  int lane, G;
};

__device__ __forceinline__ RowGroups lg_row_groups(i64 rows, int group_log2) {
  RowGroups rg;
  rg.G = 1 << group_log2;
  const i64 per_block = blockDim.x >> group_log2;
  rg.stride = (i64)gridDim.x * per_block;
  rg.first = (i64)blockIdx.x * per_block + (threadIdx.x >> group_log2);
  rg.end = (rows + rg.stride - 1) / rg.stride * rg.stride;
  rg.lane = threadIdx.x & (rg.G - 1);
  return rg;
}

template <class T> __device__ __forceinline__ T lg_group_sum(T v, int G) {
  for (int m = G >> 1; m > 0; m >>= 1) v += HF_SHFL_XOR(v, m);
  return v;
}

// Max over the group; a NaN wins (as np.max).
template <class T> __device__ __forceinline__ T lg_group_max(T v, int G) {
  for (int m = G >> 1; m > 0; m >>= 1) {
    const T o = HF_SHFL_XOR(v, m);
    v = (o > v || o != o) ? o : v;
  }
  return v;
}

template <class T> __device__ __forceinline__ T lg_softplus(T z) {
  return (z > T(0) ? z : T(0)) + log1p(exp(-fabs(z)));
}

// log(1 - tanh(u)^2) = 2 (log 2 - u - softplus(-2u)): no cancellation for large |u|.
template <class T> __device__ __forceinline__ T lg_log_sech2(T u) {
  return T(2) * (T(HF_LOGIC_LOG2) - u - lg_softplus(T(-2) * u));
}

// ---- tanh_gaussian -------------------------------------------------------------------------
// u = mean + exp(log_std) eps, action = tanh(u), log_prob[n] = sum_d (-0.5 eps^2 - log_std
// - 0.5 log(2 pi) - log(1 - tanh(u)^2)), the terms in T, their sum in double.
template <class T>
__global__ void fused_tanh_gaussian(const T* __restrict__ mean, const T* __restrict__ log_std,
                                    const T* __restrict__ eps, T* __restrict__ action,
                                    T* __restrict__ log_prob, i64 rows, i64 d, int group_log2) {
  const RowGroups rg = lg_row_groups(rows, group_log2);
  for (i64 r = rg.first; r < rg.end; r += rg.stride) {
    double s = 0.0;
    if (r < rows) {
      for (i64 c = rg.lane; c < d; c += rg.G) {
        const i64 i = r * d + c;
        const T e = eps[i], ls = log_std[i];
        const T u = mean[i] + exp(ls) * e;
        action[i] = tanh(u);
        s += (double)(((T(-0.5) * e) * e - ls) - T(HF_LOGIC_HALF_LOG_2PI) - lg_log_sech2(u));
      }
    }
    s = lg_group_sum(s, rg.G);
    if (r < rows && rg.lane == 0) log_prob[r] = (T)s;
  }
}

// g_u = g_action (1 - tanh(u)^2) + g_log_prob * 2 tanh(u) (d/du of -log(1 - tanh^2 u)),
// g_mean = g_u, g_log_std = g_u * exp(log_std) eps - g_log_prob.
template <class T>
__global__ void fused_tanh_gaussian_backward(const T* __restrict__ mean, const T* __restrict__ log_std,
                                             const T* __restrict__ eps, const T* __restrict__ g_action,
                                             const T* __restrict__ g_log_prob, T* __restrict__ g_mean,
                                             T* __restrict__ g_log_std, i64 size, i64 d) {
  HF_GRID_LOOP(i, size) {
    const T se = exp(log_std[i]) * eps[i];
    const T u = mean[i] + se;
    const T gl = g_log_prob[i / d];
    const T gu = g_action[i] * exp(lg_log_sech2(u)) + gl * (T(2) * tanh(u));
    g_mean[i] = gu;
    g_log_std[i] = gu * se - gl;
  }
}

// ---- policy_gradient ---------------------------------------------------------------------
// The row's log-softmax pieces: lse = max + log(sum exp(z - max)) and, when entropy_coef
// != 0, the entropy h = -sum p_j log p_j (0 otherwise). Every lane of the group gets both.
template <class T>
__device__ __forceinline__ void lg_softmax_row(const T* z, i64 a, int lane, int G, bool live,
                                               bool entropy, T& lse, T& h) {
  T m = T(HF_LOGIC_NEG_INF);
  if (live) for (i64 c = lane; c < a; c += G) m = (z[c] > m || z[c] != z[c]) ? z[c] : m;
  m = lg_group_max(m, G);
  T s = T(0);
  if (live) for (i64 c = lane; c < a; c += G) s += exp(z[c] - m);
  lse = m + log(lg_group_sum(s, G));
  h = T(0);
  if (entropy) {
    if (live) {
      for (i64 c = lane; c < a; c += G) {
        const T lp = z[c] - lse;
        h += exp(lp) * lp;
      }
    }
    h = -lg_group_sum(h, G);
  }
}

// loss[n] = -advantage[n] * (z[action] - lse) - entropy_coef * h.
template <class T>
__global__ void fused_policy_gradient(const T* __restrict__ logits, const i64* __restrict__ action,
                                      const T* __restrict__ advantage, T* __restrict__ loss, i64 rows,
                                      i64 a, T entropy_coef, int group_log2, i64* err) {
  const RowGroups rg = lg_row_groups(rows, group_log2);
  for (i64 r = rg.first; r < rg.end; r += rg.stride) {
    const i64 act = r < rows ? action[r] : 0;
    const bool live = r < rows && act >= 0 && act < a;  // uniform over the group
    if (r < rows && !live && rg.lane == 0) lg_report(err, r);
    const T* z = logits + (live ? r : 0) * a;
    T lse, h;
    lg_softmax_row(z, a, rg.lane, rg.G, live, entropy_coef != T(0), lse, h);
    if (live && rg.lane == 0) {
      T l = -advantage[r] * (z[act] - lse);
      if (entropy_coef != T(0)) l = l - entropy_coef * h;
      loss[r] = l;
    }
  }
}

// g_logits[n, j] = grad[n] * (p_j (adv + entropy_coef (log p_j + h)) - [j == action] adv)
// (without the entropy term when entropy_coef == 0).
template <class T>
__global__ void fused_policy_gradient_backward(const T* __restrict__ logits, const i64* __restrict__ action,
                                               const T* __restrict__ advantage, const T* __restrict__ grad,
                                               T* __restrict__ g_logits, i64 rows, i64 a, T entropy_coef,
                                               int group_log2, i64* err) {
  const RowGroups rg = lg_row_groups(rows, group_log2);
  const bool entropy = entropy_coef != T(0);
  for (i64 r = rg.first; r < rg.end; r += rg.stride) {
    const i64 act = r < rows ? action[r] : 0;
    const bool live = r < rows && act >= 0 && act < a;
    if (r < rows && !live && rg.lane == 0) lg_report(err, r);
    const T* z = logits + (live ? r : 0) * a;
    T lse, h;
    lg_softmax_row(z, a, rg.lane, rg.G, live, entropy, lse, h);
    if (!live) continue;  // no shuffles below
    const T adv = advantage[r], g = grad[r];
    for (i64 c = rg.lane; c < a; c += rg.G) {
      const T lp = z[c] - lse, p = exp(lp);
      T dz = entropy ? p * (adv + entropy_coef * (lp + h)) : p * adv;
      if (c == act) dz -= adv;
      g_logits[r * a + c] = g * dz;
    }
  }
}

// ---- td_target -------------------------------------------------------------------------
// target[n] = reward + c * max_j next[n, j] with c = gamma (1 - done); c == 0 (terminal)
// never uses next, so garbage there does not leak. TD(0) is a row of a = 1 values.
template <class T, class M>
__global__ void fused_td_target(const T* __restrict__ reward, const M* __restrict__ done,
                                const T* __restrict__ next, T* __restrict__ target, i64 rows, i64 a,
                                T gamma, int group_log2) {
  const RowGroups rg = lg_row_groups(rows, group_log2);
  for (i64 r = rg.first; r < rg.end; r += rg.stride) {
    const bool live = r < rows;
    T v = T(HF_LOGIC_NEG_INF);
    if (live) {
      for (i64 c = rg.lane; c < a; c += rg.G) {
        const T q = next[r * a + c];
        v = (q > v || q != q) ? q : v;
      }
    }
    v = lg_group_max(v, rg.G);
    if (live && rg.lane == 0) {
      const T c = gamma * (T(1) - (T)done[r]);
      target[r] = c == T(0) ? reward[r] : reward[r] + c * v;
    }
  }
}

}  // namespace hf
