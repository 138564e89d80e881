// elementwise.cuh -- the elementwise kernel templates (out[i] = f(inputs[i])).
//
// Every kernel comes in two variants (the vector one only where it helps):
//   *_vec  all operands C-contiguous with the same shape and 16-byte-aligned pointers:
//          each thread handles V = 16 / sizeof(widest element) consecutive elements with
//          one vector load per input and one vector store; a scalar tail covers n % V.
//   *_nd   any layout: hf::Shape plus one hf::Strides (in elements) per operand,
//          output included (broadcast inputs have stride 0). After merging axes, plain
//          contiguous and 1-d strided operands are rank 1: offset = i * stride, no
//          division -- this is the contiguous path for unaligned pointers.
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
// Elements per thread on the vector path: one 16-byte access for the widest operand.
template <class... T> struct vec_width { static const int value = 16 / widest<T...>::value; };

template <class T, int V> struct alignas(sizeof(T) * V) pack { T v[V]; };
template <int V, class T> __device__ __forceinline__ pack<T, V> load_pack(const T* p, i64 k) {
  return reinterpret_cast<const pack<T, V>*>(p)[k];
}
template <int V, class T> __device__ __forceinline__ void store_pack(T* p, i64 k, const pack<T, V>& v) {
  reinterpret_cast<pack<T, V>*>(p)[k] = v;
}
template <class T> __device__ __forceinline__ T maybe_conj(T v, bool c) { return c ? conj(v) : v; }

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

