// sort.cuh -- integer sort keys that give hipfer's ordering to a plain (stable,
// radix-friendly) integer sort underneath (CuPy's argsort).
//
// key(x) is a monotone map to an integer of the same width where -0.0 == +0.0 and every
// NaN is above +inf (ascending: NaN last). Descending takes ~key, which reverses the
// order exactly (NaN first), so a stable ascending sort of the keys is stable in both
// directions.
#pragma once
#include "common.cuh"

namespace hf {

template <class T> struct sort_key { typedef T type; };
template <> struct sort_key<bool> { typedef u8 type; };
template <> struct sort_key<half> { typedef i16 type; };
template <> struct sort_key<f32> { typedef i32 type; };
template <> struct sort_key<f64> { typedef i64 type; };

template <class T> __device__ __forceinline__ typename sort_key<T>::type sort_key_of(T x) { return x; }
template <> __device__ __forceinline__ u8 sort_key_of<bool>(bool x) { return x ? 1 : 0; }
// Sign-magnitude to two's complement: -m for negative floats, so -0.0 and +0.0 share 0.
template <> __device__ __forceinline__ i16 sort_key_of<half>(half x) {
  if (x != x) return 0x7fff;
  const i16 m = (i16)(x.bits & 0x7fff);
  return (x.bits & 0x8000) ? (i16)-m : m;
}
template <> __device__ __forceinline__ i32 sort_key_of<f32>(f32 x) {
  if (x != x) return 0x7fffffff;
  i32 b = __float_as_int(x);
  i32 m = b & 0x7fffffff;
  return b < 0 ? -m : m;
}
template <> __device__ __forceinline__ i64 sort_key_of<f64>(f64 x) {
  if (x != x) return 0x7fffffffffffffffll;
  i64 b = __double_as_longlong(x);
  i64 m = b & 0x7fffffffffffffffll;
  return b < 0 ? -m : m;
}

// keys[offset(i, key_st)] = key(x[offset(i, x_st)]) (or ~key), i over `shape` (C order).
template <class T>
__global__ void sort_keys(typename sort_key<T>::type* keys, const T* x, i64 n, Shape shape,
                          Strides x_st, Strides key_st, bool descending) {
  typedef typename sort_key<T>::type K;
  HF_GRID_LOOP(i, n) {
    i64 xo = 0, ko = 0, rem = i;
    for (int d = shape.ndim - 1; d >= 0; --d) {
      i64 q = rem / shape.dim[d];
      i64 c = rem - q * shape.dim[d];
      rem = q;
      xo += c * x_st.s[d];
      ko += c * key_st.s[d];
    }
    K k = sort_key_of(x[xo]);
    keys[ko] = descending ? (K)~k : k;
  }
}

}  // namespace hf
