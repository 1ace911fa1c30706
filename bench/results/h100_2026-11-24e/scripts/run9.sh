#!/usr/bin/env bash
# Session 23, GPU call 9 (issue 10): the one-row-per-CTA shared-memory
# forward (fwd_smem.cuh) crossing the cluster once a row for LayerNorm (a
# pair per CTA, combined as the wide forward does), not twice: correctness of
# every shared-memory and wide forward config, then the 16-bit LayerNorm
# rows of 64K and 256K columns (its defaults) and fp32 (every config).
set -uo pipefail
D=$PWD/.devbuild/s23
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s() { echo "=== $1 ($(date +%T))"; }
s smem_forward_test
LNTUNE_CACHE=off timeout 200 $D/gpu_norms_test --gtest_filter='Norms/SmemForward.*:Norms/Variants.*N65537*:Norms/Variants.*N20001*' > $O/smem_forward_test.log 2>&1; echo "rc=$?"
grep -E "smem fwd|FAILED|PASSED" $O/smem_forward_test.log | head -20
s sweeps
for dt in bf16 fp16; do
  LNTUNE_CACHE=off LNTUNE_SWEEP_EVERY=1 timeout 100 $D/lntune_sweep fwd $dt 262144 65536 > $O/sweep_$dt.txt 2>&1
  grep -E "^fwd" $O/sweep_$dt.txt | cut -c1-250; grep "slab in shared" $O/sweep_$dt.txt | sort -k9 -n | tail -3
done
LNTUNE_CACHE=off timeout 100 $D/lntune_sweep fwd fp32 262144 65536 40000 2>&1 | grep "^fwd" | cut -c1-250
s done
