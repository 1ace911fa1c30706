#!/usr/bin/env bash
# Call 7 (session 35, H200). f35d = this session's defaults (fast-memory
# rules). The GPU suites (sharded, side by side: correctness only, nothing
# timed), then the tables with the default heuristic (no cache): LayerNorm,
# RMSNorm and the fused forms at x = 512 MiB against PyTorch, and the
# M = 4096 backward kernels.
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/f35d
s "suites (f35d)"
T=/tmp/p7; mkdir -p $T
for i in 0 1 2 3; do
  (GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 230 $B/f35d/gpu_test --gtest_brief=1 > $T/gpu_test_$i.log 2>&1; echo "gpu_test $i rc=$?") &
done
for i in 0 1 2; do
  (GTEST_TOTAL_SHARDS=3 GTEST_SHARD_INDEX=$i timeout 230 $B/f35d/gpu_norms_test --gtest_brief=1 > $T/norms_$i.log 2>&1; echo "norms $i rc=$?") &
done
wait
cat $T/gpu_test_*.log > $O/gpu_test_call7.log; cat $T/norms_*.log > $O/gpu_norms_test_call7.log
grep -hE "PASSED|FAILED|tests ran" $O/gpu_test_call7.log $O/gpu_norms_test_call7.log
unset LD_LIBRARY_PATH
s "tables (f35d, default heuristic)"
STEP_SECONDS=150 TABLES="ext bandwidth norms train" OUT=$O timeout 330 bash bench/gpu_tables.sh $B/f35d call7
s done
