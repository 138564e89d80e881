// reduction.cuh -- reductions over labelled axes, and the diagonal scatter of AntiTrace.
//
// A reduction is planned in Python (hipfer/kernels/reduction.py) as M outputs x K reduced
// elements: the kept axes (output order) and the reduced axes each have an N-d shape and
// element strides into the operand. Four kernels share one argument list, templated on a
// Reducer policy (init / step / merge / finalize over an accumulator type):
//   red_vec    -- the reduced elements of each output are one contiguous run (one reduced
//                 axis of stride 1: a full reduction of a contiguous array, or the last
//                 axis): a group of `lanes` threads (a whole block, or 32 lanes with several
//                 tasks per block) per (output, split), reading 16-byte packs, many in
//                 flight per thread;
//   red_block  -- one block per (output, split): threads stride through the split's part of K
//                 (reduced axes that are strided or N-d);
//   red_thread -- one thread per (output, split), looping over its part of K in order
//                 (for small K, or when neighbouring outputs are neighbours in memory);
//   red_finish -- when K was split: one block per output merges the split partials.
// The order of every sum depends only on the launch geometry, which Python derives from
// the shapes alone (never from the device, the data's alignment or timing): no atomics,
// so results repeat bit-for-bit.
#pragma once
#include "common.cuh"

// Bytes reserved per partial accumulator in the split workspace (kernels/reduction.py
// ACC_BYTES); the largest accumulator is the Welford state of complex128.
#define HF_RED_ACC_BYTES 32
// Each thread folds its elements in groups of this many, then merges the group results:
// the rounding error of a float sum grows with ~n / 32 + 32 sequential adds, not n.
#define HF_RED_GROUP 32
// red_vec loads up to this many 16-byte packs per thread before folding them (bytes in
// flight: 128 per thread), red_thread up to this many elements of at most 8 bytes.
#define HF_RED_UNROLL 8
#define HF_RED_THREAD_BATCH 16

