#!/usr/bin/env bash
# Call 3 (session 43). s43c = s43b with the forward tiles' rule from 16 rows
# an SM (2112 on an H200; call 2: M = 4096 gains too) and 7168 columns back
# on their rule (89.3 against 98.5 in call 2), and the backward's single
# tiles of other than a power of two in the space (registers, at most 16
# elements a thread; not a default). The backward tiles' GPU cases
# (VariantSpace at 4608, 1152, 2304) and memcheck; every backward config at
# N just above powers of two; the A/B s43b -> s43c at M = 4096 and 7168;
# every forward config at more N.
source bench/gpu_call.sh
use s43c
s "cases"
F='Norms/VariantSpace.EveryConfigIsCorrect/v1_N4608_bwd_dx:Norms/VariantSpace.EveryConfigIsCorrect/v2_N1152_bwd_dx:Norms/VariantSpace.EveryConfigIsCorrect/v3_N2304_bwd_dx'
timeout 200 $D/gpu_norms_test --gtest_filter="$F" > $O/cases.log 2>&1 & p1=$!
timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 --print-limit 5 $D/gpu_norms_test --gtest_filter='Norms/VariantSpace.EveryConfigIsCorrect/v2_N1152_bwd_dx' --gtest_brief=1 > $O/san_memcheck.log 2>&1 & p2=$!
wait $p1; echo "cases rc=$?"; wait $p2; echo "memcheck rc=$?"
grep -hE "configs checked|FAILED|PASSED|ERROR SUMMARY" $O/cases.log $O/san_memcheck.log | head -20
s "backward sweeps"
sw bwd16 100 bwd bf16 1152 1280 2304 2560 4608 5120
sw bwd32 80 bwd fp32 1152 1280 2304 2560 4608
LNTUNE_SWEEP_OP=rmsnorm sw rmsb16 50 bwd bf16 1152 2304 4608
s "A/B"
OUT=$O bash bench/gpu_ab.sh ab3 2 $B/s43b $D -- "fwd||fwd bf16 7168 20000" \
  "m4k|LNTUNE_SWEEP_M=4096|fwd bf16 2304 4608 5120 9216 12288" "rms4k|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=4096|fwd bf16 2304 5120 9216" \
  "m2200|LNTUNE_SWEEP_M=2200|fwd bf16 5120 9216" | grep -v copy; echo "ab rc=$?"
s "forward sweeps"
sw fwd16 90 fwd bf16 1280 1792 2816 3328 3584 6656 7680 13312 14336 15360 22528
LNTUNE_SWEEP_OP=rmsnorm sw rms16 80 fwd bf16 1280 3328 3584 6656 7168 7680 13312 14336 18432 20480
s done
