#!/usr/bin/env bash
# Session 24, GPU call 14 (issue 11): the fused wide backward loads every
# access's dz before any dx is stored (up to 16 warps), instead of one load
# after each store. gpu_norms_test (4 shards: the fused variants, the
# variant-space tests of every backward config with a residual), then the
# fused backward sweeps.
set -uo pipefail
D=$PWD/.devbuild/s24
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s() { echo "=== $1 ($(date +%T))"; }
s tests
for k in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$k LNTUNE_CACHE=off timeout 300 $D/gpu_norms_test --gtest_brief=1 > /tmp/norms_$k.log 2>&1 &
done
wait
cat /tmp/norms_?.log > $O/gpu_norms_test.log
grep -hE "PASSED|FAILED|Failure|tests? ran" $O/gpu_norms_test.log | head -12
s sweeps
for v in "fp32 262144 65536" "bf16 262144 65536"; do
  set -- $v; f=$O/sweep_bwd_res_$1.txt
  LNTUNE_CACHE=off LNTUNE_SWEEP_WIDE=1 LNTUNE_SWEEP_RESIDUAL=1 timeout 120 $D/lntune_sweep bwd $1 $2 $3 > $f 2>&1
  grep -E "^bwd" $f | cut -c1-250
  grep -B30 "N=262144" $f | grep "16384 num_warps.*cluster_size=16" | cut -c1-120
done
s done
