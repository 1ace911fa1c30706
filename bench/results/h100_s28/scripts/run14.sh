#!/usr/bin/env bash
# Call 14: every config of the backward's space at M = 1, 8, 64, 128, 256
# (bf16 N = 1024, 2048, 4096; fp32 N = 1024): where do fewer elements per
# thread (wider CTAs per row) stop paying at small M (call 13: M = 16-32)?
set -uo pipefail
D=$PWD/.devbuild/s28
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
export LNTUNE_CACHE=off LNTUNE_SWEEP_EVERY=1
for m in 1 8 64 128 256; do
  LNTUNE_SWEEP_M=$m $D/lntune_sweep bwd bf16 1024 2048 4096
  LNTUNE_SWEEP_M=$m $D/lntune_sweep bwd fp32 1024
done > $O/every_small_m_call14.log 2>&1
grep -E "^bwd" $O/every_small_m_call14.log | cut -c1-200
