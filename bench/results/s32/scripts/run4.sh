#!/usr/bin/env bash
# Call 4 (session 32, H200, same machine): the whole gpu_norms_test in four
# shards, gpu_test's every-config and backward cases, and racecheck and
# synccheck on the fused fp32 backward's default at N = 262144 (M = 9).
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/.devbuild/s32c LNTUNE_CACHE=off; D=$PWD/.devbuild/s32c
for i in 0 1 2 3; do (GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 115 $D/gpu_norms_test --gtest_brief=1 > $OUT/norms_$i.log 2>&1; echo "norms$i rc=$?") & done
(timeout 115 $D/gpu_test --gtest_filter='Gpu.EverySearchSpaceConfigIsCorrect*:Gpu.Backward*' --gtest_brief=1 > $OUT/gpu_test_every_call4.log 2>&1; echo "gpu_test every rc=$?") &
(for t in racecheck synccheck; do LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=9 LNTUNE_SWEEP_RESIDUAL=1 timeout 55 compute-sanitizer --tool $t --error-exitcode 9 $D/lntune_sweep bwd fp32 262144 > $OUT/${t}_addln_call4.log 2>&1; echo "$t addln rc=$? $(grep SUMMARY $OUT/${t}_addln_call4.log)"; done) &
wait; tail -qn 2 $OUT/norms_*.log $OUT/gpu_test_every_call4.log
