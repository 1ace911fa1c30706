#!/usr/bin/env bash
# Session 22, GPU call 10 (issue 10, the forward's gaps): (a) short rows,
# N = 64-1024 in three dtypes, the default against the space (the space's
# best at bf16 N = 256 was a 512-thread CTA of 32 rows, call 8); (b) an
# experiment: the shared-memory forward offered from N > 8192 instead of
# N > 16384 (lntune_sweep_smem8k, built with kSmemForwardMinN = 8192, not
# committed), every config at bf16 N = 16384 and 12288.
set -uo pipefail
D=$PWD/.devbuild/s22
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s() { echo "=== $1 ($(date +%T))"; }
s short
for d in bf16 fp16 fp32; do LNTUNE_CACHE=off timeout 100 $D/lntune_sweep fwd $d 64 128 256 512 1024 2>&1 | tail -5; done
s smem16k
LNTUNE_CACHE=off LNTUNE_SWEEP_EVERY=1 timeout 150 $D/lntune_sweep_smem8k fwd bf16 16384 12288 2>&1 | tee $O/sweep_smem8k.txt | grep -E "^fwd|shared" | sort -t'%' -k1 | tail -3
grep -E "^fwd" $O/sweep_smem8k.txt
s done
