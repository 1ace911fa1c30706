#!/usr/bin/env bash
# Session 23, GPU call 5 (issue 10): why the wide forward's 16-bit LayerNorm
# rows (no residual) are slow (bf16 N = 65536, 8192-column slabs in clusters
# of 8, 8 warps, 3 stages: 64% of copy, where RMSNorm gives 96% and LayerNorm
# with a residual add 97%): ncu's stall reasons per issued instruction for
# the three; then memcheck and synccheck on the wide forward's test shapes.
set -uo pipefail
D=$PWD/.devbuild/s23
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s() { echo "=== $1 ($(date +%T))"; }
s ncu
C="block_size=8192 num_warps=8 rows_per_cta=3 group_size_m=15 cluster_size=8"
for v in "X=1" "LNTUNE_SWEEP_OP=rmsnorm" "LNTUNE_SWEEP_RESIDUAL=1"; do
  env LNTUNE_CACHE=off LNTUNE_SWEEP_CONFIG="$C" $v timeout 60 $D/lntune_sweep fwd bf16 65536 2>&1 | grep "^fwd" | cut -c1-120
  env LNTUNE_CACHE=off LNTUNE_SWEEP_CONFIG="$C" $v timeout 120 ncu --kernel-name regex:'b8192_w8_r3_v8_s_c8' --launch-skip 5 --launch-count 1 \
    --metrics regex:'smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio',smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed \
    $D/lntune_sweep fwd bf16 65536 > $O/ncu_$v.txt 2>&1
  echo "--- $v"; grep -E "stalled|inst_executed|issue_active|duration|dram__" $O/ncu_$v.txt | awk '$NF+0 > 0.05 || /inst_executed|duration|issue_active|dram/' | sed 's/smsp__average_warps_issue_stalled_//' | head -30
done
s sanitizers
for tool in memcheck synccheck; do
LNTUNE_CACHE=off timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $D/gpu_norms_test --gtest_filter='Norms/SmemForward.EveryConfigIsCorrect/ln_fp32_N262144:Norms/SmemForward.EveryConfigIsCorrect/rms_bf16_resfp32_N65536' > $O/$tool.log 2>&1; echo "$tool rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED|smem fwd" $O/$tool.log | head -5
done
s done
