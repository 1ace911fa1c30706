#!/usr/bin/env bash
# Call 2 (session 44). s44b = s44a with call 1's failures fixed (rows of 72
# threads: 9 segments of 8 lanes summed by a loop, a 16-lane butterfly mixed
# two rows) and the backward's 8-element segmented rows asking three CTAs
# an SM (72 registers). The VariantSpace cases and memcheck; every config
# at more N, both norms, M = 4096 too.
source bench/gpu_call.sh
use s44b
s "cases"
F='*VariantSpace*v4_N4608_bwd_dx:*VariantSpace*v4_N1152_bwd_dx:*VariantSpace*v3_N2304_bwd_dx:*VariantSpace*12288_fwd*:*VariantSpace*v2_N1152_*:*VariantSpace*v2_N2560_bwd_dx:*VariantSpace*v4_N2560_fwd'
cases 240 "$F" '*VariantSpace*v2_N1152_*:*VariantSpace*v4_N1152_bwd_dx'
s "backward sweeps"
sw bwd16 130 bwd bf16 1152 1280 1536 2304 2560 3072 4608 5120 6144
LNTUNE_SWEEP_OP=rmsnorm sw rmsb16 80 bwd bf16 1152 2304 2560 4608 5120
sw bwdf16 40 bwd fp16 1152 2304 2560
LNTUNE_SWEEP_M=4096 sw m4k 60 bwd bf16 1152 2304 2560 5120
s "forward sweeps"
sw fwd16 60 fwd bf16 1152 1280 1408 1664 1792 1920 3328
LNTUNE_SWEEP_OP=rmsnorm sw rmsf16 25 fwd bf16 1152 1408 1664
s done
