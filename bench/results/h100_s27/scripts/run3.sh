#!/usr/bin/env bash
# Session 27, GPU call 3: the backward (dx + dW/dB) over the whole space at
# small and middling M (1 ... 2048), bf16 N = 1024 ... 8192 and fp32 1024,
# 4096: where the default's "at least 8 rows per CTA" serialises rows
# (M = 32: 19.6 us default against 10.8 us for the best, call 2). CUBINs
# kept in a cache file so that each M's process compiles nothing new.
set -uo pipefail
D=$PWD/.devbuild/s27
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
export LNTUNE_CACHE=/tmp/sweep.db
s() { echo "=== $1 ($(date +%T))"; }
for m in 1 8 32 64 128 256 512 1024 2048; do
  s "M = $m"
  env LNTUNE_SWEEP_M=$m LNTUNE_SWEEP_EVERY=1 timeout 200 $D/lntune_sweep bwd bf16 1024 2048 4096 8192 > $O/m${m}_bf16.log 2>&1
  env LNTUNE_SWEEP_M=$m LNTUNE_SWEEP_EVERY=1 timeout 200 $D/lntune_sweep bwd fp32 1024 4096 > $O/m${m}_fp32.log 2>&1
  grep -hE "^bwd" $O/m${m}_bf16.log $O/m${m}_fp32.log | cut -c1-200
done
s done
