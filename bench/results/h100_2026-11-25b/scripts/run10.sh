#!/usr/bin/env bash
# Session 26, GPU call 10 (issues 10, 11): every wide config of the fp32 fused
# backward at N = 262144 (67.4-69.1% of copy through lntune.torch in call 5;
# target 75%), LayerNorm + add and RMSNorm + add.
set -uo pipefail
D=$PWD/.devbuild/s26
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
export LNTUNE_CACHE=off
s() { echo "=== $1 ($(date +%T))"; }
s "add + LayerNorm fp32 262144"
LNTUNE_SWEEP_WIDE=1 LNTUNE_SWEEP_RESIDUAL=1 timeout 200 $D/new/lntune_sweep bwd fp32 262144 > $O/wide_res_ln_fp32_256k.txt 2>&1; grep -v "^ " $O/wide_res_ln_fp32_256k.txt
s "add + RMSNorm fp32 262144"
LNTUNE_SWEEP_WIDE=1 LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=rmsnorm timeout 200 $D/new/lntune_sweep bwd fp32 262144 > $O/wide_res_rms_fp32_256k.txt 2>&1; grep -v "^ " $O/wide_res_rms_fp32_256k.txt
s done
