#!/usr/bin/env bash
# Session 24, GPU call 1 (issue 10): the wide forward keeps LayerNorm's row in
# registers between its two sums (one read of shared memory and conversion
# fewer), and a CTA with a full slab runs without bounds checks.
# Correctness of every shared-memory and wide forward config, then the wide
# sweeps of the 16-bit LayerNorm rows (and RMSNorm, unchanged, as control).
set -uo pipefail
D=$PWD/.devbuild/s24
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s() { echo "=== $1 ($(date +%T))"; }
s smem_forward_test
LNTUNE_CACHE=off timeout 250 $D/gpu_norms_test --gtest_filter='Norms/SmemForward.*:Norms/Variants.*N65537*:Norms/Variants.*N20001*' > $O/smem_forward_test.log 2>&1; echo "rc=$?"
grep -E "smem fwd|FAILED|PASSED|Failure" $O/smem_forward_test.log | head -20
s sweeps
for v in "X=1 bf16" "X=1 fp16" "LNTUNE_SWEEP_OP=rmsnorm bf16" "LNTUNE_SWEEP_RESIDUAL=1 bf16" "X=1 fp32"; do
  set -- $v; dt=${!#}; f=$O/sweep_$(echo "$v" | tr -c 'a-zA-Z0-9' '_' | tr -s '_').txt
  env LNTUNE_CACHE=off LNTUNE_SWEEP_WIDE=1 ${v% *} timeout 70 $D/lntune_sweep fwd $dt 262144 65536 > $f 2>&1
  grep -E "^fwd" $f | sed "s/^/[$v] /" | cut -c1-250
  grep "wide" $f | sort -t'%' -k1 | awk '{print $(NF-4), $0}' | sort -n | tail -3 | cut -c1-160
done
s done
