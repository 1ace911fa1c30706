#!/usr/bin/env bash
# Session 23, GPU call 12 (issue 11): the wide forward with the residual not
# staged (fp32 rows and residual of 256K columns: x staged, the residual read
# from global memory after an L2 prefetch, z written over x). Correctness of
# every shared-memory and wide forward config (13 shapes, two new), memcheck
# on the new shapes, then the fused forms at N = 262144.
set -uo pipefail
D=$PWD/.devbuild/s23
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s() { echo "=== $1 ($(date +%T))"; }
s smem_forward_test
LNTUNE_CACHE=off timeout 200 $D/gpu_norms_test --gtest_filter='Norms/SmemForward.*' > $O/smem_forward_test.log 2>&1; echo "rc=$?"
grep -E "smem fwd|FAILED|PASSED" $O/smem_forward_test.log | head -20
s memcheck
LNTUNE_CACHE=off timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 $D/gpu_norms_test --gtest_filter='Norms/SmemForward.EveryConfigIsCorrect/ln_fp32_resfp32_N262144:Norms/SmemForward.EveryConfigIsCorrect/ln_bf16_zc_N20488_pad8' > $O/memcheck.log 2>&1; echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $O/memcheck.log | head -3
s sweeps
for v in "LNTUNE_SWEEP_RESIDUAL=1 fp32" "LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=1 fp32"; do
  env LNTUNE_CACHE=off LNTUNE_SWEEP_WIDE=1 ${v% *} timeout 60 $D/lntune_sweep fwd fp32 262144 2>&1 | grep -E "^fwd|wide" | sed "s/^/[$v] /" | cut -c1-250
done
s done
