#!/usr/bin/env bash
# Call 3 (session 38). s38c = s38b + the fast-memory default for 16-bit rows
# of 8193-65536 columns (8192-column slabs, 8 warps, two CTAs a SM) and its
# tests. The tests, then s38b (the default before) against s38c, two rounds.
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s38c
s "tests"
timeout 120 $B/s38c/gpu_norms_test --gtest_filter='Norms.WideBackwardAtTwoCtasASm:*VariantSpace*12288_bwd*' > $O/norms_call3.log 2>&1; echo "gpu_norms_test rc=$?"
grep -E "two/SM|configs  |OK \]|FAILED|Failure" $O/norms_call3.log | head -20
timeout 150 $B/s38c/gpu_test --gtest_filter='Gpu.WideBackwardConfigsAreCorrectAndDeterministic' > $O/wide_call3.log 2>&1; echo "gpu_test rc=$?"
grep -E "wide   |OK \]|FAILED|Failure" $O/wide_call3.log | head -10
s "A/B"
OUT=$O bash bench/gpu_ab.sh ab_call3 2 $B/s38b $B/s38c -- \
  "ln||bwd bf16 12288 16384 32768 65536" "lnh||bwd fp16 16384 65536" \
  "rms|LNTUNE_SWEEP_OP=rmsnorm|bwd bf16 16384 32768 65536" \
  "addln|LNTUNE_SWEEP_RESIDUAL=1|bwd bf16 12288 16384 65536" \
  "addrms|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=1|bwd bf16 16384 65536"
s done
