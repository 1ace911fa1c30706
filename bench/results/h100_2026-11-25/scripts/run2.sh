#!/usr/bin/env bash
# Session 24, GPU call 2 (issues 10 and 11):
#  * the wide backward: with 2 stages, each row's pass A just before its
#    exchange (no lookahead: it waited for row i + 1's copies as soon as they
#    were issued), and its parts pushed at once (four buffers, as the wide
#    forward);
#  * the wide forward with an fp32 residual at 256K columns: x's 2 stages and
#    one slot for the residual (kResidualSlot), against 3 stages of x with the
#    residual read through L2 (kResidualGlobal).
# Correctness of every wide backward config and every shared-memory/wide
# forward config, then the sweeps.
set -uo pipefail
D=$PWD/.devbuild/s24
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s() { echo "=== $1 ($(date +%T))"; }
s tests
LNTUNE_CACHE=off timeout 250 $D/gpu_test --gtest_brief=1 --gtest_filter='Gpu.WideBackward*' > $O/wide_bwd.log 2>&1 &
LNTUNE_CACHE=off timeout 250 $D/gpu_norms_test --gtest_filter='Norms/SmemForward.*' > $O/smem_forward_test.log 2>&1 &
wait
grep -hE "PASSED|FAILED|Failure|wide|smem fwd.*262144" $O/wide_bwd.log $O/smem_forward_test.log | head -24
s sweeps
sw() {  # label, env..., then lntune_sweep args
  local label=$1; shift; local f=$O/sweep_$label.txt
  env LNTUNE_CACHE=off LNTUNE_SWEEP_WIDE=1 "$@" > $f 2>&1
  grep -E "^(fwd|bwd)" $f | sed "s/^/[$label] /" | cut -c1-260
}
sw bwd_fp32 timeout 90 $D/lntune_sweep bwd fp32 262144 65536
sw bwd_bf16 timeout 90 $D/lntune_sweep bwd bf16 262144 65536
sw bwd_res_fp32 LNTUNE_SWEEP_RESIDUAL=1 timeout 90 $D/lntune_sweep bwd fp32 262144
sw bwd_rms_fp32 LNTUNE_SWEEP_OP=rmsnorm timeout 90 $D/lntune_sweep bwd fp32 262144
sw fwd_res_fp32 LNTUNE_SWEEP_RESIDUAL=1 timeout 60 $D/lntune_sweep fwd fp32 262144
sw fwd_rms_res_fp32 LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=rmsnorm timeout 60 $D/lntune_sweep fwd fp32 262144
grep -h "16384 num_warps" $O/sweep_fwd_res_fp32.txt | head -8
s done
