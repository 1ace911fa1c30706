#!/usr/bin/env bash
# Session 26, GPU call 5 (issues 10, 11): __launch_bounds__ names a minimum
# only for CTAs under 512 threads (new) against the session-25 build (base),
# default configs; then bench_norms.py's and bench_layernorm.py's bandwidth
# tables (bf16, fp32) through lntune.torch, against PyTorch and the copy.
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
ab1 "LN fp32 (no residual)" "" bwd fp32 1024 2048 4096
ab1 "LN bf16 (no residual)" "" bwd bf16 256 1024 2048
ab1 "add+LN bf16" "LNTUNE_SWEEP_RESIDUAL=1" bwd bf16 1024 4096 8192
ab1 "add+RMS bf16" "LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=rmsnorm" bwd bf16 1024 4096
s norms
export LNTUNE_LIBRARY=$D/liblntune.so PYTHONPATH=$PWD/python:$D/pylib TORCH_EXTENSIONS_DIR=/tmp/te
timeout 280 python3 bench/bench_norms.py --section bandwidth --dtypes bf16,fp32 --out /tmp/nb > $O/norms_bandwidth.log 2>&1; echo "norms rc=$?"
cp /tmp/nb/norms.md $O/ 2>/dev/null
s layernorm
timeout 200 python3 bench/bench_layernorm.py --no-plots --section bandwidth --dtypes bf16,fp32 --providers lntune-default,torch --out /tmp/bw > $O/bandwidth.log 2>&1; echo "bandwidth rc=$?"
cp /tmp/bw/*.md $O/ 2>/dev/null
s done
