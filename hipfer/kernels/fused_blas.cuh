// fused_blas.cuh -- BLAS-like fused ops of hipfer.nn (hipfer/prims/fused_ops/blas.py).
// Operands are C-contiguous; an output may alias an input where the op says so.
#pragma once
#include "common.cuh"

namespace hf {

// out = alpha * x + beta * y; beta == 0 never reads y. out may be y.
template <class T>
__global__ void fused_axpby(const T* __restrict__ x, const T* y, T* out, i64 n, T alpha, T beta) {
  HF_GRID_LOOP(i, n) {
    out[i] = beta == T(0) ? alpha * x[i] : alpha * x[i] + beta * y[i];
  }
}

}  // namespace hf
