#!/usr/bin/env bash
# Session 23, GPU call 2 (issue 10): the wide-row forward with the lookahead
# (3+ stages: row i + 1's sums before row i's exchange). Correctness of every
# shared-memory and wide forward config at 7 shapes (log to $OUT), then the
# 16-bit rows of 256K columns, and the fused and RMSNorm variants' wide configs.
set -uo pipefail
D=$PWD/.devbuild/s23
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s() { echo "=== $1 ($(date +%T))"; }
s smem_forward_test
LNTUNE_CACHE=off timeout 200 $D/gpu_norms_test --gtest_filter='Norms/SmemForward.*' > $O/smem_forward_test.log 2>&1; echo "rc=$?"
grep -E "smem fwd|FAILED|PASSED" $O/smem_forward_test.log | head -20
s sweep_bf16
LNTUNE_CACHE=off LNTUNE_SWEEP_WIDE=1 timeout 100 $D/lntune_sweep fwd bf16 262144 65536 > $O/sweep_wide_bf16.txt 2>&1; grep -E "^fwd" $O/sweep_wide_bf16.txt; grep wide $O/sweep_wide_bf16.txt | sort -k9 -n | tail -8
s sweep_fp32
LNTUNE_CACHE=off LNTUNE_SWEEP_WIDE=1 timeout 100 $D/lntune_sweep fwd fp32 262144 65536 > $O/sweep_wide_fp32.txt 2>&1; grep -E "^fwd" $O/sweep_wide_fp32.txt; grep wide $O/sweep_wide_fp32.txt | sort -k9 -n | tail -8
s variants
for v in "LNTUNE_SWEEP_OP=rmsnorm bf16" "LNTUNE_SWEEP_RESIDUAL=1 bf16" "LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=1 bf16" "LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=1 fp32" "LNTUNE_SWEEP_RESIDUAL=1 fp32" "X=1 fp16"; do
  set -- $v; dt=${!#}
  env LNTUNE_CACHE=off LNTUNE_SWEEP_WIDE=1 ${v% *} timeout 60 $D/lntune_sweep fwd $dt 262144 65536 2>&1 | grep -E "^fwd" | sed "s/^/[$v] /"
done
s done
