#!/usr/bin/env bash
# Call 4: s31e = s31d with the staged-dy instances' pass B restored (their
# PTX identical to main's; s31d cost bf16 add + LayerNorm N = 262144 1.5
# points). synccheck on gpu_test's wide backward (every 4th config, as
# .ci/gpu_sanitize.sh) failed on s31d in call 3: on main (s31) and s31e,
# logs kept. Then, alone on the GPU: every wide config of the fused fp32
# backward at N = 262144 (LayerNorm, RMSNorm) on s31e, and s31 against s31e.
set -uo pipefail
B=$PWD/.devbuild
O=${OUT:-/tmp}
s() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
s "synccheck, wide backward"
for d in s31 s31e; do
  LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/$d LNTUNE_CACHE=off LNTUNE_TEST_WIDE_STRIDE=4 timeout 120 compute-sanitizer --tool synccheck --error-exitcode 9 --print-limit 5 \
    $B/$d/gpu_test --gtest_filter='Gpu.WideBackward*' > /tmp/sync_$d.log 2>&1
  echo "$d exit $?"
  head -c 6000 /tmp/sync_$d.log > $O/synccheck_wide_${d}_call4.log
  grep -E "SUMMARY|PASSED|FAILED|Failure|error" /tmp/sync_$d.log | head -8
done
s "every wide config, fused fp32 N = 262144"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64 LNTUNE_CACHE=off
for op in layernorm rmsnorm; do
  LNTUNE_SWEEP_EVERY=1 LNTUNE_SWEEP_WIDE=1 LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=$op timeout 150 $B/s31e/lntune_sweep bwd fp32 262144 > $O/wide_res_${op}_call4.log 2>&1
  echo "-- $op: best four"; grep "of copy" $O/wide_res_${op}_call4.log | awk '{print $(NF-2), $0}' | sort -rn | head -4; grep "^bwd" $O/wide_res_${op}_call4.log | cut -c1-200
done
s "A/B"
bash bench/gpu_ab.sh ab_call4 2 $B/s31 $B/s31e -- \
  "addln|LNTUNE_SWEEP_RESIDUAL=1|bwd fp32 262144" \
  "addrms|LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=rmsnorm|bwd fp32 262144" \
  "addln16|LNTUNE_SWEEP_RESIDUAL=1|bwd bf16 262144"
s done
