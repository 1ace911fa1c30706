#!/usr/bin/env bash
# Call 2 (session 41). s41p = s41m with bench/experiments/gap-onepass-lanes.patch
# (the wide forward's one-pass statistics and both wide kernels' lane sums
# for clusters of 9-16 CTAs, not only 16). Its tests at the gap clusters,
# the A/B s41m -> s41p at 200000 columns (two rounds), then one round of
# both builds' defaults at N that are not powers of two (the holes scan).
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s41p
s "tests (s41p)"
timeout 120 $B/s41p/gpu_norms_test --gtest_filter='*N200000*:*N100000*' --gtest_brief=1 > $O/tests_p.log 2>&1; echo "norms rc=$?"
tail -3 $O/tests_p.log
LNTUNE_TEST_WIDE_STRIDE=5 timeout 100 $B/s41p/gpu_test --gtest_filter='Gpu.Wide*' --gtest_brief=1 > $O/gputests_p.log 2>&1; echo "gpu_test rc=$?"
tail -3 $O/gputests_p.log
s "A/B gap"
OUT=$O bash bench/gpu_ab.sh gap 2 $B/s41m $B/s41p -- "fwd||fwd bf16 200000 230000" "fwd||fwd fp16 200000" \
  "bwd||bwd fp16 200000" "res|LNTUNE_SWEEP_RESIDUAL=1|bwd bf16 200000"
s "holes scan"
OUT=$O bash bench/gpu_ab.sh scan 1 $B/s41m $B/s41p -- \
  "fwd||fwd bf16 12000 20000 24000 28000 36000 45000 57000 70000 90000 150000 230000" \
  "fwd||fwd fp32 12000 20000 24000 28000 36000 45000 57000 70000 90000 150000 230000" \
  "bwd||bwd bf16 12000 20000 24000 28000 36000 45000 57000 70000 90000 150000 230000" \
  "bwd||bwd fp32 12000 20000 24000 28000 36000 45000 57000 70000 90000 150000 230000"
s done
