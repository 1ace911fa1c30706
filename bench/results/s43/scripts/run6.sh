#!/usr/bin/env bash
# Call 6 (session 43). s43e = s43d + two forward rules from call 3's sweeps
# (LayerNorm 16-bit 2561-3071 in 3072 of 4 warps; RMSNorm 16-bit
# 16385-20480 in 20480 of 16 warps, shared memory). s43f = s43e + the
# backward's register kernel skipping an access that is past the row's end
# for the whole warp (computed on zeros before: rows just above a power of
# two, bf16 1152-9216 at 80-81% of copy). The cases and memcheck on s43f,
# the A/B s43d / s43e / s43f, then the GPU suites on s43f.
source bench/gpu_call.sh
use s43f
s "cases"
F='*M8200_N2816*:*M8193_N18432*:*M8200_N1152*:Norms/VariantSpace.EveryConfigIsCorrect/v2_N1152_bwd_dx:Norms/VariantSpace.EveryConfigIsCorrect/v1_N4608_bwd_dx'
timeout 150 $D/gpu_norms_test --gtest_filter="$F" --gtest_brief=1 > $O/cases.log 2>&1 & p1=$!
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 --print-limit 5 $D/gpu_norms_test --gtest_filter='Norms/VariantSpace.EveryConfigIsCorrect/v2_N1152_bwd_dx' --gtest_brief=1 > $O/san_memcheck.log 2>&1 & p2=$!
wait $p1; echo "cases rc=$?"; wait $p2; echo "memcheck rc=$?"
grep -hE "configs checked|FAILED|PASSED|ERROR SUMMARY" $O/cases.log $O/san_memcheck.log | head
s "A/B"
OUT=$O bash bench/gpu_ab.sh ab6 2 $B/s43d $B/s43e $D -- "fwd||fwd bf16 2688 2816 2944" "rms|LNTUNE_SWEEP_OP=rmsnorm|fwd bf16 16896 18432 20480" \
  "bwd||bwd bf16 1024 1152 1280 2048 2304 4096 4608 9216" "bwd||bwd fp16 1152 2304" "bwd||bwd fp32 1152 2304" \
  "rmsb|LNTUNE_SWEEP_OP=rmsnorm|bwd bf16 1152 2304 4608" "train||train bf16 1024 1152 2560" | grep -v copy; echo "ab rc=$?"
s "suites"
OUT=$O timeout 400 bash bench/gpu_suites.sh $D s43f; echo "suites rc=$?"
s done
