#!/usr/bin/env bash
# Session 24, GPU call 16 (issue 11): two fixes for spills the fused wide
# backward picked up this session at 32 warps (found by the spill test, now
# with residual traits): no split copy with a residual (it measured no
# faster there), the lookahead kept for residual instances of 32 warps.
# The fused variant tests (long rows, every config of the variant space,
# gpu_norms_test in 4 shards), the wide backward test, the fused sweeps.
set -uo pipefail
D=$PWD/.devbuild/s24
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s() { echo "=== $1 ($(date +%T))"; }
s tests
for k in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$k LNTUNE_CACHE=off timeout 300 $D/gpu_norms_test --gtest_brief=1 > /tmp/norms_$k.log 2>&1 &
done
LNTUNE_CACHE=off timeout 250 $D/gpu_test --gtest_brief=1 --gtest_filter='Gpu.WideBackward*' > $O/wide_bwd.log 2>&1 &
wait
cat /tmp/norms_?.log > $O/gpu_norms_test.log
grep -hE "PASSED|FAILED|Failure|tests? ran|wide  " $O/gpu_norms_test.log $O/wide_bwd.log | head -12
s sweeps
for dt in fp32 bf16; do
  LNTUNE_CACHE=off LNTUNE_SWEEP_RESIDUAL=1 timeout 60 $D/lntune_sweep bwd $dt 262144 65536 2>&1 | grep -E "^bwd" | cut -c1-250
done
s done
