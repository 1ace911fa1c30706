#!/usr/bin/env bash
# Session 23, GPU call 1 (issue 10): the wide-row forward (fwd_wide.cuh:
# column-sliced persistent clusters, rows staged 2-4 deep by bulk copies,
# weight and bias in registers, one exchange a row). Correctness first (every
# shared-memory and wide forward config of the space at 7 shapes), then
# every forward config against the copy at the large-N cells of the table.
set -uo pipefail
D=$PWD/.devbuild/s23
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s() { echo "=== $1 ($(date +%T))"; }
s smem_forward_test
LNTUNE_CACHE=off timeout 200 $D/gpu_norms_test --gtest_filter='Norms/SmemForward.*' 2>&1 | grep -E "smem fwd|FAILED|Failure|PASSED|Expected|Which|error" | head -40
s sweep_fp32
LNTUNE_CACHE=off LNTUNE_SWEEP_EVERY=1 timeout 120 $D/lntune_sweep fwd fp32 262144 65536 2>&1 > $O/sweep_fwd_fp32.txt; grep -E "^fwd|wide" $O/sweep_fwd_fp32.txt | head -60
s sweep_bf16
LNTUNE_CACHE=off LNTUNE_SWEEP_EVERY=1 timeout 150 $D/lntune_sweep fwd bf16 262144 65536 2>&1 > $O/sweep_fwd_bf16.txt; grep -E "^fwd|wide" $O/sweep_fwd_bf16.txt | head -80
s sweep_rms_res_fp32
LNTUNE_CACHE=off LNTUNE_SWEEP_WIDE=1 LNTUNE_SWEEP_OP=rmsnorm timeout 60 $D/lntune_sweep fwd fp32 262144 2>&1 | grep -E "^fwd|wide"
LNTUNE_CACHE=off LNTUNE_SWEEP_WIDE=1 LNTUNE_SWEEP_RESIDUAL=1 timeout 60 $D/lntune_sweep fwd fp32 262144 2>&1 | grep -E "^fwd|wide"
s done
