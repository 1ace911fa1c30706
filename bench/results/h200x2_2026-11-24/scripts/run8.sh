#!/usr/bin/env bash
# Session 25, GPU call 8 (issues 10, 11) on nvidia-h100-x1: the wide backward
# from N = 4096 (fp32 rows of 4097-8192 columns, and 4096 with a residual, by
# default over more than 8192 rows); RMSNorm bf16 N = 8192's default a whole
# row in 16 warps. Every wide config at the new shapes against the reference
# (twice, bitwise equal), the variants at the new defaults, then
# bench_norms.py's bandwidth table (bf16, fp32).
set -uo pipefail
D=$PWD/.devbuild/s25
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s() { echo "=== $1 ($(date +%T))"; }
s tests
LNTUNE_CACHE=off timeout 240 $D/gpu_test --gtest_filter='Gpu.Wide*' > $O/gpu_test_wide.log 2>&1; echo "gpu_test wide rc=$?"
grep -hE "PASSED|FAILED|Failure|\[ wide" $O/gpu_test_wide.log | head
LNTUNE_CACHE=off timeout 240 $D/gpu_norms_test --gtest_filter='Norms/Variants.*M8193*:Norms/Variants.*N262144:Norms/VariantSpace.*' > $O/variants.log 2>&1; echo "gpu_norms_test rc=$?"
grep -hE "PASSED|FAILED|Failure" $O/variants.log | head
s norms
export LNTUNE_LIBRARY=$D/liblntune.so PYTHONPATH=$PWD/python:$D/pylib TORCH_EXTENSIONS_DIR=/tmp/te LNTUNE_CACHE=off
timeout 260 python3 bench/bench_norms.py --section bandwidth --dtypes bf16,fp32 --out /tmp/nb > $O/norms_bandwidth.log 2>&1; echo "norms rc=$?"
cp /tmp/nb/*.md $O/ 2>/dev/null; grep -E "\| (4096|8192) \| (fwd|bwd)" $O/norms.md
s done
