#!/usr/bin/env bash
# Call 5 (session 44). s44d = main with every rule of the session (as call
# 4). The hidden sizes' table against PyTorch, then session 42's scan
# between the powers of two (the 16-bit specs; fp32 unchanged this session).
source bench/gpu_call.sh
use s44d
STEP_SECONDS=110 TABLES="ext hidden" OUT=$O bash bench/gpu_tables.sh $D s44d; echo "tables rc=$?"
s "scan"
N="384 640 768 896 1152 1280 1408 1664 1920 2304 2816 3328 4608 5632 6656 7680 9216 10240 11264 13312 15360 17408 22528 24576 26624 30720"
OUT=$O bash bench/gpu_ab.sh scan5 1 $D -- "fwd||fwd bf16 $N" "bwd||bwd bf16 $N" \
  "rms|LNTUNE_SWEEP_OP=rmsnorm|fwd bf16 $N" "rms|LNTUNE_SWEEP_OP=rmsnorm|bwd bf16 $N" > /dev/null; echo "scan rc=$?"
s done
