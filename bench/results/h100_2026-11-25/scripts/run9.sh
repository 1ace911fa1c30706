#!/usr/bin/env bash
# Session 24, GPU call 9 (issue 11): the fp32 fused backward (add + norm) at
# 64K and 256K columns: every wide config against the default (call 8:
# 77.5-77.7% of copy at 64K, 67.6-69.3% at 256K).
set -uo pipefail
D=$PWD/.devbuild/s24
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
for v in "X=1" "LNTUNE_SWEEP_OP=rmsnorm"; do
  f=$O/sweep_bwd_res_fp32_$(echo $v | tr -c 'a-zA-Z0-9\n' '_').txt
  env LNTUNE_CACHE=off LNTUNE_SWEEP_WIDE=1 LNTUNE_SWEEP_RESIDUAL=1 $v timeout 150 $D/lntune_sweep bwd fp32 65536 262144 > $f 2>&1
  grep -E "^bwd" $f | sed "s/^/[$v] /" | cut -c1-250
  grep "wide" $f | awk '{print $(NF-3), $0}' | sort -rn | head -5 | cut -c1-130
done
