#!/usr/bin/env bash
# Call 6 (session 40). s40f = s40e with the fp32 forward's gap clusters in
# the default (N = 100000: clusters of 7, 2 stages; call 5 timed it 91.8%
# against 55.3 for the default). The GPU suites of s40f; beside them
# compute-sanitizer memcheck and racecheck of the wide forward over 100000
# columns (clusters of 7 and 13, every shared-memory and wide config of the
# case) and memcheck of every seventh wide backward config (13 clusters of
# 8192 at N = 100000, 13 of 16384 at 200000 among them); then A/B of the
# fp32 forward at 100000 against s40e (one round).
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s40f
N=$B/s40f/gpu_norms_test
F='Norms/SmemForward.EveryConfigIsCorrect/ln_bf16_N100000'
( for tool in memcheck racecheck; do
    timeout 250 compute-sanitizer --tool $tool --error-exitcode 9 $N --gtest_filter=$F > $O/${tool}_call6.log 2>&1; echo "$tool rc=$?" >> $O/sanitizers_call6.log
  done
  LNTUNE_TEST_WIDE_STRIDE=7 timeout 250 compute-sanitizer --tool memcheck --error-exitcode 9 $B/s40f/gpu_test --gtest_filter='Gpu.WideBackwardConfigs*' > $O/memcheck_bwd_call6.log 2>&1; echo "memcheck bwd rc=$?" >> $O/sanitizers_call6.log ) &
san=$!
s "suites"
OUT=$O bash bench/gpu_suites.sh $B/s40f s40f; echo "suites rc=$?"
s "sanitizers"
wait $san
cat $O/sanitizers_call6.log
for f in $O/memcheck_call6.log $O/racecheck_call6.log $O/memcheck_bwd_call6.log; do grep -E "ERROR SUMMARY|RACECHECK SUMMARY|smem fwd|wide |OK \]|FAILED" $f | head -5; done
s "A/B"
OUT=$O bash bench/gpu_ab.sh ab6 1 $B/s40e $B/s40f -- "fwd||fwd fp32 100000"
s done
