#!/usr/bin/env bash
# Session 27, GPU call 6: what bounds the M = 4096 backward at bf16 N = 1024
# and 4096 (issue 10's misses): ncu on the default dx kernel and its dW/dB
# reduction (speed of light, occupancy, warp states, memory), one launch
# each after warm-up.
set -uo pipefail
D=$PWD/.devbuild/s27
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
export LNTUNE_CACHE=off
s() { echo "=== $1 ($(date +%T))"; }
for n in 1024 4096; do
  s "ncu bf16 N=$n M=4096"
  env LNTUNE_SWEEP_M=4096 LNTUNE_SWEEP_CONFIG=default timeout 240 ncu --kernel-name regex:bwd_ --launch-skip 6 --launch-count 2 \
    --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis \
    $D/lntune_sweep bwd bf16 $n > $O/ncu_bf16_$n.txt 2>&1; echo "rc=$?"
  grep -E "bwd_|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per|Grid Size|Block Size|Warp Cycles Per Issued|L2 Hit Rate|Stall" $O/ncu_bf16_$n.txt | head -60
done
s done