namespace hf {

// (wrapping integer arithmetic: hf::wrap_add / wrap_mul in common.cuh)

template <class T> __device__ __forceinline__ bool red_isnan(T v) { return v != v; }
template <class R> __device__ __forceinline__ bool red_isnan(complex<R> v) { return v.re != v.re || v.im != v.im; }

// Mean: a / n (only instantiated usefully for float / complex; mode 0 never divides).
template <class T> __device__ __forceinline__ T red_div(T a, i64 n) { return (T)(a / (T)n); }
template <class R> __device__ __forceinline__ complex<R> red_div(complex<R> a, i64 n) {
  const R d = (R)n;
  return complex<R>(a.re / d, a.im / d);
}
// Re(conj(a) * b): the squared-deviation product of the Welford update.
template <class R> __device__ __forceinline__ R red_dot(R a, R b) { return a * b; }
template <class R> __device__ __forceinline__ R red_dot(complex<R> a, complex<R> b) { return a.re * b.re + a.im * b.im; }
template <class R> __device__ __forceinline__ R red_scale(R a, R s) { return a * s; }
template <class R> __device__ __forceinline__ complex<R> red_scale(complex<R> a, R s) { return complex<R>(a.re * s, a.im * s); }
__device__ __forceinline__ f32 red_sqrt(f32 v) { return sqrtf(v); }
__device__ __forceinline__ f64 red_sqrt(f64 v) { return sqrt(v); }
__device__ __forceinline__ i64 red_min_i64(i64 a, i64 b) { return a < b ? a : b; }

// ---- the identities of MAX and MIN -----------------------------------------------------
template <class T> struct red_limits;
#define HF_RED_LIMITS(T, LO, HI) \
  template <> struct red_limits<T> { \
    __device__ static T lowest() { return LO; } \
    __device__ static T highest() { return HI; } };
HF_RED_LIMITS(bool, false, true)
HF_RED_LIMITS(i8, (i8)(-128), (i8)127)
HF_RED_LIMITS(i16, (i16)(-32768), (i16)32767)
HF_RED_LIMITS(i32, (i32)(-2147483647 - 1), (i32)2147483647)
HF_RED_LIMITS(i64, (i64)(-9223372036854775807LL - 1), (i64)9223372036854775807LL)
HF_RED_LIMITS(u8, (u8)0, (u8)255)
HF_RED_LIMITS(u16, (u16)0, (u16)65535)
HF_RED_LIMITS(u32, (u32)0, (u32)4294967295u)
HF_RED_LIMITS(u64, (u64)0, (u64)18446744073709551615ull)
HF_RED_LIMITS(f32, __int_as_float(0xff800000), __int_as_float(0x7f800000))
HF_RED_LIMITS(f64, __longlong_as_double(0xfff0000000000000LL), __longlong_as_double(0x7ff0000000000000LL))
HF_RED_LIMITS(half, half::from_bits(0xfc00u), half::from_bits(0x7c00u))
#undef HF_RED_LIMITS

// ---- pre-ops of ComplexRealReduce: reduce(pre(x)) in one pass ---------------------------
struct pre_none { template <class T> __device__ static T apply(T x) { return x; } };
struct pre_abs {
  __device__ static f32 apply(c64 x) { return hypotf(x.re, x.im); }
  __device__ static f64 apply(c128 x) { return hypot(x.re, x.im); }
};
struct pre_real { template <class R> __device__ static R apply(complex<R> x) { return x.re; } };
struct pre_imag { template <class R> __device__ static R apply(complex<R> x) { return x.im; } };

// ---- reducers ----------------------------------------------------------------------------
// A reducer names in_t (operand), acc_t (accumulator), out_t (result) and
//   init()          the identity,          step(acc, x)  fold in one (loaded) element,
//   merge(a, b)     combine two partials,  finalize(acc, params)  the result.
// mode selects a variant of finalize: MEAN = SUM then / count; STD = sqrt(VAR).
// Sums, products and moments accumulate in calc_of<Out> (float for half).
struct red_params { i64 count; f64 corr; i32 mode; };

template <class In, class Out, class Pre>
struct red_sum {
  typedef In in_t; typedef typename calc_of<Out>::type acc_t; typedef Out out_t;
  __device__ static acc_t init() { return acc_t(0); }
  __device__ static acc_t step(acc_t a, In x) { return wrap_add(a, cast<acc_t>(Pre::apply(x))); }
  __device__ static acc_t merge(acc_t a, acc_t b) { return wrap_add(a, b); }
  __device__ static Out finalize(acc_t a, const red_params& p) { return Out(p.mode ? red_div(a, p.count) : a); }
};

template <class In, class Out, class Pre>
struct red_prod {
  typedef In in_t; typedef typename calc_of<Out>::type acc_t; typedef Out out_t;
  __device__ static acc_t init() { return acc_t(1); }
  __device__ static acc_t step(acc_t a, In x) { return wrap_mul(a, cast<acc_t>(Pre::apply(x))); }
  __device__ static acc_t merge(acc_t a, acc_t b) { return wrap_mul(a, b); }
  __device__ static Out finalize(acc_t a, const red_params&) { return Out(a); }
};

// MAX / MIN propagate NaN from either side.
template <class In, class Out, class Pre>
struct red_max {
  typedef In in_t; typedef Out acc_t; typedef Out out_t;
  __device__ static acc_t init() { return red_limits<Out>::lowest(); }
  __device__ static acc_t merge(acc_t a, acc_t b) { return (a > b || red_isnan(a)) ? a : b; }
  __device__ static acc_t step(acc_t a, In x) { return merge(a, cast<Out>(Pre::apply(x))); }
  __device__ static Out finalize(acc_t a, const red_params&) { return a; }
};

template <class In, class Out, class Pre>
struct red_min {
  typedef In in_t; typedef Out acc_t; typedef Out out_t;
  __device__ static acc_t init() { return red_limits<Out>::highest(); }
  __device__ static acc_t merge(acc_t a, acc_t b) { return (a < b || red_isnan(a)) ? a : b; }
  __device__ static acc_t step(acc_t a, In x) { return merge(a, cast<Out>(Pre::apply(x))); }
  __device__ static Out finalize(acc_t a, const red_params&) { return a; }
};

template <class In>
struct red_all {
  typedef In in_t; typedef bool acc_t; typedef bool out_t;
  __device__ static bool init() { return true; }
  __device__ static bool step(bool a, In x) { return a && x != In(0); }
  __device__ static bool merge(bool a, bool b) { return a && b; }
  __device__ static bool finalize(bool a, const red_params&) { return a; }
};

template <class In>
struct red_any {
  typedef In in_t; typedef bool acc_t; typedef bool out_t;
  __device__ static bool init() { return false; }
  __device__ static bool step(bool a, In x) { return a || x != In(0); }
  __device__ static bool merge(bool a, bool b) { return a || b; }
  __device__ static bool finalize(bool a, const red_params&) { return a; }
};

// VAR / STD: Welford steps within a thread, Chan's merge between partials (stable for
// large means); complex input gives the real variance of |x - mean|^2.
template <class T>
struct red_welford {
  T mean;
  typename real_of<T>::type m2;
  i64 n;
};

template <class In, class Out>
struct red_var {
  typedef typename calc_of<In>::type C; typedef typename calc_of<Out>::type R;
  typedef In in_t; typedef red_welford<C> acc_t; typedef Out out_t;
  __device__ static acc_t init() { acc_t a; a.mean = C(0); a.m2 = R(0); a.n = 0; return a; }
  __device__ static acc_t step(acc_t a, In x) {
    a.n += 1;
    const C xc = cast<C>(x), d = xc - a.mean;
    a.mean = a.mean + red_scale(d, R(1) / (R)a.n);
    a.m2 += red_dot(d, xc - a.mean);
    return a;
  }
  __device__ static acc_t merge(acc_t a, acc_t b) {
    if (a.n == 0) return b;
    if (b.n == 0) return a;
    const i64 n = a.n + b.n;
    const R fb = (R)b.n / (R)n;
    const C d = b.mean - a.mean;
    acc_t r;
    r.mean = a.mean + red_scale(d, fb);
    r.m2 = a.m2 + b.m2 + red_dot(d, d) * ((R)a.n * fb);
    r.n = n;
    return r;
  }
  // NumPy's divisor max(N - correction, 0): 0 gives inf (or nan for 0 / 0).
  __device__ static Out finalize(acc_t a, const red_params& p) {
    f64 dof = (f64)a.n - p.corr;
    if (dof < 0) dof = 0;
    const R v = a.m2 / (R)dof;
    return Out(p.mode ? red_sqrt(v) : v);
  }
};

// ---- NumPy's nan-functions in one pass: NaN elements are skipped ------------------------
template <class T> __device__ __forceinline__ T red_nan();
template <> __device__ __forceinline__ f32 red_nan<f32>() { return __int_as_float(0x7fc00000); }
template <> __device__ __forceinline__ f64 red_nan<f64>() { return __longlong_as_double(0x7ff8000000000000LL); }
template <> __device__ __forceinline__ half red_nan<half>() { return half::from_bits(0x7e00u); }

template <class In, class Out, class Pre>
struct red_nansum {
  typedef In in_t; typedef typename calc_of<Out>::type acc_t; typedef Out out_t;
  __device__ static acc_t init() { return acc_t(0); }
  __device__ static acc_t step(acc_t a, In x) { return red_isnan(x) ? a : a + cast<acc_t>(x); }
  __device__ static acc_t merge(acc_t a, acc_t b) { return a + b; }
  __device__ static Out finalize(acc_t a, const red_params&) { return Out(a); }
};

template <class In, class Out, class Pre>
struct red_nanprod {
  typedef In in_t; typedef typename calc_of<Out>::type acc_t; typedef Out out_t;
  __device__ static acc_t init() { return acc_t(1); }
  __device__ static acc_t step(acc_t a, In x) { return red_isnan(x) ? a : a * cast<acc_t>(x); }
  __device__ static acc_t merge(acc_t a, acc_t b) { return a * b; }
  __device__ static Out finalize(acc_t a, const red_params&) { return Out(a); }
};

// NaN is the identity (a NaN loses to any number): the result is NaN exactly for an
// all-NaN slice (NumPy's fmax.reduce / fmin.reduce).
template <class In, class Out, class Pre>
struct red_nanmax {
  typedef In in_t; typedef Out acc_t; typedef Out out_t;
  __device__ static acc_t init() { return red_nan<Out>(); }
  __device__ static acc_t merge(acc_t a, acc_t b) { return (red_isnan(a) || b > a) ? b : a; }
  __device__ static acc_t step(acc_t a, In x) { return red_isnan(x) ? a : merge(a, cast<Out>(x)); }
  __device__ static Out finalize(acc_t a, const red_params&) { return a; }
};

template <class In, class Out, class Pre>
struct red_nanmin {
  typedef In in_t; typedef Out acc_t; typedef Out out_t;
  __device__ static acc_t init() { return red_nan<Out>(); }
  __device__ static acc_t merge(acc_t a, acc_t b) { return (red_isnan(a) || b < a) ? b : a; }
  __device__ static acc_t step(acc_t a, In x) { return red_isnan(x) ? a : merge(a, cast<Out>(x)); }
  __device__ static Out finalize(acc_t a, const red_params&) { return a; }
};

// nanmean: the sum and the count of the non-NaN elements; 0 / 0 = NaN for none.
template <class T>
struct red_sum_count {
  T s;
  i64 n;
};

template <class In, class Out, class Pre>
struct red_nanmean {
  typedef typename calc_of<Out>::type C;
  typedef In in_t; typedef red_sum_count<C> acc_t; typedef Out out_t;
  __device__ static acc_t init() { acc_t a; a.s = C(0); a.n = 0; return a; }
  __device__ static acc_t step(acc_t a, In x) {
    if (!red_isnan(x)) { a.s = a.s + cast<C>(x); a.n += 1; }
    return a;
  }
  __device__ static acc_t merge(acc_t a, acc_t b) { a.s = a.s + b.s; a.n += b.n; return a; }
  __device__ static Out finalize(acc_t a, const red_params&) { return Out(red_div(a.s, a.n)); }
};

// nanvar / nanstd: red_var's Welford over the non-NaN elements; NumPy's nanvar gives NaN
// where count - correction <= 0.
template <class In, class Out>
struct red_nanvar : red_var<In, Out> {
  typedef red_var<In, Out> V;
  typedef typename V::acc_t acc_t;
  typedef typename V::R R;
  __device__ static acc_t step(acc_t a, In x) { return red_isnan(x) ? a : V::step(a, x); }
  __device__ static Out finalize(acc_t a, const red_params& p) {
    if ((f64)a.n - p.corr <= 0) return Out(red_nan<R>());
    return V::finalize(a, p);
  }
};

// ---- warp shuffles of every accumulator type ---------------------------------------------
__device__ __forceinline__ i32 red_shfl(i32 v, int d) { return HF_SHFL_DOWN(v, d); }
__device__ __forceinline__ u32 red_shfl(u32 v, int d) { return HF_SHFL_DOWN(v, d); }
__device__ __forceinline__ i64 red_shfl(i64 v, int d) { return HF_SHFL_DOWN(v, d); }
__device__ __forceinline__ u64 red_shfl(u64 v, int d) { return HF_SHFL_DOWN(v, d); }
__device__ __forceinline__ f32 red_shfl(f32 v, int d) { return HF_SHFL_DOWN(v, d); }
__device__ __forceinline__ f64 red_shfl(f64 v, int d) { return HF_SHFL_DOWN(v, d); }
__device__ __forceinline__ bool red_shfl(bool v, int d) { return red_shfl((i32)v, d) != 0; }
__device__ __forceinline__ i8 red_shfl(i8 v, int d) { return (i8)red_shfl((i32)v, d); }
__device__ __forceinline__ i16 red_shfl(i16 v, int d) { return (i16)red_shfl((i32)v, d); }
__device__ __forceinline__ u8 red_shfl(u8 v, int d) { return (u8)red_shfl((u32)v, d); }
__device__ __forceinline__ u16 red_shfl(u16 v, int d) { return (u16)red_shfl((u32)v, d); }
__device__ __forceinline__ half red_shfl(half v, int d) { return half::from_bits(red_shfl(v.bits, d)); }
template <class R> __device__ __forceinline__ complex<R> red_shfl(complex<R> v, int d) {
  return complex<R>(red_shfl(v.re, d), red_shfl(v.im, d));
}
template <class T> __device__ __forceinline__ red_welford<T> red_shfl(red_welford<T> v, int d) {
  red_welford<T> r;
  r.mean = red_shfl(v.mean, d);
  r.m2 = red_shfl(v.m2, d);
  r.n = red_shfl(v.n, d);
  return r;
}

template <class T> __device__ __forceinline__ red_sum_count<T> red_shfl(red_sum_count<T> v, int d) {
  red_sum_count<T> r;
  r.s = red_shfl(v.s, d);
  r.n = red_shfl(v.n, d);
  return r;
}

// Tree-merge one value per thread; thread 0 gets the block's result. Block sizes are
// multiples of 64, so every warp is whole for warp sizes 32 and 64.
template <class R>
__device__ typename R::acc_t red_block_merge(typename R::acc_t v) {
  typedef typename R::acc_t A;
  __shared__ __align__(16) unsigned char raw[HF_MAX_WARPS_PER_BLOCK * sizeof(A)];
  A* partial = reinterpret_cast<A*>(raw);
  const int ws = warpSize;
  for (int o = ws >> 1; o > 0; o >>= 1) v = R::merge(v, red_shfl(v, o));
  const int n_warps = blockDim.x / ws;
  if (n_warps == 1) return v;
  const int lane = threadIdx.x % ws, warp = threadIdx.x / ws;
  __syncthreads();  // the previous task's readers of `partial` are done
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < n_warps ? partial[lane] : R::init();
    for (int o = ws >> 1; o > 0; o >>= 1) v = R::merge(v, red_shfl(v, o));
  }
  return v;
}

