#!/usr/bin/env bash
# Call 1 (session 35, H200). m35 = main (1d24178). Every config where the
# H200's default heuristic is furthest below target (s34 call 7): the 16-bit
# forward and backward at N = 65536 and 262144, the fp32 backward at 262144,
# the fused fp32 backward at 1024 and 4096; then ncu of the bf16 forward's
# and backward's defaults at N = 65536.
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/m35
S=$B/m35/lntune_sweep
s "every config"
LNTUNE_SWEEP_EVERY=1 timeout 110 $S fwd bf16 65536 262144 > $O/every_fwd16_call1.log 2>&1; echo "fwd16 rc=$?"
LNTUNE_SWEEP_EVERY=1 timeout 130 $S bwd bf16 65536 262144 > $O/every_bwd16_call1.log 2>&1; echo "bwd16 rc=$?"
LNTUNE_SWEEP_EVERY=1 timeout 60 $S bwd fp32 262144 > $O/every_bwd32_call1.log 2>&1; echo "bwd32 rc=$?"
LNTUNE_SWEEP_EVERY=1 LNTUNE_SWEEP_RESIDUAL=1 timeout 60 $S bwd fp32 1024 4096 > $O/every_addln32_call1.log 2>&1; echo "addln32 rc=$?"
grep -hE "default" $O/every_*_call1.log
s "ncu defaults at 65536"
LNTUNE_SWEEP_CONFIG=default timeout 60 ncu --kernel-name regex:lntune_fwd --launch-skip 3 --launch-count 1 \
  --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis \
  $S fwd bf16 65536 > $O/ncu_fwd_call1.log 2>&1; echo "ncu fwd rc=$?"
LNTUNE_SWEEP_CONFIG=default timeout 70 ncu --kernel-name regex:lntune_bwd_dx --launch-skip 3 --launch-count 1 \
  --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis \
  $S bwd bf16 65536 > $O/ncu_bwd_call1.log 2>&1; echo "ncu bwd rc=$?"
s done
