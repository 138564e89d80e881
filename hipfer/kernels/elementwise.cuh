// elementwise.cuh -- the elementwise kernel templates (out[i] = f(inputs[i])).
//
// Every kernel comes in up to three variants:
//   *_vec   all operands dense with the same layout (one flat index for all) and aligned
//           pointers, or broadcast scalars (bitmask `splat`: read once): each thread
//           handles V = vec_width<...> consecutive elements with one vector load per input
//           (16 bytes of the narrowest operand, at most 32 of the widest) and one vector
//           store; a scalar tail covers n % V.
//   *_nd    any layout: hf::Shape plus one hf::Strides (in elements) per operand, output
//           included (broadcast inputs have stride 0). Each thread takes runs of
//           N = nd_run<...> consecutive elements of the innermost axis: one nd_offsets per
//           run, all loads of the run issued before use; an operand with inner stride 1
//           (aligned) is read with vector loads, one with inner stride 0 once per run.
//           After merging axes plain contiguous and 1-d strided operands are rank 1 (no
//           division at all): the contiguous path for unaligned pointers. An input laid
//           out transposed to the output arrives with its two axes cut into blocks (the
//           host's _blocked), so one thread block reads a block of each operand.
//   *_tile  (unary; instantiated for the plain copies only, see elementwise.py tile_of)
//           an input whose unit-stride axis is the second to last while the output's is
//           the last (a transposed array made contiguous): tiles of the last two axes, the
//           input read coalesced along its own axis into shared memory, the output
//           written coalesced along its own.
// Inputs may be read conjugated: `conj` is a bitmask (bit k: input k), folded into the
// load. Ops are the functors of ops.cuh; the instantiations are listed by
// hipfer/kernels/elementwise.py.
// (inlined once by hipfer.kernels.module_source: no include guard needed)
#include "ops.cuh"