// Merge one value per thread over groups of `lanes` consecutive threads; the group's first
// thread gets the group's result. lanes == blockDim.x: red_block_merge. Otherwise lanes is
// a power of two <= 32: a shuffle tree inside the group -- 32 divides the warp size (32 or
// 64), so a group never straddles warps, and lane g * lanes reads only lanes of its own
// group. Every thread of the block must call it (it may synchronise).
template <class R>
__device__ __forceinline__ typename R::acc_t red_group_merge(typename R::acc_t v, int lanes) {
  if (lanes == (int)blockDim.x) return red_block_merge<R>(v);
  for (int o = lanes >> 1; o > 0; o >>= 1) v = R::merge(v, red_shfl(v, o));
  return v;
}

// out = alpha * r + beta * out, never reading out when beta == 0 (it may be garbage).
// Factors of 1 are skipped: (inf + 1j) * (1 + 0j) would make a NaN.
template <class T>
__device__ __forceinline__ T red_axpby(T alpha, T r, T beta, const T* out, i64 o) {
  const T v = alpha == T(1) ? r : wrap_mul(alpha, r);
  if (beta == T(0)) return v;
  return wrap_add(beta == T(1) ? out[o] : wrap_mul(beta, out[o]), v);
}

// Task t of output m: the final value (unsplit K) or the split partial part[t].
template <class R>
__device__ __forceinline__ void red_store(typename R::out_t* out, typename R::acc_t* part,
                                          i64 t, i64 m, i64 n_split, const Shape& keep,
                                          const Strides& keep_out, typename R::acc_t v,
                                          const red_params& p, typename R::out_t alpha,
                                          typename R::out_t beta) {
  if (n_split > 1) {
    part[t] = v;
    return;
  }
  const i64 o = offset_of(m, keep, keep_out);
  out[o] = red_axpby(alpha, R::finalize(v, p), beta, out, o);
}

