#!/usr/bin/env bash
# Session 25, GPU call 10 (issues 10, 11) on nvidia-h100-x1: the final
# defaults of this session. gpu_test (all), gpu_norms_test (all, 4 shards),
# tuner_gpu_test; then bench_norms.py's bandwidth table (bf16, fp32).
set -uo pipefail
D=$PWD/.devbuild/s25
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s() { echo "=== $1 ($(date +%T))"; }
s gpu_test
LNTUNE_CACHE=off timeout 240 $D/gpu_test --gtest_brief=1 > $O/gpu_test.log 2>&1; echo "gpu_test rc=$?"
grep -hE "PASSED|FAILED|\[ wide" $O/gpu_test.log | head
s gpu_norms_test
for i in 0 1 2 3; do
  LNTUNE_CACHE=off GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 150 $D/gpu_norms_test --gtest_brief=1 > $O/gpu_norms_test_$i.log 2>&1; echo "shard $i rc=$?"
done
cat $O/gpu_norms_test_?.log > $O/gpu_norms_test.log; rm $O/gpu_norms_test_?.log
grep -hE "PASSED|FAILED" $O/gpu_norms_test.log | head
s tuner_gpu_test
LNTUNE_CACHE=off timeout 100 $D/tuner_gpu_test --gtest_brief=1 > $O/tuner_gpu_test.log 2>&1; echo "tuner_gpu_test rc=$?"
grep -hE "PASSED|FAILED" $O/tuner_gpu_test.log | head -3
s norms
export LNTUNE_LIBRARY=$D/liblntune.so PYTHONPATH=$PWD/python:$D/pylib TORCH_EXTENSIONS_DIR=/tmp/te LNTUNE_CACHE=off
timeout 260 python3 bench/bench_norms.py --section bandwidth --dtypes bf16,fp32 --out /tmp/nb > $O/norms_bandwidth.log 2>&1; echo "norms rc=$?"
cp /tmp/nb/*.md $O/ 2>/dev/null; grep -E "\| (4096|8192|16384) \| (fwd|bwd)" $O/norms.md | grep add
s done
