#!/usr/bin/env bash
# Session 26, GPU call 7 (issues 10, 11): fp32 rows with a residual in two
# 8192-column slabs now take 2 stages (call 6's sweep); gpu_norms_test's
# long fused variants; bench_norms.py's fp32 bandwidth table; then
# bench_layernorm.py's M = 4096 grid and small-M rows (bf16, the default
# heuristic, no tuned cache) and its host section.
set -uo pipefail
D=$PWD/.devbuild/s26
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
export LNTUNE_CACHE=off
s() { echo "=== $1 ($(date +%T))"; }
s "gpu_norms_test (long fused rows)"
timeout 120 $D/gpu_norms_test --gtest_filter='*N16384*:*N12288*:*N8000*' --gtest_brief=1 > $O/variants_long.log 2>&1; echo "rc=$?"; grep -E "PASSED|FAILED" $O/variants_long.log
export LNTUNE_LIBRARY=$D/liblntune.so PYTHONPATH=$PWD/python:$D/pylib TORCH_EXTENSIONS_DIR=/tmp/te
s "norms fp32"
timeout 200 python3 bench/bench_norms.py --section bandwidth --dtypes fp32 --out /tmp/nb > $O/norms_bandwidth_fp32.log 2>&1; echo "rc=$?"
cp /tmp/nb/norms.md $O/norms_fp32.md 2>/dev/null; grep -E "\| 16384 \| (fwd|bwd)" $O/norms_fp32.md
s "layernorm grid + small_m (bf16)"
timeout 200 python3 bench/bench_layernorm.py --no-plots --section grid,small_m --dtypes bf16 --providers lntune-default,torch --out /tmp/gr > $O/grid.log 2>&1; echo "rc=$?"
cp /tmp/gr/results.md $O/grid_results.md 2>/dev/null
s "layernorm host"
timeout 150 python3 bench/bench_layernorm.py --no-plots --section host --out /tmp/ho > $O/host.log 2>&1; echo "rc=$?"
cp /tmp/ho/results.md $O/host_results.md 2>/dev/null
s done
