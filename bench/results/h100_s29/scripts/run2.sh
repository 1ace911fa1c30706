#!/usr/bin/env bash
# Call 2: ncu on the M = 4096 backward (dx kernel, then bwd_dwdb) at bf16
# N = 1024 and 4096, default configs and two others at N = 1024: where the
# time of the pair goes. Caches not flushed by ncu (the sweep flushes L2 with
# its own kernel before each repetition), clocks not locked.
set -uo pipefail
D=$PWD/.devbuild/s29
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
export LNTUNE_CACHE=off LNTUNE_SWEEP_M=4096
prof() {  # name, dtype, N, config
  LNTUNE_SWEEP_CONFIG="$4" timeout 200 ncu --cache-control none --clock-control none -k regex:"bwd_" --launch-skip 40 --launch-count 2 \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis \
    $D/lntune_sweep bwd $2 $3 > $O/ncu_$1_call2.log 2>&1
  echo "== $1: $(grep -E '^bwd' $O/ncu_$1_call2.log | cut -c1-90)"
  grep -E "^  bwd_|Duration|DRAM Throughput|L2 Cache Throughput|Achieved Occupancy|Registers Per|Grid Size|Block Size|Waves Per SM|Theoretical Occ" $O/ncu_$1_call2.log
}
prof bf16_1024_default bf16 1024 default
prof bf16_1024_w8r1 bf16 1024 "block_size=1024 num_warps=8 rows_per_cta=1 group_size_m=1056"
prof bf16_1024_w4r2g132 bf16 1024 "block_size=1024 num_warps=4 rows_per_cta=2 group_size_m=132"
prof bf16_4096_default bf16 4096 default
prof fp32_1024_default fp32 1024 default
