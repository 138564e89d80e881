#!/usr/bin/env bash
# The GPU checks of a session in one command (run in the repo root on the GPU machine):
#   tools/device_check.sh tests   the whole suite on both backends, then the cuTENSOR
#                                 suites when .ctlib/libcutensor_sm90.so.2.xz is present
#                                 (made by tools/slim_cutensor.py)
#   tools/device_check.sh bench   every benchmarks/bench_*.py (markdown tables)
#   tools/device_check.sh build   only build the C extension in place (then run what you like)
#   tools/device_check.sh cache   hipfer's kernel cache forced on: its tests, then every kernel
#                                 group compiled cold and loaded warm in fresh processes (times),
#                                 then kernel tests through cupy.RawKernel (HIPFER_FAST_LAUNCH=0)
#   tools/device_check.sh cupy13  the kernel tests on CuPy 13.3 (cupy-cuda12x 13.3.0 with NVRTC
#                                 12, carried in .c13/ as xz files: no cuBLAS/cuSOLVER/cuFFT 12
#                                 there, so the tests that need them are left out)
# Logs go to $OUT (default /tmp/hipfer-out); the last lines of each are printed.
set -u
OUT=${OUT:-/tmp/hipfer-out}
mkdir -p "$OUT"
if ls .whl/*.whl >/dev/null 2>&1; then  # wheels the machine lacks (array-api-strict, ...)
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl 2>/dev/null
fi
export PYTHONPATH=$PWD:/tmp/site${PYTHONPATH:+:$PYTHONPATH}
# the optional C extensions (hipfer/_launch.c, hipfer/_warm.c), in place: the tree is not
# pip-installed here
python3 setup.py -q build_ext --inplace > "$OUT/build_ext.txt" 2>&1 || echo "hipfer._launch not built (see build_ext.txt)"
CT=""
if [ -f .ctlib/libcutensor_sm90.so.2.xz ]; then
  xz -dc .ctlib/libcutensor_sm90.so.2.xz > /tmp/libcutensor.so.2 && CT=/tmp/libcutensor.so.2
  export LD_LIBRARY_PATH=/usr/local/cuda-13.0/targets/x86_64-linux/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
case "${1:-tests}" in
tests)
  timeout "${TEST_TIMEOUT:-300}" python3 -m pytest tests -q -n 14 --backend all -m "not gpu_compile" \
    -p no:cacheprovider > "$OUT/gpu_tests.txt" 2>&1
  grep -E "^(FAILED|ERROR)" "$OUT/gpu_tests.txt" | head -40; tail -2 "$OUT/gpu_tests.txt"
  if [ -n "$CT" ]; then
    HIPFER_CUTENSOR=$CT timeout 120 python3 -m pytest tests/test_tensorlib.py tests/test_einsum.py \
      tests/test_prims_semiring.py -q -n 14 --backend cupy --cutensor "$CT" -p no:cacheprovider \
      > "$OUT/gpu_cutensor.txt" 2>&1
    grep -E "^(FAILED|ERROR)" "$OUT/gpu_cutensor.txt" | head -20; tail -1 "$OUT/gpu_cutensor.txt"
  fi ;;
bench)
  for b in benchmarks/bench_*.py; do
    n=$(basename "$b" .py)
    timeout "${BENCH_TIMEOUT:-120}" python3 "$b" > "$OUT/$n.md" 2>&1
    echo "== $n (rc $?)"; grep -E "^\|" "$OUT/$n.md" | tail -n "${BENCH_LINES:-14}"
  done ;;
build) python3 -c "from hipfer.backends.cupy import _engine as e; print('fast launch:', e.fast_launch_status())" ;;
cache)
  export HIPFER_KERNEL_CACHE=on HIPFER_KERNEL_CACHE_DIR=$(mktemp -d)/kc
  timeout 200 python3 -m pytest -q -rs -n 0 -p no:cacheprovider tests/test_kernel_cache.py \
    tests/test_launch_ext.py > "$OUT/gpu_cache_tests.txt" 2>&1
  grep -E "^(FAILED|ERROR|SKIPPED)" "$OUT/gpu_cache_tests.txt" | head; tail -1 "$OUT/gpu_cache_tests.txt"
  rm -rf "$HIPFER_KERNEL_CACHE_DIR"
  # some groups (CACHE_GROUPS="all": every one), compiled or loaded as a first call would
  G=${CACHE_GROUPS:-ew_binary_scalar_1,red_sum,idx_gather,sort_keys,fused_norm,fused_batchnorm}
  for run in cold warm; do
    python3 - "$run" "$G" <<'PY'
import sys, time
from hipfer.backends.cupy import _engine as e
from hipfer.kernels import all_instances
want = sys.argv[2].split(",")
groups = [g for g in all_instances() if want == ["all"] or g[0] in want]
times = []
for name, f, exprs in groups:
    t = time.perf_counter()
    e.get_kernels(f, exprs)
    times.append(f"{name} {time.perf_counter() - t:.2f}")
print(f"{sys.argv[1]} ({e.kernel_cache_status()}), s per group:", ", ".join(times))
PY
  done
  HIPFER_FAST_LAUNCH=0 timeout 240 python3 -m pytest -q -n 14 --backend cupy -p no:cacheprovider \
    tests/test_nn_conv.py tests/test_nn_batchnorm.py tests/test_nn_lrp.py tests/test_nn_norm.py \
    tests/test_elementwise_layouts.py tests/test_prims_reduction.py tests/test_searching.py \
    tests/test_prims_sort.py tests/test_prims_indexing.py > "$OUT/gpu_rawkernel.txt" 2>&1
  echo "RawKernel path (HIPFER_FAST_LAUNCH=0, cached kernels):"
  grep -E "^(FAILED|ERROR)" "$OUT/gpu_rawkernel.txt" | head; tail -1 "$OUT/gpu_rawkernel.txt" ;;
cupy13)
  mkdir -p /tmp/c13/site /tmp/c13/lib
  xz -dc .c13/cupy13site.tar.xz | tar xf - -C /tmp/c13/site
  xz -dc .c13/libnvrtc.so.12.xz > /tmp/c13/lib/libnvrtc.so.12
  xz -dc .c13/libnvrtc-builtins.so.12.9.xz > /tmp/c13/lib/libnvrtc-builtins.so.12.9
  export PYTHONPATH=$PWD:/tmp/c13/site LD_LIBRARY_PATH=/tmp/c13/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  python3 -c "import cupy, numpy; print('cupy', cupy.__version__, 'numpy', numpy.__version__); \
from hipfer.backends.cupy import _engine as e; print(e.fast_launch_status(), '|', e.kernel_cache_status())"
  for fl in 1 0; do
    HIPFER_FAST_LAUNCH=$fl timeout "${TEST_TIMEOUT:-240}" python3 -m pytest -q -n 14 --backend cupy \
      -p no:cacheprovider -m "not gpu_compile" ${C13_TESTS:-tests} > "$OUT/gpu_cupy13_fl$fl.txt" 2>&1
    echo "CuPy 13.3, HIPFER_FAST_LAUNCH=$fl:"; tail -1 "$OUT/gpu_cupy13_fl$fl.txt"
    grep -E "^(FAILED|ERROR)" "$OUT/gpu_cupy13_fl$fl.txt" | sed 's/ - .*//' | cut -d: -f1 | sort | uniq -c | sort -rn | head -25
  done ;;
*) echo "usage: $0 tests|bench|build|cache|cupy13" >&2; exit 2 ;;
esac
