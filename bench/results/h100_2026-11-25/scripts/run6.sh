#!/usr/bin/env bash
# Session 24, GPU call 6 (issue 10): the fp32 backward at 256K columns (dy not
# staged). .devbuild/s24 is the committed kernel (call 4's): ncu of its DRAM
# bytes (does pass B's second read of dy miss L2?). .devbuild/s24b adds L2
# cache policies: x's copy evict_first, dy's prefetch and pass A's read
# evict_last, pass B's read evict_first. Sweeps of both, ncu of s24b, s24b's
# wide backward test.
set -uo pipefail
O=${OUT:-/tmp}
s() { echo "=== $1 ($(date +%T))"; }
C="block_size=16384 num_warps=32 rows_per_cta=2 group_size_m=7 cluster_size=16"
for B in s24 s24b; do
  D=$PWD/.devbuild/$B
  export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
  s "$B sweeps"
  for v in "X=1" "LNTUNE_SWEEP_RESIDUAL=1"; do
    f=$O/sweep_${B}_$(echo $v | tr -c 'a-zA-Z0-9\n' '_').txt
    env LNTUNE_CACHE=off LNTUNE_SWEEP_WIDE=1 $v timeout 100 $D/lntune_sweep bwd fp32 262144 > $f 2>&1
    grep -E "^bwd" $f | sed "s/^/[$B $v] /" | cut -c1-250; grep "cluster_size=16" $f | cut -c1-120
  done
  s "$B ncu"
  env LNTUNE_CACHE=off LNTUNE_SWEEP_CONFIG="$C" timeout 120 ncu --kernel-name regex:'bwd_dx.*b16384_w32_r2' --launch-skip 3 --launch-count 1 \
    --metrics smsp__issue_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,dram__bytes_write.sum,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio \
    $D/lntune_sweep bwd fp32 262144 > $O/ncu_$B.txt 2>&1
  grep -E "stalled|issue_active|duration|dram__|lts__" $O/ncu_$B.txt | sed 's/smsp__average_warps_issue_stalled_//'
done
s tests
LNTUNE_CACHE=off timeout 250 $PWD/.devbuild/s24b/gpu_test --gtest_brief=1 --gtest_filter='Gpu.WideBackward*' > $O/wide_bwd_s24b.log 2>&1
grep -hE "PASSED|FAILED|Failure|wide" $O/wide_bwd_s24b.log | head
s done
