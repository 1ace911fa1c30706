#!/usr/bin/env bash
# Call 4 (session 44). s44d = s44c with call 3's entries (1408, 2816, 3584;
# 4097-8191 columns a multiple of 512 by rule; the forward's 1280 for
# LayerNorm alone). The A/B s44c -> s44d at those shapes, then the GPU
# suites on s44d and memcheck on the segmented defaults' cases.
source bench/gpu_call.sh
use s44d
s "A/B"
OUT=$O bash bench/gpu_ab.sh ab4 2 $B/s44c $D -- "bwd||bwd bf16 1408 2816 3584 5632 6656 7168" \
  "rmsb|LNTUNE_SWEEP_OP=rmsnorm|bwd bf16 3584 5632 7168" "m4k|LNTUNE_SWEEP_M=4096|bwd bf16 3584 6144 7168" \
  "rmsf|LNTUNE_SWEEP_OP=rmsnorm|fwd bf16 1280" | grep -v copy; echo "ab rc=$?"
s "suites"
OUT=$O bash bench/gpu_suites.sh $D s44d; echo "suites rc=$?"
s "memcheck"
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 --print-limit 5 $D/gpu_norms_test --gtest_filter='*Variants*N1152*:*Variants*N2304*:*Variants*N1408*' --gtest_brief=1 > $O/san_memcheck.log 2>&1; echo "memcheck rc=$?"
grep -hE "PASSED|FAILED|ERROR SUMMARY" $O/san_memcheck.log | head
s done
