#!/usr/bin/env bash
# Session 50, call 1 (b): training-rules-wider (bench/experiments until
# then; committed with session 50):
# the defaults it changes A/B'd against main's, two rounds, and neighbours
# it must leave level.
#   OUT=$OUT bash bench/results/s50/scripts/training_rules_wider.sh MAIN PATCHED
# MAIN, PATCHED: carried builds under .devbuild (scripts/stage.sh NAME):
# 6d0a910 and the commit that took the rules.
source bench/gpu_call.sh
main=${1:?usage: training_rules_wider.sh MAIN PATCHED} patched=${2:?usage: training_rules_wider.sh MAIN PATCHED}
use $patched
s cases
cases 170 '*VariantSpace*N1000_bwd_dx:*Variants*M4096*:*Variants*M2500*' '*Variants*M4096_N1024*'
s ab
OUT=$O bash bench/gpu_ab.sh ab 2 $B/$main $B/$patched -- \
  "plain|LNTUNE_SWEEP_M=4096|bwd bf16 320 384 512 1024" "plainh|LNTUNE_SWEEP_M=4096|bwd fp16 512" \
  "plain2k|LNTUNE_SWEEP_M=2112|bwd bf16 512" "plain6k|LNTUNE_SWEEP_M=6336|bwd bf16 512" \
  "res32|LNTUNE_SWEEP_RESIDUAL=fp32 LNTUNE_SWEEP_M=4096|bwd bf16 512 768 1024 2048" \
  "res32r|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=fp32 LNTUNE_SWEEP_M=4096|bwd bf16 512 2048" \
  "res|LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_M=4096|bwd bf16 512 1024" \
  "rms|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=4096|bwd bf16 512" "bw||bwd bf16 512"
s done
