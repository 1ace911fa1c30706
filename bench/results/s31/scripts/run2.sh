#!/usr/bin/env bash
# Call 2: main (s31). ncu on the fp32 N = 262144 backward (x = 512 MiB) of
# LayerNorm and add + LayerNorm, defaults: what bounds the wide kernel. Then
# a cold `lntune tune` of the default grid with the staged backward, and
# bench_layernorm.py's M = 4096 grid with the tuned cache (lntune), the
# default heuristic (lntune-default) and PyTorch, bf16 and fp32.
set -uo pipefail
D=$PWD/.devbuild/s31
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
s "ncu"
prof() {  # name, env...
  local name=$1; shift
  env LNTUNE_CACHE=off LNTUNE_SWEEP_CONFIG=default "$@" timeout 150 ncu --cache-control all --clock-control none -k regex:"bwd_dx" --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis --section SchedulerStats \
    --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,smsp__cycles_active.avg \
    $D/lntune_sweep bwd fp32 262144 > $O/ncu_$name.log 2>&1
  echo "== $name"; grep -E "^  lntune|Duration|DRAM Throughput|L2 Cache Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Grid Size|Block Size|Cluster|dram__bytes|lts__t_bytes|Issued Warp|No Eligible|Stall|Warp Cycles Per Issued" $O/ncu_$name.log | head -40
}
prof ln_fp32_262144_call2
prof addln_fp32_262144_call2 LNTUNE_SWEEP_RESIDUAL=1
s "tune (default grid, cold)"
/usr/bin/time -f "wall %e s" timeout 240 $D/lntune tune --db /tmp/t.db > $O/tune_call2.log 2> $O/tune_call2.err; echo "rc=$?"; tail -2 $O/tune_call2.err
grep -E "bwd_dx (bf16|fp32) N=[0-9]+ M-bucket 4" $O/tune_call2.log | head -20
export LNTUNE_CACHE=/tmp/t.db LNTUNE_LIBRARY=$D/liblntune.so PYTHONPATH=$PWD/python TORCH_EXTENSIONS_DIR=/tmp/te
s "grid (tuned, default, PyTorch)"
timeout 200 python3 bench/bench_layernorm.py --no-plots --section grid,tuned_vs_default --dtypes bf16,fp32 --providers lntune,lntune-default,torch --out /tmp/gt > $O/grid_tuned_call2.log 2>&1; echo "rc=$?"
cp /tmp/gt/results.md $O/grid_tuned_call2.md 2>/dev/null
gzip -f $O/tune_call2.log
s done
