#!/usr/bin/env bash
# Call 8 (session 43; the last device minutes). s43g = main: the backward's
# tiles in 16-byte accesses alone (the 8-byte ones lost, or spilled), so
# their GPU cases moved to fp32 LayerNorm (1536 in 4 warps at 1152, 6144 in
# 16 at 4608) beside fp32 RMSNorm at 2304 (3072 in 8); adapt_config's
# tiles. Every backward config of those cases against the reference.
source bench/gpu_call.sh
use s43g
s "cases"
F='Norms/VariantSpace.EveryConfigIsCorrect/v4_N4608_bwd_dx:Norms/VariantSpace.EveryConfigIsCorrect/v4_N1152_bwd_dx:Norms/VariantSpace.EveryConfigIsCorrect/v3_N2304_bwd_dx'
timeout 150 $D/gpu_norms_test --gtest_filter="$F" > $O/cases.log 2>&1; echo "cases rc=$?"
grep -hE "configs checked|FAILED|PASSED" $O/cases.log | head
s done
