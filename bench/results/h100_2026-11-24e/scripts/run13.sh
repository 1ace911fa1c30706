#!/usr/bin/env bash
# Session 23, GPU call 13 (issues 10 and 11): at the final defaults (the fp32
# fused forward at 256K columns now the wide forward with x staged alone):
# gpu_norms_test (4 shards) and gpu_test's default-config tests, then
# bench_norms.py's bandwidth table.
set -uo pipefail
D=$PWD/.devbuild/s23
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s() { echo "=== $1 ($(date +%T))"; }
s suites
for k in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$k LNTUNE_CACHE=off timeout 300 $D/gpu_norms_test --gtest_brief=1 > /tmp/norms_$k.log 2>&1 &
done
LNTUNE_CACHE=off timeout 300 $D/gpu_test --gtest_brief=1 --gtest_filter='Gpu/Sweep.*:Gpu.NanAndInf*:Gpu.ZeroRows*:Gpu.DegenerateRows*' > /tmp/gpu_0.log 2>&1 &
wait
cat /tmp/norms_?.log > $O/gpu_norms_test.log; cat /tmp/gpu_0.log > $O/gpu_test.log
grep -hE "PASSED|FAILED|Failure|tests? ran" $O/gpu_norms_test.log $O/gpu_test.log | head -12
s norms
export LNTUNE_LIBRARY=$D/liblntune.so PYTHONPATH=$PWD/python TORCH_EXTENSIONS_DIR=/tmp/te LNTUNE_CACHE=off
timeout 200 python3 bench/bench_norms.py --section bandwidth --dtypes bf16,fp32 --out /tmp/nb > $O/norms_bandwidth.log 2>&1; echo "norms rc=$?"
cp /tmp/nb/*.md $O/ 2>/dev/null; grep -E "262144|65536" $O/norms.md | grep fwd
s done
