#!/usr/bin/env bash
# Session 24, GPU call 15 (issue 11): the fused backward's defaults at 64K
# columns now 16 warps (dz preloaded): the long-row variant tests and the
# variant-space tests, then bench_norms.py's bandwidth table (bf16, fp32).
set -uo pipefail
D=$PWD/.devbuild/s24
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s() { echo "=== $1 ($(date +%T))"; }
s tests
LNTUNE_CACHE=off timeout 200 $D/gpu_norms_test --gtest_filter='Norms/Variants.*N262144:Norms/Variants.*resfp32_M21_N65536:Norms/VariantSpace.*' > $O/long_variants.log 2>&1; echo "rc=$?"
grep -hE "PASSED|FAILED|Failure" $O/long_variants.log | head
s norms
export LNTUNE_LIBRARY=$D/liblntune.so PYTHONPATH=$PWD/python:$D/pylib TORCH_EXTENSIONS_DIR=/tmp/te LNTUNE_CACHE=off
timeout 240 python3 bench/bench_norms.py --section bandwidth --dtypes bf16,fp32 --out /tmp/nb > $O/norms_bandwidth.log 2>&1; echo "norms rc=$?"
cp /tmp/nb/*.md $O/ 2>/dev/null; grep -E "add.*(65536|262144) \| (fwd|bwd)" $O/norms.md | grep -E "\| (4096|2048|1024|512) \|"
s done
