// indexing.cuh -- gather / scatter / index-put with checked indices.
//
// Every index is checked before it is used: an index outside [-n, n) is never
// dereferenced. The thread that meets one records 1 + the flat (C-order) position of
// the offending index element in the device error flag (atomicCAS from 0, so the
// first report stays) and skips its element; the host reads the flag after the launch
// and raises IndexError (hipfer.backends.cupy.indexing).
//
// Repeated destinations (Scatter, IndexPut) are made deterministic without atomics:
// idx_keys computes each index element's destination (a flat C-order position in the
// output), the host stable-sorts those keys, and idx_apply lets only the last element
// of each run of equal keys write (assignment) or sums each run in index order
// (accumulation).
//
// Data-moving kernels (gather, copy, assignment) are instantiated on a *storage* type
// of the element's size (hipfer.kernels.indexing.storage_ctype); complex types keep
// their own type so that the conjugation flag can be folded into the load.
#pragma once
#include "common.cuh"

namespace hf {

// Records the first bad index position (1 + pos; 0 means "no error").
__device__ __forceinline__ void idx_report(i64* err, i64 pos) {
  atomicCAS(reinterpret_cast<unsigned long long*>(err), 0ull, (unsigned long long)(pos + 1));
}

// v in [-n, n) -> its position in [0, n); false when out of range.
template <class I> __device__ __forceinline__ bool idx_wrap(I v, i64 n, i64& pos) {
  if (I(-1) < I(0)) {  // signed index types: negatives wrap once
    i64 x = (i64)v;
    if (x < 0) x += n;
    pos = x;
    return x >= 0 && x < n;
  }
  pos = (i64)v;
  return (u64)v < (u64)n;
}

// Accumulation with NumPy's results: ints wrap (via unsigned: no signed overflow),
// bool add is logical or.
template <class T> __device__ __forceinline__ T idx_add(T a, T b) { return (T)(a + b); }
template <> __device__ __forceinline__ bool idx_add<bool>(bool a, bool b) { return a || b; }
template <> __device__ __forceinline__ i32 idx_add<i32>(i32 a, i32 b) { return (i32)((u32)a + (u32)b); }
template <> __device__ __forceinline__ i64 idx_add<i64>(i64 a, i64 b) { return (i64)((u64)a + (u64)b); }

// out[c] = a[c with the indexed axis replaced by idx[c]], c over `shape` (C order).
// The strides of a carry 0 on the indexed axis (its stride is a_axis_stride); idx_st
// maps c to the index element (IndexSelect: non-zero only on the axis) and pos_st to
// that element's flat position, which is what an error reports.
template <class T, class I>
__global__ void idx_gather(T* out, const T* a, const I* idx, i64 n, Shape shape,
                           Strides out_st, Strides a_st, Strides idx_st, Strides pos_st,
                           i64 a_axis_stride, i64 axis_size, bool cj, i64* err) {
  HF_GRID_LOOP(i, n) {
    i64 rem = i, oo = 0, ao = 0, io = 0, po = 0;
    for (int d = shape.ndim - 1; d >= 0; --d) {
      i64 q = rem / shape.dim[d];
      i64 c = rem - q * shape.dim[d];
      rem = q;
      oo += c * out_st.s[d];
      ao += c * a_st.s[d];
      io += c * idx_st.s[d];
      po += c * pos_st.s[d];
    }
    i64 v;
    if (!idx_wrap(idx[io], axis_size, v)) {
      idx_report(err, po);
      continue;
    }
    out[oo] = load(a, ao + v * a_axis_stride, cj);
  }
}

// Destination keys, one per index element e (C order over `shape`):
//   keys[e] = (accumulate ? keys[e] : 0) + sum_d c_d * key_st[d] + wrap(idx[e]) * mult
// Scatter: key_st are the output's C strides (0 on the axis), mult the axis' C stride.
// IndexPut: one launch per index tensor, key_st = 0, mult = product of the later
// indexed sizes. An error reports pos_base + e.
template <class I>
__global__ void idx_keys(i64* keys, const I* idx, i64 n, Shape shape, Strides idx_st,
                         Strides key_st, i64 mult, i64 axis_size, bool accumulate,
                         i64 pos_base, i64* err) {
  HF_GRID_LOOP(e, n) {
    i64 rem = e, io = 0, key = 0;
    for (int d = shape.ndim - 1; d >= 0; --d) {
      i64 q = rem / shape.dim[d];
      i64 c = rem - q * shape.dim[d];
      rem = q;
      io += c * idx_st.s[d];
      key += c * key_st.s[d];
    }
    i64 v;
    if (!idx_wrap(idx[io], axis_size, v)) {
      idx_report(err, pos_base + e);
      v = 0;  // the host raises before any key is used
    }
    key += v * mult;
    keys[e] = accumulate ? keys[e] + key : key;
  }
}

// Writes the sorted runs: perm is the stable argsort of keys (nb entries). Element
// (s, r), r over the trailing un-indexed axes `rshape` (IndexPut; a single r = 0 for
// Scatter), goes to out[offset(key over dshape) + offset(r)] from
// vals[offset(perm[s] over bshape) + offset(r)].
//   ACC == false: only the last element of a run writes (the last in index order).
//   ACC == true:  the first element of a run adds the whole run, in index order, to out.
template <class T, bool ACC>
__global__ void idx_apply(T* out, const T* vals, const i64* keys, const i64* perm,
                          i64 nb, i64 nr, Shape dshape, Strides out_d_st,
                          Shape bshape, Strides vals_b_st,
                          Shape rshape, Strides out_r_st, Strides vals_r_st, bool cj) {
  HF_GRID_LOOP(i, nb * nr) {
    i64 s = nr == 1 ? i : i / nr;
    i64 r = i - s * nr;
    i64 key = keys[perm[s]];
    i64 oo = offset_of(key, dshape, out_d_st) + offset_of(r, rshape, out_r_st);
    i64 vr = offset_of(r, rshape, vals_r_st);
    if (ACC) {
      if (s > 0 && keys[perm[s - 1]] == key) continue;
      T acc = out[oo];
      for (i64 t = s; t < nb; ++t) {
        i64 e = perm[t];
        if (keys[e] != key) break;
        acc = idx_add(acc, load(vals, offset_of(e, bshape, vals_b_st) + vr, cj));
      }
      out[oo] = acc;
    } else {
      if (s + 1 < nb && keys[perm[s + 1]] == key) continue;
      out[oo] = load(vals, offset_of(perm[s], bshape, vals_b_st) + vr, cj);
    }
  }
}

// out = a (conjugated when cj), both N-d strided: the "out starts as a" step.
template <class T>
__global__ void idx_copy(T* out, const T* a, i64 n, Shape shape, Strides out_st,
                         Strides a_st, bool cj) {
  HF_GRID_LOOP(i, n) {
    out[offset_of(i, shape, out_st)] = load(a, offset_of(i, shape, a_st), cj);
  }
}

}  // namespace hf
