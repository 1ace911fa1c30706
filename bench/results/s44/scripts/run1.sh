#!/usr/bin/env bash
# Call 1 (session 44). s44a = main + rows of other than a power of two of
# threads (gen::has_segmented_rows: the single tile of exactly N columns,
# 1152 bf16 in rows of 144 threads, two a CTA of 9 warps; row sums by
# segments of 8-32 lanes) in the space of fwd and bwd_dx; no default
# changed. The VariantSpace cases (session 43's tiles, never run on a GPU,
# and the new segmented ones) with memcheck; every backward config at N
# just above powers of two; the forward at three N.
source bench/gpu_call.sh
use s44a
s "cases"
F='*VariantSpace*v4_N4608_bwd_dx:*VariantSpace*v4_N1152_bwd_dx:*VariantSpace*v3_N2304_bwd_dx:*VariantSpace*12288_fwd*:*VariantSpace*v2_N1152_*:*VariantSpace*v2_N2560_bwd_dx:*VariantSpace*v4_N2560_fwd'
cases 240 "$F" '*VariantSpace*v2_N1152_*'
s "backward sweeps"
sw bwd16 110 bwd bf16 1152 2304 2560 4608 5120
sw bwd32 70 bwd fp32 1152 2304 2560 4608
LNTUNE_SWEEP_OP=rmsnorm sw rmsb16 50 bwd bf16 1152 2304 4608
s "forward sweeps"
sw fwd16 50 fwd bf16 1152 2304 2560 4608
s done
