#!/usr/bin/env bash
# The GPU checks of a session in one command (run in the repo root on the GPU machine):
#   tools/device_check.sh tests   the whole suite on both backends, then the cuTENSOR
#                                 suites when .ctlib/libcutensor_sm90.so.2.xz is present
#                                 (made by tools/slim_cutensor.py)
#   tools/device_check.sh bench   every benchmarks/bench_*.py (markdown tables)
#   tools/device_check.sh build   only build the C extension in place (then run what you like)
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
*) echo "usage: $0 tests|bench|build" >&2; exit 2 ;;
esac
