// polyval.cuh -- Polyval: p(x) by Horner's rule in one launch (hipfer.backends.cupy.elementwise).
//
// NumPy's arithmetic exactly: y = 0, then y = y * x + p[k] for k = 0 .. len(p) - 1 (highest
// power first), each step through the eager kernels' functors (op_multiply, op_add via
// op_call: float16 in float, rounded every step), so the result is bitwise that of the
// composition: no fma (the kernels compile with contraction off), and 0 * inf = NaN on the
// first step as in NumPy. Integers wrap, bool is or/and, complex multiplies as the eager
// kernel does.
// (inlined once by hipfer.kernels.module_source: no include guard needed)
#include "ops.cuh"

namespace hf {

// out (any layout, element strides out_st over shape) = polyval(p, x); p is 1-d (np_ terms,
// element stride p_st), x any layout (element strides x_st over shape; 0 for broadcast).
template <class T>
__global__ void polyval(const T* p, i64 np_, i64 p_st, const T* x, T* out, i64 n, Shape shape,
                        Strides x_st, Strides out_st) {
  HF_GRID_LOOP(i, n) {
    const T v = x[offset_of(i, shape, x_st)];
    T y = T(0);
    for (i64 k = 0; k < np_; ++k) {
      const T yx = (T)op_call<op_multiply>(y, v);  // rounded to T, as the eager product
      y = (T)op_call<op_add>(yx, p[k * p_st]);
    }
    out[offset_of(i, shape, out_st)] = y;
  }
}

}  // namespace hf
