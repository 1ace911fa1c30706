#!/usr/bin/env bash
# Call 6 (session 38). s38e = s38d + the wide backward's passes unguarded
# where the CTA's slab is full (n == SLAB: no bounds check an access, so the
# next access's loads can move above this one's arithmetic). The wide tests,
# then s38d against s38e, two rounds.
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s38e
s "tests"
timeout 120 $B/s38e/gpu_norms_test --gtest_filter='Norms.WideBackwardAtTwoCtasASm:*VariantSpace*12288_bwd*' > $O/norms_call6.log 2>&1; echo "gpu_norms_test rc=$?"
grep -E "two/SM|configs  |OK \]|FAILED|Failure" $O/norms_call6.log | head -12
timeout 150 $B/s38e/gpu_test --gtest_filter='Gpu.WideBackwardConfigsAreCorrectAndDeterministic' > $O/wide_call6.log 2>&1; echo "gpu_test rc=$?"
grep -E "wide   |OK \]|FAILED|Failure" $O/wide_call6.log | head -6
s "A/B"
OUT=$O bash bench/gpu_ab.sh ab_call6 2 $B/s38d $B/s38e -- \
  "ln||bwd bf16 12288 16384 32768 65536 131072 262144" "lnh||bwd fp16 65536" "ln32||bwd fp32 16384 65536 262144" \
  "rms|LNTUNE_SWEEP_OP=rmsnorm|bwd bf16 16384 65536 262144" \
  "addln|LNTUNE_SWEEP_RESIDUAL=1|bwd bf16 16384 65536" \
  "addrms|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=1|bwd bf16 16384 65536"
s done
