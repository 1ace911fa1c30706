#!/usr/bin/env bash
# Session 26, GPU call 1 (issue 11): the fused backward with dz loaded beside
# x and dy (new) against the session-25 kernel (base), default configs only,
# alternating base/new twice per group; then every config of add + LayerNorm
# bf16 at N = 2048 and 8192 with the new kernel; then gpu_norms_test.
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
s "A/B"
ab "add+LN bf16" "LNTUNE_SWEEP_RESIDUAL=1" bwd bf16 256 512 1024 2048 4096 8192
ab "add+RMS bf16" "LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=rmsnorm" bwd bf16 256 512 1024 2048 4096 8192
ab "add+LN fp32" "LNTUNE_SWEEP_RESIDUAL=1" bwd fp32 256 1024 2048 4096
ab "LN bf16 (no residual)" "" bwd bf16 256 1024 4096 8192
ab "RMS fp32 (no residual)" "LNTUNE_SWEEP_OP=rmsnorm" bwd fp32 1024 4096
s "every config, new"
LNTUNE_SWEEP_EVERY=1 LNTUNE_SWEEP_RESIDUAL=1 timeout 150 $D/new/lntune_sweep bwd bf16 2048 8192 > $O/sweep_res_bf16_new.txt 2>&1; grep -v "^ " $O/sweep_res_bf16_new.txt
s "gpu_norms_test"
for i in 0 1 2 3; do GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 150 $D/gpu_norms_test > $O/gpu_norms_test_$i.log 2>&1; echo "shard $i rc=$?"; tail -3 $O/gpu_norms_test_$i.log; done
s done
