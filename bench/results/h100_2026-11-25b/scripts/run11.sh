#!/usr/bin/env bash
# Session 26, GPU call 11 (issues 10, 11): fp32 rows with a residual of 256K
# columns now run two clusters fewer than fit (call 10): gpu_norms_test's
# 256K-column variants, then bench_norms.py's fp32 bandwidth table.
set -uo pipefail
D=$PWD/.devbuild/s26
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
export LNTUNE_CACHE=off
s() { echo "=== $1 ($(date +%T))"; }
s "gpu_norms_test (256K columns)"
timeout 120 $D/gpu_norms_test --gtest_filter='*N262144*' --gtest_brief=1 > $O/variants_256k.log 2>&1; echo "rc=$?"; grep -E "PASSED|FAILED" $O/variants_256k.log
export LNTUNE_LIBRARY=$D/liblntune.so PYTHONPATH=$PWD/python:$D/pylib TORCH_EXTENSIONS_DIR=/tmp/te
s "norms fp32"
timeout 200 python3 bench/bench_norms.py --section bandwidth --dtypes fp32 --out /tmp/nb > $O/norms_bandwidth_fp32.log 2>&1; echo "rc=$?"
cp /tmp/nb/norms.md $O/norms_fp32.md 2>/dev/null; grep -E "\| (16384|262144) \| (fwd|bwd)" $O/norms_fp32.md
s done
