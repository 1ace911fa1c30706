#!/usr/bin/env bash
# Session 23, GPU call 7 (issues 10 and 11): the GPU suites at the wide
# forward's defaults (fp32 rows of 16K-256K columns, 16-bit RMSNorm and fused
# rows of 64K-256K): gpu_test and gpu_norms_test (4 shards), memcheck on the
# wide forward's shapes.
set -uo pipefail
D=$PWD/.devbuild/s23
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
grep -hE "PASSED|FAILED|Failure|tests? ran|wide" $O/gpu_norms_test.log $O/gpu_test.log | head -24
s memcheck
LNTUNE_CACHE=off timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 $D/gpu_norms_test --gtest_filter='Norms/SmemForward.EveryConfigIsCorrect/ln_fp16_N65536:Norms/SmemForward.EveryConfigIsCorrect/ln_fp32_N262144' > $O/memcheck.log 2>&1; echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED|smem fwd" $O/memcheck.log | head -5
s done
