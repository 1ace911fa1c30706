#!/usr/bin/env bash
# Call 6 (session 34, H200). f34 = d1e68fd; g34 = that + the fused 16-bit
# backward's new default (16 columns a thread, a row a CTA, 512 threads'
# worth of CTAs per SM; call 5's best). Phase 1, alone: A/B f34 against g34,
# two rounds, x = 512 MiB. Phase 2 (nothing timed): gpu_norms_test of g34 in
# shards, memcheck and racecheck of the new default at odd N.
source bench/gpu_call.sh
s "A/B"
timeout 250 bash bench/gpu_ab.sh ab_call6 2 $B/f34 $B/g34 -- \
  "addln|LNTUNE_SWEEP_RESIDUAL=1|bwd bf16 256 512 1024 2048 4096 6000 8192" \
  "addrms|LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=rmsnorm|bwd bf16 256 512 1024 2048 4096 8192" \
  "addln16|LNTUNE_SWEEP_RESIDUAL=1|bwd fp16 1024 8192"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/g34
s "phase 2: gpu_norms_test (g34), sanitizers"
T=/tmp/p6; mkdir -p $T
for i in 0 1 2; do
  (GTEST_TOTAL_SHARDS=3 GTEST_SHARD_INDEX=$i timeout 230 $B/g34/gpu_norms_test --gtest_brief=1 > $T/norms_$i.log 2>&1; echo "norms $i rc=$?") &
done
(LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=9000 LNTUNE_SWEEP_RESIDUAL=1 timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 $B/g34/lntune_sweep bwd bf16 1000 6001 > $T/mem.log 2>&1; echo "memcheck addln rc=$? $(grep SUMMARY $T/mem.log)") &
(LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=9000 LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=rmsnorm timeout 200 compute-sanitizer --tool racecheck --error-exitcode 9 $B/g34/lntune_sweep bwd bf16 1000 > $T/race.log 2>&1; echo "racecheck addrms rc=$? $(grep SUMMARY $T/race.log)") &
wait
cat $T/norms_*.log > $O/gpu_norms_test_call6.log; cat $T/mem.log $T/race.log > $O/sanitizer_call6.log
grep -hE "PASSED|FAILED|tests ran" $O/gpu_norms_test_call6.log
s done
