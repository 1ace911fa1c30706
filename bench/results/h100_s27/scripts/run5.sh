#!/usr/bin/env bash
# Session 27, GPU call 5: the final build (51fafbd): tuner_gpu_test (the
# runner's new L2 flush), gpu_norms_test in 4 shards (the new small-M grids
# of RMSNorm and the fused forms among its variants).
set -uo pipefail
D=$PWD/.devbuild/s27
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
export LNTUNE_CACHE=off
s() { echo "=== $1 ($(date +%T))"; }
s tuner_gpu_test
timeout 150 $D/tuner_gpu_test --gtest_brief=1 > $O/tuner_gpu_test.log 2>&1; echo "rc=$?"; grep -hE "PASSED|FAILED" $O/tuner_gpu_test.log | head -5
s gpu_norms_test
for i in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 150 $D/gpu_norms_test --gtest_brief=1 > $O/gpu_norms_test_$i.log 2>&1; echo "shard $i rc=$?"
done
cat $O/gpu_norms_test_?.log > $O/gpu_norms_test.log; rm $O/gpu_norms_test_?.log; grep -hE "PASSED|FAILED" $O/gpu_norms_test.log
s done
