#!/usr/bin/env bash
# Call 4: the in-kernel dW/dB finish, items of adaptive width (finish_row_groups) and the eligibility rule (finish_splits, at most 4 CTAs a SM). Its GPU tests, then the default config
# with dW/dB in the dx kernel against bwd_dwdb after it, in the same process
# (LNTUNE_SWEEP_FINISH=both), at M = 4096, small M and x = 512 MiB.
D=.devbuild/s28
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
$D/gpu_test --gtest_filter='Gpu.InKernel*:Gpu.Backward*:Gpu.DwdbRowSplits*:Gpu.EverySearchSpaceConfigIsCorrect' 2>&1 | tail -40 > $OUT/gpu_test_call4.log
tail -5 $OUT/gpu_test_call4.log
export LNTUNE_CACHE=off LNTUNE_SWEEP_FINISH=both LNTUNE_SWEEP_CONFIG=default
{
  for dt in bf16 fp32; do LNTUNE_SWEEP_M=4096 $D/lntune_sweep bwd $dt 1024 2048 4096 8192 12288 16384; done
  for m in 1 32 256; do LNTUNE_SWEEP_M=$m $D/lntune_sweep bwd bf16 1024 2048 4096 8192; done
  LNTUNE_SWEEP_M=32 $D/lntune_sweep bwd fp32 1024 4096
  $D/lntune_sweep bwd bf16 256 1024 4096 16384
  $D/lntune_sweep bwd fp32 256 1024 4096 16384
  LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=4096 $D/lntune_sweep bwd bf16 1024 4096 8192
  LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=32 $D/lntune_sweep bwd bf16 1024 4096
} 2>&1 | grep -v "^bwd " > $OUT/sweep_call4.log
cat $OUT/sweep_call4.log
