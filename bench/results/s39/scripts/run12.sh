#!/usr/bin/env bash
# Call 12 (session 39). s39h = s39g with the cluster's sums taken lane-
# parallel (lane r of each cluster-size group of lanes takes rank r's pair
# or parts, summed by a butterfly over those lanes) in the wide forward's
# gather and the wide backward's c1, c2: call 11's ncu put the forward at 19
# instructions an element, about 4 of them every thread's sum over the 16
# ranks. A/B against s39g (two rounds), then the wide kernels' tests.
source bench/gpu_call.sh
s "A/B"
OUT=$O bash bench/gpu_ab.sh ab12 2 $B/s39g $B/s39h -- \
  "fwd||fwd bf16 65536 131072 262144" "fwd||fwd fp16 262144" "res|LNTUNE_SWEEP_RESIDUAL=1|fwd bf16 262144" \
  "bwd||bwd bf16 65536 262144" "bwd||bwd fp16 262144"
s "tests"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s39h
timeout 60 $B/s39h/gpu_norms_test --gtest_filter='Norms/SmemForward.EveryConfigIsCorrect/ln_bf16_N245768:Norms/SmemForward.EveryConfigIsCorrect/rms_fp32_resfp32_zc_N262144:SmemForwardExactness.*:Norms.WideBackwardAtTwoCtasASm' > $O/tests_call12.log 2>&1; echo "norms rc=$?"
grep -E "smem fwd|exact|offset|two|FAILED|Failure|PASSED" $O/tests_call12.log | head
LNTUNE_TEST_WIDE_STRIDE=3 timeout 60 $B/s39h/gpu_test --gtest_filter='Gpu.WideBackwardConfigs*:Gpu.DegenerateRows*' > $O/gputests_call12.log 2>&1; echo "gpu_test rc=$?"
grep -E "wide |FAILED|Failure|PASSED" $O/gputests_call12.log | head
s done
