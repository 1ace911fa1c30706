#!/usr/bin/env bash
# Call 3: cf92e13 (the dW/dB finish in its own entry). The GPU suites, the
# sanitizers on the cooperative path, then (alone on the GPU) the default's
# in-kernel finish against bwd_dwdb after it at small M, and every bwd_dx
# config at M = 4096 (train), where the plain entries of under 512 threads
# now keep their own register counts.
set -uo pipefail
D=$PWD/.devbuild/s29b
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
export LNTUNE_CACHE=off
s() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
s "gpu tests"
for i in 0 1 2 3; do
  ( GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 480 $D/gpu_norms_test --gtest_brief=1 > /tmp/norms_$i.log 2>&1; echo "norms shard $i rc=$?" ) &
done
( timeout 480 $D/gpu_test --gtest_brief=1 > /tmp/gpu_test.log 2>&1; echo "gpu_test rc=$?" ) &
( timeout 480 $D/tuner_gpu_test --gtest_brief=1 > /tmp/tuner_gpu.log 2>&1; echo "tuner_gpu_test rc=$?" ) &
wait
cat /tmp/norms_*.log > $O/gpu_norms_test_call3.log; cp /tmp/gpu_test.log $O/gpu_test_call3.log; cp /tmp/tuner_gpu.log $O/tuner_gpu_test_call3.log
grep -hE "PASSED|FAILED|\[ finish|\[ regs" $O/gpu_norms_test_call3.log $O/gpu_test_call3.log $O/tuner_gpu_test_call3.log | head -20
s "sanitizers"
for tool in memcheck racecheck synccheck; do
  for c in "32 bf16 1000 layernorm" "8 fp32 4095 rmsnorm" "64 bf16 2048 layernorm"; do
    set -- $c
    LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=$1 LNTUNE_SWEEP_OP=$4 timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $D/lntune_sweep bwd $2 $3 > /tmp/san.log 2>&1
    echo "$tool M=$1 $2 N=$3 $4 exit $?: $(grep -E 'SUMMARY' /tmp/san.log)"
  done
done > $O/sanitizer_call3.log 2>&1
cat $O/sanitizer_call3.log
s "finish A/B"
{
  for m in 1 32; do
    LNTUNE_SWEEP_FINISH=both LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=$m $D/lntune_sweep bwd bf16 1024 2048 4096 8192
    LNTUNE_SWEEP_FINISH=both LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=$m $D/lntune_sweep bwd fp32 1024 4096
  done
} 2>&1 | grep -E "^finish|copy" > $O/finish_ab_call3.log
grep "^finish" $O/finish_ab_call3.log | cut -c1-150
s "train every config"
for c in "bf16 1024" "bf16 2048" "bf16 4096" "fp32 1024"; do
  LNTUNE_SWEEP_EVERY=1 timeout 120 $D/lntune_sweep train $c > /tmp/t.log 2>&1
  cp /tmp/t.log $O/train_every_$(echo $c | tr ' ' _)_call3.log
  grep -E "^train" /tmp/t.log | cut -c1-220 | head -4
  grep -E "of copy$" /tmp/t.log | sort -k5 -n | head -6
done
s done
