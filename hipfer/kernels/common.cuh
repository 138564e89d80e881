// common.cuh -- what every hipfer kernel source starts with.
// One source for HIP (hipcc / hiprtc) and CUDA (nvcc / NVRTC): see the portability
// rules in DESIGN.md. Sources are inlined by hipfer.kernels.module_source(), so only
// include our own headers with #include "name.cuh".
// (inlined once by hipfer.kernels.module_source: no include guard needed)

#if defined(__HIP__) || defined(__HIPCC__) || defined(__HIPCC_RTC__)
#  define HF_HIP 1
#else
#  define HF_HIP 0
#endif
// Offline hipcc needs the runtime header; hiprtc and NVRTC provide the builtins.
#if HF_HIP && !defined(__HIPCC_RTC__)
#  include <hip/hip_runtime.h>
#endif

// Warp size is a run-time value (64 on CDNA, 32 on RDNA and NVIDIA): never an array
// bound. Per-warp scratch is sized for the smallest warp.
#define HF_MAX_WARPS_PER_BLOCK 32
#if HF_HIP
#  define HF_SHFL_DOWN(v, d)  __shfl_down((v), (d))
#  define HF_SHFL_XOR(v, m)   __shfl_xor((v), (m))
#  define HF_BALLOT(pred)     ((unsigned long long)__ballot(pred))
#else
#  define HF_SHFL_DOWN(v, d)  __shfl_down_sync(0xffffffffu, (v), (d))
#  define HF_SHFL_XOR(v, m)   __shfl_xor_sync(0xffffffffu, (v), (m))
#  define HF_BALLOT(pred)     ((unsigned long long)__ballot_sync(0xffffffffu, (pred)))
#endif

// Dynamic shared memory: one raw buffer per translation unit, cast by the user.
#define HF_DYN_SHARED(T, name) \
  extern __shared__ __align__(16) unsigned char hf_dyn_smem_[]; \
  T* name = reinterpret_cast<T*>(hf_dyn_smem_)

// Largest rank of the N-d (strided / broadcast) paths, after merging contiguous axes.
#define HF_MAX_NDIM 12

