#!/usr/bin/env bash
# Session 23, GPU call 3 (issue 10): the wide forward's LayerNorm combination
# without divisions (independent terms), the 16-bit LayerNorm rows that were
# slow in call 2 (59% at 256K against RMSNorm's 97%), and ncu's warp states
# for the LayerNorm and RMSNorm bf16 wide kernels side by side.
set -uo pipefail
D=$PWD/.devbuild/s23
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s() { echo "=== $1 ($(date +%T))"; }
s sweep_ln16
for dt in bf16 fp16; do
LNTUNE_CACHE=off LNTUNE_SWEEP_WIDE=1 timeout 100 $D/lntune_sweep fwd $dt 262144 65536 > $O/sweep_wide_$dt.txt 2>&1; grep -E "^fwd" $O/sweep_wide_$dt.txt; grep wide $O/sweep_wide_$dt.txt | sort -k9 -n | tail -4
done
s ncu
K='regex:fwd_bf16_wbf16_wb?_b16384_w16_r3_v8_s_c16'
for op in layernorm rmsnorm; do
LNTUNE_CACHE=off LNTUNE_SWEEP_WIDE=1 LNTUNE_SWEEP_OP=$op timeout 150 ncu --kernel-name "$K" --launch-skip 3 --launch-count 1 \
  --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section LaunchStats --section Occupancy \
  $D/lntune_sweep fwd bf16 262144 > $O/ncu_$op.txt 2>&1; echo "ncu $op rc=$?"
grep -E "Duration|Memory Throughput|DRAM Throughput|Stall|Warp Cycles Per Issued|Issued Warp|No Eligible|Active Warps|Registers|Cluster" $O/ncu_$op.txt | head -40
done
s done
