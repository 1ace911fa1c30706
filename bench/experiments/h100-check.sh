#!/usr/bin/env bash
# A device call for the first H100 lent since session 32 (bench/GPU_CHECKLIST.md,
# status after session 51, item 5): every H200 rule since session 35 is
# fast_memory's (16+ DRAM bytes an SM cycle; an H100 SXM reports about
# 12.8), so an H100 runs its own older defaults at these shapes. Every
# config in one process a shape, where the H200's rules moved most; a
# config well ahead of the H100's default is a rule to write for it.
#   OUT=$OUT bash bench/experiments/h100-check.sh BUILD      (kind: an H100)
# BUILD: a carried build under .devbuild (scripts/stage.sh NAME). About
# three minutes of device time.
source bench/gpu_call.sh
use ${1:?usage: h100-check.sh BUILD}
s info
$D/lntune info 2>&1 | head -12
s sweeps
# The decode forward (session 51's H200 rules: 32 warps a row, clusters
# of 4096-column slabs at 32768-65536 columns).
for m in 1 64; do
  LNTUNE_SWEEP_M=$m sw dec_m$m 60 fwd bf16 8192 16384 32768
done
# 12288 columns in 12 warps (session 51: 93 -> 99% of copy on the H200).
sw bw12k 60 fwd bf16 12288
# The training-size backward (sessions 49-50's H200 rules: two CTAs a SM
# of 4 warps, dW/dB finished in the kernel; fp32 on the same configs).
LNTUNE_SWEEP_M=4096 sw bwd_m4k 90 bwd bf16 1024 2048 4096
LNTUNE_SWEEP_M=4096 sw bwd_m4k_f32 40 bwd fp32 1024
LNTUNE_SWEEP_M=16384 sw bwd_m16k 60 bwd bf16 1024 4096
s done
