#!/usr/bin/env bash
# Session 23, GPU call 8 (issues 10 and 11): the bandwidth-regime tables at
# the wide forward's defaults: bench_layernorm.py (lntune's defaults and
# PyTorch, three dtypes) and bench_norms.py (RMSNorm and the fused forms,
# bf16 and fp32).
set -uo pipefail
D=$PWD/.devbuild/s23
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s() { echo "=== $1 ($(date +%T))"; }
s bandwidth
export LNTUNE_LIBRARY=$D/liblntune.so PYTHONPATH=$PWD/python TORCH_EXTENSIONS_DIR=/tmp/te LNTUNE_CACHE=off
timeout 200 python3 bench/bench_layernorm.py --no-plots --section bandwidth --dtypes fp16,bf16,fp32 --providers lntune-default,torch --out /tmp/bw > $O/bandwidth.log 2>&1; echo "bandwidth rc=$?"
grep -E "bandwidth (fp16|bf16|fp32) M=" $O/bandwidth.log | cut -c12-220
s norms
timeout 200 python3 bench/bench_norms.py --section bandwidth --dtypes bf16,fp32 --out /tmp/nb > $O/norms_bandwidth.log 2>&1; echo "norms rc=$?"
cp /tmp/nb/*.md $O/ 2>/dev/null; ls $O
s done
