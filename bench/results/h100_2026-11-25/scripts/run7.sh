#!/usr/bin/env bash
# Session 24, GPU call 7 (issues 10 and 11): the GPU suites at this session's
# kernels and defaults (gpu_test in 2 shards, gpu_norms_test in 4), then
# memcheck and racecheck on the wide kernels (every 8th / 16th wide backward
# config; the wide forward's fp32 + residual case at 256K columns, whose
# residual has a slot of its own).
set -uo pipefail
D=$PWD/.devbuild/s24
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s() { echo "=== $1 ($(date +%T))"; }
s suites
for k in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$k LNTUNE_CACHE=off timeout 300 $D/gpu_norms_test --gtest_brief=1 > /tmp/norms_$k.log 2>&1 &
done
for k in 0 1; do
  GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX=$k LNTUNE_CACHE=off timeout 300 $D/gpu_test --gtest_brief=1 > /tmp/gpu_$k.log 2>&1 &
done
wait
cat /tmp/norms_?.log > $O/gpu_norms_test.log; cat /tmp/gpu_?.log > $O/gpu_test.log
grep -hE "PASSED|FAILED|Failure|tests? ran" $O/gpu_norms_test.log $O/gpu_test.log | head -24
s sanitizers
LNTUNE_CACHE=off LNTUNE_TEST_WIDE_STRIDE=8 timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 $D/gpu_test --gtest_filter='Gpu.WideBackward*' > $O/memcheck_wide_bwd.log 2>&1 &
LNTUNE_CACHE=off timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 $D/gpu_norms_test --gtest_filter='Norms/SmemForward.EveryConfigIsCorrect/ln_fp32_resfp32_N262144:Norms/SmemForward.EveryConfigIsCorrect/ln_fp16_N65536' > $O/memcheck_wide_fwd.log 2>&1 &
wait
LNTUNE_CACHE=off LNTUNE_TEST_WIDE_STRIDE=16 timeout 150 compute-sanitizer --tool racecheck --error-exitcode 9 $D/gpu_test --gtest_filter='Gpu.WideBackward*' > $O/racecheck_wide_bwd.log 2>&1
for f in memcheck_wide_bwd memcheck_wide_fwd racecheck_wide_bwd; do echo "--- $f"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED|wide  |smem fwd" $O/$f.log | head -4; done
s done
