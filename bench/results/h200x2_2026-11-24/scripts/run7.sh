#!/usr/bin/env bash
# Session 25, GPU call 7 (issues 10, 11) on nvidia-h100-x1: the wide-row
# backward at N = 4096 and 8192 (an experimental build, .devbuild/s25x:
# add_wide_bwd from N > 2048, and 4 warps too), against the copy.
set -uo pipefail
D=$PWD/.devbuild/s25x
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
export LNTUNE_CACHE=off LNTUNE_SWEEP_WIDE=1
s() { echo "=== $1 ($(date +%T))"; }
sw() { local name=$1; shift; timeout 120 env "$@" > $O/wide_$name.txt 2>&1; grep -v "^ " $O/wide_$name.txt | tail -3; grep "^ " $O/wide_$name.txt | sort -t'%' -k1 | awk '{print $(NF-3), $0}' | sort -n -r -k1 | head -3 | cut -c1-130; }
s "add + LayerNorm fp32"; sw res_fp32 LNTUNE_SWEEP_RESIDUAL=1 $D/lntune_sweep bwd fp32 8192 4096
s "RMSNorm bf16"; sw rms_bf16 LNTUNE_SWEEP_OP=rmsnorm $D/lntune_sweep bwd bf16 8192 4096
s "add + LayerNorm bf16"; sw res_bf16 LNTUNE_SWEEP_RESIDUAL=1 $D/lntune_sweep bwd bf16 8192 4096
s "LayerNorm bf16"; sw ln_bf16 $D/lntune_sweep bwd bf16 8192 4096
s "LayerNorm fp32"; sw ln_fp32 $D/lntune_sweep bwd fp32 8192 4096
s "add + RMSNorm bf16"; sw resrms_bf16 LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=1 $D/lntune_sweep bwd bf16 8192 4096
s done