// ---- the kernels ---------------------------------------------------------------------------
// Shared arguments: a (+ its conj flag), out, part (split workspace, m-major: m * n_split + s),
// keep / keep_a / keep_out (kept axes, output C order; strides into a and out),
// red / red_a (reduced axes; K = count elements in C order), n_out = M, n_split splits of
// `chunk` elements each, count = K, corr (VAR/STD correction), mode (finalize variant),
// alpha / beta (the scaled families; 1 and 0 otherwise).
#define HF_RED_ARGS                                                                        \
  const typename R::in_t* a, bool cj, typename R::out_t* out, typename R::acc_t* part,   \
  Shape keep, Strides keep_a, Strides keep_out, Shape red, Strides red_a, i64 n_out,      \
  i64 n_split, i64 chunk, i64 count, f64 corr, i32 mode, typename R::out_t alpha,         \
  typename R::out_t beta

// Fold elements k, k + B, ... < k_end (one thread's share of a group) into a fresh
// accumulator. Contiguous-ish operands (one reduced axis) skip the index arithmetic and
// keep four loads in flight; two reduced axes step their indices.
template <class R>
__device__ __forceinline__ typename R::acc_t red_fold_strided(
    const typename R::in_t* a, bool cj, i64 base, const Shape& red, const Strides& red_a,
    i64 k, i64 k_end, i64 B) {
  typedef typename R::in_t In;
  typename R::acc_t v = R::init();
  if (red.ndim == 1) {
    const i64 st = red_a.s[0];
    for (; k + 3 * B < k_end; k += 4 * B) {
      const In x0 = load(a, base + k * st, cj), x1 = load(a, base + (k + B) * st, cj);
      const In x2 = load(a, base + (k + 2 * B) * st, cj), x3 = load(a, base + (k + 3 * B) * st, cj);
      v = R::step(R::step(R::step(R::step(v, x0), x1), x2), x3);
    }
    for (; k < k_end; k += B) v = R::step(v, load(a, base + k * st, cj));
  } else if (red.ndim == 2) {
    // (outer, inner) index stepped along with k: a division only when the inner index
    // wraps, not a 64-bit division per element (sum over (N, H*W) of NCHW, a bias
    // gradient, was division-bound), and four loads in flight. The same elements in the
    // same order.
    const i64 n1 = red.dim[1], s0 = red_a.s[0], s1 = red_a.s[1];
    i64 i0 = k / n1, i1 = k - i0 * n1;
    auto next = [&]() {  // the offset of element k, then k += B
      const i64 o = base + i0 * s0 + i1 * s1;
      i1 += B;
      if (i1 >= n1) {
        const i64 q = i1 / n1;
        i0 += q;
        i1 -= q * n1;
      }
      return o;
    };
    for (; k + 3 * B < k_end; k += 4 * B) {
      const i64 o0 = next(), o1 = next(), o2 = next(), o3 = next();
      const In x0 = load(a, o0, cj), x1 = load(a, o1, cj), x2 = load(a, o2, cj), x3 = load(a, o3, cj);
      v = R::step(R::step(R::step(R::step(v, x0), x1), x2), x3);
    }
    for (; k < k_end; k += B) v = R::step(v, load(a, next(), cj));
  } else {
    for (; k < k_end; k += B) v = R::step(v, load(a, base + offset_of(k, red, red_a), cj));
  }
  return v;
}

