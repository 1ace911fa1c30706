#!/usr/bin/env bash
# Session 24, GPU call 13 (issues 10 and 11): the final kernels (the fp32
# backward at 256K columns copies the next row's x in two halves): the wide
# backward test, the long-row variants, and the fp32 rows of
# bench_layernorm.py's and bench_norms.py's bandwidth tables.
set -uo pipefail
D=$PWD/.devbuild/s24
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s() { echo "=== $1 ($(date +%T))"; }
s tests
LNTUNE_CACHE=off timeout 250 $D/gpu_test --gtest_brief=1 --gtest_filter='Gpu.WideBackward*' > $O/wide_bwd.log 2>&1 &
LNTUNE_CACHE=off timeout 200 $D/gpu_norms_test --gtest_filter='Norms/Variants.*N262144:Norms/Variants.*resfp32_M21_N65536:Norms/VariantSpace.*' > $O/long_variants.log 2>&1 &
wait
grep -hE "PASSED|FAILED|Failure|wide  " $O/wide_bwd.log $O/long_variants.log | head
s bandwidth
export LNTUNE_LIBRARY=$D/liblntune.so PYTHONPATH=$PWD/python:$D/pylib TORCH_EXTENSIONS_DIR=/tmp/te LNTUNE_CACHE=off
timeout 200 python3 bench/bench_layernorm.py --no-plots --section bandwidth --dtypes fp32 --providers lntune-default,torch --out /tmp/bw > $O/bandwidth.log 2>&1; echo "bandwidth rc=$?"
grep -E "bandwidth (fp16|bf16|fp32) M=" $O/bandwidth.log | cut -c12-220
timeout 200 python3 bench/bench_norms.py --section bandwidth --dtypes fp32 --out /tmp/nb > $O/norms_bandwidth.log 2>&1; echo "norms rc=$?"
cp /tmp/nb/*.md $O/ 2>/dev/null; grep -E "(65536|262144) \| (fwd|bwd)" $O/norms.md | grep -E "\| (2048|512) \|" | head -12
s done
