#!/usr/bin/env bash
# A device call for the shapes session 51 left unmeasured (bench/NOTES.md,
# session 51; bench/GPU_CHECKLIST.md, item 3): every config of the space
# (LNTUNE_SWEEP_EVERY=1), one process a shape, on a carried build of main.
# Each shape's three fastest and the default are printed; a config ahead of
# the default by more than the rounds' spread is a rule to write and A/B.
#   OUT=$OUT bash bench/experiments/sweeps-after-s51.sh BUILD
# BUILD: a carried build under .devbuild (scripts/stage.sh NAME). About
# two minutes of device time.
source bench/gpu_call.sh
use ${1:?usage: sweeps-after-s51.sh BUILD}
s sweeps
# 12288 columns: 12 warps (32 elements a thread) led LayerNorm at every M
# past two rows an SM; RMSNorm's rule takes 16 warps (24 a thread), the
# fused forms their own.
# (x = 512 MiB ran in session 51's call 13: RMSNorm's default the best;
# the fused forms' bests wait in fwd-fused-12288-ln-1024.patch.)
LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=4096 sw rms12k_m4k 40 fwd bf16 12288
LNTUNE_SWEEP_RESIDUAL=fp32 sw addln12k_f32 60 fwd bf16 12288
# The decode rules for add + LayerNorm (not taken: unmeasured) and plain
# RMSNorm below 16384 columns.
for m in 1 64; do
  LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_M=$m sw addln_m$m 40 fwd bf16 8192 12288 16384
  LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=$m sw rms_m$m 40 fwd bf16 8192 12288
done
# 16384 columns in 16 warps between 32 rows an SM (the rule's end) and
# x = 512 MiB (already 16 warps there); M = 8192 was level in call 7.
for m in 6000 12000; do
  LNTUNE_SWEEP_M=$m sw ln16k_m$m 40 fwd bf16 16384
done
# The forward at M = 4096 (31 rows an SM): call 13 swept 1024 (the patch's
# rule), 2048, 4096, 6144 (the defaults the best); 512 and 3072 not yet.
LNTUNE_SWEEP_M=4096 sw fwd_m4k 40 fwd bf16 512 3072
s done
