#!/usr/bin/env bash
# Call 3 (session 44). s44c = s44b with the 16-bit defaults in rows of other
# than a power of two of threads (backward 1152-6144, forward 1152 and
# 1280; from call 2). The A/B s44b -> s44c (the same kernels, the defaults
# alone differ), every backward config at more N.
source bench/gpu_call.sh
use s44c
s "A/B"
OUT=$O bash bench/gpu_ab.sh ab3 2 $B/s44b $D -- "bwd||bwd bf16 1152 1280 1536 2304 2560 3072 4608 5120 6144" \
  "rmsb|LNTUNE_SWEEP_OP=rmsnorm|bwd bf16 1152 2304 2560 4608 6144" "f16b||bwd fp16 1152 2304 2560 5120" \
  "m4k|LNTUNE_SWEEP_M=4096|bwd bf16 1152 2304 2560 4608 5120" "fwd||fwd bf16 1152 1280" \
  "rmsf|LNTUNE_SWEEP_OP=rmsnorm|fwd bf16 1152 1280" "f16f||fwd fp16 1152 1280" | grep -v copy; echo "ab rc=$?"
s "backward sweeps at more N"
sw more 100 bwd bf16 1408 1664 1792 1920 2816 3328 3584 3840 5632 6656 7168
s done
