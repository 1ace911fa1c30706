#!/usr/bin/env bash
# Call 8 (session 53). Call 7's winners as a rule (s53r) against main
# (s53a): the fused forms' rows of 4096 / 8192 columns past 64 rows an SM
# in two rows a CTA of 32 elements a thread (16-bit add + LayerNorm 4096 and
# 8192, fp32 add + RMSNorm 8192). Their Variants against the float64
# reference, memcheck on one, then the A/B, two rounds: x = 512 MiB and
# rows between 64 rows an SM and there.
source bench/gpu_call.sh
use s53r
s cases
cases 120 '*Variants*M8501_*' '*Variants*M8501_N4096*'
s ab
OUT=$O bash bench/gpu_ab.sh ab 2 $B/s53a $B/s53r -- \
  "a4b|LNTUNE_SWEEP_RESIDUAL=1|fwd bf16 4096" "a4f|LNTUNE_SWEEP_RESIDUAL=1|fwd fp16 4096" \
  "a8b|LNTUNE_SWEEP_RESIDUAL=1|fwd bf16 8192" "a8f|LNTUNE_SWEEP_RESIDUAL=1|fwd fp16 8192" \
  "r8|LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=rmsnorm|fwd fp32 8192" \
  "a4m|LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_M=10000|fwd bf16 4096" "a8m|LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_M=10000|fwd bf16 8192" \
  "r8m|LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=10000|fwd fp32 8192"
s done
