#!/usr/bin/env bash
# Session 26, GPU call 3 (issue 11): the fused backward with dz loaded beside
# x and dy, now with __launch_bounds__ asking for 512 threads' worth of CTAs
# per SM and dz read late beside a wider residual (new), against the
# session-25 kernel (base), default configs only, alternating; then every
# config of the fused 16-bit backward at more row lengths with the new kernel.
set -uo pipefail
D=$PWD/.devbuild/s26
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
export LNTUNE_CACHE=off
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
s() { echo "=== $1 ($(date +%T))"; }
ab() {  # label, "VAR=value ...", sweep arguments...
  local label=$1 vars=$2; shift 2
  for round in 1 2; do
    for b in base new; do
      echo "--- $label $b round $round"
      env LNTUNE_SWEEP_CONFIG=default $vars timeout 120 $D/$b/lntune_sweep "$@" 2>&1 | grep -v "^ "
    done
  done
}
ab1() {  # one round  # label, "VAR=value ...", sweep arguments...
  local label=$1 vars=$2; shift 2
  for round in 1; do
    for b in base new; do
      echo "--- $label $b round $round"
      env LNTUNE_SWEEP_CONFIG=default $vars timeout 120 $D/$b/lntune_sweep "$@" 2>&1 | grep -v "^ "
    done
  done
}
s "A/B"
ab "add+LN bf16" "LNTUNE_SWEEP_RESIDUAL=1" bwd bf16 256 512 1024 2048 4096 8192
ab "add+RMS bf16" "LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=rmsnorm" bwd bf16 256 512 1024 2048 4096 8192
ab "add+LN fp32" "LNTUNE_SWEEP_RESIDUAL=1" bwd fp32 256 1024 2048 4096
ab "add+RMS fp32" "LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=rmsnorm" bwd fp32 256 1024 2048
ab1 "LN bf16 (no residual)" "" bwd bf16 256 1024 2048 4096 8192
ab1 "RMS bf16 (no residual)" "LNTUNE_SWEEP_OP=rmsnorm" bwd bf16 256 1024 4096
ab1 "LN fp32 (no residual)" "" bwd fp32 256 1024 2048 4096
s "every config, new"
LNTUNE_SWEEP_EVERY=1 LNTUNE_SWEEP_RESIDUAL=1 timeout 200 $D/new/lntune_sweep bwd bf16 512 2048 4096 8192 > $O/sweep_res_ln_bf16_new3.txt 2>&1; grep -v "^ " $O/sweep_res_ln_bf16_new3.txt
LNTUNE_SWEEP_EVERY=1 LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=rmsnorm timeout 150 $D/new/lntune_sweep bwd bf16 512 1024 2048 > $O/sweep_res_rms_bf16_new3.txt 2>&1; grep -v "^ " $O/sweep_res_rms_bf16_new3.txt
s done
