#!/usr/bin/env bash
# Call 7 (session 42). s42e = s42d + call 6's rules: the fp32 backward of
# 1025-4095 columns not a power of two at two CTAs a SM of 16 columns a
# thread, of 24577-32768 columns over four 8192-column slabs (8 warps, 3
# stages); the 16-bit forward's 32 elements a thread from 513 columns;
# RMSNorm's 16-bit forward of 4097-5119 columns in 4096-column tiles.
# A/B s42d -> s42e, 2 rounds.
source bench/gpu_call.sh
s "A/B"
OUT=$O bash bench/gpu_ab.sh ab7 2 $B/s42d $B/s42e -- "bwd||bwd fp32 1152 1408 1664 1920 2304 2816 3328 3840 26000 30720 32768" \
  "rms|LNTUNE_SWEEP_OP=rmsnorm|bwd fp32 2304 30720" "fwd||fwd bf16 640 768 896" "fwd||fwd fp16 640" \
  "rms|LNTUNE_SWEEP_OP=rmsnorm|fwd bf16 640 4200 4608 5000" "rms|LNTUNE_SWEEP_OP=rmsnorm|fwd fp16 4608"
s done
