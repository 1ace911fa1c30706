#!/usr/bin/env bash
# Call 9 (session 55). Call 8's A/B again: its specs but the first had
# joined their variables with '&' (sw_ab's syntax), which gpu_ab.sh does
# not take (each such spec failed in both builds). s55d against s55e.
source bench/gpu_call.sh
s ab
OUT=$O bash bench/gpu_ab.sh ab 2 $B/s55d $B/s55e -- \
  "rms32|LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=rmsnorm|fwd fp32 8192" \
  "rms|LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=rmsnorm|fwd bf16 8192 16384" \
  "rmsh|LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=rmsnorm|fwd fp16 8192 16384" \
  "m20k|LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=20000|fwd bf16 8192" \
  "m20k32|LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_M=20000|fwd fp32 8192" \
  "rmsf32s|LNTUNE_SWEEP_RESIDUAL=fp32 LNTUNE_SWEEP_OP=rmsnorm|fwd bf16 8192"
s done
