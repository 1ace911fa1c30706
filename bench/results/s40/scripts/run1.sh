#!/usr/bin/env bash
# Call 1 (session 40). The cluster's sums by lanes where session 39 did not
# measure them: s40a = main (s40m) with kLaneGather in every wide forward of
# clusters of 16 or 4 (RMSNorm, fp32 rows) and kLaneSums in every wide
# backward of clusters of 16 at 3 stages or more (RMSNorm, the fused add,
# fp32 rows); s40b = s40a with the one-pass statistics also where the full
# slab does not keep the row in registers (fp32 rows of 256K columns). A/B of
# the three, two rounds; bf16's backward at 262144 at 3 stages (main has its
# lane sums there); then the wide kernels' tests on s40b.
source bench/gpu_call.sh
s "A/B"
C3=block_size=16384,num_warps=16,rows_per_cta=3,group_size_m=7,cluster_size=16
OUT=$O bash bench/gpu_ab.sh ab1 2 $B/s40m $B/s40a $B/s40b -- \
  "fwd||fwd fp32 65536 262144" "rms|LNTUNE_SWEEP_OP=rmsnorm|fwd bf16 131072 262144" "rms|LNTUNE_SWEEP_OP=rmsnorm|fwd fp32 262144" \
  "rres|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=1|fwd bf16 262144" \
  "rmsb|LNTUNE_SWEEP_OP=rmsnorm|bwd bf16 262144" "resb|LNTUNE_SWEEP_RESIDUAL=1|bwd bf16 262144" \
  "b3|LNTUNE_SWEEP_CONFIG=$C3|bwd bf16 262144" "bwd||bwd bf16 262144"
s "tests"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s40b
timeout 150 $B/s40b/gpu_norms_test --gtest_filter='Norms/SmemForward.EveryConfigIsCorrect/*N26*:Norms/SmemForward.EveryConfigIsCorrect/*N24*:SmemForwardExactness.*:*N262144*:Norms.WideBackwardAtTwoCtasASm' > $O/tests_call1.log 2>&1; echo "norms rc=$?"
grep -E "smem fwd|exact|offset|two|FAILED|Failure|PASSED" $O/tests_call1.log | head -20
LNTUNE_TEST_WIDE_STRIDE=3 timeout 60 $B/s40b/gpu_test --gtest_filter='Gpu.WideBackwardConfigs*:Gpu.DegenerateRows*' > $O/gputests_call1.log 2>&1; echo "gpu_test rc=$?"
grep -E "wide |FAILED|Failure|PASSED" $O/gputests_call1.log | head
s done