// off[k] = offset of element i (C order over shape) in operand k, with one division per
// axis shared by all operands (32-bit when it fits: far cheaper than 64-bit).
template <class... S>
__device__ __forceinline__ void nd_offsets(i64 i, const Shape& shape, i64* off, const S&... st) {
  for (int k = 0; k < (int)sizeof...(S); ++k) off[k] = 0;
  for (int d = shape.ndim - 1; d > 0; --d) {
    const i64 n = shape.dim[d];
    const i64 q = ((i | n) >> 32) == 0 ? (i64)((u32)i / (u32)n) : div64(i, n);
    add_strides(off, i - q * n, d, st...);
    i = q;
  }
  add_strides(off, i, 0, st...);
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
__global__ void ew_unary_vec(const T* x, R* out, i64 n, int conj) {
  const int V = vec_width<T, R>::value;
  const bool c0 = conj & 1;
  HF_GRID_LOOP(k, n / V) {
    pack<T, V> a = load_pack<V>(x, k);
    pack<R, V> r;
#pragma unroll
    for (int j = 0; j < V; ++j) r.v[j] = op_call<Op>(maybe_conj(a.v[j], c0));
    store_pack<V>(out, k, r);
  }
  HF_TAIL_LOOP(t, n, V) out[t] = op_call<Op>(load(x, t, c0));
}

template <class Op, class T, class R>
__global__ void ew_unary_nd(const T* x, R* out, i64 n, Shape shape, Strides sx, Strides so, int conj) {
  const bool c0 = conj & 1;
  HF_GRID_LOOP(i, n) {
    i64 off[2];
    nd_offsets(i, shape, off, sx, so);
    out[off[1]] = op_call<Op>(load(x, off[0], c0));
  }
}

// ---- binary: out = Op(a, b) ----
template <class Op, class A, class B, class R>
__global__ void ew_binary_vec(const A* a, const B* b, R* out, i64 n, int conj) {
  const int V = vec_width<A, B, R>::value;
  const bool c0 = conj & 1, c1 = conj & 2;
  HF_GRID_LOOP(k, n / V) {
    pack<A, V> pa = load_pack<V>(a, k);
    pack<B, V> pb = load_pack<V>(b, k);
    pack<R, V> r;
#pragma unroll
    for (int j = 0; j < V; ++j) r.v[j] = op_call<Op>(maybe_conj(pa.v[j], c0), maybe_conj(pb.v[j], c1));
    store_pack<V>(out, k, r);
  }
  HF_TAIL_LOOP(t, n, V) out[t] = op_call<Op>(load(a, t, c0), load(b, t, c1));
}

template <class Op, class A, class B, class R>
__global__ void ew_binary_nd(const A* a, const B* b, R* out, i64 n, Shape shape, Strides sa, Strides sb,
                             Strides so, int conj) {
  const bool c0 = conj & 1, c1 = conj & 2;
  HF_GRID_LOOP(i, n) {
    i64 off[3];
    nd_offsets(i, shape, off, sa, sb, so);
    out[off[2]] = op_call<Op>(load(a, off[0], c0), load(b, off[1], c1));
  }
}

// ---- where: out = c ? a : b (conj bits 1 and 2 are a and b) ----
template <class T>
__global__ void ew_where_vec(const bool* c, const T* a, const T* b, T* out, i64 n, int conj) {
  const int V = vec_width<T>::value;
  const bool c1 = conj & 2, c2 = conj & 4;
  HF_GRID_LOOP(k, n / V) {
    pack<bool, V> pc = load_pack<V>(c, k);
    pack<T, V> pa = load_pack<V>(a, k), pb = load_pack<V>(b, k), r;
#pragma unroll
    for (int j = 0; j < V; ++j) r.v[j] = pc.v[j] ? maybe_conj(pa.v[j], c1) : maybe_conj(pb.v[j], c2);
    store_pack<V>(out, k, r);
  }
  HF_TAIL_LOOP(t, n, V) out[t] = c[t] ? load(a, t, c1) : load(b, t, c2);
}

template <class T>
__global__ void ew_where_nd(const bool* c, const T* a, const T* b, T* out, i64 n, Shape shape, Strides sc,
                            Strides sa, Strides sb, Strides so, int conj) {
  const bool c1 = conj & 2, c2 = conj & 4;
  HF_GRID_LOOP(i, n) {
    i64 off[4];
    nd_offsets(i, shape, off, sc, sa, sb, so);
    out[off[3]] = c[off[0]] ? load(a, off[1], c1) : load(b, off[2], c2);
  }
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
  HF_GRID_LOOP(i, n) {
    i64 off[1];
    nd_offsets(i, shape, off, so);
    out[off[0]] = cast<T>(Gen()(i, a, b));
  }
}

// ---- scaled unary: out = Epi(Op(x), out; alpha, beta) ----
template <class Op, class Epi, class T>
__global__ void ew_unary_scaled_vec(const T* x, T* out, i64 n, int conj, T alpha, T beta) {
  const int V = vec_width<T>::value;
  const bool c0 = conj & 1, rd = Epi::reads_out(beta);
  HF_GRID_LOOP(k, n / V) {
    pack<T, V> a = load_pack<V>(x, k), o{}, r;
    if (rd) o = load_pack<V>(out, k);
#pragma unroll
    for (int j = 0; j < V; ++j)
      r.v[j] = Epi::apply(T(op_call<Op>(maybe_conj(a.v[j], c0))), o.v[j], alpha, beta, rd);
    store_pack<V>(out, k, r);
  }
  HF_TAIL_LOOP(t, n, V)
    out[t] = Epi::apply(T(op_call<Op>(load(x, t, c0))), rd ? out[t] : T(0), alpha, beta, rd);
}

template <class Op, class Epi, class T>
__global__ void ew_unary_scaled_nd(const T* x, T* out, i64 n, Shape shape, Strides sx, Strides so, int conj,
                                   T alpha, T beta) {
  const bool c0 = conj & 1, rd = Epi::reads_out(beta);
  HF_GRID_LOOP(i, n) {
    i64 off[2];
    nd_offsets(i, shape, off, sx, so);
    T* o = out + off[1];
    *o = Epi::apply(T(op_call<Op>(load(x, off[0], c0))), rd ? *o : T(0), alpha, beta, rd);
  }
}

// ---- scaled binary: out = Epi(Op(a, b), out; alpha, beta) ----
template <class Op, class Epi, class T>
__global__ void ew_binary_scaled_vec(const T* a, const T* b, T* out, i64 n, int conj, T alpha, T beta) {
  const int V = vec_width<T>::value;
  const bool c0 = conj & 1, c1 = conj & 2, rd = Epi::reads_out(beta);
  HF_GRID_LOOP(k, n / V) {
    pack<T, V> pa = load_pack<V>(a, k), pb = load_pack<V>(b, k), o{}, r;
    if (rd) o = load_pack<V>(out, k);
#pragma unroll
    for (int j = 0; j < V; ++j)
      r.v[j] = Epi::apply(T(op_call<Op>(maybe_conj(pa.v[j], c0), maybe_conj(pb.v[j], c1))), o.v[j],
                          alpha, beta, rd);
    store_pack<V>(out, k, r);
  }
  HF_TAIL_LOOP(t, n, V)
    out[t] = Epi::apply(T(op_call<Op>(load(a, t, c0), load(b, t, c1))), rd ? out[t] : T(0), alpha, beta, rd);
}

template <class Op, class Epi, class T>
__global__ void ew_binary_scaled_nd(const T* a, const T* b, T* out, i64 n, Shape shape, Strides sa,
                                    Strides sb, Strides so, int conj, T alpha, T beta) {
  const bool c0 = conj & 1, c1 = conj & 2, rd = Epi::reads_out(beta);
  HF_GRID_LOOP(i, n) {
    i64 off[3];
    nd_offsets(i, shape, off, sa, sb, so);
    T* o = out + off[2];
    *o = Epi::apply(T(op_call<Op>(load(a, off[0], c0), load(b, off[1], c1))), rd ? *o : T(0), alpha, beta, rd);
  }
}

#undef HF_TAIL_LOOP
}  // namespace hf
