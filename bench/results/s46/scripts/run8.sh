#!/usr/bin/env bash
# Call 8 (session 46). s46g = s46f + wide_bwd_odd_split in the space (two
# equal slabs of 16 columns a thread in 9-15 warps, 16-bit rows of
# 9216-15360 columns) and the H200 default at 9216 (9 warps, 4 stages, two
# CTAs a SM). A/B against s46a; every config at 10240, 11264, 12288, 14336.
source bench/gpu_call.sh
use s46g
s "cases"
cases 60 '*WideBackwardOddWarps*:*Variants*N9216*' '*Variants*layernorm_bf16*N9216*'
s "ab"
OUT=$O bash bench/gpu_ab.sh ab 2 $B/s46a $B/s46g -- \
  "ln9k||bwd bf16 9216" "ln9kh||bwd fp16 9216" \
  "rms9k|LNTUNE_SWEEP_OP=rmsnorm|bwd bf16 9216" \
  "ln9kM4k|LNTUNE_SWEEP_M=4096|bwd bf16 9216"
s "every config"
sw ln10k 40 bwd bf16 10240
sw ln11k 40 bwd bf16 11264
sw ln12k 40 bwd bf16 12288
sw ln14k 40 bwd bf16 14336
(export LNTUNE_SWEEP_OP=rmsnorm; sw rms10k 40 bwd bf16 10240)
s done
