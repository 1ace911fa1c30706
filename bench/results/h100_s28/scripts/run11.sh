#!/usr/bin/env bash
# Call 11: the decode rule (M = 2-4: one CTA holding the rows side by side,
# dW/dB written by it). gpu_test's in-kernel test (M = 3, 4 added) and
# gpu_norms_test; every config at M = 2, 3, 4 in one process per shape (the
# old default's config among them); the host table against PyTorch.
set -uo pipefail
D=$PWD/.devbuild/s28
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
export LNTUNE_CACHE=off
s() { echo "=== $1 ($(date +%T))"; }
s tests
( timeout 300 $D/gpu_test --gtest_filter='Gpu.InKernel*:Gpu.Backward*' > /tmp/gt.log 2>&1; echo "gpu_test rc=$?" ) &
for i in 0 1 2 3; do
  ( GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 480 $D/gpu_norms_test --gtest_brief=1 > /tmp/norms_$i.log 2>&1; echo "norms shard $i rc=$?" ) &
done
wait
cp /tmp/gt.log $O/gpu_test_call11.log; cat /tmp/norms_*.log > $O/gpu_norms_test_call11.log
grep -hE "PASSED|FAILED|\[ finish" $O/gpu_test_call11.log $O/gpu_norms_test_call11.log
s "every config, M = 2-4"
for m in 2 3 4; do
  LNTUNE_SWEEP_EVERY=1 LNTUNE_SWEEP_M=$m $D/lntune_sweep bwd bf16 1024 2048 4096
  LNTUNE_SWEEP_EVERY=1 LNTUNE_SWEEP_M=$m $D/lntune_sweep bwd fp32 1024 4096
  LNTUNE_SWEEP_EVERY=1 LNTUNE_SWEEP_M=$m LNTUNE_SWEEP_OP=rmsnorm $D/lntune_sweep bwd bf16 1024 4096
done > $O/every_small_m_call11.log 2>&1
grep -E "^bwd" $O/every_small_m_call11.log | cut -c1-200
export LNTUNE_LIBRARY=$D/liblntune.so PYTHONPATH=$PWD/python TORCH_EXTENSIONS_DIR=/tmp/te
s "layernorm host"
timeout 240 python3 bench/bench_layernorm.py --no-plots --section host --out /tmp/ho > $O/host_call11.log 2>&1; echo "rc=$?"
cp /tmp/ho/results.md $O/host_results_call11.md 2>/dev/null
grep -E "^\| (1|32) \|" $O/host_results_call11.md
s done
