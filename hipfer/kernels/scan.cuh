// scan.cuh -- Cumulative: inclusive running sums / products along one axis, in a fixed
// order (no atomics), so a float result repeats bit-for-bit run to run.
//
// The operand is seen as `lines` (every axis but the scanned one: N-d shape and element
// strides into x and out) x `len` elements along the axis (strides x_ax / out_ax).
// include_initial writes the identity at out position 0 and shifts the rest by one.
// Running values, chunk totals and the tile totals / carries accumulate in
// calc_of<T> (float for half: each output rounds once, not every step as NumPy's cumsum).
//   scan_lines -- one thread per line, a plain sequential loop (short axes, many lines);
//   scan_tiles -- one block per (line, tile of tile_len elements): each thread scans a
//                 contiguous chunk, the block scans the chunk totals (thread 0, in order),
//                 then each thread rescans its chunk from its prefix. With several tiles per
//                 line Python runs it three times: tile totals only (mode SCAN_TOTALS), an
//                 include_initial scan of the totals (the tiles' carries), and the final
//                 pass reading `carry` (SCAN_CARRY). Chunk and tile sizes come from the shapes alone.
#pragma once
#include "common.cuh"

// Threads per scan_tiles block (kernels/scan.py BLOCK): the shared chunk totals' size.
#define HF_SCAN_BLOCK 256

namespace hf {

enum { SCAN_PLAIN = 0, SCAN_TOTALS = 1, SCAN_CARRY = 2 };  // kernels/scan.py MODE_*

struct scan_add {
  template <class T> __device__ static T identity() { return T(0); }
  template <class T> __device__ static T apply(T a, T b) { return wrap_add(a, b); }
};
struct scan_mul {
  template <class T> __device__ static T identity() { return T(1); }
  template <class T> __device__ static T apply(T a, T b) { return wrap_mul(a, b); }
};

template <class Op, class T>
__global__ void scan_lines(const T* x, bool cj, T* out, i64 n_lines, i64 len, Shape lines,
                           Strides x_lines, Strides out_lines, i64 x_ax, i64 out_ax,
                           bool include_initial) {
  typedef typename calc_of<T>::type A;
  HF_GRID_LOOP(l, n_lines) {
    const T* xl = x + offset_of(l, lines, x_lines);
    T* ol = out + offset_of(l, lines, out_lines);
    A acc = Op::template identity<A>();
    if (include_initial) {
      ol[0] = acc;
      ol += out_ax;
    }
    for (i64 k = 0; k < len; ++k) {
      acc = Op::apply(acc, (A)load(xl, k * x_ax, cj));
      ol[k * out_ax] = acc;
    }
  }
}

// mode SCAN_TOTALS: write each tile's total to totals[line * n_tiles + tile], no output;
// SCAN_CARRY: start tile t of line l from carry[l * (n_tiles + 1) + t]; SCAN_PLAIN: from
// the identity (one tile per line). Unused pointers may be any array.
template <class Op, class T>
__global__ void scan_tiles(const T* x, bool cj, T* out, typename calc_of<T>::type* totals,
                           const typename calc_of<T>::type* carry, i32 mode,
                           i64 n_lines, i64 len, Shape lines, Strides x_lines, Strides out_lines, i64 x_ax,
                           i64 out_ax, bool include_initial, i64 tile_len, i64 n_tiles) {
  typedef typename calc_of<T>::type A;
  __shared__ __align__(16) unsigned char raw[HF_SCAN_BLOCK * sizeof(A)];
  A* part = reinterpret_cast<A*>(raw);
  const i64 B = blockDim.x;
  const i64 chunk = (tile_len + B - 1) / B;
  for (i64 task = blockIdx.x; task < n_lines * n_tiles; task += gridDim.x) {
    const i64 l = task / n_tiles, tile = task - l * n_tiles;
    const T* xl = x + offset_of(l, lines, x_lines);
    const i64 t0 = tile * tile_len;
    const i64 t1 = t0 + tile_len < len ? t0 + tile_len : len;
    i64 k0 = t0 + threadIdx.x * chunk;
    if (k0 > t1) k0 = t1;
    const i64 k1 = k0 + chunk < t1 ? k0 + chunk : t1;
    // 1. this thread's chunk total
    A acc = Op::template identity<A>();
    for (i64 k = k0; k < k1; ++k) acc = Op::apply(acc, (A)load(xl, k * x_ax, cj));
    __syncthreads();  // the previous task's readers of `part` are done
    part[threadIdx.x] = acc;
    __syncthreads();
    // 2. exclusive prefix of the chunk totals, in thread order
    if (threadIdx.x == 0) {
      A run = mode == SCAN_CARRY ? carry[l * (n_tiles + 1) + tile] : Op::template identity<A>();
      for (i64 t = 0; t < B; ++t) {
        const A v = part[t];
        part[t] = run;
        run = Op::apply(run, v);
      }
      if (mode == SCAN_TOTALS) totals[l * n_tiles + tile] = run;
    }
    __syncthreads();
    if (mode == SCAN_TOTALS) continue;
    // 3. rescan the chunk from its prefix
    T* ol = out + offset_of(l, lines, out_lines);
    if (include_initial) {
      if (tile == 0 && threadIdx.x == 0) ol[0] = Op::template identity<T>();
      ol += out_ax;
    }
    acc = part[threadIdx.x];
    for (i64 k = k0; k < k1; ++k) {
      acc = Op::apply(acc, (A)load(xl, k * x_ax, cj));
      ol[k * out_ax] = acc;
    }
  }
}

}  // namespace hf
