#!/usr/bin/env bash
# A device call for rules-4.patch (bench/experiments/README.md): the fp32
# LayerNorm forward of 2049-3584 columns at 16-32 rows an SM on N rounded
# up to 512 in 4 warps (session 60's cold tune at M = 4096: 2560 1.06x,
# 3072 1.03x). The patched build's two new Variants cases beside memcheck
# on them, then the A/B against main, two rounds, inside the range and at
# its edges (2048 and 4096 outside; M = 8192 outside).
#   OUT=$OUT bash bench/experiments/run-rules-4.sh MAIN PATCHED
# MAIN, PATCHED: carried builds under .devbuild (scripts/stage.sh NAME).
# About two minutes of device time.
source bench/gpu_call.sh
[ $# = 2 ] || { echo "usage: run-rules-4.sh MAIN PATCHED" >&2; exit 2; }
new='*Variants*layernorm_fp32_wfp32_WB_M4096_N2561:*Variants*layernorm_fp32_wfp32_WB_M3001_N3200_pad8'
patch_ab "$1" "$2" "$new" "$new" \
  "f4096|LNTUNE_SWEEP_M=4096|fwd fp32 2048 2304 2560 3072 3200 3584 4096" \
  "f2200|LNTUNE_SWEEP_M=2200|fwd fp32 2560 3072" \
  "f8192|LNTUNE_SWEEP_M=8192|fwd fp32 2560"