// ---- the contiguous path: 16-byte packs -------------------------------------------------
// V elements (16 bytes) of a contiguous run; alignas(16) makes a pack one vector access.
template <class T> struct red_vec_width { static const int value = sizeof(T) >= 16 ? 1 : 16 / (int)sizeof(T); };

// Pack q of row (elements [qV, qV + V)): one 16-byte load when row is 16-byte aligned
// (vec), else V element loads of the same values.
template <int V, class T>
__device__ __forceinline__ pack<T, V> red_load_pack(const T* row, i64 q, bool vec) {
  if (vec) return reinterpret_cast<const pack<T, V>*>(row)[q];
  pack<T, V> r;
#pragma unroll
  for (int e = 0; e < V; ++e) r.v[e] = row[q * V + e];
  return r;
}

// One lane's share of a contiguous run row[0, n) (one task's elements in the reduced
// order), folded into a fresh accumulator. The order is a function of (n, L, V) alone:
//  * pack q is row[qV, qV + V) cut at n (V = 16 bytes / element size); lane `lane` of L
//    takes packs lane, lane + L, lane + 2L, ... (its j-th pack is q = lane + jL, so
//    neighbouring lanes read neighbouring 16 bytes);
//  * the lane's packs go in groups of GP = HF_RED_GROUP / V (HF_RED_GROUP elements):
//    group g is j in [g GP, (g + 1) GP). A group folds its elements in order (j, then the
//    position in the pack) into a fresh accumulator; the lane merges the group results
//    in order of g (so the rounding error of a float sum grows like n / (L * 32) + 32
//    adds per lane, then the lanes' tree).
// A group of whole packs (all before n_full) loads HF_RED_UNROLL packs before folding
// them; the lane's last group, if it holds a cut or missing pack, loads element by element
// (only the lane's last group can: the loop below stops at the first group that reaches
// n_full, and the next one would start at >= n_full + L - GP + GP >= n_packs). Whether a
// pack loads as a vector or as elements does not change its values: the result does not
// depend on the alignment of the data.
template <class R>
__device__ __forceinline__ typename R::acc_t red_fold_packs(const typename R::in_t* row, bool cj,
                                                          i64 n, i64 lane, i64 L, bool vec) {
  typedef typename R::in_t In;
  typedef typename R::acc_t A;
  const int V = red_vec_width<In>::value;
  const int GP = HF_RED_GROUP / V;  // V <= 16 < HF_RED_GROUP
  const int U = GP < HF_RED_UNROLL ? GP : HF_RED_UNROLL;  // divides GP (powers of two)
  const i64 n_full = n / V, n_packs = (n + V - 1) / V;
  A v = R::init();
  i64 q0 = lane;  // the group's first pack
  for (; q0 + (GP - 1) * L < n_full; q0 += GP * L) {
    A g = R::init();
#pragma unroll
    for (int j0 = 0; j0 < GP; j0 += U) {
      pack<In, V> x[U];
#pragma unroll
      for (int u = 0; u < U; ++u) x[u] = red_load_pack<V>(row, q0 + (j0 + u) * L, vec);
#pragma unroll
      for (int u = 0; u < U; ++u) {
#pragma unroll
        for (int e = 0; e < V; ++e) g = R::step(g, cj ? conj(x[u].v[e]) : x[u].v[e]);
      }
    }
    v = R::merge(v, g);
  }
  if (q0 < n_packs) {  // the last group: its packs q0 + jL (j < GP) below n_packs, cut at n
    A g = R::init();
    const i64 q_end = red_min_i64(n_packs, q0 + GP * L);
    for (i64 q = q0; q < q_end; q += L) {
      const i64 e1 = red_min_i64(n, (q + 1) * V);
      for (i64 i = q * V; i < e1; ++i) g = R::step(g, load(row, i, cj));
    }
    v = R::merge(v, g);
  }
  return v;
}

