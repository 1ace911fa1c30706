#!/usr/bin/env bash
# Session 24, GPU call 3 (issue 10): the wide backward with the lookahead
# back where dy is not staged (fp32 rows of 256K columns), none at 2 stages
# otherwise, parts pushed at once (4 buffers). Every wide backward config at
# N = 16K-256K, bf16 and fp32, against the defaults (now 3 stages where a
# 16-bit weight slab leaves room). Then the wide backward test.
set -uo pipefail
D=$PWD/.devbuild/s24
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s() { echo "=== $1 ($(date +%T))"; }
s sweeps
for dt in bf16 fp32; do
  f=$O/sweep_bwd_$dt.txt
  LNTUNE_CACHE=off LNTUNE_SWEEP_WIDE=1 timeout 200 $D/lntune_sweep bwd $dt 16384 32768 65536 131072 262144 > $f 2>&1
  grep -E "^bwd" $f | cut -c1-250
done
f=$O/sweep_bwd_rms_res_bf16.txt
LNTUNE_CACHE=off LNTUNE_SWEEP_WIDE=1 LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=1 timeout 100 $D/lntune_sweep bwd bf16 32768 262144 > $f 2>&1
grep -E "^bwd" $f | cut -c1-250
s tests
LNTUNE_CACHE=off timeout 250 $D/gpu_test --gtest_brief=1 --gtest_filter='Gpu.WideBackward*' > $O/wide_bwd.log 2>&1
grep -hE "PASSED|FAILED|Failure|wide" $O/wide_bwd.log | head
s done
