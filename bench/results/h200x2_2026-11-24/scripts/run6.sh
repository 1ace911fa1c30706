#!/usr/bin/env bash
# Session 25, GPU call 6 (issue 11) on nvidia-h100-x1: every config of the
# backward's space at the weak fused/RMSNorm shapes of N <= 16384 (session 24,
# norms_call15.md: add + LayerNorm fp32 N = 8192 75.4%, RMSNorm bf16 N = 8192
# 83.5%), against the copy in the same process.
set -uo pipefail
D=$PWD/.devbuild/s25
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
export LNTUNE_CACHE=off LNTUNE_SWEEP_EVERY=1
s() { echo "=== $1 ($(date +%T))"; }
s "add + LayerNorm fp32 bwd"; LNTUNE_SWEEP_RESIDUAL=1 timeout 150 $D/lntune_sweep bwd fp32 8192 4096 > $O/sweep_res_fp32.txt 2>&1; grep -v "^ " $O/sweep_res_fp32.txt | tail -4
s "RMSNorm bf16 bwd"; LNTUNE_SWEEP_OP=rmsnorm timeout 100 $D/lntune_sweep bwd bf16 8192 > $O/sweep_rms_bf16.txt 2>&1; grep -v "^ " $O/sweep_rms_bf16.txt | tail -3
s "add + LayerNorm bf16 bwd"; LNTUNE_SWEEP_RESIDUAL=1 timeout 100 $D/lntune_sweep bwd bf16 8192 > $O/sweep_res_bf16.txt 2>&1; grep -v "^ " $O/sweep_res_bf16.txt | tail -3
s done
