#!/usr/bin/env bash
# Call 1 (session 44). s44a = main + rows of other than a power of two of
# threads (gen::has_segmented_rows: the single tile of exactly N columns,
# 1152 bf16 in rows of 144 threads, two a CTA of 9 warps; row sums by
# segments of 8-32 lanes) in the space of fwd and bwd_dx; no default
# changed. The VariantSpace cases (session 43's tiles, never run on a GPU,
# and the new segmented ones) with memcheck; every backward config at N
# just above powers of two; the forward at three N.
source bench/gpu_call.sh
use s44a
s "cases"
F='*VariantSpace*v4_N4608_bwd_dx:*VariantSpace*v4_N1152_bwd_dx:*VariantSpace*v3_N2304_bwd_dx:*VariantSpace*12288_fwd*:*VariantSpace*v2_N1152_*:*VariantSpace*v2_N2560_bwd_dx:*VariantSpace*v4_N2560_fwd'
timeout 240 $D/gpu_norms_test --gtest_filter="$F" > $O/cases.log 2>&1 & p1=$!
timeout 240 compute-sanitizer --tool memcheck --error-exitcode 9 --print-limit 5 $D/gpu_norms_test --gtest_filter='*VariantSpace*v2_N1152_*' --gtest_brief=1 > $O/san_memcheck.log 2>&1 & p2=$!
wait $p1; echo "cases rc=$?"; wait $p2; echo "memcheck rc=$?"
grep -hE "configs checked|FAILED|PASSED|ERROR SUMMARY|Failure" $O/cases.log $O/san_memcheck.log | head -30
s "backward sweeps"
sw bwd16 110 bwd bf16 1152 2304 2560 4608 5120
sw bwd32 70 bwd fp32 1152 2304 2560 4608
LNTUNE_SWEEP_OP=rmsnorm sw rmsb16 50 bwd bf16 1152 2304 4608
s "forward sweeps"
sw fwd16 50 fwd bf16 1152 2304 2560 4608
s done
