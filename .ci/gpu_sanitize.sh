#!/usr/bin/env bash
# compute-sanitizer over a representative part of the GPU suite: every kernel
# family (single tile, several rows per CTA, tiled, clusters; fwd, bwd_dx,
# bwd_dwdb), odd sizes, NaN/Inf, concurrency.
# Then the norm variants (gpu_norms_test: RMSNorm, fused residual with its
# own dtype and its gradient, in place too, zero-centred gamma, output dtype;
# single-tile, tiled and cluster rows, every config of one variant, N = 1,
# NaN/Inf) under the same three tools, each bounded by
# NORMS_SANITIZE_SECONDS (default 600; a run cut short fails).
# Then memcheck over the stress test (gpu_stress_test; STRESS_SANITIZE_SECONDS,
# default 10, of 8 threads launching while configs change).
#   bash .ci/gpu_sanitize.sh DIR      (DIR holds gpu_test, gpu_norms_test, gpu_stress_test)
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
# The wide-row backward (bwd_dx_wide.cuh: bulk copies, mbarriers, st.async
# exchange across the cluster), every 4th config of its space.
for tool in memcheck racecheck synccheck; do
  echo "=== compute-sanitizer --tool $tool: wide-row backward"
  LNTUNE_TEST_WIDE_STRIDE=${WIDE_SANITIZE_STRIDE:-4} timeout "${WIDE_SANITIZE_SECONDS:-600}" compute-sanitizer \
    --tool "$tool" --print-limit 20 "$dir/gpu_test" --gtest_filter='Gpu.WideBackward*' --gtest_brief=1 \
    >"${OUT:-/tmp}/sanitize_wide_$tool.log" 2>&1 || rc=1
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|wide|tests? ran|PASSED|FAILED" "${OUT:-/tmp}/sanitize_wide_$tool.log" | tail -5
done
norms_filter='Norms/Variants.*_M67_N37_pad5:Norms/Variants.*rmsnorm_*_M7_N20001:Norms/VariantSpace.*v0_N1000_bwd_dx:GpuNorms.SingleElementRows:GpuNorms.NanAndInf*:GpuNorms.DresidualInPlace*'
for tool in memcheck racecheck synccheck; do
  echo "=== compute-sanitizer --tool $tool: norm variants"
  timeout "${NORMS_SANITIZE_SECONDS:-600}" compute-sanitizer --tool "$tool" --print-limit 20 "$dir/gpu_norms_test" \
    --gtest_filter="$norms_filter" --gtest_brief=1 >"${OUT:-/tmp}/sanitize_norms_$tool.log" 2>&1 || rc=1
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|tests? ran|PASSED|FAILED" "${OUT:-/tmp}/sanitize_norms_$tool.log" | tail -5
done
echo "=== compute-sanitizer --tool memcheck: stress test"
LNTUNE_STRESS_SECONDS=${STRESS_SANITIZE_SECONDS:-10} compute-sanitizer --tool memcheck --print-limit 20 \
  "$dir/gpu_stress_test" --gtest_brief=1 >"${OUT:-/tmp}/sanitize_stress_memcheck.log" 2>&1 || rc=1
grep -E "ERROR SUMMARY|stress|tests? ran|PASSED|FAILED" "${OUT:-/tmp}/sanitize_stress_memcheck.log" | tail -5
exit $rc
