// fused_lrp.cuh -- epsilon-rule LRP passes of hipfer.nn (hipfer/prims/fused_ops/lrp.py,
// docs/nn_lrp.md). Operands are C-contiguous, outputs fresh.
//
// Every relevance is contribution * (r / stab(z)) with stab(z) = z + eps*sign(z),
// sign(0) = +1, in the NumPy reference's order. The only sums (softmax rows, pool
// windows) have a fixed order that depends on the shapes alone: no atomics, results
// repeat bit for bit. The GEMMs of lrp_linear / lrp_conv / lrp_bilinear_matmul are
// hipBLAS/cuBLAS calls between the elementwise kernels here.
#pragma once
#include "common.cuh"
// fused_blas.cuh: group_sum and HF_BLAS_LANES, the fixed-order row sum
#include "fused_blas.cuh"

namespace hf {

template <class T>
__device__ __forceinline__ T lrp_stab(T z, T eps) { return z >= T(0) ? z + eps : z - eps; }

// Gates of lrp_stabilized_divide (hipfer.prims.fused_ops.lrp.GATES, in order).
#define HF_LRP_GATE_NONE 0
#define HF_LRP_GATE_POSITIVE 1
#define HF_LRP_GATE_NEGATIVE 2

// out = r / (scale * stab(den)) where GATE passes, else 0. scale is 1 (lrp_linear,
// lrp_conv, lrp_stabilized_divide) or 2 (the half-half bilinear rule).
template <class T, int GATE>
__global__ void fused_lrp_divide(const T* __restrict__ r, const T* __restrict__ den, T* __restrict__ out,
                                 i64 n, T eps, T scale) {
  HF_GRID_LOOP(i, n) {
    const T d = den[i];
    const bool pass = GATE == HF_LRP_GATE_NONE || (GATE == HF_LRP_GATE_POSITIVE ? d > T(0) : d < T(0));
    out[i] = pass ? r[i] / (scale * lrp_stab(d, eps)) : T(0);
  }
}

// out = x * g (the contributions times the back-projected quotients); out may be g
// (the GEMM writes g into the output buffer), so neither is __restrict__.
template <class T>
__global__ void fused_lrp_mul(const T* __restrict__ x, const T* g, T* out, i64 n) {
  HF_GRID_LOOP(i, n) { out[i] = x[i] * g[i]; }
}

// y = a + b: s = r / stab(y), r_a = a * s, r_b = b * s.
template <class T>
__global__ void fused_lrp_residual_split(const T* __restrict__ a, const T* __restrict__ b,
                                         const T* __restrict__ r, T* __restrict__ ra,
                                         T* __restrict__ rb, i64 n, T eps) {
  HF_GRID_LOOP(i, n) {
    const T av = a[i], bv = b[i];
    const T s = r[i] / lrp_stab(av + bv, eps);
    ra[i] = av * s;
    rb[i] = bv * s;
  }
}

// c = a * b: out = c * (r / (2c + eps*sign(c))).
template <class T>
__global__ void fused_lrp_bilinear_elementwise(const T* __restrict__ a, const T* __restrict__ b,
                                               const T* __restrict__ r, T* __restrict__ out,
                                               i64 n, T eps) {
  HF_GRID_LOOP(i, n) {
    const T c = a[i] * b[i];
    out[i] = c * (r[i] / (c >= T(0) ? T(2) * c + eps : T(2) * c - eps));
  }
}

// out = x * (r - y * sum(r)) per row of n values. A group of threads per row:
// HF_BLAS_LANES lanes for short rows, the whole block for long ones (WHOLE_BLOCK);
// lane t adds r[t], r[t + lanes], ... in order, then group_sum's fixed tree.
template <class T, bool WHOLE_BLOCK>
__global__ void fused_lrp_softmax_rows(const T* __restrict__ x, const T* __restrict__ y,
                                       const T* __restrict__ r, T* __restrict__ out, i64 rows, i64 n) {
  __shared__ T row_sum;
  const int lanes = WHOLE_BLOCK ? (int)blockDim.x : HF_BLAS_LANES;
  const int t = threadIdx.x % lanes;
  const i64 per_block = blockDim.x / lanes, groups = (i64)gridDim.x * per_block;
  const i64 first = (i64)blockIdx.x * per_block + threadIdx.x / lanes;
  // a whole block runs the same iterations (group_sum synchronises it)
  const i64 iters = WHOLE_BLOCK ? (rows + groups - 1) / groups * groups : rows;
  for (i64 i = first; i < iters; i += groups) {
    const bool live = i < rows;
    const T* ri = r + i * n;
    T s = T(0);
    if (live) {
      for (i64 j = t; j < n; j += lanes) s += ri[j];
    }
    s = group_sum<WHOLE_BLOCK>(s);  // lanes mode: every lane holds the sum
    if (WHOLE_BLOCK) {
      if (threadIdx.x == 0) row_sum = s;
      __syncthreads();
      s = row_sum;
      __syncthreads();  // everyone has read it before the next row's write
    }
    if (live) {
      for (i64 j = t; j < n; j += lanes) out[i * n + j] = x[i * n + j] * (ri[j] - y[i * n + j] * s);
    }
  }
}

// Rotary embedding pairs (hipfer.nn.rope's layout): x (planes, L, D), cos/sin (L, D/2),
// pair p = (plane, l, k) holds x[2k], x[2k + 1] of row l. With out0 = x0 c - x1 s,
// out1 = x0 s + x1 c, q = r / stab(out): r_in0 = x0 (c q0 + s q1), r_in1 = x1 (c q1 - s q0).
template <class T>
__global__ void fused_lrp_rope(const T* __restrict__ x, const T* __restrict__ cos_t,
                               const T* __restrict__ sin_t, const T* __restrict__ r,
                               T* __restrict__ out, i64 pairs, i64 length, i64 half, T eps) {
  HF_GRID_LOOP(p, pairs) {
    const i64 k = p % half, l = (p / half) % length;
    const T c = cos_t[l * half + k], s = sin_t[l * half + k];
    const T x0 = x[2 * p], x1 = x[2 * p + 1];
    const T q0 = r[2 * p] / lrp_stab(x0 * c - x1 * s, eps);
    const T q1 = r[2 * p + 1] / lrp_stab(x0 * s + x1 * c, eps);
    out[2 * p] = x0 * (c * q0 + s * q1);
    out[2 * p + 1] = x1 * (c * q1 - s * q0);
  }
}

// Pool geometry (no dilation): input planes h x w, output planes oh x ow.
struct lrp_pool_geom {
  i64 h, w, oh, ow;
  i32 kh, kw, sh, sw, ph, pw;
};

// lrp_avg_pool, stage 1: share[plane, oy, ox] = r / stab(window sum of x), the window
// summed in tap order (i, then j); padding taps add nothing.
template <class T>
__global__ void fused_lrp_pool_share(const T* __restrict__ x, const T* __restrict__ r,
                                     T* __restrict__ share, i64 planes, lrp_pool_geom g, T eps) {
  HF_GRID_LOOP(q, planes * g.oh * g.ow) {
    const i64 ox = q % g.ow, oy = (q / g.ow) % g.oh, plane = q / (g.ow * g.oh);
    const T* xp = x + plane * g.h * g.w;
    T total = T(0);
    for (int i = 0; i < g.kh; ++i) {
      const i64 iy = oy * g.sh - g.ph + i;
      if (iy < 0 || iy >= g.h) continue;
      for (int j = 0; j < g.kw; ++j) {
        const i64 ix = ox * g.sw - g.pw + j;
        if (ix >= 0 && ix < g.w) total += xp[iy * g.w + ix];
      }
    }
    share[q] = r[q] / lrp_stab(total, eps);
  }
}

// lrp_avg_pool, stage 2: out[plane, iy, ix] = x * (sum of the shares of the windows
// holding it), gathered in tap order (i, then j), as the reference scatters them.
template <class T>
__global__ void fused_lrp_pool_gather(const T* __restrict__ x, const T* __restrict__ share,
                                      T* __restrict__ out, i64 planes, lrp_pool_geom g) {
  HF_GRID_LOOP(q, planes * g.h * g.w) {
    const i64 ix = q % g.w, iy = (q / g.w) % g.h, plane = q / (g.w * g.h);
    const T* sp = share + plane * g.oh * g.ow;
    T acc = T(0);
    for (int i = 0; i < g.kh; ++i) {
      const i64 ny = iy + g.ph - i;  // oy * sh for tap i
      if (ny < 0 || ny % g.sh) continue;
      const i64 oy = ny / g.sh;
      if (oy >= g.oh) continue;
      for (int j = 0; j < g.kw; ++j) {
        const i64 nx = ix + g.pw - j;
        if (nx < 0 || nx % g.sw) continue;
        const i64 ox = nx / g.sw;
        if (ox < g.ow) acc += sp[oy * g.ow + ox];
      }
    }
    out[q] = x[q] * acc;
  }
}

}  // namespace hf
