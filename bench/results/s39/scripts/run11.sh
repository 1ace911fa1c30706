#!/usr/bin/env bash
# Call 11 (session 39). bf16 against fp16 at 262144 columns (checklist s39
# item 2): ncu of the LayerNorm forward's default (clusters of 16, 16 warps,
# 4 stages, the one-pass statistics) in both dtypes, s39g; the details and
# the per-instruction SASS samples of each, gzipped.
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s39g
S=$B/s39g/lntune_sweep
NCU="ncu -k regex:fwd --launch-skip 3 --launch-count 1"
for dt in bf16 fp16; do
  s "ncu fwd $dt 262144"
  LNTUNE_SWEEP_CONFIG=default timeout 150 $NCU --set full -o $O/fwd256k_$dt -f $S fwd $dt 262144 > $O/ncu_run_$dt.log 2>&1; echo "ncu rc=$?"
  ncu -i $O/fwd256k_$dt.ncu-rep --print-details all > $O/ncu_fwd256k_$dt.txt 2>&1
  ncu -i $O/fwd256k_$dt.ncu-rep --page source --csv --print-source sass > $O/ncu_fwd256k_${dt}_sass.csv 2>&1
  grep -E "Duration|DRAM Throughput|Issue Slots Busy|No Eligible|Achieved Occ|Registers Per|Executed Ipc A|SM Frequency" $O/ncu_fwd256k_$dt.txt | head -12
  rm -f $O/fwd256k_$dt.ncu-rep
done
gzip -f $O/*.txt $O/*.csv
s done
