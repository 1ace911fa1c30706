#!/usr/bin/env bash
# Call 5 (session 42). s42d = main with calls 1-4's defaults. The defaults
# over N between the powers of two (x = 512 MiB), LayerNorm and RMSNorm,
# bf16 and fp32, forward and backward; the backward at M = 4096 over the
# hidden sizes of current models.
source bench/gpu_call.sh
N="384 640 768 896 1152 1280 1408 1664 1920 2304 2816 3328 4608 5632 6656 7680 9216 10240 11264 13312 15360 17408 22528 24576 26624 30720"
s "scan"
OUT=$O bash bench/gpu_ab.sh scan5 1 $B/s42d -- "fwd||fwd bf16 $N" "fwd||fwd fp32 $N" "bwd||bwd bf16 $N" "bwd||bwd fp32 $N" \
  "rms|LNTUNE_SWEEP_OP=rmsnorm|fwd bf16 $N" "rms|LNTUNE_SWEEP_OP=rmsnorm|bwd bf16 $N" \
  "m4096|LNTUNE_SWEEP_M=4096|train bf16 1536 3072 6144 10240 12288 14336" "m4096|LNTUNE_SWEEP_M=4096|train fp32 1536 2560 5120 7168"
s done
