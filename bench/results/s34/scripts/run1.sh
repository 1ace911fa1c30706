#!/usr/bin/env bash
# Call 1 (session 34, H200). pc34 = main + bench/experiments/cluster-partials.patch
# (one build: LNTUNE_PARTIAL_CLUSTER=C switches the partial rows' cluster sum on);
# m34 = main (a97eb98). Phase 1, alone on the GPU: the cluster-partials A/B at
# M = 4096 and x = 512 MiB; every config of the H200's holes (16-bit forward
# and fp32 backward at N = 8192); ncu of the forward's default there.
# Phase 2, side by side (nothing timed): tuner_gpu_test on main, the racecheck
# of the fused fp32 backward's default.
source bench/gpu_call.sh
s "A/B cluster partials"
timeout 260 bash bench/gpu_ab.sh ab_call1 2 $B/pc34 -- \
  "pc1|LNTUNE_SWEEP_M=4096|train bf16 1024 2048" \
  "pc4|LNTUNE_SWEEP_M=4096 LNTUNE_PARTIAL_CLUSTER=4|train bf16 1024 2048" \
  "pc2|LNTUNE_SWEEP_M=4096 LNTUNE_PARTIAL_CLUSTER=2|train bf16 1024" \
  "pc8|LNTUNE_SWEEP_M=4096 LNTUNE_PARTIAL_CLUSTER=8|train bf16 1024" \
  "f1|LNTUNE_SWEEP_M=4096|train fp32 1024" "f4|LNTUNE_SWEEP_M=4096 LNTUNE_PARTIAL_CLUSTER=4|train fp32 1024" \
  "big1||bwd bf16 256 1024" "big4|LNTUNE_PARTIAL_CLUSTER=4|bwd bf16 256 1024"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/m34
s "every config: fwd bf16 8192, bwd fp32 8192"
LNTUNE_SWEEP_EVERY=1 timeout 120 $B/m34/lntune_sweep fwd bf16 8192 > $O/every_fwd_call1.log 2>&1; echo "fwd rc=$?"
LNTUNE_SWEEP_EVERY=1 timeout 120 $B/m34/lntune_sweep bwd fp32 8192 > $O/every_bwd_call1.log 2>&1; echo "bwd rc=$?"
grep -E "default|best" $O/every_*_call1.log | head
s "ncu fwd bf16 8192 default"
LNTUNE_SWEEP_CONFIG=default timeout 90 ncu --kernel-name regex:lntune_fwd --launch-skip 3 --launch-count 1 \
  --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis \
  $B/m34/lntune_sweep fwd bf16 8192 > $O/ncu_fwd_call1.log 2>&1; echo "ncu rc=$?"
s "phase 2: tuner_gpu_test (main), racecheck fused fp32 bwd"
(timeout 300 $B/m34/tuner_gpu_test --gtest_brief=1 > $O/tuner_gpu_test_call1.log 2>&1; echo "tuner_gpu_test rc=$?") &
(LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=5 LNTUNE_SWEEP_RESIDUAL=1 timeout 280 compute-sanitizer --tool racecheck --error-exitcode 9 $B/m34/lntune_sweep bwd fp32 262144 > $O/racecheck_addln_call1.log 2>&1; echo "racecheck addln rc=$? $(grep SUMMARY $O/racecheck_addln_call1.log)") &
wait
grep -hE "PASSED|FAILED" $O/tuner_gpu_test_call1.log
s done