// Task t = m * n_split + s (as red_block) is K's elements [s chunk, min(K, (s + 1) chunk))
// of output m, contiguous at a + offset_of(m) + s chunk (red: one axis, stride 1). A group of
// `lanes` threads reduces one task: blockDim.x / lanes tasks side by side per block, the
// block striding over the tasks. Each lane folds its packs (red_fold_packs), then the group
// merges its lanes (red_group_merge). vec: a and every task's start are 16-byte aligned
// (Python checks the pointer, the kept strides and chunk).
template <class R>
__global__ void red_vec(HF_RED_ARGS, i32 lanes, bool vec) {
  typedef typename R::acc_t A;
  static_assert(sizeof(A) <= HF_RED_ACC_BYTES, "accumulator larger than the workspace slot");
  const red_params p = {count, corr, mode};
  const i64 L = lanes, per_block = blockDim.x / lanes, n_tasks = n_out * n_split;
  const i64 lane = threadIdx.x % lanes;
  // every thread of the block runs the same iterations: the merge may synchronise
  for (i64 t0 = (i64)blockIdx.x * per_block; t0 < n_tasks; t0 += (i64)gridDim.x * per_block) {
    const i64 t = t0 + threadIdx.x / lanes;
    const bool live = t < n_tasks;
    const i64 m = live ? t / n_split : 0, s = t - m * n_split;
    A v = R::init();
    if (live) {
      const i64 k0 = s * chunk;
      const i64 n = red_min_i64(count, k0 + chunk) - k0;
      v = red_fold_packs<R>(a + offset_of(m, keep, keep_a) + k0, cj, n, lane, L, vec);
    }
    v = red_group_merge<R>(v, lanes);
    if (live && lane == 0) red_store<R>(out, part, t, m, n_split, keep, keep_out, v, p, alpha, beta);
  }
}

