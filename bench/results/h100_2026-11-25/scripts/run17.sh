#!/usr/bin/env bash
# Session 24, GPU call 17 (review): the wide forward's static shared memory
# declared once for both instantiations (a cluster mixing full and partial
# slabs: the new case ln_bf16_N245768). Every shared-memory/wide forward
# config, the long-row variants, the wide backward test; the 16-bit
# LayerNorm forward sweep at 262144 (unchanged speed expected).
set -uo pipefail
D=$PWD/.devbuild/s24
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s() { echo "=== $1 ($(date +%T))"; }
s tests
LNTUNE_CACHE=off timeout 250 $D/gpu_norms_test --gtest_filter='Norms/SmemForward.*:Norms/Variants.*N262144:Norms/Variants.*resfp32_M21_N65536' > $O/smem_forward_test.log 2>&1 &
LNTUNE_CACHE=off timeout 250 $D/gpu_test --gtest_brief=1 --gtest_filter='Gpu.WideBackward*' > $O/wide_bwd.log 2>&1 &
wait
grep -hE "PASSED|FAILED|Failure|wide  |N245768" $O/smem_forward_test.log $O/wide_bwd.log | head -12
s sweep
LNTUNE_CACHE=off timeout 60 $D/lntune_sweep fwd bf16 262144 245768 2>&1 | grep -E "^fwd" | cut -c1-250
s done
