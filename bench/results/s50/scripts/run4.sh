#!/usr/bin/env bash
# Call 4 (session 50). The fp32 training-size rule (s50f: fp32 LayerNorm
# and RMSNorm of 257-2048 columns over 17-48 rows a SM on the 16-bit
# training configs) against main (s50d): its cases against the float64
# reference (three new Variants, every config at 1000 columns), memcheck,
# the finish's determinism tests, then the defaults A/B, two rounds.
source bench/gpu_call.sh
use s50f
s cases
cases 170 '*Variants*fp32*M4096*:*Variants*M3001_N700*:*Variants*M6000_N2047*:*VariantSpace*fp32*N1000_bwd_dx*' '*Variants*fp32*M4096_N1000*:*Variants*M6000_N2047*'
gtests 150 'Gpu.*Finish*:Gpu.BackwardIsBitwise*'
s ab
OUT=$O bash bench/gpu_ab.sh ab 2 $B/s50d $B/s50f -- \
  "f32|LNTUNE_SWEEP_M=4096|bwd fp32 384 512 768 1000 1024 2048 4096" "f32m6k|LNTUNE_SWEEP_M=6336|bwd fp32 1024" \
  "f32m2k|LNTUNE_SWEEP_M=2112|bwd fp32 1024" "f32m3k|LNTUNE_SWEEP_M=3000|bwd fp32 1024" "rms32|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=4096|bwd fp32 512 1024 2048" \
  "m16k|LNTUNE_SWEEP_M=16384|bwd fp32 1024" "bw||bwd fp32 1024" "bf16|LNTUNE_SWEEP_M=4096|bwd bf16 1024"
s done
