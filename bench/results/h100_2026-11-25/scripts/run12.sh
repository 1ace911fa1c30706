#!/usr/bin/env bash
# Session 24, GPU call 12 (issues 10 and 11): the fp32 backward at 256K
# columns (dy not staged, 2 stages of x): row i + 2's x copied in one part
# per access of pass B, each once every thread has read it (call 11: two
# halves).
# The wide backward test, the long-row variants, then the sweeps.
set -uo pipefail
D=$PWD/.devbuild/s24
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s() { echo "=== $1 ($(date +%T))"; }
s tests
LNTUNE_CACHE=off timeout 250 $D/gpu_test --gtest_brief=1 --gtest_filter='Gpu.WideBackward*' > $O/wide_bwd.log 2>&1 &
LNTUNE_CACHE=off timeout 200 $D/gpu_norms_test --gtest_filter='Norms/Variants.*N262144:Norms/Variants.*resfp32_M21_N65536:Norms/VariantSpace.*' > $O/long_variants.log 2>&1 &
wait
grep -hE "PASSED|FAILED|Failure|wide  " $O/wide_bwd.log $O/long_variants.log | head
s sweeps
for v in "X=1" "LNTUNE_SWEEP_OP=rmsnorm" "LNTUNE_SWEEP_RESIDUAL=1"; do
  f=$O/sweep_bwd_fp32_$(echo $v | tr -c 'a-zA-Z0-9\n' '_').txt
  env LNTUNE_CACHE=off LNTUNE_SWEEP_WIDE=1 $v timeout 100 $D/lntune_sweep bwd fp32 262144 > $f 2>&1
  grep -E "^bwd" $f | sed "s/^/[$v] /" | cut -c1-250; grep "cluster_size=16" $f | cut -c1-120
done
s done
