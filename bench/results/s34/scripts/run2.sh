#!/usr/bin/env bash
# Call 2 (session 34, H200). m34 = main (a97eb98); o34 = main + the forward's
# per-thread overhead cut (rsqrtf, one 1/N, the mean's and variance's
# scratch areas without the barrier between, the cross-warp step of
# row_sum/row_sum2 as one load and a butterfly, unsigned thread indices).
# Phase 1, alone: A/B m34 against o34 (two rounds); every forward config of
# o34 at bf16 N = 4096 and 8192. Phase 2, side by side (nothing timed): o34's
# gpu_test (without the wide backward, whose kernel this does not touch) and
# gpu_norms_test in shards, memcheck and racecheck of the forward defaults.
source bench/gpu_call.sh
s "A/B"
timeout 250 bash bench/gpu_ab.sh ab_call2 2 $B/m34 $B/o34 -- \
  "fwd||fwd bf16 1024 4096 8192 16384" "fwd||fwd fp16 4096 8192" "fwd||fwd fp32 4096 16384" \
  "rms|LNTUNE_SWEEP_OP=rmsnorm|fwd bf16 4096 8192" "addrms|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=1|fwd bf16 8192" \
  "bwd||bwd bf16 1024 8192" "m4096|LNTUNE_SWEEP_M=4096|bwd bf16 1024 4096"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/o34
s "every config (o34): fwd bf16 4096 8192"
LNTUNE_SWEEP_EVERY=1 timeout 100 $B/o34/lntune_sweep fwd bf16 4096 8192 > $O/every_fwd_call2.log 2>&1; echo "rc=$?"
grep -E "default" $O/every_fwd_call2.log
s "phase 2: suites (o34), sanitizers"
T=/tmp/p2; mkdir -p $T
for i in 0 1 2; do
  (GTEST_TOTAL_SHARDS=3 GTEST_SHARD_INDEX=$i timeout 280 $B/o34/gpu_test --gtest_filter='-Gpu.WideBackward*' --gtest_brief=1 > $T/gpu_test_$i.log 2>&1; echo "gpu_test $i rc=$?") &
  (GTEST_TOTAL_SHARDS=3 GTEST_SHARD_INDEX=$i timeout 280 $B/o34/gpu_norms_test --gtest_brief=1 > $T/norms_$i.log 2>&1; echo "norms $i rc=$?") &
done
san() {  # label tool env... -- sweep args
  local lab=$1 tool=$2; shift 2
  local envs=(); while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  env "${envs[@]}" timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 2 $B/o34/lntune_sweep "$@" > $T/san_$lab.log 2>&1
  echo "$lab exit $?: $(grep -E 'SUMMARY' $T/san_$lab.log | tr '\n' ' ')"
}
(san fwd8k_mem memcheck LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=37 -- fwd bf16 8192 1000
 san fwd8k_race racecheck LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=37 -- fwd bf16 8192 1000) > $T/sanA.txt 2>&1 &
(san fwd_rms_race racecheck LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=37 LNTUNE_SWEEP_OP=rmsnorm -- fwd fp16 4096 3000
 san bwd_race racecheck LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=300 -- bwd bf16 1024 4096) > $T/sanB.txt 2>&1 &
wait
cat $T/gpu_test_*.log > $O/gpu_test_call2.log; cat $T/norms_*.log > $O/gpu_norms_test_call2.log
grep -hE "PASSED|FAILED|tests ran" $O/gpu_test_call2.log $O/gpu_norms_test_call2.log
cat $T/sanA.txt $T/sanB.txt | tee $O/sanitizer_call2.log
s done
