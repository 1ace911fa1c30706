#!/usr/bin/env bash
# Session 24, GPU call 4 (issues 10 and 11): the wide backward with the row
# statistics loaded by cp.async into shared memory a row ahead (call 3 had
# them loaded just before pass A: bf16 N = 65536 at 90.9%, 97% before).
# Every wide backward config at N = 16K-256K, bf16 and fp32, against the
# defaults; the wide backward test; gpu_norms_test (4 shards).
set -uo pipefail
D=$PWD/.devbuild/s24
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s() { echo "=== $1 ($(date +%T))"; }
s sweeps
for dt in bf16 fp32; do
  f=$O/sweep_bwd_$dt.txt
  LNTUNE_CACHE=off LNTUNE_SWEEP_WIDE=1 timeout 200 $D/lntune_sweep bwd $dt 16384 32768 65536 131072 262144 > $f 2>&1
  grep -E "^bwd" $f | cut -c1-250
done
f=$O/sweep_bwd_rms_res_bf16.txt
LNTUNE_CACHE=off LNTUNE_SWEEP_WIDE=1 LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=1 timeout 100 $D/lntune_sweep bwd bf16 32768 262144 > $f 2>&1
grep -E "^bwd" $f | cut -c1-250
s tests
for k in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$k LNTUNE_CACHE=off timeout 300 $D/gpu_norms_test --gtest_brief=1 > /tmp/norms_$k.log 2>&1 &
done
LNTUNE_CACHE=off timeout 300 $D/gpu_test --gtest_brief=1 --gtest_filter='Gpu.WideBackward*' > $O/wide_bwd.log 2>&1 &
wait
cat /tmp/norms_?.log > $O/gpu_norms_test.log
grep -hE "PASSED|FAILED|Failure|tests? ran|wide" $O/gpu_norms_test.log $O/wide_bwd.log | head -16
s done
