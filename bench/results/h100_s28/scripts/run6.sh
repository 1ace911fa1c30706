#!/usr/bin/env bash
# Call 6: the in-kernel finish reduced to where it fits (rt::finish_fits: one
# level, one block of columns per CTA, one round of loads: small M). gpu_test
# whole; the default with dW/dB in the dx kernel against bwd_dwdb after it
# (same process); compute-sanitizer on it; the LayerNorm host/kernel table
# against PyTorch (bench_layernorm --section host).
set -uo pipefail
D=$PWD/.devbuild/s28
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
export LNTUNE_CACHE=off
s() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
s gpu_test
timeout 300 $D/gpu_test --gtest_brief=1 > $O/gpu_test_call6.log 2>&1; echo "gpu_test rc=$?"; grep -hE "PASSED|FAILED|\[ finish" $O/gpu_test_call6.log | head -8
s "finish A/B"
{
  for m in 1 8 32 64 256; do
    LNTUNE_SWEEP_FINISH=both LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=$m $D/lntune_sweep bwd bf16 512 1024 2048 4096 8192
    LNTUNE_SWEEP_FINISH=both LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=$m $D/lntune_sweep bwd fp32 1024 4096
    LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_FINISH=both LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=$m $D/lntune_sweep bwd bf16 1024 4096 8192
    LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_FINISH=both LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=$m $D/lntune_sweep bwd bf16 1024 4096
  done
  LNTUNE_SWEEP_FINISH=both LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=4096 $D/lntune_sweep bwd bf16 1024 4096
} 2>&1 | grep -E "^finish|copy" > $O/finish_ab_call6.log
grep "^finish" $O/finish_ab_call6.log | cut -c1-150
s sanitizers
for tool in memcheck racecheck synccheck; do
  for mn in "1 512" "32 1000" "64 2048"; do
    set -- $mn
    compute-sanitizer --tool $tool --error-exitcode 9 env LNTUNE_SWEEP_M=$1 LNTUNE_SWEEP_CONFIG=default $D/lntune_sweep bwd bf16 $2 > /tmp/san.log 2>&1
    rc=$?
    echo "$tool M=$1 N=$2 exit $rc: $(grep -E 'SUMMARY' /tmp/san.log)"
  done
done > $O/sanitizer_call6.log 2>&1
cat $O/sanitizer_call6.log
export LNTUNE_LIBRARY=$D/liblntune.so PYTHONPATH=$PWD/python TORCH_EXTENSIONS_DIR=/tmp/te
s "layernorm host (default heuristic)"
timeout 240 python3 bench/bench_layernorm.py --no-plots --section host --out /tmp/ho > $O/host_call6.log 2>&1; echo "rc=$?"
cp /tmp/ho/results.md $O/host_results_call6.md 2>/dev/null
grep -E "^\| (1|32|4096|16384) \|" $O/host_results_call6.md
s done
