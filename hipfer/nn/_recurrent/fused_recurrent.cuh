// fused_recurrent.cuh -- recurrent ops of hipfer.nn (hipfer/prims/fused_ops/recurrent.py,
// layouts and formulas in docs/nn_recurrent.md). Operands are C-contiguous.
//
// Cells are elementwise over (N, H). Scans give one thread to each independent lane (a
// (batch, channel) pair) and loop over time, and over the state inside a step, in
// order: every sum has one owner and a fixed order, no atomics, results repeat bit for
// bit. A lane's state lives in registers when it is short (template R, see lane_state),
// else in a global scratch laid out (state index, lane), so that neighbouring threads
// touch neighbouring addresses. Sums across lanes (over batch or
// channels) are left to the fixed-order row/column sums of fused_blas.
#pragma once
#include "common.cuh"

namespace hf {
// Named apart from the math library's overloads, so no call can be ambiguous.
__device__ __forceinline__ f32 rec_exp(f32 x) { return ::expf(x); }
__device__ __forceinline__ f64 rec_exp(f64 x) { return ::exp(x); }
__device__ __forceinline__ f32 rec_tanh(f32 x) { return ::tanhf(x); }
__device__ __forceinline__ f64 rec_tanh(f64 x) { return ::tanh(x); }
// 1 / (1 + exp(-x)), as the NumPy reference: exp overflowing to inf gives 0.
template <class T> __device__ __forceinline__ T rec_sigmoid(T x) { return T(1) / (T(1) + rec_exp(-x)); }
template <class T> __device__ __forceinline__ T rec_max(T a, T b) { return a > b ? a : b; }

// A lane's state vector of n values. R > 0: in registers (n <= R), and every loop over
// it runs R times unrolled (HF_REC_FOR), so each index is a constant and no array goes
// to memory. R == 0: in the global scratch at mem[i * stride] (stride = lanes), for any n.
template <class T, int R>
struct lane_state {
  T reg[R > 0 ? R : 1];
  T* mem;
  i64 stride;
  __device__ __forceinline__ lane_state(T* scratch, i64 lane, i64 lanes) : mem(scratch + lane), stride(lanes) {}
  __device__ __forceinline__ T& operator[](i64 i) { return R > 0 ? reg[i] : mem[i * stride]; }
};
// for (i = 0; i < n; ++i) over a lane_state<T, R>.
#define HF_REC_FOR(i, R, n) \
  _Pragma("unroll") for (i64 i = 0; i < ((R) > 0 ? (i64)(R) : (n)); ++i) if ((R) == 0 || i < (n))

// ---- cells: element e = (row r, unit j) of (N, H); gate k of row r at r * kH + k H + j --

// acts = (sigmoid(i), sigmoid(f), tanh(g), sigmoid(o)); c = f c_prev + i g; h = o tanh(c).
template <class T>
__global__ void fused_lstm_cell(const T* __restrict__ gates, const T* __restrict__ c_prev,
                                T* __restrict__ h, T* __restrict__ c, T* __restrict__ acts,
                                i64 n, i64 hid) {
  HF_GRID_LOOP(e, n * hid) {
    const i64 r = e / hid, at = r * 4 * hid + (e - r * hid);
    const T i = rec_sigmoid(gates[at]), f = rec_sigmoid(gates[at + hid]);
    const T g = rec_tanh(gates[at + 2 * hid]), o = rec_sigmoid(gates[at + 3 * hid]);
    acts[at] = i;
    acts[at + hid] = f;
    acts[at + 2 * hid] = g;
    acts[at + 3 * hid] = o;
    const T cc = f * c_prev[e] + i * g;
    c[e] = cc;
    h[e] = o * rec_tanh(cc);
  }
}

// c is recomputed from acts and c_prev (the forward's expression: the same bits).
template <class T>
__global__ void fused_lstm_cell_backward(const T* __restrict__ acts, const T* __restrict__ c_prev,
                                         const T* __restrict__ dh, const T* __restrict__ dc,
                                         T* __restrict__ dgates, T* __restrict__ dc_prev,
                                         i64 n, i64 hid) {
  HF_GRID_LOOP(e, n * hid) {
    const i64 r = e / hid, at = r * 4 * hid + (e - r * hid);
    const T i = acts[at], f = acts[at + hid], g = acts[at + 2 * hid], o = acts[at + 3 * hid];
    const T cp = c_prev[e], dhe = dh[e];
    const T tc = rec_tanh(f * cp + i * g);
    const T dct = dc[e] + dhe * o * (T(1) - tc * tc);
    dgates[at] = dct * g * i * (T(1) - i);
    dgates[at + hid] = dct * cp * f * (T(1) - f);
    dgates[at + 2 * hid] = dct * i * (T(1) - g * g);
    dgates[at + 3 * hid] = dhe * tc * o * (T(1) - o);
    dc_prev[e] = dct * f;
  }
}

// PyTorch's GRU: r, z = sigmoid(x + h pre-activations), n = tanh(xn + r hn),
// h = (1 - z) n + z h_prev; acts = (r, z, n, hn).
template <class T>
__global__ void fused_gru_cell(const T* __restrict__ x_pre, const T* __restrict__ h_pre,
                               const T* __restrict__ h_prev, T* __restrict__ h,
                               T* __restrict__ acts, i64 n, i64 hid) {
  HF_GRID_LOOP(e, n * hid) {
    const i64 r_ = e / hid, j = e - r_ * hid, p = r_ * 3 * hid + j, a = r_ * 4 * hid + j;
    const T r = rec_sigmoid(x_pre[p] + h_pre[p]);
    const T z = rec_sigmoid(x_pre[p + hid] + h_pre[p + hid]);
    const T hn = h_pre[p + 2 * hid];
    const T nn = rec_tanh(x_pre[p + 2 * hid] + r * hn);
    acts[a] = r;
    acts[a + hid] = z;
    acts[a + 2 * hid] = nn;
    acts[a + 3 * hid] = hn;
    h[e] = (T(1) - z) * nn + z * h_prev[e];
  }
}

// dh_prev is the direct z * h_prev path; dh_pre's n part is dn_pre * r (r scales hn).
template <class T>
__global__ void fused_gru_cell_backward(const T* __restrict__ acts, const T* __restrict__ h_prev,
                                        const T* __restrict__ dh, T* __restrict__ dx_pre,
                                        T* __restrict__ dh_pre, T* __restrict__ dh_prev,
                                        i64 n, i64 hid) {
  HF_GRID_LOOP(e, n * hid) {
    const i64 r_ = e / hid, j = e - r_ * hid, p = r_ * 3 * hid + j, a = r_ * 4 * hid + j;
    const T r = acts[a], z = acts[a + hid], nn = acts[a + 2 * hid], hn = acts[a + 3 * hid];
    const T dhe = dh[e];
    const T dn = dhe * (T(1) - z) * (T(1) - nn * nn);
    const T dr = dn * hn * r * (T(1) - r);
    const T dz = dhe * (h_prev[e] - nn) * z * (T(1) - z);
    dx_pre[p] = dr;
    dx_pre[p + hid] = dz;
    dx_pre[p + 2 * hid] = dn;
    dh_pre[p] = dr;
    dh_pre[p + hid] = dz;
    dh_pre[p + 2 * hid] = dn * r;
    dh_prev[e] = dhe * z;
  }
}

// Epsilon rule through h's z * h_prev term: R_prev = z h_prev / (h + eps sign(h)) R_h,
// sign(0) = +1, h recomputed as the forward does.
template <class T>
__global__ void fused_gru_lrp_prev(const T* __restrict__ acts, const T* __restrict__ h_prev,
                                   const T* __restrict__ rel, T* __restrict__ out, i64 n,
                                   i64 hid, T eps) {
  HF_GRID_LOOP(e, n * hid) {
    const i64 r_ = e / hid, a = r_ * 4 * hid + (e - r_ * hid);
    const T z = acts[a + hid], nn = acts[a + 2 * hid], hp = h_prev[e];
    const T h = (T(1) - z) * nn + z * hp;
    const T stab = h + (h >= T(0) ? eps : -eps);
    out[e] = z * hp / stab * rel[e];
  }
}

// ---- Mamba selective scan: lane = (b, d) of (B, D), state h[n] at state[n * lanes + lane]

template <class T, int R>
__global__ void fused_selective_scan(const T* __restrict__ x, const T* __restrict__ delta,
                                     const T* __restrict__ A, const T* __restrict__ Bm,
                                     const T* __restrict__ C, const T* __restrict__ d_skip,
                                     T* __restrict__ y, T* __restrict__ state, i64 nb, i64 L,
                                     i64 D, i64 N) {
  const i64 lanes = nb * D;
  HF_GRID_LOOP(lane, lanes) {
    const i64 b = lane / D, d = lane - b * D;
    const T* a = A + d * N;
    lane_state<T, R> h(state, lane, lanes);
    HF_REC_FOR(s, R, N) h[s] = T(0);
    const T skip = d_skip[d];
    for (i64 t = 0; t < L; ++t) {
      const i64 at = (b * L + t) * D + d, bt = (b * L + t) * N;
      const T dt = delta[at], xt = x[at], dx = dt * xt;
      T acc = T(0);
      HF_REC_FOR(s, R, N) {
        const T hs = rec_exp(dt * a[s]) * h[s] + dx * Bm[bt + s];
        h[s] = hs;
        acc += hs * C[bt + s];
      }
      y[at] = acc + skip * xt;
    }
  }
}

// Gradients of one lane. A forward sweep stores every h_t in hs (B, L, N, D) and the dC
// terms dy_t h_t in gc (same layout); the reverse sweep needs h_{t-1} at step t, then
// overwrites hs[t] (no longer needed) with the dBm terms dh_t delta_t x_t. The host sums
// hs and gc over d (rows of D), and dA_lanes (lanes, N) and dD_lanes (lanes) over b.
// carry and dA_acc: (N, lanes) scratch for the reverse carry dh_{t+1} exp(delta_{t+1} A)
// and the dA sums.
template <class T, int R>
__global__ void fused_selective_scan_backward(
    const T* __restrict__ x, const T* __restrict__ delta, const T* __restrict__ A,
    const T* __restrict__ Bm, const T* __restrict__ C, const T* __restrict__ d_skip,
    const T* __restrict__ dy, T* __restrict__ dx, T* __restrict__ ddelta, T* __restrict__ hs,
    T* __restrict__ gc, T* __restrict__ carry, T* __restrict__ dA_acc, T* __restrict__ dA_lanes,
    T* __restrict__ dD_lanes, i64 nb, i64 L, i64 D, i64 N) {
  const i64 lanes = nb * D;
  HF_GRID_LOOP(lane, lanes) {
    const i64 b = lane / D, d = lane - b * D;
    const T* a = A + d * N;
    for (i64 t = 0; t < L; ++t) {
      const i64 at = (b * L + t) * D + d, bt = (b * L + t) * N;
      const T dt = delta[at], dxt = dt * x[at], dyt = dy[at];
      for (i64 s = 0; s < N; ++s) {
        const i64 ht = (bt + s) * D + d;
        const T hp = t > 0 ? hs[ht - N * D] : T(0);
        const T h = rec_exp(dt * a[s]) * hp + dxt * Bm[bt + s];
        hs[ht] = h;
        gc[ht] = dyt * h;
      }
    }
    lane_state<T, R> cy(carry, lane, lanes), acc(dA_acc, lane, lanes);
    HF_REC_FOR(s, R, N) {
      cy[s] = T(0);
      acc[s] = T(0);
    }
    const T skip = d_skip[d];
    T dD = T(0);
    for (i64 t = L - 1; t >= 0; --t) {
      const i64 at = (b * L + t) * D + d, bt = (b * L + t) * N;
      const T dt = delta[at], xt = x[at], dyt = dy[at], dxt = dt * xt;
      T sum_delta = T(0), sum_x = T(0);
      HF_REC_FOR(s, R, N) {
        const i64 ht = (bt + s) * D + d;
        const T e = rec_exp(dt * a[s]);
        const T dh = dyt * C[bt + s] + cy[s];
        const T hp = t > 0 ? hs[ht - N * D] : T(0);
        sum_delta += dh * (hp * a[s] * e + xt * Bm[bt + s]);
        sum_x += dh * dt * Bm[bt + s];
        acc[s] += dh * hp * dt * e;
        hs[ht] = dh * dxt;
        cy[s] = dh * e;
      }
      ddelta[at] = sum_delta;
      dx[at] = sum_x + skip * dyt;
      dD += dyt * xt;
    }
    HF_REC_FOR(s, R, N) dA_lanes[lane * N + s] = acc[s];
    dD_lanes[lane] = dD;
  }
}

// ---- RWKV-4 WKV: lane = (b, c) of (B, C); the official kernel's stable recurrences -------

#define HF_WKV_MIN -1e38  // the official kernel's MIN_VALUE: exp(MIN - anything) = 0

template <class T>
__global__ void fused_wkv(const T* __restrict__ w_raw, const T* __restrict__ u,
                          const T* __restrict__ k, const T* __restrict__ v, T* __restrict__ y,
                          i64 nb, i64 L, i64 C) {
  HF_GRID_LOOP(lane, nb * C) {
    const i64 b = lane / C, c = lane - b * C;
    const T w = -rec_exp(w_raw[c]), uc = u[c];
    T aa = T(0), bb = T(0), pp = T(HF_WKV_MIN);
    for (i64 t = 0; t < L; ++t) {
      const i64 at = (b * L + t) * C + c;
      const T kk = k[at], vv = v[at];
      T ww = uc + kk;
      T p = rec_max(pp, ww);
      T e1 = rec_exp(pp - p), e2 = rec_exp(ww - p);
      y[at] = (e1 * aa + e2 * vv) / (e1 * bb + e2);
      ww = w + pp;
      p = rec_max(ww, kk);
      e1 = rec_exp(ww - p);
      e2 = rec_exp(kk - p);
      aa = e1 * aa + e2 * vv;
      bb = e1 * bb + e2;
      pp = p;
    }
  }
}

// The official backward (RWKV-LM wkv_cuda.cu, kernel_backward). Its per-step arrays y, z,
// zexp live in dk, dv and zexp (B, L, C) between the sweeps; the reverse sweep reads
// step t's before writing dk, dv there. gw_lanes, gu_lanes (B, C): the host sums over b.
template <class T>
__global__ void fused_wkv_backward(const T* __restrict__ w_raw, const T* __restrict__ u,
                                   const T* __restrict__ k, const T* __restrict__ v,
                                   const T* __restrict__ gy, T* __restrict__ dk,
                                   T* __restrict__ dv, T* __restrict__ zexp,
                                   T* __restrict__ gw_lanes, T* __restrict__ gu_lanes,
                                   i64 nb, i64 L, i64 C) {
  HF_GRID_LOOP(lane, nb * C) {
    const i64 b = lane / C, c = lane - b * C;
    const T w = -rec_exp(w_raw[c]), uc = u[c];
    T gw = T(0), gu = T(0), p = T(0), q = T(0), dpdw = T(0), dqdw = T(0), o = T(HF_WKV_MIN);
    for (i64 t = 0; t < L; ++t) {
      const i64 at = (b * L + t) * C + c;
      const T kk = k[at], vv = v[at], g = gy[at];
      T no = rec_max(o, kk + uc);
      T ea = rec_exp(o - no), eb = rec_exp(kk + uc - no);
      const T iden = T(1) / (ea * q + eb);
      const T yt = (ea * p + eb * vv) * iden;
      dk[at] = yt;
      dv[at] = iden;
      zexp[at] = kk + uc - no;
      gw += g * (dpdw - dqdw * yt) * iden * ea;
      gu += g * (vv - yt) * eb * iden;
      no = rec_max(w + o, kk);
      ea = rec_exp(w + o - no);
      eb = rec_exp(kk - no);
      dpdw = ea * (p + dpdw);
      dqdw = ea * (q + dqdw);
      p = ea * p + eb * vv;
      q = ea * q + eb;
      o = no;
    }
    T gp = T(0), gq = T(0);
    o = T(HF_WKV_MIN);
    for (i64 t = L - 1; t >= 0; --t) {
      const i64 at = (b * L + t) * C + c;
      const T kk = k[at], vv = v[at], g = gy[at], yt = dk[at], z = dv[at], ze = zexp[at];
      T ea = g * z * rec_exp(ze);
      T eb = rec_exp(kk + o);
      dk[at] = ea * (vv - yt) + eb * (gp * vv + gq);
      dv[at] = ea + eb * gp;
      const T no = rec_max(w + o, ze - kk - uc);
      ea = rec_exp(w + o - no);
      eb = g * z * rec_exp(ze - kk - uc - no);
      gp = ea * gp + eb;
      gq = ea * gq - eb * yt;
      o = no;
    }
    gw_lanes[lane] = gw * w;  // d(-exp(w))/dw = -exp(w) = w
    gu_lanes[lane] = gu;
  }
}

// ---- RetNet recurrent retention: S_t = gamma S_{t-1} + k_t^T v_t, o_t = q_t S_t ----------

// Lane (b, j) of (B, Dv) owns column j of S: state[i * lanes + lane].
template <class T, int R>
__global__ void fused_retention(const T* __restrict__ q, const T* __restrict__ k,
                                const T* __restrict__ v, const T* __restrict__ gamma,
                                T* __restrict__ o, T* __restrict__ state, i64 nb, i64 L,
                                i64 Dk, i64 Dv) {
  const i64 lanes = nb * Dv;
  HF_GRID_LOOP(lane, lanes) {
    const i64 b = lane / Dv, j = lane - b * Dv;
    const T g = gamma[b];
    lane_state<T, R> s(state, lane, lanes);
    HF_REC_FOR(i, R, Dk) s[i] = T(0);
    for (i64 t = 0; t < L; ++t) {
      const i64 qt = (b * L + t) * Dk, vt = (b * L + t) * Dv + j;
      const T vv = v[vt];
      T acc = T(0);
      HF_REC_FOR(i, R, Dk) {
        const T si = g * s[i] + k[qt + i] * vv;
        s[i] = si;
        acc += q[qt + i] * si;
      }
      o[vt] = acc;
    }
  }
}

// Lane (b, i) of (B, Dk) owns row i of S, of dS_t/dgamma (forward mode: G_t = S_{t-1} +
// gamma G_{t-1}) and of the adjoint dS_t = q_t^T do_t + gamma dS_{t+1}, each (Dv, lanes)
// scratch: dq_t[i] = sum_j do_t[j] S_t[i, j], dk_t[i] = sum_j dS_t[i, j] v_t[j], and
// dg_lanes[lane] = sum_t q_t[i] sum_j do_t[j] G_t[i, j] (the host sums over i).
template <class T, int R>
__global__ void fused_retention_backward_rows(const T* __restrict__ q, const T* __restrict__ k,
                                              const T* __restrict__ v, const T* __restrict__ gamma,
                                              const T* __restrict__ dout, T* __restrict__ dq,
                                              T* __restrict__ dk, T* __restrict__ dg_lanes,
                                              T* __restrict__ s_scratch, T* __restrict__ sg_scratch,
                                              i64 nb, i64 L, i64 Dk, i64 Dv) {
  const i64 lanes = nb * Dk;
  HF_GRID_LOOP(lane, lanes) {
    const i64 b = lane / Dk, i = lane - b * Dk;
    const T g = gamma[b];
    lane_state<T, R> s(s_scratch, lane, lanes), sg(sg_scratch, lane, lanes);
    HF_REC_FOR(j, R, Dv) {
      s[j] = T(0);
      sg[j] = T(0);
    }
    T dg = T(0);
    for (i64 t = 0; t < L; ++t) {
      const i64 qt = (b * L + t) * Dk + i, vt = (b * L + t) * Dv;
      const T kk = k[qt];
      T acc = T(0), acc_g = T(0);
      HF_REC_FOR(j, R, Dv) {
        const T sj = s[j], gj = sj + g * sg[j], nsj = g * sj + kk * v[vt + j];
        sg[j] = gj;
        s[j] = nsj;
        acc += nsj * dout[vt + j];
        acc_g += gj * dout[vt + j];
      }
      dq[qt] = acc;
      dg += q[qt] * acc_g;
    }
    dg_lanes[lane] = dg;
    lane_state<T, R>& ds = s;  // S is done with: its storage holds the adjoint
    HF_REC_FOR(j, R, Dv) ds[j] = T(0);
    for (i64 t = L - 1; t >= 0; --t) {
      const i64 qt = (b * L + t) * Dk + i, vt = (b * L + t) * Dv;
      const T qq = q[qt];
      T acc = T(0);
      HF_REC_FOR(j, R, Dv) {
        const T d = g * ds[j] + qq * dout[vt + j];
        ds[j] = d;
        acc += d * v[vt + j];
      }
      dk[qt] = acc;
    }
  }
}

// Lane (b, j) of (B, Dv) owns column j of the adjoint dS: dv_t[j] = sum_i dS_t[i, j] k_t[i].
template <class T, int R>
__global__ void fused_retention_backward_cols(const T* __restrict__ q, const T* __restrict__ k,
                                              const T* __restrict__ gamma, const T* __restrict__ dout,
                                              T* __restrict__ dv, T* __restrict__ ds_scratch,
                                              i64 nb, i64 L, i64 Dk, i64 Dv) {
  const i64 lanes = nb * Dv;
  HF_GRID_LOOP(lane, lanes) {
    const i64 b = lane / Dv, j = lane - b * Dv;
    const T g = gamma[b];
    lane_state<T, R> ds(ds_scratch, lane, lanes);
    HF_REC_FOR(i, R, Dk) ds[i] = T(0);
    for (i64 t = L - 1; t >= 0; --t) {
      const i64 qt = (b * L + t) * Dk, vt = (b * L + t) * Dv + j;
      const T dd = dout[vt];
      T acc = T(0);
      HF_REC_FOR(i, R, Dk) {
        const T d = g * ds[i] + q[qt + i] * dd;
        ds[i] = d;
        acc += d * k[qt + i];
      }
      dv[vt] = acc;
    }
  }
}

}  // namespace hf
