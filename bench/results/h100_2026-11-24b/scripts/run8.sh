#!/usr/bin/env bash
# Session 20, GPU call 8: correctness after this session's changes to the shared host code
# (compare's equal-bits shortcut, -O3 reference and compare, table-driven inputs): gpu_test, gpu_norms_test (12 shards).
set -uo pipefail
D=$PWD/.devbuild/s20
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D LNTUNE_CACHE=off
O=${OUT:-/tmp}
timeout 200 $D/gpu_test --gtest_brief=1 > $O/gpu_test.log 2>&1; echo "gpu_test rc=$?"
pids=(); for i in $(seq 0 11); do GTEST_TOTAL_SHARDS=12 GTEST_SHARD_INDEX=$i timeout 220 $D/gpu_norms_test --gtest_brief=1 > /tmp/norms$i.log 2>&1 & pids+=($!); done
for p in "${pids[@]}"; do wait $p; done
cat /tmp/norms*.log > $O/norms.log
tail -n 4 $O/gpu_test.log
grep -hE "PASSED|FAILED|tests ran" $O/norms.log | sort | uniq -c | head -20
