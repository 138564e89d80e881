// fused_conv.cuh -- im2col / col2im and pooling of hipfer.nn (hipfer/prims/fused_ops/conv.py).
// NCHW, C-contiguous operands. Every op loops over the window's taps in order (i, then j)
// -- the order of the NumPy reference, so the two agree bit for bit. Ops that spread one
// value over several (col2im_add, the pooling backwards) are gathers: each destination
// sums its sources itself, in that fixed order, so there are no atomics and results
// repeat run to run.
// The pools: a thread owns one position of one plane (N*C planes, the grid's y;
// positions of the plane, the grid's x). im2col and col2im_add (the columns' traffic,
// kh*kw times x's): a thread owns HF_CONV_ROWS rows of one column of one plane and loads
// HF_CONV_TAPS taps of them at once before it waits (see HF_CONV_ROWS).
// Within a plane positions are 32-bit (the host checks the sizes, padding included);
// plane offsets are 64-bit.
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

// Rows of one plane a thread of im2col / col2im_add owns (hipfer.backends.cupy.fused_conv
// .ROWS). With one position a thread, each tap's load waited before the next was issued
// (0.07-0.31 of the bandwidth floor on an H200): a thread now loads the values of several
// rows and taps together, then uses them.
#define HF_CONV_ROWS 8
// Taps of a window row col2im_add loads together (a 3x3 row at once), each into its own
// HF_CONV_ROWS registers: HF_CONV_TAPS * HF_CONV_ROWS loads in flight per thread.
#define HF_CONV_TAPS 3
// Blocks of 256 (hipfer.backends.cupy._engine.BLOCK). On CUDA (nvcc 13, sm_90), float32
// asks for 4 blocks an SM: <= 64 registers (col2im_add took 70 unbounded; no spills), 32
// warps of 24 loads in flight. float64 has no minimum: 76-83 registers, 3 blocks (a
// minimum of 2 gave col2im_add 113).
// HIP's second argument means something else (waves per EU): the block size alone there.
#if HF_HIP
#  define HF_CONV_ROWS_BOUNDS(T) __launch_bounds__(256)
#else
#  define HF_CONV_ROWS_BOUNDS(T) __launch_bounds__(256, sizeof(T) <= 4 ? 4 : 0)
#endif

// Thread t of `planes` planes of per_plane threads each: (plane, thread in the plane).
// 32-bit division while t fits (always, short of 2^31 threads).
__device__ __forceinline__ void conv_rows_split(i64 t, i32 per_plane, i64& plane, i32& q) {
  if (t <= 0x7fffffff) {
    const u32 a = (u32)t / (u32)per_plane;
    plane = a;
    q = (i32)((u32)t - a * (u32)per_plane);
  } else {
    plane = t / per_plane;
    q = (i32)(t - plane * per_plane);
  }
}

#define HF_CONV_ROWS_LOOP(t, total)                                                          \
  for (i64 t = (i64)blockIdx.x * blockDim.x + threadIdx.x; t < (total);                       \
       t += (i64)gridDim.x * blockDim.x)

// columns (N, C*kh*kw, oh*ow): row (c*kh + i)*kw + j, column oy*ow + ox holds
// x[c, oy*sh - ph + i*dh, ox*sw - pw + j*dw], 0 where that is padding.
// A thread owns output rows oy0 .. oy0 + HF_CONV_ROWS - 1 at column ox; lanes run along
// ox, so each store of a tap is one contiguous run of a column row.
template <class T>
__global__ void HF_CONV_ROWS_BOUNDS(T)
fused_im2col(const T* __restrict__ x, T* __restrict__ cols, i64 planes, conv_geom g) {
  const i32 L = g.oh * g.ow, R = HF_CONV_ROWS;
  const i32 per_plane = (g.oh + R - 1) / R * g.ow;
  HF_CONV_ROWS_LOOP(t, planes * per_plane) {
    i64 nc;
    i32 q;
    conv_rows_split(t, per_plane, nc, q);
    const i32 grp = q / g.ow, ox = q - grp * g.ow, oy0 = grp * R;
    const i32 rend = conv_min(R, g.oh - oy0);  // rows that exist, >= 1
    const T* src = x + nc * g.h * g.w;
    T* dst = cols + nc * g.kh * g.kw * L + oy0 * g.ow + ox;
    i32 iy = oy0 * g.sh - g.ph;  // input row of the first row's tap (i, .)
    for (i32 i = 0; i < g.kh; ++i, iy += g.dh) {
      i32 ix = ox * g.sw - g.pw;
      for (i32 j = 0; j < g.kw; j += HF_CONV_TAPS, ix += HF_CONV_TAPS * g.dw) {
        T* d = dst + (i * g.kw + j) * L;  // tap (i, j)'s column row
        T v[HF_CONV_TAPS][HF_CONV_ROWS];
#pragma unroll
        for (i32 u = 0; u < HF_CONV_TAPS; ++u) {
          const i32 cx = ix + u * g.dw;
          const bool in_x = j + u < g.kw && cx >= 0 && cx < g.w;
#pragma unroll
          for (i32 r = 0; r < HF_CONV_ROWS; ++r) {
            const i32 y = iy + r * g.sh;
            v[u][r] = in_x && r < rend && y >= 0 && y < g.h ? src[y * g.w + cx] : T(0);
          }
        }
#pragma unroll
        for (i32 u = 0; u < HF_CONV_TAPS; ++u)
#pragma unroll
          for (i32 r = 0; r < HF_CONV_ROWS; ++r)
            if (j + u < g.kw && r < rend) d[u * L + r * g.ow] = v[u][r];
      }
    }
  }
}