namespace hf {

// ---- scalar types: one C++ name per NumPy dtype (hipfer.kernels.CTYPE) ----------
typedef signed char        i8;
typedef short              i16;
typedef int                i32;
typedef long long          i64;
typedef unsigned char      u8;
typedef unsigned short     u16;
typedef unsigned int       u32;
typedef unsigned long long u64;
typedef float              f32;
typedef double             f64;

// ---- float16: IEEE binary16 bits, converted in software ------------------------------
// No cuda_fp16.h / hip_fp16.h: NVRTC and hiprtc have no include path for them, and their
// half types differ. The conversions are NumPy's (npy_float/double_to_half): round to
// nearest even, subnormals, +-inf and -0.0 exact, a NaN keeps its sign and top payload
// bits, so every half survives half -> float -> half bit for bit. A half converts
// implicitly to float and from any arithmetic type: an expression of halfs computes in
// float and rounds once where it is stored as half.

// v >> s rounded to nearest, ties to even (0 < s < bits of U).
template <class U> __device__ __forceinline__ U shr_rne(U v, U s) {
  const U q = v >> s, rem = v & ((U(1) << s) - 1), tie = U(1) << (s - 1);
  return q + (rem > tie || (rem == tie && (q & 1)) ? 1 : 0);
}
__device__ __forceinline__ u16 half_bits(f32 x) {
  const u32 f = (u32)__float_as_int(x), sgn = (f >> 16) & 0x8000u, mag = f & 0x7fffffffu;
  if (mag > 0x7f800000u) {  // NaN: the top payload bits, never 0 (that would be inf)
    const u32 p = (mag & 0x7fffffu) >> 13;
    return (u16)(sgn | 0x7c00u | (p ? p : 1u));
  }
  if (mag >= 0x47800000u) return (u16)(sgn | 0x7c00u);                          // inf, |x| >= 2^16
  if (mag >= 0x38800000u) return (u16)(sgn | shr_rne(mag - 0x38000000u, 13u));  // normal (may round to inf)
  if (mag < 0x33000000u) return (u16)sgn;                                       // |x| < 2^-25: zero
  return (u16)(sgn | shr_rne((mag & 0x7fffffu) | 0x800000u, 126u - (mag >> 23)));  // subnormal
}
// double -> half directly: through float would round twice.
__device__ __forceinline__ u16 half_bits(f64 x) {
  const u64 d = (u64)__double_as_longlong(x), mag = d & 0x7fffffffffffffffull;
  const u32 sgn = (u32)(d >> 48) & 0x8000u;
  if (mag > 0x7ff0000000000000ull) {
    const u32 p = (u32)((mag & 0xfffffffffffffull) >> 42);
    return (u16)(sgn | 0x7c00u | (p ? p : 1u));
  }
  if (mag >= 0x40f0000000000000ull) return (u16)(sgn | 0x7c00u);
  if (mag >= 0x3f10000000000000ull) return (u16)(sgn | (u32)shr_rne(mag - 0x3f00000000000000ull, 42ull));
  if (mag < 0x3e60000000000000ull) return (u16)sgn;
  return (u16)(sgn | (u32)shr_rne((mag & 0xfffffffffffffull) | 0x10000000000000ull, 1051ull - (mag >> 52)));
}
__device__ __forceinline__ f32 half_float(u16 h) {
  const u32 sgn = (u32)(h & 0x8000u) << 16, mag = h & 0x7fffu;
  if (mag >= 0x7c00u) return __int_as_float((int)(sgn | 0x7f800000u | ((mag & 0x3ffu) << 13)));  // inf, NaN
  if (mag >= 0x0400u) return __int_as_float((int)(sgn | ((mag + 0x1c000u) << 13)));  // normal: rebias
  return __int_as_float((int)(sgn | (u32)__float_as_int((f32)mag * 0x1p-24f)));  // subnormal, 0: exact
}

struct half {
  u16 bits;
  half() = default;  // trivial: halfs may live in __shared__ arrays
  __device__ __forceinline__ half(f32 x) : bits(half_bits(x)) {}
  __device__ __forceinline__ half(f64 x) : bits(half_bits(x)) {}
  // integers and bool through float: exact below 2^24, and larger ones overflow either way
  template <class I> __device__ __forceinline__ half(I v) : bits(half_bits((f32)v)) {}
  __device__ __forceinline__ operator f32() const { return half_float(bits); }
  static __device__ __forceinline__ half from_bits(u16 b) { half h; h.bits = b; return h; }
};

// The type a dtype computes and accumulates in: half in float, rounded once at the end
// (as NumPy's float16 sums; its float16 cumsum rounds every step), the rest in itself.
template <class T> struct calc_of { typedef T type; };
template <> struct calc_of<half> { typedef f32 type; };

// Complex numbers with NumPy's layout (re, im): plain structs, no library types.
template <class R>
struct alignas(2 * sizeof(R)) complex {
  R re, im;
  __host__ __device__ complex() : re(0), im(0) {}
  __host__ __device__ complex(R r) : re(r), im(0) {}
  __host__ __device__ complex(R r, R i) : re(r), im(i) {}
  template <class S>
  __host__ __device__ explicit complex(const complex<S>& o) : re((R)o.re), im((R)o.im) {}
};
typedef complex<f32> c64;
typedef complex<f64> c128;

template <class T> struct is_complex { static const bool value = false; };
template <class R> struct is_complex<complex<R> > { static const bool value = true; };
template <class T> struct real_of { typedef T type; };
template <class R> struct real_of<complex<R> > { typedef R type; };

template <class R> __device__ __forceinline__ complex<R> operator+(complex<R> a, complex<R> b) { return complex<R>(a.re + b.re, a.im + b.im); }
template <class R> __device__ __forceinline__ complex<R> operator-(complex<R> a, complex<R> b) { return complex<R>(a.re - b.re, a.im - b.im); }
template <class R> __device__ __forceinline__ complex<R> operator-(complex<R> a) { return complex<R>(-a.re, -a.im); }
template <class R> __device__ __forceinline__ complex<R> operator*(complex<R> a, complex<R> b) {
  return complex<R>(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}
template <class R> __device__ __forceinline__ complex<R> operator*(R s, complex<R> a) { return complex<R>(s * a.re, s * a.im); }
template <class R> __device__ __forceinline__ complex<R> operator*(complex<R> a, R s) { return complex<R>(s * a.re, s * a.im); }
// Division with Smith's scaling (no overflow for large |b|), as NumPy does.
template <class R> __device__ __forceinline__ complex<R> operator/(complex<R> a, complex<R> b) {
  R abr = b.re < 0 ? -b.re : b.re, abi = b.im < 0 ? -b.im : b.im;
  if (abr >= abi) {
    if (abr == 0 && abi == 0) { R z = abr * abr; return complex<R>(a.re / z, a.im / z); }  // +0, as NumPy's fabs
    R rat = b.im / b.re, scl = R(1) / (b.re + b.im * rat);
    return complex<R>((a.re + a.im * rat) * scl, (a.im - a.re * rat) * scl);
  }
  R rat = b.re / b.im, scl = R(1) / (b.im + b.re * rat);
  return complex<R>((a.re * rat + a.im) * scl, (a.im * rat - a.re) * scl);
}
template <class R> __device__ __forceinline__ bool operator==(complex<R> a, complex<R> b) { return a.re == b.re && a.im == b.im; }
template <class R> __device__ __forceinline__ bool operator!=(complex<R> a, complex<R> b) { return !(a == b); }

template <class T> __device__ __forceinline__ T conj(T a) { return a; }
template <class R> __device__ __forceinline__ complex<R> conj(complex<R> a) { return complex<R>(a.re, -a.im); }

// Load with the lazy conjugation flag folded in (the flag is uniform per launch).
template <class T> __device__ __forceinline__ T load(const T* p, long long i, bool cj) {
  T v = p[i];
  return cj ? conj(v) : v;
}

// ---- arithmetic that wraps -----------------------------------------------------------
// Integers compute in an unsigned type at least as wide as int and truncate back, so
// they wrap (signed overflow, and u16 * u16 promoted to int, would be undefined);
// floats and complex compute as they are; bool + is or, bool * is and.
template <class T> struct wrap_of { typedef T type; };
template <> struct wrap_of<i8>  { typedef u32 type; };
template <> struct wrap_of<i16> { typedef u32 type; };
template <> struct wrap_of<i32> { typedef u32 type; };
template <> struct wrap_of<u8>  { typedef u32 type; };
template <> struct wrap_of<u16> { typedef u32 type; };
template <> struct wrap_of<i64> { typedef u64 type; };
template <class T> __device__ __forceinline__ T wrap_add(T a, T b) { typedef typename wrap_of<T>::type W; return (T)((W)a + (W)b); }
template <class T> __device__ __forceinline__ T wrap_sub(T a, T b) { typedef typename wrap_of<T>::type W; return (T)((W)a - (W)b); }
template <class T> __device__ __forceinline__ T wrap_mul(T a, T b) { typedef typename wrap_of<T>::type W; return (T)((W)a * (W)b); }
template <> __device__ __forceinline__ bool wrap_add(bool a, bool b) { return a || b; }
template <> __device__ __forceinline__ bool wrap_mul(bool a, bool b) { return a && b; }

// ---- conversions between any two dtypes (PointwiseCast; NumPy's rules) -----------
template <class To> struct cast_to {
  template <class From> __device__ __forceinline__ static To from(From v) { return (To)v; }
  template <class R> __device__ __forceinline__ static To from(complex<R> v) { return (To)v.re; }
};
template <> struct cast_to<bool> {
  template <class From> __device__ __forceinline__ static bool from(From v) { return v != From(0); }
  template <class R> __device__ __forceinline__ static bool from(complex<R> v) { return v.re != 0 || v.im != 0; }
};
// half -> double: a NaN by its bits, since float -> double conversions may return the
// canonical NaN (NVIDIA's do), losing the sign and payload.
template <> struct cast_to<f64> {
  template <class From> __device__ __forceinline__ static f64 from(From v) { return (f64)v; }
  template <class R> __device__ __forceinline__ static f64 from(complex<R> v) { return (f64)v.re; }
  __device__ __forceinline__ static f64 from(half v) {
    if ((v.bits & 0x7fffu) <= 0x7c00u) return (f64)(f32)v;
    return __longlong_as_double((long long)(((u64)(v.bits & 0x8000u) << 48) | 0x7ff0000000000000ull |
                                            ((u64)(v.bits & 0x3ffu) << 42)));
  }
};
template <class S> struct cast_to<complex<S> > {
  template <class From> __device__ __forceinline__ static complex<S> from(From v) {
    return complex<S>(cast_to<S>::from(v), S(0));
  }
  template <class R> __device__ __forceinline__ static complex<S> from(complex<R> v) { return complex<S>((S)v.re, (S)v.im); }
};
template <class To, class From> __device__ __forceinline__ To cast(From v) { return cast_to<To>::from(v); }

// ---- N-d geometry, passed by value (a NumPy structured scalar on the Python side) --
// Element strides (not bytes) of up to HF_MAX_NDIM axes, C order (last axis fastest).
struct Shape   { i64 dim[HF_MAX_NDIM]; i32 ndim; };
struct Strides { i64 s[HF_MAX_NDIM]; };

// Shape and Strides arrive by value; indexing them with a run-time axis makes the compiler
// copy the whole struct to per-thread local memory (nvcc: ~300 bytes of local stores and
// reads per thread and launch). So every index into them is a compile-time constant:
// loops over axes are unrolled to HF_MAX_NDIM with a (uniform) guard, and a run-time
// axis is picked by a select chain (`at`).
__device__ __forceinline__ i64 at(const i64 (&a)[HF_MAX_NDIM], int d) {
  i64 r = a[0];
#pragma unroll
  for (int k = 1; k < HF_MAX_NDIM; ++k)
    if (d == k) r = a[k];
  return r;
}

// Offset of the i-th element (C order over the first `ndim` axes of `shape`, all of them
// by default) in an operand with `st`.
__device__ __forceinline__ i64 offset_of(i64 i, const Shape& shape, const Strides& st, int ndim) {
  i64 off = 0;
#pragma unroll
  for (int d = HF_MAX_NDIM - 1; d >= 0; --d) {
    if (d < ndim) {
      const i64 n = shape.dim[d], q = i / n;
      off += (i - q * n) * st.s[d];
      i = q;
    }
  }
  return off;
}
__device__ __forceinline__ i64 offset_of(i64 i, const Shape& shape, const Strides& st) {
  return offset_of(i, shape, st, shape.ndim);
}

// V neighbouring elements as one aligned vector access (16 bytes when V = 16 / sizeof(T)).
template <class T, int V> struct alignas(sizeof(T) * V) pack { T v[V]; };
template <int V, class T> __device__ __forceinline__ pack<T, V> load_pack(const T* p, i64 k) {
  return reinterpret_cast<const pack<T, V>*>(p)[k];
}
template <int V, class T> __device__ __forceinline__ void store_pack(T* p, i64 k, const pack<T, V>& v) {
  reinterpret_cast<pack<T, V>*>(p)[k] = v;
}

// Grid-stride loop over [0, n) with 64-bit indices.
#define HF_GRID_LOOP(i, n) \
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
       i += (long long)blockDim.x * gridDim.x)

}  // namespace hf
