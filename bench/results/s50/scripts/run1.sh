#!/usr/bin/env bash
# Call 1 (session 50). (a) The single-tile backward issues its first row's
# staged copies before it loads the weights (s50c against s50b): at
# M = 4096 the first row had waited a second DRAM round trip behind the
# weights' conversion. (b) The waiting training-rules-wider.patch (s50b,
# bench/experiments/README.md) against main (s50a): its cases and A/B.
source bench/gpu_call.sh
s reorder_ab
OUT=$O bash bench/gpu_ab.sh reorder 2 $B/s50b $B/s50c -- \
  "m4k|LNTUNE_SWEEP_M=4096|bwd bf16 512 1024 2048" "m4kf|LNTUNE_SWEEP_M=4096|bwd fp32 1024" \
  "res|LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_M=4096|bwd bf16 1024" "rms|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=4096|bwd bf16 1024" \
  "m1k|LNTUNE_SWEEP_M=1024|bwd bf16 1024" "bw||bwd bf16 1024"
s patch
bash bench/results/s50/scripts/training_rules_wider.sh s50a s50b
