#!/usr/bin/env bash
# Session 25, GPU call 9 (issue 11) on nvidia-h100-x1: every config of the
# fused forward's space at N = 16384 (session 24 and call 8: 92.8-93.9% of
# copy with the defaults, target 97%), and of the fused 16-bit backward at
# N = 16384 and 2048 (88-91%), against the copy.
set -uo pipefail
D=$PWD/.devbuild/s25
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
export LNTUNE_CACHE=off LNTUNE_SWEEP_EVERY=1 LNTUNE_SWEEP_RESIDUAL=1
s() { echo "=== $1 ($(date +%T))"; }
sw() { local name=$1; shift; timeout 150 env "$@" > $O/sweep_$name.txt 2>&1; grep -v "^ " $O/sweep_$name.txt | tail -3; }
s "fused forward"
sw fwd_ln_bf16 $D/lntune_sweep fwd bf16 16384
sw fwd_rms_fp32 LNTUNE_SWEEP_OP=rmsnorm $D/lntune_sweep fwd fp32 16384
sw fwd_ln_fp32 $D/lntune_sweep fwd fp32 16384
s "fused backward"
sw bwd_ln_bf16 $D/lntune_sweep bwd bf16 16384 2048
sw bwd_rms_bf16 LNTUNE_SWEEP_OP=rmsnorm $D/lntune_sweep bwd bf16 16384
s done
