#!/usr/bin/env bash
# Call 6 (session 44). s44e = s44d with the backward's equal slabs over
# clusters of 2 or 4 in rows of other than a power of two of threads (in
# the space only). Their VariantSpace cases and memcheck; every backward
# config at 9216-18432.
source bench/gpu_call.sh
use s44e
s "cases"
F='*VariantSpace*v2_N9216_bwd_dx:*VariantSpace*v3_N17408_bwd_dx'
cases 200 "$F" '*VariantSpace*v2_N9216_bwd_dx'
s "sweeps"
sw big 120 bwd bf16 9216 10240 12288 13312 17408 18432
LNTUNE_SWEEP_OP=rmsnorm sw rmsbig 50 bwd bf16 9216 17408
s done
