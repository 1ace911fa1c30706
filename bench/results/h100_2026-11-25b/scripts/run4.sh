#!/usr/bin/env bash
# Session 26, GPU call 4 (issues 10, 11): the committed kernel and defaults
# (15be0ec, new) against the session-25 build (base), default configs only;
# then gpu_norms_test (4 shards) and gpu_test on the new kernels.
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
ab1 "add+LN bf16" "LNTUNE_SWEEP_RESIDUAL=1" bwd bf16 256 512 1024 2048 4096 6144 8192
ab1 "add+RMS bf16" "LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=rmsnorm" bwd bf16 256 512 1024 2048 4096 8192
ab1 "add+LN fp16" "LNTUNE_SWEEP_RESIDUAL=1" bwd fp16 256 1024 4096 8192
ab1 "add+RMS fp16" "LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=rmsnorm" bwd fp16 256 1024 4096 8192
ab1 "LN fp32 (no residual)" "" bwd fp32 2048 4096
ab1 "LN fp16 (no residual)" "" bwd fp16 256 1024 4096
s "gpu_norms_test"
for i in 0 1 2 3; do GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 150 $D/gpu_norms_test > $O/gpu_norms_test_$i.log 2>&1; echo "shard $i rc=$?"; tail -1 $O/gpu_norms_test_$i.log; done
s "gpu_test"
timeout 240 $D/gpu_test > $O/gpu_test.log 2>&1; echo "gpu_test rc=$?"; tail -3 $O/gpu_test.log
s done
