#!/usr/bin/env bash
# Call 5: the in-kernel finish with a fixed tree over the row groups (not a
# serial sum) and the barrier counted by CTAs in the split choice. Its GPU
# test (whole log kept), the default with dW/dB in the dx kernel against
# bwd_dwdb after it in the same process, and compute-sanitizer (memcheck,
# racecheck, synccheck) on backwards that take both levels of the finish.
D=.devbuild/s28
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
$D/gpu_test --gtest_filter='Gpu.InKernel*' > $OUT/gpu_test_call5.log 2>&1
grep -E "^\[ finish|OK \]|FAILED|Failure" $OUT/gpu_test_call5.log | head -20
export LNTUNE_CACHE=off LNTUNE_SWEEP_FINISH=both LNTUNE_SWEEP_CONFIG=default
{
  for dt in bf16 fp32; do LNTUNE_SWEEP_M=4096 $D/lntune_sweep bwd $dt 1024 2048 4096; done
  for m in 32 256; do LNTUNE_SWEEP_M=$m $D/lntune_sweep bwd bf16 1024 2048 4096; done
  LNTUNE_SWEEP_M=32 $D/lntune_sweep bwd fp32 1024 4096
  $D/lntune_sweep bwd bf16 4096
  $D/lntune_sweep bwd fp32 4096
  LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=4096 $D/lntune_sweep bwd bf16 1024 4096
  LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=32 $D/lntune_sweep bwd bf16 1024 4096
} 2>&1 | grep -v "^bwd " > $OUT/sweep_call5.log
cat $OUT/sweep_call5.log
export LNTUNE_SWEEP_FINISH=
for tool in memcheck racecheck synccheck; do
  for m in 32 8192; do
    compute-sanitizer --tool $tool --error-exitcode 9 env LNTUNE_SWEEP_M=$m $D/lntune_sweep bwd bf16 1000 > /tmp/san.log 2>&1
    rc=$?
    tail -3 /tmp/san.log
    echo "$tool M=$m exit $rc"
  done
done > $OUT/sanitizer_call5.log 2>&1
cat $OUT/sanitizer_call5.log
