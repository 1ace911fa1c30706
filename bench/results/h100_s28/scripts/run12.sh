#!/usr/bin/env bash
# Call 12: the decode rule fixed (rows of one column had made a CTA of 0
# warps: call 11's gpu_test failure). gpu_test's in-kernel and backward tests,
# gpu_norms_test in 4 shards.
set -uo pipefail
D=$PWD/.devbuild/s28
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
export LNTUNE_CACHE=off
( timeout 300 $D/gpu_test --gtest_filter='Gpu.InKernel*:Gpu.Backward*:Gpu.EverySearchSpace*' > /tmp/gt.log 2>&1; echo "gpu_test rc=$?" ) &
for i in 0 1 2 3; do
  ( GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 480 $D/gpu_norms_test --gtest_brief=1 > /tmp/norms_$i.log 2>&1; echo "norms shard $i rc=$?" ) &
done
wait
cp /tmp/gt.log $O/gpu_test_call12.log; cat /tmp/norms_*.log > $O/gpu_norms_test_call12.log
grep -hE "PASSED|FAILED|\[ finish|Failure" $O/gpu_test_call12.log $O/gpu_norms_test_call12.log | head -20
