#!/usr/bin/env bash
# compute-sanitizer over a representative part of the GPU suite: every kernel
# family (single tile, several rows per CTA, tiled, clusters; fwd, bwd_dx,
# bwd_dwdb), odd sizes, NaN/Inf, concurrency.
# Then memcheck over the stress test (gpu_stress_test; STRESS_SANITIZE_SECONDS,
# default 3, of 8 threads launching while configs change).
#   bash .ci/gpu_sanitize.sh DIR      (DIR holds gpu_test, gpu_stress_test)
set -uo pipefail
dir=${1:?usage: gpu_sanitize.sh DIR}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
filter='Gpu.DwdbRowSplits*:Gpu.DegenerateRows*:Gpu/Sweep.*M1_*:Gpu/Sweep.*M3_N*:Gpu/Sweep.*N40001*:Gpu/Sweep.*N100000*:Gpu/Sweep.*M64_N12288*:Gpu.NanAndInf*:Gpu.ZeroRows*'
rc=0
for tool in memcheck racecheck synccheck; do
  echo "=== compute-sanitizer --tool $tool"
  compute-sanitizer --tool "$tool" --print-limit 20 "$dir/gpu_test" --gtest_filter="$filter" --gtest_brief=1 \
    >"${OUT:-/tmp}/sanitize_$tool.log" 2>&1 || rc=1
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|tests? ran|PASSED|FAILED" "${OUT:-/tmp}/sanitize_$tool.log" | tail -5
done
echo "=== compute-sanitizer --tool memcheck: stress test"
LNTUNE_STRESS_SECONDS=${STRESS_SANITIZE_SECONDS:-10} compute-sanitizer --tool memcheck --print-limit 20 \
  "$dir/gpu_stress_test" --gtest_brief=1 >"${OUT:-/tmp}/sanitize_stress_memcheck.log" 2>&1 || rc=1
grep -E "ERROR SUMMARY|stress|tests? ran|PASSED|FAILED" "${OUT:-/tmp}/sanitize_stress_memcheck.log" | tail -5
exit $rc
