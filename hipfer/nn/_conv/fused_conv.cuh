// fused_conv.cuh -- im2col / col2im and pooling of hipfer.nn (hipfer/prims/fused_ops/conv.py).
// NCHW, C-contiguous operands. Every op loops over the window's taps in order (i, then j)
// -- the order of the NumPy reference, so the two agree bit for bit. Ops that spread one
// value over several (col2im_add, the pooling backwards) are gathers: each destination
// sums its sources itself, in that fixed order, so there are no atomics and results
// repeat run to run.
// im2col, col2im_add (the columns' traffic, kh*kw times x's) and the pools: a thread
// owns HF_CONV_ROWS rows of one column of one plane and loads several taps of them at once
// before it waits (see HF_CONV_ROWS); the gathers' threads own rows of one phase modulo
// the stride and step their window indices, with no division per tap.
// Within a plane positions are 32-bit (the host checks the sizes, padding included);
// plane offsets are 64-bit.
#pragma once
#include "common.cuh"

namespace hf {

// One op's window geometry, passed by value (hipfer.backends.cupy.fused_conv.GEOM):
// input planes h x w, output planes oh x ow; kernel kh x kw, stride, padding and
// dilation (1 for the pools).
struct conv_geom { i32 h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw; };

__device__ __forceinline__ i32 conv_min(i32 a, i32 b) { return a < b ? a : b; }
__device__ __forceinline__ i32 conv_max(i32 a, i32 b) { return a > b ? a : b; }

// Rows of one plane a thread of im2col / col2im_add / the pools owns
// (hipfer.backends.cupy.fused_conv.ROWS). With one position a thread, each tap's load
// waited before the next was issued (0.07-0.31 of the bandwidth floor on an H200): a
// thread now loads the values of several rows and taps together, then uses them.
#define HF_CONV_ROWS 8
// Taps of a window row col2im_add loads together (a 3x3 row at once), each into its own
// HF_CONV_ROWS registers: HF_CONV_TAPS * HF_CONV_ROWS loads in flight per thread.
#define HF_CONV_TAPS 3
// Blocks of 256 (hipfer.backends.cupy._engine.BLOCK). On CUDA (nvcc 13, sm_90), float32
// asks for 4 blocks an SM: <= 64 registers (col2im_add took 70 unbounded; no spills), 32
// warps of 24 loads in flight. float64 has no minimum: 76-84 registers, 3 blocks (a
// minimum of 2 gave col2im_add 113), except col2im_add, which asks for the 3 blocks
// (unbounded it took 98 registers once its columns' layout became a parameter; 79 so).
// HIP's second argument means something else (waves per EU): the block size alone there.
#if HF_HIP
#  define HF_CONV_ROWS_BOUNDS(T) __launch_bounds__(256)
#  define HF_COL2IM_BOUNDS(T) __launch_bounds__(256)
#else
#  define HF_CONV_ROWS_BOUNDS(T) __launch_bounds__(256, sizeof(T) <= 4 ? 4 : 0)
#  define HF_COL2IM_BOUNDS(T) __launch_bounds__(256, sizeof(T) <= 4 ? 4 : 3)
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

// Forward threads (im2col, max_pool, avg_pool): per_plane = conv_fwd_threads(g) a plane;
// thread t owns output rows oy0 .. oy0 + rend - 1 (rend >= 1) at column ox of plane nc.
__device__ __forceinline__ i32 conv_fwd_threads(const conv_geom& g) {
  return (g.oh + HF_CONV_ROWS - 1) / HF_CONV_ROWS * g.ow;
}

__device__ __forceinline__ void conv_fwd_split(i64 t, i32 per_plane, const conv_geom& g,
                                               i64& nc, i32& ox, i32& oy0, i32& rend) {
  i32 q;
  conv_rows_split(t, per_plane, nc, q);
  const i32 grp = q / g.ow;
  ox = q - grp * g.ow;
  oy0 = grp * HF_CONV_ROWS;
  rend = conv_min(HF_CONV_ROWS, g.oh - oy0);
}

// Gather threads (col2im_add, max_unpool, avg_pool_backward): per_plane =
// conv_gather_threads(g) a plane; thread t owns input rows y0 + r*sh (r < rend) at column
// ix of plane nc: rows of one phase modulo the stride, sh threads of a column covering
// HF_CONV_ROWS*sh consecutive rows. rend is 0 for a phase past the last row.
__device__ __forceinline__ i32 conv_gather_threads(const conv_geom& g) {
  const i32 span = HF_CONV_ROWS * g.sh;
  return (g.h + span - 1) / span * g.sh * g.w;
}

__device__ __forceinline__ void conv_gather_split(i64 t, i32 per_plane, const conv_geom& g,
                                                  i64& nc, i32& ix, i32& y0, i32& rend) {
  i32 q;
  conv_rows_split(t, per_plane, nc, q);
  const i32 m = q / g.w;  // (row group, phase)
  ix = q - m * g.w;
  const i32 grp = m / g.sh;
  y0 = grp * HF_CONV_ROWS * g.sh + (m - grp * g.sh);
  rend = 0;
#pragma unroll
  for (i32 r = 0; r < HF_CONV_ROWS; ++r)
    if (y0 + r * g.sh < g.h) rend = r + 1;
}

// Where the columns of plane nc = n*C + c lie (hipfer.backends.cupy.fused_conv.COLS):
// tap (i, j) at position l is base + (i*kw + j)*tap + l, base = n*sample + c*kh*kw*tap.
// Columns (N, C*kh*kw, L) ("nkl", conv2d's batched GEMM) pass channels = 1, sample =
// kh*kw*L, tap = L (base = nc*kh*kw*L); (C*kh*kw, N, L) ("knl", one GEMM over all N*L
// columns) pass C, L, N*L. Tap offsets are 32-bit (the host checks).
struct conv_cols { i64 sample; i32 channels, tap; };

__device__ __forceinline__ i64 conv_cols_base(const conv_cols& cl, i64 nc, const conv_geom& g) {
  i64 n;
  i32 c;
  conv_rows_split(nc, cl.channels, n, c);
  return n * cl.sample + (i64)(c * (g.kh * g.kw)) * cl.tap;
}

// columns: row (c*kh + i)*kw + j, column oy*ow + ox holds
// x[c, oy*sh - ph + i*dh, ox*sw - pw + j*dw], 0 where that is padding.
// A thread owns output rows oy0 .. oy0 + HF_CONV_ROWS - 1 at column ox; lanes run along
// ox, so each store of a tap is one contiguous run of a column row.
template <class T>
__global__ void HF_CONV_ROWS_BOUNDS(T)
fused_im2col(const T* __restrict__ x, T* __restrict__ cols, i64 planes, conv_geom g,
             conv_cols cl) {
  const i32 per_plane = conv_fwd_threads(g);
  HF_CONV_ROWS_LOOP(t, planes * per_plane) {
    i64 nc;
    i32 ox, oy0, rend;  // rend >= 1
    conv_fwd_split(t, per_plane, g, nc, ox, oy0, rend);
    const T* src = x + nc * g.h * g.w;
    T* dst = cols + conv_cols_base(cl, nc, g) + oy0 * g.ow + ox;
    i32 iy = oy0 * g.sh - g.ph;  // input row of the first row's tap (i, .)
    for (i32 i = 0; i < g.kh; ++i, iy += g.dh) {
      i32 ix = ox * g.sw - g.pw;
      for (i32 j = 0; j < g.kw; j += HF_CONV_TAPS, ix += HF_CONV_TAPS * g.dw) {
        T* d = dst + (i * g.kw + j) * cl.tap;  // tap (i, j)'s column row
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
            if (j + u < g.kw && r < rend) d[u * cl.tap + r * g.ow] = v[u][r];
      }
    }
  }
}

// im2col with one output position a thread (consecutive threads, consecutive columns).
// Measured on the H200, the row tiling above wins only on wide planes at vertical stride
// 1 (56x56: 0.101 -> 0.081 ms); on narrow planes (7x7, 14x14) it leaves too few threads,
// and at stride 2 (the 7x7 stem) its reads spread: 0.019 against 0.031 ms, 0.082 against
// 0.134 (hipfer.backends.cupy.fused_conv picks).
template <class T>
__global__ void fused_im2col_pos(const T* __restrict__ x, T* __restrict__ cols, i64 planes,
                                 conv_geom g, conv_cols cl) {
  const i32 L = g.oh * g.ow;
  HF_CONV_ROWS_LOOP(t, planes * L) {
    i64 nc;
    i32 l;
    conv_rows_split(t, L, nc, l);
    const i32 oy = l / g.ow, ox = l - oy * g.ow;
    const T* src = x + nc * g.h * g.w;
    T* dst = cols + conv_cols_base(cl, nc, g) + l;
    for (i32 i = 0; i < g.kh; ++i) {
      const i32 iy = oy * g.sh - g.ph + i * g.dh;
      const bool in_y = iy >= 0 && iy < g.h;
      for (i32 j = 0; j < g.kw; ++j, dst += cl.tap) {
        const i32 ix = ox * g.sw - g.pw + j * g.dw;
        *dst = in_y && ix >= 0 && ix < g.w ? src[iy * g.w + ix] : T(0);
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
__global__ void HF_COL2IM_BOUNDS(T)
fused_col2im_add(const T* __restrict__ cols, T* __restrict__ x, i64 planes, conv_geom g,
                 conv_cols cl) {
  const i32 per_plane = conv_gather_threads(g);
  const i32 qdy = g.dh / g.sh, rdy = g.dh - qdy * g.sh;  // one tap down, in strides
  const i32 qdx = g.dw / g.sw, rdx = g.dw - qdx * g.sw;
  HF_CONV_ROWS_LOOP(t, planes * per_plane) {
    i64 nc;
    i32 ix, y0, rend;
    conv_gather_split(t, per_plane, g, nc, ix, y0, rend);
    if (rend == 0) continue;
    const T* src = cols + conv_cols_base(cl, nc, g);
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
        // (qy + r)*ow + qx for live rows (qy > -HF_CONV_ROWS here): within the host's
        // 32-bit checks
        i32 qx = qx0, rx = rx0, off = i * g.kw * cl.tap + qy * g.ow + qx0;
        for (i32 j = 0; j < g.kw; j += HF_CONV_TAPS) {
          if (qx < 0) break;  // left of every window, and so every later tap
          bool on[HF_CONV_TAPS];  // taps j + u: their windows exist
          i32 o[HF_CONV_TAPS];
#pragma unroll
          for (i32 u = 0; u < HF_CONV_TAPS; ++u) {
            on[u] = j + u < g.kw && rx == 0 && qx >= 0 && qx < g.ow;
            o[u] = off;
            off += cl.tap - qdx;  // the next tap: one column row on, dw columns left
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

// ---- pools (no dilation; padding <= kernel / 2, so every window holds an input element)
// A forward thread owns output rows oy0 .. oy0 + HF_CONV_ROWS - 1 at column ox, as im2col
// does, and loads HF_CONV_TAPS taps of a window row for all of them before it uses them.
// A backward thread owns input rows of one phase modulo the stride at column ix, as
// col2im_add does, and visits only the taps that reach them (pool_taps), with no division
// per tap. Where at most 2 window columns reach a column (a 3-wide window at stride 2),
// the window rows slide along the tap rows instead, so that each window is loaded (and
// divided, avg_pool) once: pool_avg_slide, pool_unpool_slide.

// Taps of a window row pool_avg_gather (3 or more window columns reach a column) loads
// together, each into HF_CONV_ROWS registers (3 spilled within float32's 64 registers).
#define HF_POOL_TAPS 2
// max_unpool holds an argmax word and a gy per slot, 2 taps x 8 rows of each: float32
// asks for 3 blocks an SM (<= 85 registers; 4 blocks spilled 192 bytes), 24 warps of
// 32 loads in flight.
#if HF_HIP
#  define HF_POOL_UNPOOL_BOUNDS(T) __launch_bounds__(256)
#else
#  define HF_POOL_UNPOOL_BOUNDS(T) __launch_bounds__(256, sizeof(T) <= 4 ? 3 : 0)
#endif

// The taps of a pool gather thread, whose rows y0 + r*sh (r < rend) at column ix share a
// phase modulo the stride, so window row i reaches all of them or none. Those that do are
// i = ry + a*sh, which reads window row qy - a + r for row r; likewise window column
// j = rx + b*sw reads window column qx - b. a in [a0, a1), b in [b0, b1): the taps whose
// window exists for some row (ranges may be empty). One division each, per thread.
struct pool_gather_taps { i32 qy, ry, qx, rx, a0, a1, b0, b1; };

__device__ __forceinline__ pool_gather_taps pool_taps(const conv_geom& g, i32 y0, i32 ix,
                                                      i32 rend) {
  pool_gather_taps p;
  p.qy = (y0 + g.ph) / g.sh;
  p.ry = y0 + g.ph - p.qy * g.sh;
  p.qx = (ix + g.pw) / g.sw;
  p.rx = ix + g.pw - p.qx * g.sw;
  // i < kh: a < ceil((kh - ry) / sh) (a numerator >= 1); a window row in [0, oh)
  p.a0 = conv_max(0, p.qy - g.oh + 1);
  p.a1 = conv_min((g.kh - p.ry + g.sh - 1) / g.sh, p.qy + rend);
  p.b0 = conv_max(0, p.qx - g.ow + 1);
  p.b1 = conv_min((g.kw - p.rx + g.sw - 1) / g.sw, p.qx + 1);
  return p;
}

// -inf: a tap outside the input loads this, and never wins against a value from the input.
__device__ __forceinline__ f32 conv_neg_inf(f32) { return __int_as_float((i32)0xff800000u); }
__device__ __forceinline__ f64 conv_neg_inf(f64) {
  return __longlong_as_double((i64)0xfff0000000000000ull);
}

// The taps of a pool forward thread's windows -- rows oy0 .. oy0 + rend - 1 at column
// ox, whose first tap is input (iy, sx) for row 0 -- in order (i, then j), HF_CONV_TAPS
// taps of a window row loaded for all rows before any is used: f.tap(r, value, its flat
// index in the plane). A tap outside the input loads pad.
template <class T, class F>
__device__ __forceinline__ void pool_fwd_taps(const T* src, const conv_geom& g, i32 sx, i32 iy,
                                              i32 rend, T pad, F& f) {
  const i32 shw = g.sh * g.w;
  for (i32 i = 0; i < g.kh; ++i, ++iy) {
    bool in_y[HF_CONV_ROWS];
#pragma unroll
    for (i32 r = 0; r < HF_CONV_ROWS; ++r)
      in_y[r] = r < rend && iy + r * g.sh >= 0 && iy + r * g.sh < g.h;
    for (i32 j = 0; j < g.kw; j += HF_CONV_TAPS) {
      bool in_x[HF_CONV_TAPS];
#pragma unroll
      for (i32 u = 0; u < HF_CONV_TAPS; ++u)
        in_x[u] = j + u < g.kw && sx + j + u >= 0 && sx + j + u < g.w;
      T e[HF_CONV_TAPS][HF_CONV_ROWS];
      const T* s = src + (iy * g.w + sx + j);  // tap (i, j) of row 0 (formed, read if inside)
#pragma unroll
      for (i32 r = 0; r < HF_CONV_ROWS; ++r, s += shw)
#pragma unroll
        for (i32 u = 0; u < HF_CONV_TAPS; ++u) e[u][r] = in_x[u] && in_y[r] ? s[u] : pad;
#pragma unroll
      for (i32 u = 0; u < HF_CONV_TAPS; ++u)
#pragma unroll
        for (i32 r = 0; r < HF_CONV_ROWS; ++r) f.tap(r, e[u][r], (iy + r * g.sh) * g.w + sx + j + u);
    }
  }
}

// max_pool's step: a tap replaces the row's best if larger, or the first NaN.
template <class T> struct pool_max_step {
  T (&v)[HF_CONV_ROWS];
  i32 (&best)[HF_CONV_ROWS];
  __device__ __forceinline__ void tap(i32 r, T c, i32 at) {
    if (c > v[r] || (c != c && v[r] == v[r])) {
      v[r] = c;
      best[r] = at;
    }
  }
};

// avg_pool's step: every tap added, in order.
template <class T> struct pool_sum_step {
  T (&acc)[HF_CONV_ROWS];
  __device__ __forceinline__ void tap(i32 r, T c, i32) { acc[r] += c; }
};

// Window maxima and their flat index in the input plane. Only input taps compete
// (padding never wins); ties keep the first, the first NaN wins and stays. Each window
// starts from its first input tap, so taps in the padding can load -inf and every tap
// compares without a predicate (-inf beats nothing, the first tap does not beat itself).
template <class T>
__global__ void HF_CONV_ROWS_BOUNDS(T)
fused_max_pool(const T* __restrict__ x, T* __restrict__ y, i64* __restrict__ argmax,
               i64 planes, conv_geom g) {
  const i32 L = g.oh * g.ow;
  const i32 per_plane = conv_fwd_threads(g);
  const T lowest = conv_neg_inf(T(0));
  HF_CONV_ROWS_LOOP(t, planes * per_plane) {
    i64 nc;
    i32 ox, oy0, rend;  // rend >= 1
    conv_fwd_split(t, per_plane, g, nc, ox, oy0, rend);
    const T* src = x + nc * g.h * g.w;
    const i32 sx = ox * g.sw - g.pw;  // the window's first column
    i32 iy = oy0 * g.sh - g.ph;       // row 0's input row of tap (i, .)
    T v[HF_CONV_ROWS];
    i32 best[HF_CONV_ROWS];
#pragma unroll
    for (i32 r = 0; r < HF_CONV_ROWS; ++r) {
      best[r] = conv_max(iy + r * g.sh, 0) * g.w + conv_max(sx, 0);  // the first input tap
      v[r] = r < rend ? src[best[r]] : T(0);
    }
    pool_max_step<T> step = {v, best};
    pool_fwd_taps(src, g, sx, iy, rend, lowest, step);
    T* yo = y + nc * L + oy0 * g.ow + ox;
    i64* ao = argmax + nc * L + oy0 * g.ow + ox;
#pragma unroll
    for (i32 r = 0; r < HF_CONV_ROWS; ++r, yo += g.ow, ao += g.ow)
      if (r < rend) {
        *yo = v[r];
        *ao = best[r];
      }
  }
}

// Records the first bad argmax (1 + its flat position) in the device error flag.
__device__ __forceinline__ void conv_report(i64* err, i64 pos) {
  atomicCAS(reinterpret_cast<unsigned long long*>(err), 0ull, (unsigned long long)(pos + 1));
}

// The windows along one axis whose first input tap is input position y, [lo, hi] (none:
// lo > hi): those starting in the padding when y == 0, else the one starting at y, window
// q (when the phase rem is 0 and it exists).
__device__ __forceinline__ void pool_first_windows(i32 y, i32 q, i32 rem, i32 pad, i32 s,
                                                   i32 n_out, i32& lo, i32& hi) {
  lo = 0;
  hi = y == 0 ? conv_min(pad / s, n_out - 1) : -1;
  if (y > 0 && rem == 0 && q < n_out) lo = hi = q;
}

// Whether argmax a of a window is an input position inside it, checked at the window's
// first input tap, position (y, x), tap (i, j): its input taps are rows y .. y + ny - 1,
// columns x .. x + nx - 1.
__device__ __forceinline__ bool pool_argmax_ok(i64 a, i32 y, i32 x, i32 i, i32 j,
                                               const conv_geom& g) {
  const i64 d = a - ((i64)y * g.w + x);
  const i32 ny = conv_min(g.kh - i, g.h - y), nx = conv_min(g.kw - j, g.w - x);
  if (d < 0 || d >= (i64)ny * g.w) return false;
  const u32 dy = (u32)d / (u32)g.w;
  return (u32)d - dy * (u32)g.w < (u32)nx;
}

// max_unpool's gather where the window columns that reach any column fit W slots (as in
// pool_avg_slide): each window's argmax and gy are loaded once, the window rows slide.
// The first loads' rows and taps are clamped to ones that exist and masked afterwards
// (argmax -1): loads need no predicate (predicated, nvcc issued them one at a time).
template <class T, int W>
__device__ __forceinline__ void pool_unpool_slide(const T* __restrict__ gsrc,
                                                  const i64* __restrict__ asrc, const conv_geom& g,
                                                  const pool_gather_taps& p, i32 rend, i32 pos0,
                                                  i32 shw, T (&acc)[HF_CONV_ROWS]) {
  const i32 nb = p.b1 - p.b0;
  const i64* acol = asrc + (p.qx - p.b0);  // window column of tap b0; tap b0 + u is u left
  const T* gcol = gsrc + (p.qx - p.b0);
  i32 oy = p.qy - p.a0;  // row 0's window row
  const i32 rlo = conv_max(0, -oy), rhi = conv_min(rend, g.oh - oy);  // rows with a window
  i32 A[W][HF_CONV_ROWS];  // the argmaxes' low words (little-endian)
  T v[W][HF_CONV_ROWS];
#pragma unroll
  for (i32 r = 0; r < HF_CONV_ROWS; ++r) {
    const i32 o = (oy + conv_min(conv_max(r, rlo), rhi - 1)) * g.ow;
#pragma unroll
    for (i32 u = 0; u < W; ++u) {
      const i32 k = o - conv_min(u, nb - 1);
      A[u][r] = *reinterpret_cast<const i32*>(acol + k);
      v[u][r] = gcol[k];
    }
  }
#pragma unroll
  for (i32 u = 0; u < W; ++u)
#pragma unroll
    for (i32 r = 0; r < HF_CONV_ROWS; ++r)
      if (u >= nb || r < rlo || r >= rhi) A[u][r] = -1;
  for (i32 a = p.a0 + 1;; ++a) {
    --oy;  // row 0's window row for tap row a
    const bool more = a < p.a1;
    i32 fa[W];
    T fv[W];
#pragma unroll
    for (i32 u = 0; u < W; ++u) {
      const bool on = more && u < nb && oy >= 0;
      fa[u] = on ? *reinterpret_cast<const i32*>(acol + (oy * g.ow - u)) : -1;
      fv[u] = on ? gcol[oy * g.ow - u] : T(0);
    }
    // tap row a - 1, in tap order; a tap whose argmax is elsewhere (or without a window)
    // adds +0, which leaves every sum as it is (a sum from +0 is never -0)
#pragma unroll
    for (i32 u = 0; u < W; ++u)
#pragma unroll
      for (i32 r = 0; r < HF_CONV_ROWS; ++r) acc[r] += A[u][r] == pos0 + r * shw ? v[u][r] : T(0);
    if (!more) break;
#pragma unroll
    for (i32 u = 0; u < W; ++u) {
#pragma unroll
      for (i32 r = HF_CONV_ROWS - 1; r > 0; --r) {
        A[u][r] = A[u][r - 1];
        v[u][r] = v[u][r - 1];
      }
      A[u][0] = fa[u];
      v[u][0] = fv[u];
    }
  }
}

// max_unpool's gather where 3 or more window columns reach a column: tap by tap, 8 rows
// at once. Row r reads window row oyb + r clamped to the rows that exist and compares
// with its position, or with -1 (no valid argmax) where that row has no window: the
// loads need no predicate.
template <class T>
__device__ __forceinline__ void pool_unpool_gather(const T* __restrict__ gsrc,
                                                   const i64* __restrict__ asrc, const conv_geom& g,
                                                   const pool_gather_taps& p, i32 rend, i32 pos0,
                                                   i32 shw, T (&acc)[HF_CONV_ROWS]) {
  for (i32 a = p.a0; a < p.a1; ++a) {
    const i32 oyb = p.qy - a;  // row 0's window row
    const i32 rlo = conv_max(0, -oyb), rhi = conv_min(rend, g.oh - oyb);  // rows with a window
    i32 wr[HF_CONV_ROWS], pr[HF_CONV_ROWS];
#pragma unroll
    for (i32 r = 0; r < HF_CONV_ROWS; ++r) {
      wr[r] = (oyb + conv_min(conv_max(r, rlo), rhi - 1)) * g.ow + p.qx;
      pr[r] = r >= rlo && r < rhi ? pos0 + r * shw : -1;
    }
    for (i32 b = p.b0; b < p.b1; ++b) {
      i32 A[HF_CONV_ROWS];  // the argmaxes' low words (little-endian)
      T v[HF_CONV_ROWS];
#pragma unroll
      for (i32 r = 0; r < HF_CONV_ROWS; ++r) {
        A[r] = *reinterpret_cast<const i32*>(asrc + (wr[r] - b));
        v[r] = gsrc[wr[r] - b];
      }
      // in tap order; a tap whose argmax is elsewhere (or without a window) adds +0,
      // which leaves every sum as it is (a sum from +0 is never -0)
#pragma unroll
      for (i32 r = 0; r < HF_CONV_ROWS; ++r) acc[r] += A[r] == pr[r] ? v[r] : T(0);
    }
  }
}

// max_pool's backward: dx[c, iy, ix] sums, over the windows holding (iy, ix) in tap
// order, the gy of those whose argmax it is. A thread owns rows of one phase as
// col2im_add does (pool_taps). The gather compares the argmaxes' low words (a valid one
// is below 2^31): the same launch then checks every argmax, once, at its window's first
// input tap; one that is not an input position inside its window is reported (whatever
// the gather made of it), and the host raises IndexError.
template <class T>
__global__ void HF_POOL_UNPOOL_BOUNDS(T)
fused_max_unpool(const T* __restrict__ gy, const i64* __restrict__ argmax, T* __restrict__ dx,
                 i64 planes, conv_geom g, i64* err) {
  const i32 L = g.oh * g.ow, shw = g.sh * g.w;
  const i32 per_plane = conv_gather_threads(g);
  const i32 wmax = (g.kw + g.sw - 1) / g.sw;  // window columns reaching a column, at most
  HF_CONV_ROWS_LOOP(t, planes * per_plane) {
    i64 nc;
    i32 ix, y0, rend;
    conv_gather_split(t, per_plane, g, nc, ix, y0, rend);
    if (rend == 0) continue;
    const pool_gather_taps p = pool_taps(g, y0, ix, rend);
    const T* gsrc = gy + nc * L;
    const i64* asrc = argmax + nc * L;
    const i32 pos0 = y0 * g.w + ix;  // row r: pos0 + r*shw
    T acc[HF_CONV_ROWS];
#pragma unroll
    for (i32 r = 0; r < HF_CONV_ROWS; ++r) acc[r] = T(0);
    if (p.a0 < p.a1 && p.b0 < p.b1) {  // else no window reaches these rows
      if (wmax == 1)
        pool_unpool_slide<T, 1>(gsrc, asrc, g, p, rend, pos0, shw, acc);
      else if (wmax == 2)
        pool_unpool_slide<T, 2>(gsrc, asrc, g, p, rend, pos0, shw, acc);
      else
        pool_unpool_gather(gsrc, asrc, g, p, rend, pos0, shw, acc);
    }
    T* out = dx + nc * g.h * g.w + pos0;
#pragma unroll
    for (i32 r = 0; r < HF_CONV_ROWS; ++r, out += shw)
      if (r < rend) *out = acc[r];
    // The checks: the windows whose first input tap is one of this thread's positions.
    // Its column is that of windows xlo .. xhi (one, or those starting in the padding at
    // column 0); its rows y > 0 that of window qy + r (tap row 0) when the phase is 0, row
    // 0 that of those starting in the top padding.
    i32 xlo, xhi;
    pool_first_windows(ix, p.qx, p.rx, g.pw, g.sw, g.ow, xlo, xhi);
    if (xlo > xhi) continue;
    const i32 nrow = conv_min(rend, g.oh - p.qy);  // rows r < nrow have a window qy + r
    if (p.ry == 0 && nrow > 0) {
      for (i32 ox = xlo; ox <= xhi; ++ox) {
        const i32 j = ix + g.pw - ox * g.sw;
        i64 A[HF_CONV_ROWS];  // row r's, clamped to the rows with a window (no predicate)
#pragma unroll
        for (i32 r = 0; r < HF_CONV_ROWS; ++r)
          A[r] = asrc[(p.qy + conv_min(r, nrow - 1)) * g.ow + ox];
#pragma unroll
        for (i32 r = 0; r < HF_CONV_ROWS; ++r)
          if (r < nrow && y0 + r * g.sh > 0 && !pool_argmax_ok(A[r], y0 + r * g.sh, ix, 0, j, g))
            conv_report(err, nc * L + (p.qy + r) * g.ow + ox);
      }
    }
    if (y0 == 0) {
      for (i32 oy = 0; oy <= conv_min(g.ph / g.sh, g.oh - 1); ++oy)
        for (i32 ox = xlo; ox <= xhi; ++ox) {
          const i64 wi = nc * L + oy * g.ow + ox;
          if (!pool_argmax_ok(argmax[wi], 0, ix, g.ph - oy * g.sh, ix + g.pw - ox * g.sw, g))
            conv_report(err, wi);
        }
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
__global__ void HF_CONV_ROWS_BOUNDS(T)
fused_avg_pool(const T* __restrict__ x, T* __restrict__ y, i64 planes, conv_geom g,
               bool count_include_pad) {
  const i32 L = g.oh * g.ow;
  const i32 per_plane = conv_fwd_threads(g);
  HF_CONV_ROWS_LOOP(t, planes * per_plane) {
    i64 nc;
    i32 ox, oy0, rend;  // rend >= 1
    conv_fwd_split(t, per_plane, g, nc, ox, oy0, rend);
    const T* src = x + nc * g.h * g.w;
    const i32 sx = ox * g.sw - g.pw;
    T acc[HF_CONV_ROWS];
#pragma unroll
    for (i32 r = 0; r < HF_CONV_ROWS; ++r) acc[r] = T(0);
    // padding adds +0, as in the reference (a sum from +0 is never -0)
    pool_sum_step<T> step = {acc};
    pool_fwd_taps(src, g, sx, oy0 * g.sh - g.ph, rend, T(0), step);
    T* yo = y + nc * L + oy0 * g.ow + ox;
#pragma unroll
    for (i32 r = 0; r < HF_CONV_ROWS; ++r, yo += g.ow)
      if (r < rend) *yo = acc[r] / T(conv_pool_div(g, oy0 + r, ox, count_include_pad));
  }
}

// avg_pool_backward's gather for one thread (pool_taps): acc[r] += gy / divisor over the
// taps in order, HF_POOL_TAPS taps of a window row at once. FULL: every window it reads
// has the divisor kh*kw, one value, so the compiler keeps the division's reciprocal step
// out of the loop; else each window's input taps (rows cy times columns cx).
template <class T, bool FULL>
__device__ __forceinline__ void pool_avg_gather(const T* __restrict__ src, const conv_geom& g,
                                                const pool_gather_taps& p, i32 y0, i32 ix, i32 rend,
                                                T (&acc)[HF_CONV_ROWS]) {
  const T full = T(g.kh * g.kw);
  for (i32 a = p.a0; a < p.a1; ++a) {
    const i32 oyb = p.qy - a;  // row 0's window row
    const i32 rlo = conv_max(0, -oyb), rhi = conv_min(rend, g.oh - oyb);  // rows with a window
    T cy[HF_CONV_ROWS];
    if (!FULL) {
      const i32 sy = y0 - p.ry - a * g.sh;  // row 0's window's first row (y0 - i)
#pragma unroll
      for (i32 r = 0; r < HF_CONV_ROWS; ++r) {
        const i32 s = sy + r * g.sh;
        cy[r] = r >= rlo && r < rhi ? T(conv_min(s + g.kh, g.h) - conv_max(s, 0)) : T(1);
      }
    }
    for (i32 b = p.b0; b < p.b1; b += HF_POOL_TAPS) {
      bool on[HF_POOL_TAPS];
      T cx[HF_POOL_TAPS];
#pragma unroll
      for (i32 u = 0; u < HF_POOL_TAPS; ++u) {
        on[u] = b + u < p.b1;
        if (!FULL) {
          const i32 s = ix - p.rx - (b + u) * g.sw;  // the window's first column (ix - j)
          cx[u] = on[u] ? T(conv_min(s + g.kw, g.w) - conv_max(s, 0)) : T(1);
        }
      }
      // row 0's window of tap b (formed, read if it exists); tap b + u is u columns left
      const T* s = src + (oyb * g.ow + p.qx - b);
      T v[HF_POOL_TAPS][HF_CONV_ROWS];
#pragma unroll
      for (i32 r = 0; r < HF_CONV_ROWS; ++r, s += g.ow)
#pragma unroll
        for (i32 u = 0; u < HF_POOL_TAPS; ++u)
          v[u][r] = on[u] && r >= rlo && r < rhi ? s[-u] : T(0);
      // in tap order; a slot without a window adds 0 / divisor = +0, which leaves every
      // sum as it is (a sum from +0 is never -0)
#pragma unroll
      for (i32 u = 0; u < HF_POOL_TAPS; ++u)
#pragma unroll
        for (i32 r = 0; r < HF_CONV_ROWS; ++r) acc[r] += v[u][r] / (FULL ? full : cy[r] * cx[u]);
    }
  }
}

// The input rows of window row oy (its windows' divisor: that times their input columns).
__device__ __forceinline__ i32 pool_rows_in(const conv_geom& g, i32 oy) {
  const i32 s = oy * g.sh - g.ph;
  return conv_min(s + g.kh, g.h) - conv_max(s, 0);
}

// pool_avg_gather where the window columns that reach any column fit W slots (W >=
// ceil(kw / sw): 1 for a 2-wide window at stride 2, 2 for a 3-wide one). The window rows
// slide instead: tap row i + sh reads, for row r, the window row that tap row i read for
// row r - 1. So each window is loaded and divided once, and each further tap row loads
// one window row (before the adds of the current one).
template <class T, bool FULL, int W>
__device__ __forceinline__ void pool_avg_slide(const T* __restrict__ src, const conv_geom& g,
                                               const pool_gather_taps& p, i32 rend,
                                               T (&acc)[HF_CONV_ROWS]) {
  const T full = T(g.kh * g.kw);
  bool on[W];
  T cx[W];
#pragma unroll
  for (i32 u = 0; u < W; ++u) {
    on[u] = p.b0 + u < p.b1;
    if (!FULL) {
      const i32 s = (p.qx - p.b0 - u) * g.sw - g.pw;
      cx[u] = on[u] ? T(conv_min(s + g.kw, g.w) - conv_max(s, 0)) : T(1);
    }
  }
  const T* col = src + (p.qx - p.b0);  // window column of tap b0; tap b0 + u is u left
  i32 oy = p.qy - p.a0;                // row 0's window row
  const i32 rlo = conv_max(0, -oy), rhi = conv_min(rend, g.oh - oy);  // rows with a window
  // q[u][r]: gy / divisor of row r's window for tap column b0 + u (0 where none)
  T q[W][HF_CONV_ROWS];
  const T* s = col + oy * g.ow;  // formed, read if it exists
#pragma unroll
  for (i32 r = 0; r < HF_CONV_ROWS; ++r, s += g.ow)
#pragma unroll
    for (i32 u = 0; u < W; ++u) q[u][r] = on[u] && r >= rlo && r < rhi ? s[-u] : T(0);
#pragma unroll
  for (i32 r = 0; r < HF_CONV_ROWS; ++r) {
    const T cy = FULL || r < rlo || r >= rhi ? T(1) : T(pool_rows_in(g, oy + r));
#pragma unroll
    for (i32 u = 0; u < W; ++u) q[u][r] = q[u][r] / (FULL ? full : cy * cx[u]);
  }
  for (i32 a = p.a0 + 1;; ++a) {
    --oy;  // row 0's window row for tap row a
    const bool more = a < p.a1;
    T f[W];
#pragma unroll
    for (i32 u = 0; u < W; ++u) f[u] = more && on[u] && oy >= 0 ? col[oy * g.ow - u] : T(0);
    // tap row a - 1, in tap order; a slot without a window adds +0 (a sum from +0 is
    // never -0, so the sums are as the reference's)
#pragma unroll
    for (i32 u = 0; u < W; ++u)
#pragma unroll
      for (i32 r = 0; r < HF_CONV_ROWS; ++r) acc[r] += q[u][r];
    if (!more) break;
    const T cy = FULL || oy < 0 ? T(1) : T(pool_rows_in(g, oy));
#pragma unroll
    for (i32 u = 0; u < W; ++u) {
#pragma unroll
      for (i32 r = HF_CONV_ROWS - 1; r > 0; --r) q[u][r] = q[u][r - 1];
      q[u][0] = f[u] / (FULL ? full : cy * cx[u]);
    }
  }
}

// Whether every window a gather thread reads has all kh*kw taps in the input: those of
// window rows max(0, qy - a1 + 1) .. qy - a0 + rend - 1 (below oh), columns qx - b1 + 1 ..
// qx - b0, a superset of the ones it reads.
__device__ __forceinline__ bool pool_all_full(const conv_geom& g, const pool_gather_taps& p,
                                              i32 rend) {
  if (p.a0 >= p.a1 || p.b0 >= p.b1) return true;
  const i32 ylo = conv_max(0, p.qy - p.a1 + 1), yhi = conv_min(g.oh - 1, p.qy - p.a0 + rend - 1);
  const i32 xlo = p.qx - p.b1 + 1, xhi = p.qx - p.b0;
  return ylo * g.sh >= g.ph && yhi * g.sh - g.ph + g.kh <= g.h && xlo * g.sw >= g.pw &&
         xhi * g.sw - g.pw + g.kw <= g.w;
}

// pool_avg_slide with as many slots as window columns can reach a column (the same for
// every thread: no divergence), else pool_avg_gather.
template <class T, bool FULL>
__device__ __forceinline__ void pool_avg_rows(const T* __restrict__ src, const conv_geom& g,
                                              const pool_gather_taps& p, i32 y0, i32 ix, i32 rend,
                                              T (&acc)[HF_CONV_ROWS]) {
  const i32 wmax = (g.kw + g.sw - 1) / g.sw;
  if (wmax == 1)
    pool_avg_slide<T, FULL, 1>(src, g, p, rend, acc);
  else if (wmax == 2)
    pool_avg_slide<T, FULL, 2>(src, g, p, rend, acc);
  else
    pool_avg_gather<T, FULL>(src, g, p, y0, ix, rend, acc);
}

// avg_pool's backward: dx[c, iy, ix] sums gy / divisor over its windows, in tap order
// (each term divided first, as the reference does). A thread owns rows of one phase as
// col2im_add does (pool_taps).
template <class T>
__global__ void HF_CONV_ROWS_BOUNDS(T)
fused_avg_pool_backward(const T* __restrict__ gy, T* __restrict__ dx, i64 planes, conv_geom g,
                        bool count_include_pad) {
  const i32 L = g.oh * g.ow, shw = g.sh * g.w;
  const i32 per_plane = conv_gather_threads(g);
  HF_CONV_ROWS_LOOP(t, planes * per_plane) {
    i64 nc;
    i32 ix, y0, rend;
    conv_gather_split(t, per_plane, g, nc, ix, y0, rend);
    if (rend == 0) continue;
    const pool_gather_taps p = pool_taps(g, y0, ix, rend);
    T acc[HF_CONV_ROWS];
#pragma unroll
    for (i32 r = 0; r < HF_CONV_ROWS; ++r) acc[r] = T(0);
    if (p.a0 < p.a1 && p.b0 < p.b1) {  // else no window reaches these rows
      if (count_include_pad || pool_all_full(g, p, rend))
        pool_avg_rows<T, true>(gy + nc * L, g, p, y0, ix, rend, acc);
      else
        pool_avg_rows<T, false>(gy + nc * L, g, p, y0, ix, rend, acc);
    }
    T* out = dx + nc * g.h * g.w + y0 * g.w + ix;
#pragma unroll
    for (i32 r = 0; r < HF_CONV_ROWS; ++r, out += shw)
      if (r < rend) *out = acc[r];
  }
}

}  // namespace hf