template <class R>
__global__ void red_block(HF_RED_ARGS) {
  typedef typename R::acc_t A;
  static_assert(sizeof(A) <= HF_RED_ACC_BYTES, "accumulator larger than the workspace slot");
  const red_params p = {count, corr, mode};
  const i64 B = blockDim.x;
  for (i64 t = blockIdx.x; t < n_out * n_split; t += gridDim.x) {
    const i64 m = t / n_split, s = t - m * n_split;
    const i64 base = offset_of(m, keep, keep_a);
    const i64 k1 = red_min_i64(count, (s + 1) * chunk);
    A v = R::init();
    for (i64 k = s * chunk + threadIdx.x; k < k1; k += HF_RED_GROUP * B) {
      const i64 k_end = red_min_i64(k1, k + HF_RED_GROUP * B);
      v = R::merge(v, red_fold_strided<R>(a, cj, base, red, red_a, k, k_end, B));
    }
    v = red_block_merge<R>(v);
    if (threadIdx.x == 0) red_store<R>(out, part, t, m, n_split, keep, keep_out, v, p, alpha, beta);
  }
}

template <class R>
__global__ void red_thread(HF_RED_ARGS) {
  typedef typename R::acc_t A;
  static_assert(sizeof(A) <= HF_RED_ACC_BYTES, "accumulator larger than the workspace slot");
  const red_params p = {count, corr, mode};
  // Walk K as rows of the innermost reduced axis: one N-d offset per row, not per element.
  const int last = red.ndim - 1;
  const i64 n_last = at(red.dim, last), s_last = at(red_a.s, last);
  typedef typename R::in_t In;
  // elements loaded before they are folded (in flight per thread): 16 of <= 4 bytes, 8 of
  // 8, 4 of 16
  const int NB = sizeof(In) <= 4 ? HF_RED_THREAD_BATCH : (sizeof(In) <= 8 ? 8 : 4);
  HF_GRID_LOOP(t, n_out * n_split) {
    const i64 s = t / n_out, m = t - s * n_out;  // neighbouring threads: neighbouring outputs
    const i64 base = offset_of(m, keep, keep_a);
    const i64 k1 = red_min_i64(count, (s + 1) * chunk);
    if (red.ndim == 1) {
      // One reduced axis: the same order as the general loop below (groups of
      // HF_RED_GROUP consecutive k from s * chunk, merged in order), loading NB elements
      // of a whole group before folding them.
      const i64 st = red_a.s[0];
      const typename R::in_t* row = a + base;
      A v = R::init();
      for (i64 k = s * chunk; k < k1; k += HF_RED_GROUP) {
        A group = R::init();
        if (k + HF_RED_GROUP <= k1) {
#pragma unroll
          for (int j0 = 0; j0 < HF_RED_GROUP; j0 += NB) {
            In x[NB];
#pragma unroll
            for (int u = 0; u < NB; ++u) x[u] = load(row, (k + j0 + u) * st, cj);
#pragma unroll
            for (int u = 0; u < NB; ++u) group = R::step(group, x[u]);
          }
        } else {
          for (i64 j = k; j < k1; ++j) group = R::step(group, load(row, j * st, cj));
        }
        v = R::merge(v, group);
      }
      red_store<R>(out, part, m * n_split + s, m, n_split, keep, keep_out, v, p, alpha, beta);
      continue;
    }
    A v = R::init(), group = R::init();
    int in_group = 0;
    for (i64 k = s * chunk; k < k1;) {
      const i64 q = k / n_last, i = k - q * n_last;
      const i64 row = base + offset_of(q, red, red_a, last) + i * s_last;
      const i64 e = red_min_i64(k1 - k, n_last - i);
      for (i64 j = 0; j < e; ++j) {
        group = R::step(group, load(a, row + j * s_last, cj));
        if (++in_group == HF_RED_GROUP) {
          v = R::merge(v, group);
          group = R::init();
          in_group = 0;
        }
      }
      k += e;
    }
    v = R::merge(v, group);
    red_store<R>(out, part, m * n_split + s, m, n_split, keep, keep_out, v, p, alpha, beta);
  }
}

