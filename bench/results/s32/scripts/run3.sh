#!/usr/bin/env bash
# Call 3 (session 32, H200, the warm machine of call 2, whose suites the
# 600 s limit cut off): s32c's long-row norm variants (gpu_norms_test cases
# of 8192 and 262144 columns: the fused fp32 backward that bulk_dz changes),
# memcheck on the fused fp32 backward's default at N = 262144, and every
# wide-backward config of gpu_test, side by side (nothing timed).
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/.devbuild/s32c LNTUNE_CACHE=off; D=$PWD/.devbuild/s32c; nvidia-smi --query-gpu=name --format=csv,noheader
(timeout 140 $D/gpu_norms_test --gtest_filter='*262144*:*8192*' --gtest_brief=1 > $OUT/norms_call3.log 2>&1; echo "norms rc=$?") &
(LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=9 LNTUNE_SWEEP_RESIDUAL=1 timeout 140 compute-sanitizer --tool memcheck --error-exitcode 9 $D/lntune_sweep bwd fp32 262144 > $OUT/memcheck_addln_call3.log 2>&1; echo "memcheck addln rc=$?") &
(timeout 140 $D/gpu_test --gtest_filter='Gpu.WideBackward*' --gtest_brief=1 > $OUT/gpu_test_wide_call3.log 2>&1; echo "gpu_test wide rc=$?") &
wait; tail -n 3 $OUT/*.log
