#!/usr/bin/env bash
# Session 24, GPU call 8 (issues 10 and 11): the bandwidth-regime tables at
# this session's defaults: bench_layernorm.py (lntune's defaults and PyTorch,
# three dtypes) and bench_norms.py (RMSNorm and the fused forms, bf16 and
# fp32); then tuner_gpu_test.
set -uo pipefail
D=$PWD/.devbuild/s24
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s() { echo "=== $1 ($(date +%T))"; }
s bandwidth
export LNTUNE_LIBRARY=$D/liblntune.so PYTHONPATH=$PWD/python:$D/pylib TORCH_EXTENSIONS_DIR=/tmp/te LNTUNE_CACHE=off
timeout 240 python3 bench/bench_layernorm.py --no-plots --section bandwidth --dtypes fp16,bf16,fp32 --providers lntune-default,torch --out /tmp/bw > $O/bandwidth.log 2>&1; echo "bandwidth rc=$?"
grep -E "bandwidth (fp16|bf16|fp32) M=" $O/bandwidth.log | cut -c12-220
s norms
timeout 200 python3 bench/bench_norms.py --section bandwidth --dtypes bf16,fp32 --out /tmp/nb > $O/norms_bandwidth.log 2>&1; echo "norms rc=$?"
cp /tmp/nb/*.md $O/ 2>/dev/null; grep -E "262144|65536" $O/norms.md | head -20
s tuner
LNTUNE_CACHE=off timeout 150 $D/tuner_gpu_test --gtest_brief=1 > $O/tuner_gpu_test.log 2>&1; echo "tuner rc=$?"
grep -hE "PASSED|FAILED|Failure" $O/tuner_gpu_test.log | head
s done
