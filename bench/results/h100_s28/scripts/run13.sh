#!/usr/bin/env bash
# Call 13: every config of the backward's space at M = 16 and 32, N = 1024
# and 2048 (dW/dB in the dx kernel where the launcher takes it): is there a
# faster default where lntune trails PyTorch (M = 32, N = 1024)?
set -uo pipefail
D=$PWD/.devbuild/s28
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
export LNTUNE_CACHE=off LNTUNE_SWEEP_EVERY=1
for m in 16 32; do
  LNTUNE_SWEEP_M=$m $D/lntune_sweep bwd bf16 1024 2048
  LNTUNE_SWEEP_M=$m $D/lntune_sweep bwd fp32 1024
done > $O/every_m32_call13.log 2>&1
grep -E "^bwd" $O/every_m32_call13.log | cut -c1-200
