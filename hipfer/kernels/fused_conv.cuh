// fused_conv.cuh -- im2col / col2im and pooling of hipfer.nn (hipfer/prims/fused_ops/conv.py).
// NCHW, C-contiguous operands. A thread owns one position of one plane (N*C planes, the
// grid's y; positions of the plane, the grid's x) and loops over the window's taps in
// order (i, then j) -- the order of the NumPy reference, so the two agree bit for bit.
// Ops that spread one value over several (col2im_add, the pooling backwards) are
// gathers: each destination sums its sources itself, in that fixed order, so there are
// no atomics and results repeat run to run. Within a plane positions are 32-bit (the
// host checks plane sizes below 2^31); plane offsets are 64-bit.
#pragma once
#include "common.cuh"

namespace hf {

// One op's window geometry, passed by value (hipfer.backends.cupy.fused_conv.GEOM):
// input planes h x w, output planes oh x ow; kernel kh x kw, stride, padding and
// dilation (1 for the pools).
struct conv_geom { i32 h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw; };

// Thread (plane nc, position q < n): planes along the grid's y, positions along its x.
#define HF_CONV_LOOP(nc, planes, q, n)                                                        \
  for (i64 nc = (i64)blockIdx.y * blockDim.y + threadIdx.y; nc < (planes);                     \
       nc += (i64)gridDim.y * blockDim.y)                                                      \
    for (i32 q = (i32)(blockIdx.x * blockDim.x + threadIdx.x); q < (n);                        \
         q += (i32)(gridDim.x * blockDim.x))

__device__ __forceinline__ i32 conv_min(i32 a, i32 b) { return a < b ? a : b; }
__device__ __forceinline__ i32 conv_max(i32 a, i32 b) { return a > b ? a : b; }

// The output position along one axis whose window reads input position t (= input
// position + padding - tap offset) with this tap, or -1: t must be a multiple of the
// stride and the window must exist.
__device__ __forceinline__ i32 conv_window(i32 t, i32 stride, i32 n_out) {
  const i32 o = t / stride;
  return o * stride == t && o < n_out ? o : -1;
}

// columns (N, C*kh*kw, oh*ow): row (c*kh + i)*kw + j, column oy*ow + ox holds
// x[c, oy*sh - ph + i*dh, ox*sw - pw + j*dw], 0 where that is padding.
template <class T>
__global__ void fused_im2col(const T* __restrict__ x, T* __restrict__ cols, i64 planes, conv_geom g) {
  const i32 L = g.oh * g.ow;
  HF_CONV_LOOP(nc, planes, l, L) {
    const i32 oy = l / g.ow, ox = l - oy * g.ow;
    const T* src = x + nc * g.h * g.w;
    T* dst = cols + nc * g.kh * g.kw * L + l;  // consecutive threads: consecutive columns
    for (i32 i = 0; i < g.kh; ++i) {
      const i32 iy = oy * g.sh - g.ph + i * g.dh;
      const bool in_y = iy >= 0 && iy < g.h;
      for (i32 j = 0; j < g.kw; ++j, dst += L) {
        const i32 ix = ox * g.sw - g.pw + j * g.dw;
        *dst = in_y && ix >= 0 && ix < g.w ? src[iy * g.w + ix] : T(0);
      }
    }
  }
}

// The adjoint: x[c, iy, ix] = sum over taps (i, j), in order, of the column entry that
// im2col copied it to (none for taps whose window does not exist).
template <class T>
__global__ void fused_col2im_add(const T* __restrict__ cols, T* __restrict__ x, i64 planes, conv_geom g) {
  const i32 L = g.oh * g.ow, hw = g.h * g.w;
  HF_CONV_LOOP(nc, planes, q, hw) {
    const i32 iy = q / g.w, ix = q - iy * g.w;
    const T* src = cols + nc * g.kh * g.kw * L;
    T acc = T(0);
    for (i32 i = 0; i < g.kh; ++i) {
      const i32 ty = iy + g.ph - i * g.dh;
      if (ty < 0) break;  // and for every later tap
      const i32 oy = conv_window(ty, g.sh, g.oh);
      if (oy < 0) continue;
      for (i32 j = 0; j < g.kw; ++j) {
        const i32 tx = ix + g.pw - j * g.dw;
        if (tx < 0) break;
        const i32 ox = conv_window(tx, g.sw, g.ow);
        if (ox >= 0) acc += src[(i64)(i * g.kw + j) * L + oy * g.ow + ox];
      }
    }
    x[nc * hw + q] = acc;
  }
}

// Window maxima and their flat index in the input plane. Only input taps compete
// (padding never wins; padding <= kernel / 2 leaves every window one); ties keep the
// first, the first NaN wins and stays.
template <class T>
__global__ void fused_max_pool(const T* __restrict__ x, T* __restrict__ y, i64* __restrict__ argmax,
                               i64 planes, conv_geom g) {
  const i32 L = g.oh * g.ow;
  HF_CONV_LOOP(nc, planes, l, L) {
    const i32 oy = l / g.ow, ox = l - oy * g.ow;
    const i32 y0 = oy * g.sh - g.ph, x0 = ox * g.sw - g.pw;
    const i32 ys = conv_max(y0, 0), ye = conv_min(y0 + g.kh, g.h);
    const i32 xs = conv_max(x0, 0), xe = conv_min(x0 + g.kw, g.w);
    const T* src = x + nc * g.h * g.w;
    i32 best = ys * g.w + xs;
    T v = src[best];
    for (i32 iy = ys; iy < ye; ++iy) {
      for (i32 ix = xs; ix < xe; ++ix) {
        const T e = src[iy * g.w + ix];
        if (e > v || (e != e && v == v)) {
          v = e;
          best = iy * g.w + ix;
        }
      }
    }
    y[nc * L + l] = v;
    argmax[nc * L + l] = best;
  }
}

// Records the first bad argmax (1 + its flat position) in the device error flag.
__device__ __forceinline__ void conv_report(i64* err, i64 pos) {
  atomicCAS(reinterpret_cast<unsigned long long*>(err), 0ull, (unsigned long long)(pos + 1));
}

// max_pool's backward: dx[c, iy, ix] sums, over the windows holding (iy, ix) in tap
// order, the gy of those whose argmax it is. The same launch checks every argmax (the
// threads q < oh*ow): one that is not an input position inside its window is reported
// (the gather would silently drop it); the host then raises IndexError.
template <class T>
__global__ void fused_max_unpool(const T* __restrict__ gy, const i64* __restrict__ argmax,
                                 T* __restrict__ dx, i64 planes, conv_geom g, i64* err) {
  const i32 L = g.oh * g.ow, hw = g.h * g.w;
  HF_CONV_LOOP(nc, planes, q, L > hw ? L : hw) {
    if (q < L) {
      const i64 a = argmax[nc * L + q];
      const i32 oy = q / g.ow, ox = q - oy * g.ow;
      bool ok = a >= 0 && a < hw;
      if (ok) {
        const i32 ay = (i32)a / g.w, ti = ay - (oy * g.sh - g.ph);
        const i32 tj = (i32)a - ay * g.w - (ox * g.sw - g.pw);
        ok = ti >= 0 && ti < g.kh && tj >= 0 && tj < g.kw;
      }
      if (!ok) conv_report(err, nc * L + q);
    }
    if (q < hw) {
      const i32 iy = q / g.w, ix = q - iy * g.w;
      const i64 base = nc * L;
      T acc = T(0);
      for (i32 i = 0; i < g.kh; ++i) {
        const i32 ty = iy + g.ph - i;
        if (ty < 0) break;
        const i32 oy = conv_window(ty, g.sh, g.oh);
        if (oy < 0) continue;
        for (i32 j = 0; j < g.kw; ++j) {
          const i32 tx = ix + g.pw - j;
          if (tx < 0) break;
          const i32 ox = conv_window(tx, g.sw, g.ow);
          if (ox >= 0 && argmax[base + oy * g.ow + ox] == q) acc += gy[base + oy * g.ow + ox];
        }
      }
      dx[nc * hw + q] = acc;
    }
  }
}

// The divisor of window (oy, ox): kh*kw, or the number of its taps that read input.
__device__ __forceinline__ i32 conv_pool_div(const conv_geom& g, i32 oy, i32 ox, bool count_include_pad) {
  if (count_include_pad) return g.kh * g.kw;
  const i32 y0 = oy * g.sh - g.ph, x0 = ox * g.sw - g.pw;
  return (conv_min(y0 + g.kh, g.h) - conv_max(y0, 0)) * (conv_min(x0 + g.kw, g.w) - conv_max(x0, 0));
}

// Window means: the input taps summed in order, then divided once.
template <class T>
__global__ void fused_avg_pool(const T* __restrict__ x, T* __restrict__ y, i64 planes, conv_geom g,
                               bool count_include_pad) {
  const i32 L = g.oh * g.ow;
  HF_CONV_LOOP(nc, planes, l, L) {
    const i32 oy = l / g.ow, ox = l - oy * g.ow;
    const i32 y0 = oy * g.sh - g.ph, x0 = ox * g.sw - g.pw;
    const i32 ye = conv_min(y0 + g.kh, g.h), xe = conv_min(x0 + g.kw, g.w);
    const T* src = x + nc * g.h * g.w;
    T acc = T(0);
    for (i32 iy = conv_max(y0, 0); iy < ye; ++iy)
      for (i32 ix = conv_max(x0, 0); ix < xe; ++ix) acc += src[iy * g.w + ix];
    y[nc * L + l] = acc / T(conv_pool_div(g, oy, ox, count_include_pad));
  }
}

// avg_pool's backward: dx[c, iy, ix] sums gy / divisor over its windows, in tap order.
template <class T>
__global__ void fused_avg_pool_backward(const T* __restrict__ gy, T* __restrict__ dx, i64 planes,
                                        conv_geom g, bool count_include_pad) {
  const i32 L = g.oh * g.ow, hw = g.h * g.w;
  HF_CONV_LOOP(nc, planes, q, hw) {
    const i32 iy = q / g.w, ix = q - iy * g.w;
    const T* src = gy + nc * L;
    T acc = T(0);
    for (i32 i = 0; i < g.kh; ++i) {
      const i32 ty = iy + g.ph - i;
      if (ty < 0) break;
      const i32 oy = conv_window(ty, g.sh, g.oh);
      if (oy < 0) continue;
      for (i32 j = 0; j < g.kw; ++j) {
        const i32 tx = ix + g.pw - j;
        if (tx < 0) break;
        const i32 ox = conv_window(tx, g.sw, g.ow);
        if (ox >= 0) acc += src[oy * g.ow + ox] / T(conv_pool_div(g, oy, ox, count_include_pad));
      }
    }
    dx[nc * hw + q] = acc;
  }
}

}  // namespace hf
