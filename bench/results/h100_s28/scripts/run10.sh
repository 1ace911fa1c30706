#!/usr/bin/env bash
# Call 10: every config of the backward's space at M = 2 and 4 (decode), to
# see whether one CTA holding all the rows (rows_per_cta >= M, group 1: dW/dB
# written by the CTA itself) beats the default's grid of M CTAs.
set -uo pipefail
D=$PWD/.devbuild/s28
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
export LNTUNE_CACHE=off LNTUNE_SWEEP_EVERY=1
for m in 2 4 8; do
  LNTUNE_SWEEP_M=$m $D/lntune_sweep bwd bf16 1024 2048 4096
  LNTUNE_SWEEP_M=$m $D/lntune_sweep bwd fp32 1024 4096
  LNTUNE_SWEEP_M=$m LNTUNE_SWEEP_OP=rmsnorm $D/lntune_sweep bwd bf16 1024 4096
done > $O/every_small_m_call10.log 2>&1
grep -E "^bwd|copy" $O/every_small_m_call10.log
grep -E "group_size_m=1 " $O/every_small_m_call10.log | grep -v cluster | head -60
