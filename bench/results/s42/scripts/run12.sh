#!/usr/bin/env bash
# Call 12 (session 42; the last device minutes). s42i = main with every rule
# of the session. The tables against PyTorch (gaps, hidden sizes, M = 4096),
# then call 5's scan between the powers of two again.
source bench/gpu_call.sh
STEP_SECONDS=100 TABLES="ext hidden gaps train" OUT=$O bash bench/gpu_tables.sh $B/s42i s42i; echo "tables rc=$?"
s "scan"
N="384 640 768 896 1152 1280 1408 1664 1920 2304 2816 3328 4608 5632 6656 7680 9216 10240 11264 13312 15360 17408 22528 24576 26624 30720"
OUT=$O bash bench/gpu_ab.sh scan12 1 $B/s42i -- "fwd||fwd bf16 $N" "fwd||fwd fp32 $N" "bwd||bwd bf16 $N" "bwd||bwd fp32 $N" \
  "rms|LNTUNE_SWEEP_OP=rmsnorm|fwd bf16 $N" "rms|LNTUNE_SWEEP_OP=rmsnorm|bwd bf16 $N" > /dev/null; echo "scan rc=$?"
s done
