#!/usr/bin/env bash
# Call 4 (session 34, H200). f34 = d1e68fd (the forward's overhead cut and
# the new defaults). First the suites (correctness, nothing timed): gpu_test
# (the wide backward too: its fp32 default at 4097-8192 columns changed) and
# gpu_norms_test in shards; then, alone, the bandwidth tables (LayerNorm,
# RMSNorm and the fused forms at x = 512 MiB against PyTorch, the default
# heuristic: no cache).
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/f34
s "suites (f34)"
T=/tmp/p4; mkdir -p $T
for i in 0 1 2 3; do
  (GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 230 $B/f34/gpu_test --gtest_brief=1 > $T/gpu_test_$i.log 2>&1; echo "gpu_test $i rc=$?") &
done
for i in 0 1 2; do
  (GTEST_TOTAL_SHARDS=3 GTEST_SHARD_INDEX=$i timeout 230 $B/f34/gpu_norms_test --gtest_brief=1 > $T/norms_$i.log 2>&1; echo "norms $i rc=$?") &
done
(LNTUNE_SWEEP_CONFIG="block_size=4096 num_warps=8 rows_per_cta=4 group_size_m=66 cluster_size=2" LNTUNE_SWEEP_M=301 timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 $B/f34/lntune_sweep bwd fp32 8192 > $T/san_mem.log 2>&1; echo "memcheck (wide b4096 w8 r4 c2, M=301, bwd fp32 8192) rc=$? $(grep SUMMARY $T/san_mem.log)") &
wait
cat $T/gpu_test_*.log > $O/gpu_test_call4.log; cat $T/norms_*.log > $O/gpu_norms_test_call4.log
grep -hE "PASSED|FAILED|tests ran" $O/gpu_test_call4.log $O/gpu_norms_test_call4.log
s "tables (f34, default heuristic)"
STEP_SECONDS=140 TABLES="ext bandwidth norms" OUT=$O timeout 330 bash bench/gpu_tables.sh $B/f34 call4
s done
