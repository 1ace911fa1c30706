#!/usr/bin/env bash
# Session 26, GPU call 12 (issues 10, 11): the final build (0976012 and
# later: no kernel or default change after it): gpu_test, gpu_norms_test (4
# shards), then the binding's pytest of the norms.
set -uo pipefail
D=$PWD/.devbuild/s26
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
export LNTUNE_CACHE=off
s() { echo "=== $1 ($(date +%T))"; }
s gpu_norms_test
for i in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 150 $D/gpu_norms_test --gtest_brief=1 > $O/gpu_norms_test_$i.log 2>&1; echo "shard $i rc=$?"
done
cat $O/gpu_norms_test_?.log > $O/gpu_norms_test.log; rm $O/gpu_norms_test_?.log; grep -hE "PASSED|FAILED" $O/gpu_norms_test.log
s gpu_test
timeout 240 $D/gpu_test --gtest_brief=1 > $O/gpu_test.log 2>&1; echo "gpu_test rc=$?"; grep -hE "PASSED|FAILED" $O/gpu_test.log | head -3
export LNTUNE_LIBRARY=$D/liblntune.so PYTHONPATH=$PWD/python:$D/pylib TORCH_EXTENSIONS_DIR=/tmp/te
s "pytest norms"
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/python/test_lntune_torch_norms.py > $O/pytest_norms.log 2>&1; echo "pytest rc=$?"; tail -2 $O/pytest_norms.log
s done
