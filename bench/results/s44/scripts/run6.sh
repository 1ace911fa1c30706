#!/usr/bin/env bash
# Call 6 (session 44). s44e = s44d with the backward's equal slabs over
# clusters of 2 or 4 in rows of other than a power of two of threads (in
# the space only). Their VariantSpace cases and memcheck; every backward
# config at 9216-18432.
source bench/gpu_call.sh
use s44e
s "cases"
F='*VariantSpace*v2_N9216_bwd_dx:*VariantSpace*v3_N17408_bwd_dx'
timeout 200 $D/gpu_norms_test --gtest_filter="$F" > $O/cases.log 2>&1 & p1=$!
timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 --print-limit 5 $D/gpu_norms_test --gtest_filter='*VariantSpace*v2_N9216_bwd_dx' --gtest_brief=1 > $O/san_memcheck.log 2>&1 & p2=$!
wait $p1; echo "cases rc=$?"; wait $p2; echo "memcheck rc=$?"
grep -hE "configs checked|FAILED|PASSED|ERROR SUMMARY|Failure" $O/cases.log $O/san_memcheck.log | head -20
s "sweeps"
sw big 120 bwd bf16 9216 10240 12288 13312 17408 18432
LNTUNE_SWEEP_OP=rmsnorm sw rmsbig 50 bwd bf16 9216 17408
s done
