#!/usr/bin/env bash
# Call 5 (session 52). s52e: the 16-bit forward of 1024 columns four rows a
# CTA of 4 warps at 16-32 rows an SM for every form (call 4's add +
# LayerNorm sweep), not LayerNorm alone: its Variants with memcheck, then
# the A/B against s52d (04c00a2), two rounds.
source bench/gpu_call.sh
use s52e
s cases
cases 120 '*Variants*M3001_N1024_pad8*:*Variants*M4096_N1024:*Variants*M4001_N1024_pad8*:*Variants*M2500_N1024*' '*Variants*M3001_N1024_pad8*:*Variants*resfp32*M2500_N1024*'
s ab
R=LNTUNE_SWEEP_RESIDUAL
OUT=$O bash bench/gpu_ab.sh ab 2 $B/s52d $B/s52e -- \
  "addln2|$R=1 LNTUNE_SWEEP_M=2112|fwd bf16 1024" "addln4|$R=1 LNTUNE_SWEEP_M=4096|fwd bf16 1024" "addln4h|$R=1 LNTUNE_SWEEP_M=4096|fwd fp16 1024" "addln42|$R=1 LNTUNE_SWEEP_M=4224|fwd bf16 1024" \
  "addrms4|$R=1 LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=4096|fwd bf16 1024" "rms4|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=4096|fwd bf16 1024" "rms2|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=2112|fwd fp16 1024" \
  "s32ln4|$R=fp32 LNTUNE_SWEEP_M=4096|fwd bf16 1024" "s32rms4|$R=fp32 LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=4096|fwd bf16 1024" "ln4|LNTUNE_SWEEP_M=4096|fwd bf16 1024"
s done
