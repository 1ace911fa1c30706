#!/usr/bin/env bash
# Session 24, GPU call 5 (issues 10 and 11): the fp32 backward at 256K
# columns (dy not staged): each row's x and dy asked into L2 a row before
# its copy is issued. Sweeps of LayerNorm, RMSNorm and the fused form, then
# ncu of the default (stall reasons, DRAM throughput); the wide backward test.
set -uo pipefail
D=$PWD/.devbuild/s24
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s() { echo "=== $1 ($(date +%T))"; }
s sweeps
for v in "X=1" "LNTUNE_SWEEP_OP=rmsnorm" "LNTUNE_SWEEP_RESIDUAL=1"; do
  f=$O/sweep_bwd_fp32_$(echo $v | tr -c 'a-zA-Z0-9\n' '_').txt
  env LNTUNE_CACHE=off LNTUNE_SWEEP_WIDE=1 $v timeout 100 $D/lntune_sweep bwd fp32 262144 131072 > $f 2>&1
  grep -E "^bwd" $f | sed "s/^/[$v] /" | cut -c1-250; grep "262144" -B8 $f | grep "cluster_size=16" | cut -c1-120
done
s ncu
C="block_size=16384 num_warps=32 rows_per_cta=2 group_size_m=7 cluster_size=16"
env LNTUNE_CACHE=off LNTUNE_SWEEP_CONFIG="$C" timeout 120 ncu --kernel-name regex:'bwd_dx.*b16384_w32_r2' --launch-skip 3 --launch-count 1 \
  --metrics regex:'smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio',smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum \
  $D/lntune_sweep bwd fp32 262144 > $O/ncu_bwd_fp32.txt 2>&1
grep -E "stalled|inst_executed|issue_active|duration|dram__|lts__" $O/ncu_bwd_fp32.txt | awk '$NF+0 > 0.05 || /inst_executed|duration|issue_active|dram|lts/' | sed 's/smsp__average_warps_issue_stalled_//' | head -30
s tests
LNTUNE_CACHE=off timeout 250 $D/gpu_test --gtest_brief=1 --gtest_filter='Gpu.WideBackward*' > $O/wide_bwd.log 2>&1
grep -hE "PASSED|FAILED|Failure|wide" $O/wide_bwd.log | head
s done
