#!/usr/bin/env bash
# Call 3 (session 48). The M = 4096 backward at 1024 columns (37.6% of copy,
# 50 wanted) on main (s48b): every config of bf16's dx + dW/dB, then
# Nsight Compute (full set, SASS source counters) on the default dx kernel
# of bf16 and fp32 (call 1 refuted the latency hypothesis: a deeper stage
# ring made it slower).
source bench/gpu_call.sh
use s48b
s sweep
LNTUNE_SWEEP_M=4096 sw m4k 70 bwd bf16 1024
s ncu
NCU="ncu -k regex:bwd_dx --launch-skip 3 --launch-count 1"
for dt in bf16 fp32; do
  LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_FINISH=separate timeout 120 $NCU --set full --import-source no -o $O/train1k_$dt -f $S train $dt 1024 > $O/ncu_run_$dt.log 2>&1; echo "ncu $dt rc=$?"
  ncu -i $O/train1k_$dt.ncu-rep --print-details all > $O/ncu_train1k_$dt.txt 2>&1
  ncu -i $O/train1k_$dt.ncu-rep --page source --csv --print-source sass > $O/ncu_train1k_${dt}_sass.csv 2>&1
  gzip -f $O/ncu_train1k_$dt.txt $O/ncu_train1k_${dt}_sass.csv; rm -f $O/train1k_$dt.ncu-rep
  zcat $O/ncu_train1k_$dt.txt.gz | grep -E "^  lntune_bwd_dx|Duration|DRAM Throughput|Executed Ipc Active|Issued Warp Per|Active Warps Per|Eligible Warps|Warp Cycles Per Issued|Stall (Barrier|Wait|Short|Long|Not Sel|No Inst|IMC|Dispatch|Math)|Instructions Executed  |Registers Per" | head -30
done
s done
