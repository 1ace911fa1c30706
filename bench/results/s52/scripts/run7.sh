#!/usr/bin/env bash
# Call 7 (session 52). Call 6's two candidates: s52g = main (aaeeca0) with
# fp32 LayerNorm of 1024 columns on the 16-bit rule's config (four rows a
# CTA of 4 warps, 16-32 rows an SM) and 16-bit RMSNorm of 3072 columns on
# the exact tile in 4 warps at training rows; s52h = s52g with fp32
# RMSNorm of 1024 columns on that config too (its gpu_norms_test is
# s52g's). Their Variants with memcheck on s52g, then the A/B against main
# (s52f), two rounds.
source bench/gpu_call.sh
use s52g
s cases
cases 100 '*Variants*fp32*M3001_N1024_pad4:*Variants*rmsnorm_fp32*M4096_N1024:*Variants*rmsnorm_bf16*M5001_N3072_pad8' '*Variants*fp32*M3001_N1024_pad4:*Variants*rmsnorm_bf16*M5001_N3072_pad8'
s ab
OUT=$O bash bench/gpu_ab.sh ab 2 $B/s52f $B/s52g $B/s52h -- \
  "ln32_2|LNTUNE_SWEEP_M=2112|fwd fp32 1024" "ln32_4|LNTUNE_SWEEP_M=4096|fwd fp32 1024" "ln32_42|LNTUNE_SWEEP_M=4224|fwd fp32 1024" \
  "rms32_4|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=4096|fwd fp32 1024" "rms32_2|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=2112|fwd fp32 1024" \
  "rms3k2|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=2112|fwd bf16 3072" "rms3k4|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=4096|fwd bf16 3072" \
  "rms3k4h|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=4096|fwd fp16 3072" "rms3k6|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=6336|fwd bf16 3072"
s done
