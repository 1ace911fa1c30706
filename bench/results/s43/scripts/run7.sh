#!/usr/bin/env bash
# Call 7 (session 43; the last device minutes). s43e = main's kernels. For
# bench/GPU_CHECKLIST.md item 1: Nsight Compute on the 16-bit backward's
# default (bwd_dx) at bf16 1152 columns (81% of copy) against 1024 (99%),
# x = 512 MiB: issue slots, warp stalls, memory sectors.
source bench/gpu_call.sh
use s43e
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for n in 1024 1152; do
  s "ncu bwd bf16 $n"
  LNTUNE_SWEEP_CONFIG=default timeout 150 $NCU --kernel-name regex:bwd_dx --launch-skip 3 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section InstructionStats --section SchedulerStats \
    --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis \
    $D/lntune_sweep bwd bf16 $n > $O/ncu_bwd_bf16_$n.txt 2>&1; echo "ncu $n rc=$?"
  grep -E "Duration|Memory Throughput|DRAM Throughput|Issue Slots Busy|Issued Ipc|Executed Ipc|Achieved Occupancy|Registers Per|Warp Cycles Per Issued|No Eligible|Block Size|Grid Size|Executed Instructions " $O/ncu_bwd_bf16_$n.txt | head -20
done
s done
