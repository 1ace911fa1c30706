#!/usr/bin/env bash
# Session 24, GPU call 10 (issues 10 and 11): the fp32 fused backward's new
# default at 64K columns (32 warps, 2 stages): the long-row variant tests at
# the defaults (fp32 + fp32 residual at 64K and 256K columns, 16-bit
# LayerNorm at 256K), the wide backward test, gpu_norms_test (4 shards), then
# bench_norms.py's fp32 bandwidth table and the fused sweep at 64K.
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
LNTUNE_CACHE=off timeout 100 $D/gpu_norms_test --gtest_filter='Norms/Variants.*N262144:Norms/Variants.*resfp32_M21_N65536' > $O/long_variants.log 2>&1; echo "long variants rc=$?"
grep -E "OK|FAILED" $O/long_variants.log | head -8
s sweep
LNTUNE_CACHE=off LNTUNE_SWEEP_RESIDUAL=1 timeout 60 $D/lntune_sweep bwd fp32 65536 2>&1 | grep -E "^bwd" | cut -c1-250
s norms
export LNTUNE_LIBRARY=$D/liblntune.so PYTHONPATH=$PWD/python:$D/pylib TORCH_EXTENSIONS_DIR=/tmp/te LNTUNE_CACHE=off
timeout 200 python3 bench/bench_norms.py --section bandwidth --dtypes fp32 --out /tmp/nb > $O/norms_bandwidth.log 2>&1; echo "norms rc=$?"
cp /tmp/nb/*.md $O/ 2>/dev/null; grep -E "add.*(65536|262144) \| bwd" $O/norms.md | head
s done