namespace hf {

// ---- the vector path ----------------------------------------------------------------
template <class... T> struct widest;
template <class T> struct widest<T> { static const int value = sizeof(T); };
template <class T, class U, class... Rest> struct widest<T, U, Rest...> {
  static const int value = sizeof(T) > widest<U, Rest...>::value ? (int)sizeof(T) : widest<U, Rest...>::value;
};
template <class... T> struct narrowest;
template <class T> struct narrowest<T> { static const int value = sizeof(T); };
template <class T, class U, class... Rest> struct narrowest<T, U, Rest...> {
  static const int value = sizeof(T) < narrowest<U, Rest...>::value ? (int)sizeof(T) : narrowest<U, Rest...>::value;
};
// Elements in one 16-byte access of the widest operand.
template <class... T> struct pack_width { static const int value = 16 / widest<T...>::value; };
// Elements per thread on the vector path: a 16-byte access for the narrowest operand, at
// most two for the widest (abs of complex64 stores 16 bytes of float32 a thread, not 8).
template <class... T> struct vec_width {
  static const int a = 16 / narrowest<T...>::value, b = 32 / widest<T...>::value;
  static const int value = a < b ? a : b;
};

template <class T> __device__ __forceinline__ T maybe_conj(T v, bool c) { return c ? conj(v) : v; }
// Vector k of an input, or its one element repeated when it is a broadcast scalar
// (`splat`, uniform per launch: x * 2.0 and where(c, x, 0.0) stay on the vector path).
template <int V, class T> __device__ __forceinline__ pack<T, V> load_vec(const T* p, i64 k, bool splat) {
  if (!splat) return load_pack<V>(p, k);
  pack<T, V> r;
  const T x = p[0];
#pragma unroll
  for (int j = 0; j < V; ++j) r.v[j] = x;
  return r;
}
// Element t of an input on the vector path's tail.
#define HF_AT(splat, t) ((splat) ? 0 : (t))

// ---- the N-d path ---------------------------------------------------------------------
__device__ __forceinline__ void add_strides(i64*, i64, int) {}
template <class... S>
__device__ __forceinline__ void add_strides(i64* off, i64 r, int d, const Strides& s, const S&... rest) {
  off[0] += r * s.s[d];
  add_strides(off + 1, r, d, rest...);
}

// 64-bit division is a long instruction sequence: one out-of-line copy per module keeps
// the kernels small (it only runs for indices past 2^32).
__device__ __noinline__ i64 div64(i64 a, i64 b) { return a / b; }

// 32-bit division when both fit (far cheaper than 64-bit).
__device__ __forceinline__ i64 divq(i64 a, i64 b) {
  return ((a | b) >> 32) == 0 ? (i64)((u32)a / (u32)b) : div64(a, b);
}

// (indices into Shape / Strides are constants: see `at` in common.cuh)
__device__ __forceinline__ void pick_strides(i64*, int) {}
template <class... S>
__device__ __forceinline__ void pick_strides(i64* out, int d, const Strides& s, const S&... rest) {
  out[0] = at(s.s, d);
  pick_strides(out + 1, d, rest...);
}

// off[k] = offset in operand k of element i (C order) of the first `nd` axes of shape.
// The axes are peeled innermost first by a chain with constant indices; the switch
// enters it at axis nd - 1 (one jump, where a compare per absent axis cost an issue-bound
// kernel ~20 instructions a run at rank 2).
#define HF_ND_PEEL(d)                             \
  case d + 1: {                                   \
    const i64 n = shape.dim[d];                   \
    const i64 q = divq(i, n);                     \
    add_strides(off, i - q * n, d, st...);        \
    i = q;                                        \
  }
template <class... S>
__device__ __forceinline__ void nd_offsets_outer(i64 i, const Shape& shape, int nd, i64* off, const S&... st) {
  for (int k = 0; k < (int)sizeof...(S); ++k) off[k] = 0;
  static_assert(HF_MAX_NDIM == 12, "HF_ND_PEEL chain below covers 12 axes");
  switch (nd) {
    default:
    HF_ND_PEEL(11) HF_ND_PEEL(10) HF_ND_PEEL(9) HF_ND_PEEL(8) HF_ND_PEEL(7) HF_ND_PEEL(6)
    HF_ND_PEEL(5) HF_ND_PEEL(4) HF_ND_PEEL(3) HF_ND_PEEL(2) HF_ND_PEEL(1)
    case 1:
    case 0:
      break;
  }
  add_strides(off, i, 0, st...);  // nd == 0: i == 0
}
#undef HF_ND_PEEL

// ---- runs of the N-d path ----
// Elements per thread and run: at least 4 (loads in flight) and one 16-byte access of the
// widest operand (hipfer.kernels.elementwise.nd_run mirrors it).
template <class... T> struct nd_run {
  static const int value = pack_width<T...>::value > 4 ? pack_width<T...>::value : 4;
};
// The vector access of one operand within a run: up to 16 bytes, at most the run.
template <int N, class T> struct run_pack {
  static const int value = (16 / (int)sizeof(T)) < N ? 16 / (int)sizeof(T) : N;
};
template <int N, class T> __device__ __forceinline__ bool run_aligned(const T* q) {
  return (reinterpret_cast<u64>(q) & (u64)(run_pack<N, T>::value * sizeof(T) - 1)) == 0;
}

// v[j] = p[off + j * s] for j < cnt (conjugated when cj); lanes j >= cnt repeat lane 0,
// so the op runs on loaded values only. s == 0: one load; s == 1 and a full aligned run:
// vector loads.
template <int N, class T>
__device__ __forceinline__ void load_run(T (&v)[N], const T* p, i64 off, i64 s, int cnt, bool cj) {
  const T* q = p + off;
  if (s == 0) {
    const T x = load(q, 0, cj);
#pragma unroll
    for (int j = 0; j < N; ++j) v[j] = x;
  } else if (s == 1 && cnt == N && run_aligned<N>(q)) {
    const int P = run_pack<N, T>::value;
#pragma unroll
    for (int k = 0; k < N / P; ++k) {
      const pack<T, P> w = load_pack<P>(q, k);
#pragma unroll
      for (int j = 0; j < P; ++j) v[k * P + j] = maybe_conj(w.v[j], cj);
    }
  } else {
#pragma unroll
    for (int j = 0; j < N; ++j) v[j] = load(q, (j < cnt ? j : 0) * s, cj);
  }
}

// p[off + j * s] = v[j] for j < cnt (vector stores for a full aligned unit-stride run).
template <int N, class T>
__device__ __forceinline__ void store_run(T* p, i64 off, i64 s, int cnt, const T (&v)[N]) {
  T* q = p + off;
  if (s == 1 && cnt == N && run_aligned<N>(q)) {
    const int P = run_pack<N, T>::value;
#pragma unroll
    for (int k = 0; k < N / P; ++k) {
      pack<T, P> w;
#pragma unroll
      for (int j = 0; j < P; ++j) w.v[j] = v[k * P + j];
      store_pack<P>(q, k, w);
    }
  } else {
#pragma unroll
    for (int j = 0; j < N; ++j)
      if (j < cnt) q[j * s] = v[j];
  }
}

// f(i0, off, cnt) for every run: cnt (<= N) consecutive elements of the innermost axis
// starting at flat C index i0, off[k] the run's first offset in operand k. Grid-stride
// over (n / n_inner) * ceil(n_inner / N) runs (hipfer.kernels.elementwise.nd_runs).
template <int N, class F, class... S>
__device__ __forceinline__ void for_runs(i64 n, const Shape& shape, F&& f, const S&... st) {
  const int last = shape.ndim - 1;
  const i64 n0 = at(shape.dim, last);
  const i64 per_row = (n0 + N - 1) / N;
  i64 inner[sizeof...(S)];
  pick_strides(inner, last, st...);
  const i64 runs = last > 0 ? divq(n, n0) * per_row : per_row;
  HF_GRID_LOOP(w, runs) {
    i64 row = 0, c = w;
    if (last > 0) {
      row = divq(w, per_row);
      c = w - row * per_row;
    }
    i64 off[sizeof...(S)];
    nd_offsets_outer(row, shape, last, off, st...);
    const i64 j0 = c * N;
#pragma unroll
    for (int k = 0; k < (int)sizeof...(S); ++k) off[k] += j0 * inner[k];
    const i64 rem = n0 - j0;
    f(row * n0 + j0, off, rem < N ? (int)rem : N);
  }
}

// ---- tiles of the last two axes ----
// Tiles of TA = 32 MA (axis a = ndim-2) x TB = 32 MB (axis b = ndim-1) elements, by the
// widest operand: both edges at least 128 bytes (the rows a transposed operand is read
// in, and those the output is written in, are that long), at most 16 KiB staged per
// operand. Blocks of 256 threads (32 lanes x 8 rows: hipfer.kernels.elementwise.TILE_BLOCK)
// walk over batch x ceil(na / TA) x ceil(nb / TB) tiles.
#define HF_TILE 32
#define HF_TILE_ROWS 8
#define HF_TILE_BAND 16
template <class... T> struct tile_geom {
  static const int size = widest<T...>::value;
  static const int MA = size >= 16 ? 1 : size >= 4 ? 2 : 4;
  static const int MB = size >= 8 ? 1 : 2;
  static const int TA = HF_TILE * MA, TB = HF_TILE * MB;
  static const int E = 4 * MA * MB;  // elements per thread and tile
};
// Row padding of a staged tile of U: a row is an odd number of 4-byte words.
template <class U> struct tile_pad { static const int value = sizeof(U) >= 4 ? 1 : 4 / (int)sizeof(U); };
// Launch bounds of the tiled kernels: blocks of 256 threads; on CUDA, for 16 or more
// elements per thread, at least 2 blocks per SM (<= 128 registers; measured on an H200:
// 1.2-1.4x faster for float32 and float16, slower for 8- and 16-byte elements, which
// get no minimum: 0).
template <class G> struct tile_min_blocks { static const int value = G::E >= 16 ? 2 : 0; };
#if HF_HIP
#  define HF_TILE_BOUNDS(...) __launch_bounds__(256)
#else
#  define HF_TILE_BOUNDS(...) __launch_bounds__(256, tile_min_blocks<__VA_ARGS__>::value)
#endif
// A padded tile of U in shared memory, name[b][a], as raw bytes (complex has
// constructors, which __shared__ variables may not have).
template <class T> struct alignas(alignof(T)) raw_of { unsigned char b[sizeof(T)]; };
#define HF_TILE_SHARED(U, name, G) \
  __shared__ raw_of<U> name##_raw[G::TB * (G::TA + tile_pad<U>::value)]; \
  U (*name)[G::TA + tile_pad<U>::value] = reinterpret_cast<U (*)[G::TA + tile_pad<U>::value]>(name##_raw)

// f(off, ea, eb): off[k] the tile's first offset in operand k, ea x eb its extent.
template <class G, class F, class... S>
__device__ __forceinline__ void for_tiles(i64 n, const Shape& shape, F&& f, const S&... st) {
  const int la = shape.ndim - 2, lb = shape.ndim - 1;
  const i64 na = at(shape.dim, la), nb = at(shape.dim, lb);
  i64 sa[sizeof...(S)], sb[sizeof...(S)];
  pick_strides(sa, la, st...);
  pick_strides(sb, lb, st...);
  const i64 ta = (na + G::TA - 1) / G::TA, tb = (nb + G::TB - 1) / G::TB;
  const i64 per = ta * tb;
  const i64 tiles = divq(n, na * nb) * per;
  for (i64 t = blockIdx.x; t < tiles; t += gridDim.x) {
    const i64 bt = divq(t, per), r = t - bt * per;
    // Tiles in bands of HF_TILE_BAND rows of tiles, down each band's column first: the
    // tiles in flight at once span a compact block of both the input and the output
    // (few DRAM pages and TLB entries), not whole rows of the input.
    const i64 band = divq(r, HF_TILE_BAND * tb), q = r - band * (HF_TILE_BAND * tb);
    const i64 rows = ta - band * HF_TILE_BAND < HF_TILE_BAND ? ta - band * HF_TILE_BAND : HF_TILE_BAND;
    const i64 ib = divq(q, rows), ia = band * HF_TILE_BAND + (q - ib * rows);
    i64 off[sizeof...(S)];
    nd_offsets_outer(bt, shape, la, off, st...);
#pragma unroll
    for (int k = 0; k < (int)sizeof...(S); ++k) off[k] += ia * G::TA * sa[k] + ib * G::TB * sb[k];
    const i64 ra = na - ia * G::TA, rb = nb - ib * G::TB;
    f(off, ra < G::TA ? (int)ra : G::TA, rb < G::TB ? (int)rb : G::TB);
  }
}

// An operand read through shared memory: unit stride (or at least a smaller one) along a
// than along b. Broadcast along a (sa == 0) reads directly.
__device__ __forceinline__ bool tile_transposed(i64 sa, i64 sb) {
  const i64 aa = sa < 0 ? -sa : sa, ab = sb < 0 ? -sb : sb;
  return aa != 0 && aa < ab;
}

// Stage a transposed operand's tile in sh[b][a], lanes along a (coalesced for it: a
// warp reads TA consecutive elements of a row), all loads issued before the stores; the
// caller brackets the staging with __syncthreads. Thread: lane tx = threadIdx.x % 32,
// row ty = threadIdx.x / 32; it stages (a = tx + 32 ma, b = ty + 8 kb).
template <class G, class U, int LD>
__device__ __forceinline__ void tile_stage(U (*sh)[LD], const U* p, i64 off, i64 sa, i64 sb, int ea, int eb,
                                           bool cj) {
  const int tx = threadIdx.x % HF_TILE, ty = threadIdx.x / HF_TILE;
  U v[G::E];
#pragma unroll
  for (int kb = 0; kb < 4 * G::MB; ++kb)
#pragma unroll
    for (int ma = 0; ma < G::MA; ++ma) {
      const int a = tx + ma * HF_TILE, b = ty + kb * HF_TILE_ROWS;
      if (a < ea && b < eb) v[kb * G::MA + ma] = load(p, off + a * sa + b * sb, cj);
    }
#pragma unroll
  for (int kb = 0; kb < 4 * G::MB; ++kb)
#pragma unroll
    for (int ma = 0; ma < G::MA; ++ma) {
      const int a = tx + ma * HF_TILE, b = ty + kb * HF_TILE_ROWS;
      if (a < ea && b < eb) sh[b][a] = v[kb * G::MA + ma];
    }
}
// This thread's element e of the tile when computing (lanes along b, as the output is
// written): a = ty + 8 (e % 4 MA), b = tx + 32 (e / 4 MA).
template <class G> __device__ __forceinline__ int tile_a(int e) {
  return (int)(threadIdx.x / HF_TILE) + (e % (4 * G::MA)) * HF_TILE_ROWS;
}
template <class G> __device__ __forceinline__ int tile_b(int e) {
  return (int)(threadIdx.x % HF_TILE) + (e / (4 * G::MA)) * HF_TILE;
}
template <class G> __device__ __forceinline__ bool tile_in(int e, int ea, int eb) {
  return tile_a<G>(e) < ea && tile_b<G>(e) < eb;
}

// This thread's elements of an operand: from sh when staged (tr), else from memory.
template <class G, class U, int LD>
__device__ __forceinline__ void tile_read(U (&v)[G::E], U (*sh)[LD], bool tr, const U* p, i64 off, i64 sa, i64 sb,
                                          int ea, int eb, bool cj) {
  if (tr) {
#pragma unroll
    for (int e = 0; e < G::E; ++e)
      if (tile_in<G>(e, ea, eb)) v[e] = sh[tile_b<G>(e)][tile_a<G>(e)];
  } else {
#pragma unroll
    for (int e = 0; e < G::E; ++e)
      if (tile_in<G>(e, ea, eb)) v[e] = load(p, off + tile_a<G>(e) * sa + tile_b<G>(e) * sb, cj);
  }
}
template <class G, class U>
__device__ __forceinline__ void tile_write(U* p, i64 off, i64 sa, i64 sb, int ea, int eb, const U (&v)[G::E]) {
#pragma unroll
  for (int e = 0; e < G::E; ++e)
    if (tile_in<G>(e, ea, eb)) p[off + tile_a<G>(e) * sa + tile_b<G>(e) * sb] = v[e];
}

// ---- helper functors ------------------------------------------------------------------
// Conversion to R (PointwiseCast, MakeContiguous: cast_op<T> on T is a copy).
template <class R> struct cast_op {
  template <class T> __device__ __forceinline__ R operator()(T x) const { return cast<R>(x); }
};
// A half source converts from its own bits (a half -> half copy stays a copy).
template <class R> struct op_arg<cast_op<R>, half> { typedef half type; };

// complex * real of the same precision (ComplexScale).
struct scale_op {
  template <class R> __device__ __forceinline__ complex<R> operator()(complex<R> a, R s) const { return a * s; }
};

// Generate: out[i] = a (fill) or a + i * b (iota), computed in the work type W of a and
// b (integers wrap; floats round the product and the sum separately, as NumPy does).
struct gen_fill {
  template <class W> __device__ __forceinline__ W operator()(i64, W a, W) const { return a; }
};
struct gen_iota {
  template <class W> __device__ __forceinline__ W operator()(i64 i, W a, W b) const {
    if constexpr (is_complex<W>::value) return a + W((typename real_of<W>::type)i) * b;
    else if constexpr (is_float<W>::value) return a + (W)fm::mul_rn((W)i, b);  // half: rounds the product too
    else { typedef typename wrap_of<W>::type U; return (W)((U)a + (U)i * (U)b); }
  }
};

// Epilogues of the scaled kernels: how the op's value v meets the old out value o.
// out = alpha * v + beta * out in T's arithmetic (bool: and / or); beta == 0 never reads out.
struct ep_axpby {
  template <class T> __device__ __forceinline__ static bool reads_out(T beta) { return !(beta == T(0)); }
  template <class T> __device__ __forceinline__ static T apply(T v, T o, T alpha, T beta, bool rd) {
    v = op_multiply()(alpha, v);
    return rd ? op_add()(v, op_multiply()(beta, o)) : v;
  }
};
// out = Acc(out, v): a tropical semiring's sum (alpha == 1, beta == 1).
template <class Acc> struct ep_accumulate {
  template <class T> __device__ __forceinline__ static bool reads_out(T) { return true; }
  template <class T> __device__ __forceinline__ static T apply(T v, T o, T, T, bool) { return Acc()(o, v); }
};

// ============================== the kernels ============================================
// The tail of a vector kernel: elements nv * V .. n - 1, one per thread.
#define HF_TAIL_LOOP(t, n, V) \
  for (i64 t = (n) / (V) * (V) + (i64)blockIdx.x * blockDim.x + threadIdx.x; t < (n); \
       t += (i64)blockDim.x * gridDim.x)

// ---- unary: out = Op(x) ----
template <class Op, class T, class R>
__global__ void ew_unary_vec(const T* x, R* out, i64 n, int splat, int conj) {
  const int V = vec_width<T, R>::value;
  const bool c0 = conj & 1, s0 = splat & 1;
  HF_GRID_LOOP(k, n / V) {
    pack<T, V> a = load_vec<V>(x, k, s0);
    pack<R, V> r;
#pragma unroll
    for (int j = 0; j < V; ++j) r.v[j] = op_call<Op>(maybe_conj(a.v[j], c0));
    store_pack<V>(out, k, r);
  }
  HF_TAIL_LOOP(t, n, V) out[t] = op_call<Op>(load(x, HF_AT(s0, t), c0));
}

template <class Op, class T, class R>
__global__ void ew_unary_nd(const T* x, R* out, i64 n, Shape shape, Strides sx, Strides so, int conj) {
  constexpr int N = nd_run<T, R>::value;
  const bool c0 = conj & 1;
  const int l = shape.ndim - 1;
  const i64 ix = at(sx.s, l), io = at(so.s, l);
  for_runs<N>(n, shape, [&](i64, const i64* off, int cnt) {
    T a[N];
    R r[N];
    load_run(a, x, off[0], ix, cnt, c0);
#pragma unroll
    for (int j = 0; j < N; ++j) r[j] = op_call<Op>(a[j]);
    store_run(out, off[1], io, cnt, r);
  }, sx, so);
}

template <class Op, class T, class R>
__global__ void HF_TILE_BOUNDS(tile_geom<T, R>) ew_unary_tile(const T* x, R* out, i64 n, Shape shape, Strides sx, Strides so, int conj) {
  typedef tile_geom<T, R> G;
  constexpr int E = G::E;
  HF_TILE_SHARED(T, shx, G);
  const bool c0 = conj & 1;
  const int la = shape.ndim - 2, lb = shape.ndim - 1;
  const i64 sx_a = at(sx.s, la), sx_b = at(sx.s, lb), so_a = at(so.s, la), so_b = at(so.s, lb);
  const bool tr = tile_transposed(sx_a, sx_b);
  for_tiles<G>(n, shape, [&](const i64* off, int ea, int eb) {
    if (tr) {
      __syncthreads();
      tile_stage<G>(shx, x, off[0], sx_a, sx_b, ea, eb, c0);
      __syncthreads();
    }
    T a[E];
    R r[E];
    tile_read<G>(a, shx, tr, x, off[0], sx_a, sx_b, ea, eb, c0);
#pragma unroll
    for (int k = 0; k < E; ++k)
      if (tile_in<G>(k, ea, eb)) r[k] = op_call<Op>(a[k]);
    tile_write<G>(out, off[1], so_a, so_b, ea, eb, r);
  }, sx, so);
}

// ---- binary: out = Op(a, b) ----
template <class Op, class A, class B, class R>
__global__ void ew_binary_vec(const A* a, const B* b, R* out, i64 n, int splat, int conj) {
  const int V = vec_width<A, B, R>::value;
  const bool c0 = conj & 1, c1 = conj & 2, s0 = splat & 1, s1 = splat & 2;
  HF_GRID_LOOP(k, n / V) {
    pack<A, V> pa = load_vec<V>(a, k, s0);
    pack<B, V> pb = load_vec<V>(b, k, s1);
    pack<R, V> r;
#pragma unroll
    for (int j = 0; j < V; ++j) r.v[j] = op_call<Op>(maybe_conj(pa.v[j], c0), maybe_conj(pb.v[j], c1));
    store_pack<V>(out, k, r);
  }
  HF_TAIL_LOOP(t, n, V) out[t] = op_call<Op>(load(a, HF_AT(s0, t), c0), load(b, HF_AT(s1, t), c1));
}

template <class Op, class A, class B, class R>
__global__ void ew_binary_nd(const A* a, const B* b, R* out, i64 n, Shape shape, Strides sa, Strides sb,
                             Strides so, int conj) {
  constexpr int N = nd_run<A, B, R>::value;
  const bool c0 = conj & 1, c1 = conj & 2;
  const int l = shape.ndim - 1;
  const i64 ia = at(sa.s, l), ib = at(sb.s, l), io = at(so.s, l);
  for_runs<N>(n, shape, [&](i64, const i64* off, int cnt) {
    A va[N];
    B vb[N];
    R r[N];
    load_run(va, a, off[0], ia, cnt, c0);
    load_run(vb, b, off[1], ib, cnt, c1);
#pragma unroll
    for (int j = 0; j < N; ++j) r[j] = op_call<Op>(va[j], vb[j]);
    store_run(out, off[2], io, cnt, r);
  }, sa, sb, so);
}

// ---- where: out = c ? a : b (conj bits 1 and 2 are a and b) ----
template <class T>
__global__ void ew_where_vec(const bool* c, const T* a, const T* b, T* out, i64 n, int splat, int conj) {
  const int V = vec_width<bool, T>::value;
  const bool c1 = conj & 2, c2 = conj & 4, s0 = splat & 1, s1 = splat & 2, s2 = splat & 4;
  HF_GRID_LOOP(k, n / V) {
    pack<bool, V> pc = load_vec<V>(c, k, s0);
    pack<T, V> pa = load_vec<V>(a, k, s1), pb = load_vec<V>(b, k, s2), r;
#pragma unroll
    for (int j = 0; j < V; ++j) r.v[j] = pc.v[j] ? maybe_conj(pa.v[j], c1) : maybe_conj(pb.v[j], c2);
    store_pack<V>(out, k, r);
  }
  HF_TAIL_LOOP(t, n, V) out[t] = c[HF_AT(s0, t)] ? load(a, HF_AT(s1, t), c1) : load(b, HF_AT(s2, t), c2);
}

template <class T>
__global__ void ew_where_nd(const bool* c, const T* a, const T* b, T* out, i64 n, Shape shape, Strides sc,
                            Strides sa, Strides sb, Strides so, int conj) {
  constexpr int N = nd_run<bool, T>::value;
  const bool c1 = conj & 2, c2 = conj & 4;
  const int l = shape.ndim - 1;
  const i64 ic = at(sc.s, l), ia = at(sa.s, l), ib = at(sb.s, l), io = at(so.s, l);
  for_runs<N>(n, shape, [&](i64, const i64* off, int cnt) {
    bool vc[N];
    T va[N], vb[N], r[N];
    load_run(vc, c, off[0], ic, cnt, false);
    load_run(va, a, off[1], ia, cnt, c1);
    load_run(vb, b, off[2], ib, cnt, c2);
#pragma unroll
    for (int j = 0; j < N; ++j) r[j] = vc[j] ? va[j] : vb[j];
    store_run(out, off[3], io, cnt, r);
  }, sc, sa, sb, so);
}

// ---- generate: out[i] = T(Gen(i, a, b)), a and b of the work type W ----
template <class Gen, class T, class W>
__global__ void ew_generate_vec(T* out, i64 n, W a, W b) {
  const int V = vec_width<T>::value;
  HF_GRID_LOOP(k, n / V) {
    pack<T, V> r;
#pragma unroll
    for (int j = 0; j < V; ++j) r.v[j] = cast<T>(Gen()(k * V + j, a, b));
    store_pack<V>(out, k, r);
  }
  HF_TAIL_LOOP(t, n, V) out[t] = cast<T>(Gen()(t, a, b));
}

template <class Gen, class T, class W>
__global__ void ew_generate_nd(T* out, i64 n, Shape shape, Strides so, W a, W b) {
  constexpr int N = nd_run<T>::value;
  const i64 io = at(so.s, shape.ndim - 1);
  for_runs<N>(n, shape, [&](i64 i0, const i64* off, int cnt) {
    T r[N];
#pragma unroll
    for (int j = 0; j < N; ++j) r[j] = cast<T>(Gen()(i0 + j, a, b));
    store_run(out, off[0], io, cnt, r);
  }, so);
}

// ---- scaled unary: out = Epi(Op(x), out; alpha, beta) ----
template <class Op, class Epi, class T>
__global__ void ew_unary_scaled_vec(const T* x, T* out, i64 n, int splat, int conj, T alpha, T beta) {
  const int V = vec_width<T>::value;
  const bool c0 = conj & 1, s0 = splat & 1, rd = Epi::reads_out(beta);
  HF_GRID_LOOP(k, n / V) {
    pack<T, V> a = load_vec<V>(x, k, s0), o{}, r;
    if (rd) o = load_pack<V>(out, k);
#pragma unroll
    for (int j = 0; j < V; ++j)
      r.v[j] = Epi::apply(T(op_call<Op>(maybe_conj(a.v[j], c0))), o.v[j], alpha, beta, rd);
    store_pack<V>(out, k, r);
  }
  HF_TAIL_LOOP(t, n, V)
    out[t] = Epi::apply(T(op_call<Op>(load(x, HF_AT(s0, t), c0))), rd ? out[t] : T(0), alpha, beta, rd);
}

template <class Op, class Epi, class T>
__global__ void ew_unary_scaled_nd(const T* x, T* out, i64 n, Shape shape, Strides sx, Strides so, int conj,
                                   T alpha, T beta) {
  constexpr int N = nd_run<T>::value;
  const bool c0 = conj & 1, rd = Epi::reads_out(beta);
  const int l = shape.ndim - 1;
  const i64 ix = at(sx.s, l), io = at(so.s, l);
  for_runs<N>(n, shape, [&](i64, const i64* off, int cnt) {
    T a[N], o[N], r[N];
    load_run(a, x, off[0], ix, cnt, c0);
    if (rd) load_run(o, (const T*)out, off[1], io, cnt, false);
#pragma unroll
    for (int j = 0; j < N; ++j) r[j] = Epi::apply(T(op_call<Op>(a[j])), rd ? o[j] : T(0), alpha, beta, rd);
    store_run(out, off[1], io, cnt, r);
  }, sx, so);
}

// ---- scaled binary: out = Epi(Op(a, b), out; alpha, beta) ----
template <class Op, class Epi, class T>
__global__ void ew_binary_scaled_vec(const T* a, const T* b, T* out, i64 n, int splat, int conj, T alpha,
                                     T beta) {
  const int V = vec_width<T>::value;
  const bool c0 = conj & 1, c1 = conj & 2, s0 = splat & 1, s1 = splat & 2, rd = Epi::reads_out(beta);
  HF_GRID_LOOP(k, n / V) {
    pack<T, V> pa = load_vec<V>(a, k, s0), pb = load_vec<V>(b, k, s1), o{}, r;
    if (rd) o = load_pack<V>(out, k);
#pragma unroll
    for (int j = 0; j < V; ++j)
      r.v[j] = Epi::apply(T(op_call<Op>(maybe_conj(pa.v[j], c0), maybe_conj(pb.v[j], c1))), o.v[j],
                          alpha, beta, rd);
    store_pack<V>(out, k, r);
  }
  HF_TAIL_LOOP(t, n, V)
    out[t] = Epi::apply(T(op_call<Op>(load(a, HF_AT(s0, t), c0), load(b, HF_AT(s1, t), c1))), rd ? out[t] : T(0),
                        alpha, beta, rd);
}

template <class Op, class Epi, class T>
__global__ void ew_binary_scaled_nd(const T* a, const T* b, T* out, i64 n, Shape shape, Strides sa,
                                    Strides sb, Strides so, int conj, T alpha, T beta) {
  constexpr int N = nd_run<T>::value;
  const bool c0 = conj & 1, c1 = conj & 2, rd = Epi::reads_out(beta);
  const int l = shape.ndim - 1;
  const i64 ia = at(sa.s, l), ib = at(sb.s, l), io = at(so.s, l);
  for_runs<N>(n, shape, [&](i64, const i64* off, int cnt) {
    T va[N], vb[N], o[N], r[N];
    load_run(va, a, off[0], ia, cnt, c0);
    load_run(vb, b, off[1], ib, cnt, c1);
    if (rd) load_run(o, (const T*)out, off[2], io, cnt, false);
#pragma unroll
    for (int j = 0; j < N; ++j)
      r[j] = Epi::apply(T(op_call<Op>(va[j], vb[j])), rd ? o[j] : T(0), alpha, beta, rd);
    store_run(out, off[2], io, cnt, r);
  }, sa, sb, so);
}

#undef HF_TAIL_LOOP
#undef HF_AT
#undef HF_TILE_SHARED
#undef HF_TILE_BOUNDS
#undef HF_TILE_BAND
#undef HF_TILE_ROWS
#undef HF_TILE
}  // namespace hf
