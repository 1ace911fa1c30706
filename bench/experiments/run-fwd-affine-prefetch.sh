#!/usr/bin/env bash
# A device call for fwd-affine-prefetch.patch (bench/experiments/README.md):
# the single-tile forward asks L1 for its weight and bias (prefetch.global.L1)
# under x's loads, so that their loads after the row's sums hit L1. Every
# forward config at M = 300 and the forward Variants, memcheck on a sample,
# then the A/B against main, two rounds, where a row is short (the tail of
# every warp is the time) and where the tile is wide (16384 in 16 warps:
# 64 KB of weight and bias, which must stay level).
#   OUT=$OUT bash bench/experiments/run-fwd-affine-prefetch.sh MAIN PATCHED
# MAIN, PATCHED: carried builds under .devbuild (scripts/stage.sh NAME);
# PATCHED may also hold fwd-cta-stats.patch (the two apply together), then
# MAIN is main + that patch. About four minutes of device time.
source bench/gpu_call.sh
main=${1:?usage: run-fwd-affine-prefetch.sh MAIN PATCHED} patched=${2:?usage: run-fwd-affine-prefetch.sh MAIN PATCHED}
use $patched
s tests
cases 200 '*VariantSpace*fwd:*Variants*M67_*:*Variants*M1_*' '*VariantSpace*v0_N1000_fwd'
s ab
OUT=$O bash bench/gpu_ab.sh ab 2 $B/$main $B/$patched -- \
  "ln||fwd bf16 256 512 1024 2048 4096 16384" "lnh||fwd fp16 256 1024" "ln32||fwd fp32 256 1024" \
  "rms|LNTUNE_SWEEP_OP=rmsnorm|fwd bf16 256 1024" "add|LNTUNE_SWEEP_RESIDUAL=1|fwd bf16 256 4096" \
  "m4k|LNTUNE_SWEEP_M=4096|fwd bf16 1024 4096" "d1|LNTUNE_SWEEP_M=1|fwd bf16 4096 16384"
s done
