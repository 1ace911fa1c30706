#!/usr/bin/env bash
# Call 8 (session 44). s44f = s44d with call 7's training-size entries
# (16-48 rows an SM: 1280, 1408, 1536, 2816, 3072, 3584). The A/B s44d ->
# s44f at M = 4096, and the variant cases of the session's defaults.
source bench/gpu_call.sh
use s44f
s "A/B"
OUT=$O bash bench/gpu_ab.sh ab8 2 $B/s44d $D -- "m4k|LNTUNE_SWEEP_M=4096|bwd bf16 1280 1408 1536 2816 3072 3584" \
  "rms4k|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=4096|bwd bf16 1280 1536 3072" | grep -v copy; echo "ab rc=$?"
s "variant cases"
timeout 240 $D/gpu_norms_test --gtest_filter='*Variants*' --gtest_brief=1 > $O/variants.log 2>&1; echo "variants rc=$?"
grep -hE "PASSED|FAILED|Failure" $O/variants.log | head
s done
# (The variant cases above ran out of their 240 s, brief, with no failure
# printed; the suite in full passed on s44d in call 4. Call 9, one line, ran
# the training-size cases on s44f:
#   timeout 100 .devbuild/s44f/gpu_norms_test --gtest_filter='*Variants*M4096_N1280:*Variants*M5000_N1536:*Variants*M4096_N2304:*Variants*M3001_N1152'
# 4 tests passed.)
