#!/usr/bin/env bash
# Call 1 (session 38). s38a = main + lntune_sweep timing a config outside the
# space (LNTUNE_SWEEP_CONFIG). (1) The wide backward at two CTAs a SM (2-3
# stages, twice the clusters) against its default, bf16 N = 16384 and 65536
# at x = 512 MiB. (2) ncu of the default wide backward at 16384 (full set,
# SASS stall samples) and of the training default at N = 1024. (3) The
# harness question at 262144: constant against random inputs.
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s38a
S=$B/s38a/lntune_sweep
s "wide backward, two CTAs a SM"
for cfg in default \
  "block_size=8192 num_warps=8 rows_per_cta=2 group_size_m=132 cluster_size=2" \
  "block_size=8192 num_warps=8 rows_per_cta=3 group_size_m=132 cluster_size=2" \
  "block_size=8192 num_warps=16 rows_per_cta=2 group_size_m=132 cluster_size=2" \
  "block_size=4096 num_warps=8 rows_per_cta=3 group_size_m=66 cluster_size=4" ; do
  LNTUNE_SWEEP_CONFIG="$cfg" LNTUNE_SWEEP_EVERY=1 timeout 40 $S bwd bf16 16384 2>&1 | grep -vE "^NVIDIA|^ *$" | tee -a $O/two_ctas_call1.log | grep -E "^ |^bwd"
done
for cfg in default \
  "block_size=8192 num_warps=8 rows_per_cta=2 group_size_m=30 cluster_size=8" \
  "block_size=8192 num_warps=8 rows_per_cta=3 group_size_m=30 cluster_size=8" ; do
  LNTUNE_SWEEP_CONFIG="$cfg" LNTUNE_SWEEP_EVERY=1 timeout 40 $S bwd bf16 65536 2>&1 | tee -a $O/two_ctas_call1.log | grep -E "^ |^bwd"
done
s "ncu, wide backward 16384"
NCU="ncu -k regex:bwd_dx --launch-skip 3 --launch-count 1"
LNTUNE_SWEEP_CONFIG=default timeout 150 $NCU --set full --import-source no -o $O/wide16k -f $S bwd bf16 16384 > $O/ncu_run16k.log 2>&1; echo "ncu rc=$?"
ncu -i $O/wide16k.ncu-rep --print-details all > $O/ncu_wide16k.txt 2>&1
ncu -i $O/wide16k.ncu-rep --page source --csv --print-source sass > $O/ncu_wide16k_sass.csv 2>&1
grep -E "Duration|DRAM Throughput|Issue Slots Busy|No Eligible|Registers Per|Achieved Occ|Stall" $O/ncu_wide16k.txt | head -40
s "ncu, training default N = 1024"
LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_FINISH=separate timeout 100 $NCU --set full -o $O/train1k -f $S train bf16 1024 > $O/ncu_run1k.log 2>&1; echo "ncu rc=$?"
ncu -i $O/train1k.ncu-rep --print-details all > $O/ncu_train1k.txt 2>&1
grep -E "Duration|DRAM Throughput|Issue Slots Busy|No Eligible|Registers Per|Achieved Occ" $O/ncu_train1k.txt | head -20
s "262144 forward: constant against random inputs"
for dt in fp16 bf16; do for inp in constant random; do
  LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_INPUTS=$inp timeout 40 $S fwd $dt 262144 2>&1 | sed "s/^/$inp /" | grep -E "fwd" | tee -a $O/inputs_call1.log
done; done
cd $O && tar czf ncu_call1.tgz *.ncu-rep ncu_*.txt ncu_*.csv ncu_run*.log && rm -f *.ncu-rep ncu_*.txt ncu_*.csv ncu_run*.log
s done
