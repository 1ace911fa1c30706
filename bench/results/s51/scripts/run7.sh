#!/usr/bin/env bash
# Call 7 (session 51). Call 6's bests past two rows an SM as H200 defaults
# (s51f: 16-bit LayerNorm 16384 columns in 16 warps and 12288 in 12 to 32
# rows an SM, 8192 in 8 from four rows an SM to M = 8192) against s51e:
# the Variants with memcheck, the A/B (two rounds; M = 6000 and 8192 for
# 8192 columns, M = 8192 and x = 512 MiB as controls), then every config
# at x = 512 MiB for 12288 and 16384 columns.
source bench/gpu_call.sh
use s51f
s cases
cases 120 '*Variants*M1001_N16384*:*Variants*M3001_N12288*:*Variants*M6001_N8192*' '*Variants*M1001_N16384*:*Variants*M3001_N12288*'
s ab
OUT=$O bash bench/gpu_ab.sh ab 2 $B/s51e $B/s51f -- \
  "m300|LNTUNE_SWEEP_M=300|fwd bf16 8192 12288 16384" "m528|LNTUNE_SWEEP_M=528|fwd bf16 8192 12288 16384" \
  "m1056|LNTUNE_SWEEP_M=1056|fwd bf16 12288 16384" "m2112|LNTUNE_SWEEP_M=2112|fwd bf16 8192 12288 16384" \
  "m4096|LNTUNE_SWEEP_M=4096|fwd bf16 8192 12288 16384" "h4096|LNTUNE_SWEEP_M=4096|fwd fp16 12288 16384" \
  "m6000|LNTUNE_SWEEP_M=6000|fwd bf16 8192" "m8192|LNTUNE_SWEEP_M=8192|fwd bf16 8192 16384" "bw||fwd bf16 16384"
s sweeps
sw bw_bf16 90 fwd bf16 12288 16384
s done
