#!/usr/bin/env bash
# Session 22, GPU call 7 (issues 10 and 11): gpu_norms_test (4 shards at
# once) at the final kernels and defaults; then the bandwidth-regime tables:
# bench_layernorm.py (lntune's defaults and PyTorch, three dtypes) and
# bench_norms.py (RMSNorm and the fused forms, bf16 and fp32).
set -uo pipefail
D=$PWD/.devbuild/s22
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s() { echo "=== $1 ($(date +%T))"; }
s gpu_norms_test
for k in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$k LNTUNE_CACHE=off timeout 240 $D/gpu_norms_test --gtest_brief=1 > /tmp/norms_$k.log 2>&1 &
done
wait
cat /tmp/norms_?.log > $O/gpu_norms_test.log
grep -hE "PASSED|FAILED|Failure|tests? ran" $O/gpu_norms_test.log | head -12
s bandwidth
export LNTUNE_LIBRARY=$D/liblntune.so PYTHONPATH=$PWD/python TORCH_EXTENSIONS_DIR=/tmp/te LNTUNE_CACHE=off
timeout 150 python3 bench/bench_layernorm.py --no-plots --section bandwidth --dtypes fp16,bf16,fp32 --providers lntune-default,torch --out /tmp/bw > $O/bandwidth.log 2>&1; echo "bandwidth rc=$?"
grep -E "bandwidth (fp16|bf16|fp32) M=" $O/bandwidth.log | cut -c12-220
s norms
timeout 140 python3 bench/bench_norms.py --section bandwidth --dtypes bf16,fp32 --out /tmp/nb > $O/norms_bandwidth.log 2>&1; echo "norms rc=$?"
cp /tmp/nb/*.md $O/ 2>/dev/null
s done
