#!/usr/bin/env bash
# Call 9 (session 50). The fused 16-bit backward past 48 rows a SM, to 128
# (s50i: call 8's configs as H200 defaults, a residual in x's dtype)
# against main with call 7's rules (s50h): two new Variants against the
# float64 reference, memcheck, the defaults A/B, two rounds.
source bench/gpu_call.sh
use s50i
s cases
cases 150 '*Variants*M16000_N1000*:*Variants*M10000_N4096*' '*Variants*M16000_N1000*'
s ab
OUT=$O bash bench/gpu_ab.sh ab 2 $B/s50h $B/s50i -- \
  "res8k|LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_M=8192|bwd bf16 1024 2048 4096" \
  "res12k|LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_M=12288|bwd bf16 768 1024 3000" \
  "res16k|LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_M=16384|bwd bf16 1000 1024 2048 4096" \
  "res16kh|LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_M=16384|bwd fp16 1024" \
  "rres16k|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_M=16384|bwd bf16 1024 4096" \
  "rres8k|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_M=8192|bwd bf16 1024" \
  "res17k|LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_M=16897|bwd bf16 1024" "res32|LNTUNE_SWEEP_RESIDUAL=fp32 LNTUNE_SWEEP_M=16384|bwd bf16 1024" \
  "plain|LNTUNE_SWEEP_M=16384|bwd bf16 1024"
s done
