#!/usr/bin/env bash
# Session 25, GPU call 11 (issues 10, 11) on nvidia-h100-x1: the final
# defaults (f6e47a0): bench_layernorm.py's fp32 bandwidth column (the fp32
# backward at N = 8192 now the wide kernel) and bench_norms.py's fp32 table
# (add + LayerNorm fp32 fwd N = 16384 back on its register default).
set -uo pipefail
D=$PWD/.devbuild/s25
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
export LNTUNE_LIBRARY=$D/liblntune.so PYTHONPATH=$PWD/python:$D/pylib TORCH_EXTENSIONS_DIR=/tmp/te LNTUNE_CACHE=off
s() { echo "=== $1 ($(date +%T))"; }
s layernorm
timeout 200 python3 bench/bench_layernorm.py --no-plots --section bandwidth --dtypes fp32 --providers lntune-default,torch --out /tmp/bw > $O/bandwidth.log 2>&1; echo "bandwidth rc=$?"
cp /tmp/bw/*.md $O/ 2>/dev/null; grep -E "^\|" $O/bandwidth.log | head -20
s norms
timeout 200 python3 bench/bench_norms.py --section bandwidth --dtypes fp32 --out /tmp/nb > $O/norms_bandwidth.log 2>&1; echo "norms rc=$?"
cp /tmp/nb/*.md $O/ 2>/dev/null; grep -E "\| (8192|16384) \| (fwd|bwd)" $O/norms.md
s done
