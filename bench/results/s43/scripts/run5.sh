#!/usr/bin/env bash
# Call 5 (session 43; the last device minutes). s43d = main with every rule
# of the session. The hidden sizes' table against PyTorch, call 12 of
# session 42's scan between the powers of two again, then (for the next
# session) every config of the M = 4096 backward at two hidden sizes.
source bench/gpu_call.sh
D=$B/s43d
STEP_SECONDS=110 TABLES="ext hidden" OUT=$O bash bench/gpu_tables.sh $D s43d; echo "tables rc=$?"
s "scan"
N="384 640 768 896 1152 1280 1408 1664 1920 2304 2816 3328 4608 5632 6656 7680 9216 10240 11264 13312 15360 17408 22528 24576 26624 30720"
OUT=$O bash bench/gpu_ab.sh scan5 1 $D -- "fwd||fwd bf16 $N" "fwd||fwd fp32 $N" "bwd||bwd bf16 $N" "bwd||bwd fp32 $N" \
  "rms|LNTUNE_SWEEP_OP=rmsnorm|fwd bf16 $N" "rms|LNTUNE_SWEEP_OP=rmsnorm|bwd bf16 $N" > /dev/null; echo "scan rc=$?"
s "M = 4096 backward, every config"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
LNTUNE_SWEEP_EVERY=1 timeout 100 $D/lntune_sweep train bf16 2560 5120 > $O/sw_train.log 2>&1; echo "train rc=$?"; grep -E "^train" $O/sw_train.log | head
s done
