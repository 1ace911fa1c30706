#!/usr/bin/env bash
# Call 1 (session 36, H200). s36a = main + cuOccupancyMaxActiveClusters
# printed per cluster config ("[K co-resident]"). Every config at the long
# rows (the co-resident cluster count of each), then ncu of the wide
# backward in clusters of 4 (33 clusters: 45% of copy in s35, why?) beside
# clusters of 8 (the default, 74%).
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s36a
S=$B/s36a/lntune_sweep
s "every config"
LNTUNE_SWEEP_EVERY=1 timeout 100 $S fwd bf16 65536 262144 > $O/every_fwd16_call1.log 2>&1; echo "fwd16 rc=$?"
LNTUNE_SWEEP_EVERY=1 timeout 120 $S bwd bf16 65536 262144 > $O/every_bwd16_call1.log 2>&1; echo "bwd16 rc=$?"
grep -h "co-resident" $O/every_*_call1.log | sed 's/.*cluster_size=\([0-9]*\).*\(\[.*\]\).*/c\1 \2/' | sort | uniq -c
grep -hE "default" $O/every_*_call1.log
s "ncu wide backward c4 and c8"
for cfg in "block_size=16384 num_warps=16 rows_per_cta=2 group_size_m=33 cluster_size=4" \
           "block_size=8192 num_warps=8 rows_per_cta=4 group_size_m=15 cluster_size=8"; do
  LNTUNE_SWEEP_CONFIG="$cfg" timeout 60 ncu --kernel-name regex:lntune_bwd_dx --launch-skip 3 --launch-count 1 \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis --section SchedulerStats \
    $S bwd bf16 65536 > $O/ncu_c$(echo $cfg | sed 's/.*cluster_size=//')_call1.log 2>&1; echo "ncu rc=$?"
done
s done
