#!/usr/bin/env bash
# Call 1 (session 32). s32b = main at the start (2387664); s32 = s32b + session
# 31's uncommitted change to the wide backward (the fused backward's dz
# prefetched into L2 by the copy engine beside dy, evict_last, and read in
# pass B with evict_first, where dy is not staged: fp32 rows of 256K
# columns). Session 31 measured it (calls 3, 4) but its logs were lost.
# Alone on the GPU: s32b against s32 (fp32 N = 262144, x = 512 MiB: add +
# LayerNorm, add + RMSNorm, LayerNorm as a control; bf16 add + LayerNorm,
# whose dy is staged, as a control); then every config of the space for the
# 16-bit backward at N = 8192 (x = 512 MiB; the default was at 90% of copy,
# target 92). Then, side by side (nothing timed): synccheck on gpu_test's
# wide backward cases for both builds (session 31's call 3 saw synccheck
# fail on a variant of this change), and gpu_test's finishing-entry case
# (c01de66, never run on a GPU).
set -uo pipefail
B=$PWD/.devbuild
O=${OUT:-/tmp}
s() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
s "A/B"
timeout 200 bash bench/gpu_ab.sh ab_call1 2 $B/s32b $B/s32 -- \
  "addln|LNTUNE_SWEEP_RESIDUAL=1|bwd fp32 262144" \
  "addrms|LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=rmsnorm|bwd fp32 262144" \
  "ln||bwd fp32 262144" \
  "addln16|LNTUNE_SWEEP_RESIDUAL=1|bwd bf16 262144"
s "every config, 16-bit backward, N = 8192, x = 512 MiB"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s32 LNTUNE_CACHE=off
for dt in bf16 fp16; do
  LNTUNE_SWEEP_EVERY=1 timeout 110 $B/s32/lntune_sweep bwd $dt 8192 > $O/every_bwd_${dt}_8192_call1.log 2>&1
  echo "rc=$? $dt: best five"; grep "of copy" $O/every_bwd_${dt}_8192_call1.log | awk '{print $(NF-2), $0}' | sort -rn | head -5 | cut -c1-220
  grep "^bwd" $O/every_bwd_${dt}_8192_call1.log | cut -c1-220
done
s "synccheck (both builds) and the finishing entry (s32), side by side"
for d in s32b s32; do
  (LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/$d LNTUNE_TEST_WIDE_STRIDE=4 timeout 200 compute-sanitizer --tool synccheck --error-exitcode 9 --print-limit 5 \
    $B/$d/gpu_test --gtest_filter='Gpu.WideBackward*' > /tmp/sync_$d.log 2>&1; echo "synccheck $d exit $?" > /tmp/sync_$d.rc) &
done
timeout 200 $B/s32/gpu_test --gtest_filter='*FinishingEntry*:*Unaligned*' --gtest_brief=1 > $O/finishing_call1.log 2>&1; echo "finishing rc=$?"; tail -3 $O/finishing_call1.log
wait
for d in s32b s32; do cat /tmp/sync_$d.rc; head -c 8000 /tmp/sync_$d.log > $O/synccheck_wide_${d}_call1.log; grep -E "SUMMARY|PASSED|FAILED|Barrier|error" /tmp/sync_$d.log | head -6; done
s done
