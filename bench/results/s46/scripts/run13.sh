#!/usr/bin/env bash
# Call 13 (session 46). s46i = s46h + the forward's row of 12289-16384
# columns in registers for LayerNorm + add (16 warps) and 16-bit RMSNorm (32
# warps) on an H200 (call 12's sweeps). The new Variants cases, then the
# A/B against s46h.
source bench/gpu_call.sh
use s46i
s "cases"
cases 60 '*Variants*N13000*:*Variants*rmsnorm_bf16*M8200_N16384*:*Variants*res*M33_N16384*' '*Variants*N13000*'
s "ab"
OUT=$O bash bench/gpu_ab.sh ab 2 $B/s46h $B/s46i -- \
  "rms16k|LNTUNE_SWEEP_OP=rmsnorm|fwd bf16 16384" \
  "add16k|LNTUNE_SWEEP_RESIDUAL=1|fwd bf16 16384" \
  "addh16k|LNTUNE_SWEEP_RESIDUAL=1|fwd fp16 16384" \
  "addf16k|LNTUNE_SWEEP_RESIDUAL=1|fwd fp32 16384"
s done
