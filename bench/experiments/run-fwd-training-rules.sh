#!/usr/bin/env bash
# A device call for fwd-training-rules.patch (bench/experiments/README.md):
# the forward at training rows, from session 57's cold tune (M = 4096): rows
# of 768-1023 columns on the 1024-column tile, 32 threads a row, four rows a
# CTA of 4 warps, at 16-32 rows an SM (the 1024 rule's), and 16-bit
# LayerNorm of 6145-8191 columns on the 8192-column tile in 8 warps, not 16,
# from 4 rows an SM to M = 8192 (the 8192 rule's). The forward Variants and
# every forward config at M = 300 on the patched build, then the A/B against
# main, two rounds, inside the rules' row ranges and at their edges.
#   OUT=$OUT bash bench/experiments/run-fwd-training-rules.sh MAIN PATCHED
# MAIN, PATCHED: carried builds under .devbuild (scripts/stage.sh NAME).
# About three minutes of device time.
source bench/gpu_call.sh
[ $# = 2 ] || { echo "usage: run-fwd-training-rules.sh MAIN PATCHED" >&2; exit 2; }
patch_ab "$1" "$2" '*VariantSpace*fwd:*Variants*' '*VariantSpace*v0_N1000_fwd' \
  "m4096|LNTUNE_SWEEP_M=4096|fwd bf16 768 896 1000 6656 7168 7680 8000" \
  "m4096h|LNTUNE_SWEEP_M=4096|fwd fp16 768 7168" \
  "m4096f|LNTUNE_SWEEP_M=4096|fwd fp32 768 1000" \
  "m4096r|LNTUNE_SWEEP_M=4096 LNTUNE_SWEEP_OP=rmsnorm|fwd bf16 768 1000" \
  "m4096a|LNTUNE_SWEEP_M=4096 LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=1|fwd bf16 768" \
  "m2200|LNTUNE_SWEEP_M=2200|fwd bf16 768 7168" \
  "m4224|LNTUNE_SWEEP_M=4224|fwd bf16 768" \
  "m8192|LNTUNE_SWEEP_M=8192|fwd bf16 6656 7168"
