#!/usr/bin/env bash
# Session 23, GPU call 4 (issue 10): the wide forward pushing each row's pair
# as soon as it has it (four pair buffers: no CTA waits for an exchange
# between rows) and summing the pairs in a pairwise tree. Correctness of every
# shared-memory and wide forward config at 11 shapes, memcheck and synccheck
# on the fp32 rows of 256K columns, then the sweeps.
set -uo pipefail
D=$PWD/.devbuild/s23
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s() { echo "=== $1 ($(date +%T))"; }
s smem_forward_test
LNTUNE_CACHE=off timeout 200 $D/gpu_norms_test --gtest_filter='Norms/SmemForward.*' > $O/smem_forward_test.log 2>&1; echo "rc=$?"
grep -E "smem fwd|FAILED|PASSED" $O/smem_forward_test.log | head -20
s sweeps
for v in "X=1 bf16" "X=1 fp16" "X=1 fp32" "LNTUNE_SWEEP_OP=rmsnorm bf16" "LNTUNE_SWEEP_RESIDUAL=1 bf16" "LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=1 bf16" "LNTUNE_SWEEP_OP=rmsnorm fp32" "LNTUNE_SWEEP_RESIDUAL=1 fp32"; do
  set -- $v; dt=${!#}; f=$O/sweep_$(echo "$v" | tr -c 'a-zA-Z0-9' '_').txt
  env LNTUNE_CACHE=off LNTUNE_SWEEP_WIDE=1 ${v% *} timeout 60 $D/lntune_sweep fwd $dt 262144 65536 32768 > $f 2>&1
  grep -E "^fwd" $f | sed "s/^/[$v] /" | cut -c1-250
done
cat $O/sweep_X_1_bf16_.txt | grep wide | sort -k9 -n | tail -6
s sanitizers
for tool in memcheck synccheck; do
LNTUNE_CACHE=off timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $D/gpu_norms_test --gtest_filter='Norms/SmemForward.ln_fp32_N262144:Norms/SmemForward.rms_bf16_resfp32_N65536' > $O/$tool.log 2>&1; echo "$tool rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $O/$tool.log | head -3
done
s done
