#!/usr/bin/env bash
# Call 8 (session 51). 16-bit LayerNorm of 12288 columns in 12 warps at
# every M past two rows an SM (s51g), against s51f (to 32 rows an SM):
# the Variant (M = 30001, strided) with memcheck, then the A/B, two rounds,
# at x = 512 MiB and M = 8192 / 16384, with 10240 and 16384 as controls.
source bench/gpu_call.sh
use s51g
s cases
cases 120 '*Variants*M30001_N12288*:*Variants*M3001_N12288*' '*Variants*M30001_N12288*'
s ab
OUT=$O bash bench/gpu_ab.sh ab 2 $B/s51f $B/s51g -- \
  "bw||fwd bf16 10240 12288 16384" "bwh||fwd fp16 12288" \
  "m8192|LNTUNE_SWEEP_M=8192|fwd bf16 12288" "m16384|LNTUNE_SWEEP_M=16384|fwd bf16 12288" "m4096|LNTUNE_SWEEP_M=4096|fwd bf16 12288"
s done
