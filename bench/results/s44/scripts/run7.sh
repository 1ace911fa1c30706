#!/usr/bin/env bash
# Call 7 (session 44). s44d (main's kernels and defaults; the reverted
# cluster slabs were never in it). Every backward config at M = 4096 at the
# hidden sizes whose table entries have no training-size entry, and the
# A/B s44b -> s44d of RMSNorm's backward at M = 4096 (its entries came from
# LayerNorm's sweep).
source bench/gpu_call.sh
use s44d
s "M = 4096 sweeps"
LNTUNE_SWEEP_M=4096 sw m4k 90 bwd bf16 1280 1408 1536 2816 3072 3584
s "A/B"
OUT=$O bash bench/gpu_ab.sh ab7 2 $B/s44b $D -- "rms4k|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=4096|bwd bf16 1152 2304 2560 5120" \
  "f16m4k|LNTUNE_SWEEP_M=4096|bwd fp16 1152 2304 2560 5120" | grep -v copy; echo "ab rc=$?"
s done
