#!/usr/bin/env bash
# Session 23, GPU call 6 (issue 10): the wide forward's slab sums with kVec
# partial sums a thread (call 5's ncu: 2 warps a scheduler, issue-latency
# bound: 33% issue efficiency, "wait" and "short scoreboard" stalls; serial
# chains of 32 adds a thread per pass). Correctness, then the sweeps.
set -uo pipefail
D=$PWD/.devbuild/s23
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s() { echo "=== $1 ($(date +%T))"; }
s smem_forward_test
LNTUNE_CACHE=off timeout 200 $D/gpu_norms_test --gtest_filter='Norms/SmemForward.*' > $O/smem_forward_test.log 2>&1; echo "rc=$?"
grep -E "smem fwd|FAILED|PASSED" $O/smem_forward_test.log | head -20
s sweeps
for v in "X=1 bf16" "X=1 fp16" "X=1 fp32" "LNTUNE_SWEEP_OP=rmsnorm bf16" "LNTUNE_SWEEP_RESIDUAL=1 bf16"; do
  set -- $v; dt=${!#}; f=$O/sweep_$(echo "$v" | tr -c 'a-zA-Z0-9' '_' | tr -s '_').txt
  env LNTUNE_CACHE=off LNTUNE_SWEEP_WIDE=1 ${v% *} timeout 70 $D/lntune_sweep fwd $dt 262144 65536 32768 > $f 2>&1
  grep -E "^fwd" $f | sed "s/^/[$v] /" | cut -c1-250
done
s done
