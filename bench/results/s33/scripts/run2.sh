#!/usr/bin/env bash
# Call 2 (session 33, H200). s33c = main after call 1 (df1aa88, the clamped
# dy committed); s33s = that + three staged rows in the register backward
# where they fit static shared memory (bwd_stages). Phase 1, alone on the
# GPU: s33c against s33s (two rounds, alternated, each against its own
# process's copy): M = 4096 (dx + dW/dB, the target's 1024-2048 columns)
# and x = 512 MiB. Phase 2, side by side (nothing timed): s33s's suites
# (gpu_test without the wide configs, gpu_norms_test, in shards) and
# synccheck on pieces of the wide case that reports "Missing wait" (s33c:
# the same config over 1, 4, 5 rows a cluster and one cluster of 5).
set -uo pipefail
B=$PWD/.devbuild
S=$B/s33s
O=${OUT:-/tmp}
s() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
s "A/B three stages"
timeout 240 bash bench/gpu_ab.sh ab_call2 2 $B/s33c $S -- \
  "m4096|LNTUNE_SWEEP_M=4096|bwd bf16 1024 2048" "m4096|LNTUNE_SWEEP_M=4096|bwd fp16 1024" \
  "m4096|LNTUNE_SWEEP_M=4096|bwd fp32 512 1024" "rms4096|LNTUNE_SWEEP_M=4096 LNTUNE_SWEEP_OP=rmsnorm|bwd bf16 1024 2048" \
  "big||bwd bf16 256 1024 2048" "big||bwd fp32 256 1024"
s "suites (s33s) and synccheck pieces (s33c), side by side"
export LNTUNE_CACHE=off
T=/tmp/p2; mkdir -p $T
for i in 0 1 2; do
  (GTEST_TOTAL_SHARDS=3 GTEST_SHARD_INDEX=$i LD_LIBRARY_PATH=/usr/local/cuda/lib64:$S timeout 300 $S/gpu_test --gtest_filter='-Gpu.WideBackward*' --gtest_brief=1 > $T/gpu_test_$i.log 2>&1; echo "gpu_test $i rc=$?") &
  (GTEST_TOTAL_SHARDS=3 GTEST_SHARD_INDEX=$i LD_LIBRARY_PATH=/usr/local/cuda/lib64:$S timeout 300 $S/gpu_norms_test --gtest_brief=1 > $T/norms_$i.log 2>&1; echo "norms $i rc=$?") &
done
san() {  # dir label tool env... -- sweep args
  local d=$1 lab=$2 tool=$3; shift 3
  local envs=(); while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  env LD_LIBRARY_PATH=/usr/local/cuda/lib64:$d "${envs[@]}" timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 2 $d/lntune_sweep "$@" > $T/san_$lab.log 2>&1
  echo "$lab exit $?: $(grep -E 'SUMMARY' $T/san_$lab.log | tr '\n' ' ') ran: $(grep -c 'block_size=4096 num_warps=8 rows_per_cta=3 group_size_m=[0-9]* cluster_size=16' $T/san_$lab.log)"
}
C=$B/s33c
cfg() { echo "LNTUNE_SWEEP_CONFIG=block_size=4096 num_warps=8 rows_per_cta=3 group_size_m=$1 cluster_size=16"; }
(san $C m8g8 synccheck "$(cfg 8)" LNTUNE_SWEEP_M=8 -- bwd bf16 65536
 san $C m32g8 synccheck "$(cfg 8)" LNTUNE_SWEEP_M=32 -- bwd bf16 65536) > $T/syncA.txt 2>&1 &
(san $C m40g8 synccheck "$(cfg 8)" LNTUNE_SWEEP_M=40 -- bwd bf16 65536
 san $C m5g5 synccheck "$(cfg 5)" LNTUNE_SWEEP_M=5 -- bwd bf16 65536) > $T/syncB.txt 2>&1 &
(san $S staged_sync synccheck LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=300 -- bwd bf16 1024
 san $S staged_race racecheck LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=300 -- bwd bf16 2048
 san $S staged_mem memcheck LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=301 -- bwd bf16 1024) > $T/sanS.txt 2>&1 &
wait
cat $T/gpu_test_*.log > $O/gpu_test_call2.log; cat $T/norms_*.log > $O/gpu_norms_test_call2.log
grep -hE "PASSED|FAILED|tests ran" $O/gpu_test_call2.log $O/gpu_norms_test_call2.log
cat $T/syncA.txt $T/syncB.txt $T/sanS.txt | tee $O/sanitizer_call2.log
for f in $T/san_*.log; do echo "--- $f"; head -c 2500 $f; done > $O/sanitizer_pieces_call2.log
s done
