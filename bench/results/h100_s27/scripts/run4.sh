#!/usr/bin/env bash
# Session 27, GPU call 4: the backward's grid at small and middling M
# (persistent_groups: at least a CTA per SM or row group before the
# 8-rows-per-CTA minimum). The default alone, old rule (base/, built from
# 2b52305) against the new, each M in one process per build; then the
# LayerNorm host/kernel table against PyTorch (default heuristic), and
# gpu_test on the new build.
set -uo pipefail
D=$PWD/.devbuild/s27
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
export LNTUNE_CACHE=off
s() { echo "=== $1 ($(date +%T))"; }
s "default alone, base vs new"
for m in 1 8 32 64 256 512 1024; do
  for b in base new; do
    bin=$D/lntune_sweep; [ $b = base ] && bin=$D/base/lntune_sweep
    for dt in bf16 fp32; do
      ns="1024 2048 4096 8192"; [ $dt = fp32 ] && ns="1024 4096"
      env LNTUNE_SWEEP_M=$m LNTUNE_SWEEP_CONFIG=default timeout 60 $bin bwd $dt $ns 2>&1 | grep -E "^bwd" | sed "s/^/$b /" | cut -c1-90
    done
    env LNTUNE_SWEEP_M=$m LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_OP=rmsnorm timeout 60 $bin bwd bf16 4096 8192 2>&1 | grep -E "^bwd" | sed "s/^/$b rms /" | cut -c1-94
  done
done | tee $O/ab_default.log
export LNTUNE_LIBRARY=$D/liblntune.so PYTHONPATH=$PWD/python:$D/pylib TORCH_EXTENSIONS_DIR=/tmp/te
s "layernorm host (default heuristic)"
timeout 200 python3 bench/bench_layernorm.py --no-plots --section host --out /tmp/ho > $O/host.log 2>&1; echo "rc=$?"
cp /tmp/ho/results.md $O/host_results.md 2>/dev/null
grep -E "^\| (1|32|4096|16384) \|" $O/host_results.md
s gpu_test
timeout 240 $D/gpu_test --gtest_brief=1 > $O/gpu_test.log 2>&1; echo "gpu_test rc=$?"; grep -hE "PASSED|FAILED" $O/gpu_test.log | head -5
s done
