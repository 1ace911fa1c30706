#!/usr/bin/env bash
# Call 3 (session 33, H200). s33c = main after call 1 (df1aa88).
# 1. synccheck's "Missing wait" (always rank 9 of a cluster of 16, bf16
#    N = 65536, b4096 w8 r3, call 2: 8 clusters fail at 1, 4 and 5 rows a
#    cluster, 5 clusters pass): 7 and 6 clusters, where a cluster of 16 need
#    not share an SM between two of its CTAs. Nothing timed beside them.
# 2. A cold `lntune tune` of the default grid on this GPU (the defaults were
#    fit on the H100), into $OUT/h200_s33.db (budget 260 s; resumable).
# 3. The binding's extension, then the bandwidth table with that cache:
#    tuned, default heuristic and PyTorch in one process.
set -uo pipefail
B=$PWD/.devbuild
C=$B/s33c
O=${OUT:-/tmp}
s() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
s "synccheck pieces"
T=/tmp/p3; mkdir -p $T
san() {  # label M G
  env LD_LIBRARY_PATH=/usr/local/cuda/lib64:$C LNTUNE_CACHE=off LNTUNE_SWEEP_M=$2 \
    "LNTUNE_SWEEP_CONFIG=block_size=4096 num_warps=8 rows_per_cta=3 group_size_m=$3 cluster_size=16" \
    timeout 120 compute-sanitizer --tool synccheck --error-exitcode 9 --print-limit 2 $C/lntune_sweep bwd bf16 65536 > $T/san_$1.log 2>&1
  echo "$1 exit $?: $(grep -E 'SUMMARY' $T/san_$1.log | tr '\n' ' ') ran: $(grep -c "group_size_m=$3 cluster_size=16" $T/san_$1.log) $(grep -m1 -E 'block \(' $T/san_$1.log)"
}
(san m7g7 7 7) > $T/a.txt & (san m14g7 14 7) > $T/b.txt & (san m6g6 6 6) > $T/c.txt & (san m16g8 16 8) > $T/d.txt &
wait; cat $T/[abcd].txt | tee $O/synccheck_clusters_call3.log
for f in $T/san_*.log; do echo "--- $f"; head -c 2000 $f; done > $O/synccheck_pieces_call3.log
s "cold tune of the default grid"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$C
rm -f $O/h200_s33.db
t0=$(date +%s); timeout 290 $C/lntune tune --db $O/h200_s33.db --budget 260 > $O/tune_call3.log 2> $O/tune_call3.err
echo "tune rc=$? in $(( $(date +%s) - t0 )) s"; tail -n 40 $O/tune_call3.log
s "tables with the tuned cache"
STEP_SECONDS=120 TABLES="ext bandwidth" CACHE=$O/h200_s33.db bash bench/gpu_tables.sh $C call3
grep -E "N=(1024|16384|65536|262144)" $O/bandwidth_call3.log | cut -c1-200 | head -40
s done