// The adjoint: x[c, iy, ix] = sum over taps (i, j), in order, of the column entry that
// im2col copied it to (none for taps whose window does not exist).
// A thread owns input rows y0 + r*sh (r < HF_CONV_ROWS) at column ix: rows of one phase
// modulo the stride, so tap (i, j) is a window of all of them or of none, and their
// windows are consecutive rows oy, oy + 1, ... of the columns. sh threads cover
// HF_CONV_ROWS*sh consecutive rows. The tap offsets iy + ph - i*dh are carried as
// (quotient, remainder) by the stride and stepped per tap: no division per tap.
template <class T>
__global__ void HF_CONV_ROWS_BOUNDS(T)
fused_col2im_add(const T* __restrict__ cols, T* __restrict__ x, i64 planes, conv_geom g) {
  const i32 L = g.oh * g.ow, R = HF_CONV_ROWS, span = R * g.sh;
  const i32 per_plane = (g.h + span - 1) / span * g.sh * g.w;
  const i32 qdy = g.dh / g.sh, rdy = g.dh - qdy * g.sh;  // one tap down, in strides
  const i32 qdx = g.dw / g.sw, rdx = g.dw - qdx * g.sw;
  HF_CONV_ROWS_LOOP(t, planes * per_plane) {
    i64 nc;
    i32 q;
    conv_rows_split(t, per_plane, nc, q);
    const i32 m = q / g.w, ix = q - m * g.w;  // m: (row group, phase)
    const i32 grp = m / g.sh, y0 = grp * span + (m - grp * g.sh);
    i32 rend = 0;  // rows that exist (0 for a phase past the last row)
#pragma unroll
    for (i32 r = 0; r < HF_CONV_ROWS; ++r)
      if (y0 + r * g.sh < g.h) rend = r + 1;
    if (rend == 0) continue;
    const T* src = cols + nc * g.kh * g.kw * L;
    T acc[HF_CONV_ROWS];
#pragma unroll
    for (i32 r = 0; r < HF_CONV_ROWS; ++r) acc[r] = T(0);
    // y0 + ph - i*dh = qy*sh + ry (0 <= ry < sh): row r's window row is qy + r
    i32 qy = (y0 + g.ph) / g.sh, ry = y0 + g.ph - qy * g.sh;
    const i32 qx0 = (ix + g.pw) / g.sw, rx0 = ix + g.pw - qx0 * g.sw;
    for (i32 i = 0; i < g.kh; ++i) {
      if (qy + rend - 1 < 0) break;  // above every row's windows, and so every later tap
      // the rows whose window row qy + r exists
      const i32 rlo = conv_max(0, -qy), rhi = conv_min(rend, g.oh - qy);
      if (ry == 0 && rlo < rhi) {
        // (qy + r)*ow + qx for live rows (qy > -R here): within the host's 32-bit checks
        i32 qx = qx0, rx = rx0, off = i * g.kw * L + qy * g.ow + qx0;
        for (i32 j = 0; j < g.kw; j += HF_CONV_TAPS) {
          if (qx < 0) break;  // left of every window, and so every later tap
          bool on[HF_CONV_TAPS];  // taps j + u: their windows exist
          i32 o[HF_CONV_TAPS];
#pragma unroll
          for (i32 u = 0; u < HF_CONV_TAPS; ++u) {
            on[u] = j + u < g.kw && rx == 0 && qx >= 0 && qx < g.ow;
            o[u] = off;
            off += L - qdx;  // the next tap: one column row on, dw columns left
            qx -= qdx;
            rx -= rdx;
            if (rx < 0) {
              rx += g.sw;
              --qx;
              --off;
            }
          }
          T v[HF_CONV_TAPS][HF_CONV_ROWS];
#pragma unroll
          for (i32 u = 0; u < HF_CONV_TAPS; ++u)
#pragma unroll
            for (i32 r = 0; r < HF_CONV_ROWS; ++r)
              v[u][r] = on[u] && r >= rlo && r < rhi ? src[o[u] + r * g.ow] : T(0);
          // in tap order; a slot without a window adds +0, which leaves every sum as it
          // is (a sum from +0 is never -0): unpredicated adds, so the compiler keeps all
          // the loads ahead of them
#pragma unroll
          for (i32 u = 0; u < HF_CONV_TAPS; ++u)
#pragma unroll
            for (i32 r = 0; r < HF_CONV_ROWS; ++r) acc[r] += v[u][r];
        }
      }
      qy -= qdy;
      ry -= rdy;
      if (ry < 0) {
        ry += g.sh;
        --qy;
      }
    }
    T* out = x + nc * g.h * g.w + y0 * g.w + ix;
#pragma unroll
    for (i32 r = 0; r < HF_CONV_ROWS; ++r)
      if (r < rend) out[r * g.sh * g.w] = acc[r];
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
