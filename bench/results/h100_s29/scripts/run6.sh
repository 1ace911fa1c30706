#!/usr/bin/env bash
# Call 6: ef8db03, the session's last build. gpu_test and gpu_norms_test (in
# 4 shards), then alone on the GPU: the small-M and host tables against
# PyTorch (bench_layernorm.py --section host), and the fused residual
# backward at N = 262144, fp32 (issue 11), default configs, against the copy.
set -uo pipefail
D=$PWD/.devbuild/s29d
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
export LNTUNE_CACHE=off
s() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
s "gpu tests"
for i in 0 1 2 3; do
  ( GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 480 $D/gpu_norms_test --gtest_brief=1 > /tmp/norms_$i.log 2>&1; echo "norms shard $i rc=$?" ) &
done
( timeout 480 $D/gpu_test --gtest_brief=1 > /tmp/gpu_test.log 2>&1; echo "gpu_test rc=$?" ) &
wait
cat /tmp/norms_*.log > $O/gpu_norms_test_call6.log; cp /tmp/gpu_test.log $O/gpu_test_call6.log
grep -hE "PASSED|FAILED|\[ finish|\[ regs" $O/gpu_norms_test_call6.log $O/gpu_test_call6.log | head -20
s "residual fp32 N=262144"
for op in layernorm rmsnorm; do LNTUNE_SWEEP_OP=$op LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_CONFIG=default $D/lntune_sweep bwd fp32 262144; done > $O/residual_262144_call6.log 2>&1
grep -E "copy|^bwd" $O/residual_262144_call6.log | cut -c1-120
export LNTUNE_LIBRARY=$D/liblntune.so PYTHONPATH=$PWD/python TORCH_EXTENSIONS_DIR=/tmp/te
s "layernorm host"
timeout 240 python3 bench/bench_layernorm.py --no-plots --section host --out /tmp/ho > $O/host_call6.log 2>&1; echo "rc=$?"
cp /tmp/ho/results.md $O/host_results_call6.md 2>/dev/null
grep -E "^\| (1|32|256|4096) \|" $O/host_results_call6.md | head -30
s done
