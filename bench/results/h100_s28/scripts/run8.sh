#!/usr/bin/env bash
# Call 8: 94a676a. The default with dW/dB in the dx kernel (one CTA alone at
# M = 1) against bwd_dwdb after it, same process; the LayerNorm and RMSNorm
# host/kernel tables against PyTorch; tuner_gpu_test with its memset fix.
set -uo pipefail
D=$PWD/.devbuild/s28
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
export LNTUNE_CACHE=off
s() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
s tuner_gpu_test
timeout 120 $D/tuner_gpu_test --gtest_brief=1 > $O/tuner_gpu_test_call8.log 2>&1; echo "rc=$?"; grep -hE "PASSED|FAILED" $O/tuner_gpu_test_call8.log
s "finish A/B"
{
  for m in 1 2 8 32; do
    LNTUNE_SWEEP_FINISH=both LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=$m $D/lntune_sweep bwd bf16 1024 2048 4096 8192
    LNTUNE_SWEEP_FINISH=both LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=$m $D/lntune_sweep bwd fp32 1024 4096
    LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_FINISH=both LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=$m $D/lntune_sweep bwd bf16 1024 4096 8192
  done
} 2>&1 | grep -E "^finish|copy" > $O/finish_ab_call8.log
grep "^finish" $O/finish_ab_call8.log | cut -c1-150
export LNTUNE_LIBRARY=$D/liblntune.so PYTHONPATH=$PWD/python TORCH_EXTENSIONS_DIR=/tmp/te
s "layernorm host"
timeout 240 python3 bench/bench_layernorm.py --no-plots --section host --out /tmp/ho > $O/host_call8.log 2>&1; echo "rc=$?"
cp /tmp/ho/results.md $O/host_results_call8.md 2>/dev/null
grep -E "^\| (1|32) \|" $O/host_results_call8.md
s "norms small M"
timeout 240 python3 bench/bench_norms.py --section host --out /tmp/no > $O/norms_host_call8.log 2>&1; echo "rc=$?"
cp /tmp/no/norms.md $O/norms_host_call8.md 2>/dev/null
grep -A30 -i "^## host" $O/norms_host_call8.md | head -30
s done