template <class R>
__global__ void red_finish(const typename R::acc_t* part, typename R::out_t* out, Shape keep,
                           Strides keep_out, i64 n_out, i64 n_split, i64 count, f64 corr,
                           i32 mode, typename R::out_t alpha, typename R::out_t beta) {
  typedef typename R::acc_t A;
  const red_params p = {count, corr, mode};
  for (i64 m = blockIdx.x; m < n_out; m += gridDim.x) {
    A v = R::init();
    for (i64 s = threadIdx.x; s < n_split; s += blockDim.x) v = R::merge(v, part[m * n_split + s]);
    v = red_block_merge<R>(v);
    if (threadIdx.x == 0) {
      const i64 o = offset_of(m, keep, keep_out);
      out[o] = red_axpby(alpha, R::finalize(v, p), beta, out, o);
    }
  }
}
#undef HF_RED_ARGS

// AntiTrace / AntiDiag: one thread per output element,
//   out = beta * out + alpha * (on the diagonal ? a[...] : 0).
// The output axes come permuted so that axes of one label are neighbours: bit d of
// same_next says axis d has the label of axis d + 1, and on the diagonal means equal
// indices there. a_st holds a's stride on one axis per label (0 elsewhere: broadcast).
template <class T>
__global__ void red_anti(const T* a, bool cj, T* out, Shape shape, Strides a_st, Strides out_st,
                         i64 same_next, i64 n, T alpha, T beta) {
  HF_GRID_LOOP(i, n) {
    i64 r = i, off_a = 0, off_o = 0, prev = 0;
    bool diag = true;
#pragma unroll
    for (int d = HF_MAX_NDIM - 1; d >= 0; --d) {  // constant indices: see at() in common.cuh
      if (d >= shape.ndim) continue;
      const i64 dim = shape.dim[d], q = r / dim, idx = r - q * dim;
      r = q;
      off_a += idx * a_st.s[d];
      off_o += idx * out_st.s[d];
      if (((same_next >> d) & 1) && idx != prev) diag = false;
      prev = idx;
    }
    const T v = diag ? load(a, off_a, cj) : T(0);
    out[off_o] = red_axpby(alpha, v, beta, out, off_o);
  }
}

}  // namespace hf
