#!/usr/bin/env bash
# Call 1 (session 48). The register backward's stage ring deeper than two
# row groups (bwd_dx.cuh, bwd_ring: as many stages as kBwdRingBytes holds,
# 2 to 8): r0 (two stages, as before), r64 (64 KB), r128 (128 KB). The
# r128 build's cases (every config at 1000-2002 columns, memcheck), every
# config at M = 4096 bf16 1024, then the three builds A/B'd.
source bench/gpu_call.sh
use r128
s cases
cases 170 '*VariantSpace*N1000_bwd_dx:*VariantSpace*N1152_bwd_dx:*VariantSpace*N2002_bwd_dx' \
  '*VariantSpace*v0_N1000_bwd_dx:*VariantSpace*v3_N2001_bwd_dx'
s sweep
LNTUNE_SWEEP_M=4096 sw m4k 60 bwd bf16 1024
s ab
OUT=$O bash bench/gpu_ab.sh ab 2 $B/r0 $B/r64 $B/r128 -- \
  "m4k|LNTUNE_SWEEP_M=4096|bwd bf16 1024 2048 4096" "m4kf|LNTUNE_SWEEP_M=4096|bwd fp32 1024 2048" \
  "rms4k|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=4096|bwd bf16 1024" \
  "bw||bwd bf16 256 1024 4096" "bwf||bwd fp32 256 1024"
s done
