#!/usr/bin/env bash
# Call 1 (session 58). The bwd_dwdb default for rows of more than two
# 32-column blocks a SM (s58b: 64-256 columns a CTA, row groups for two or
# three partial rows; main s58a: 32 columns in 4 warps) against main, each
# build's lntune_sweep default pair (bwd_dx + bwd_dwdb) in its own process
# against its copy, two rounds (bench/gpu_ab.sh); then, on s58b, the new
# Norms.FusedBackwardOfNineToFifteenWarpsStagesRows plain and under
# memcheck, racecheck and synccheck.
source bench/gpu_call.sh
s ab
OUT=$O bash bench/gpu_ab.sh dwdb_ab 2 $B/s58a $B/s58b -- \
  "m4096|LNTUNE_SWEEP_M=4096|bwd bf16 9216 12288 16384 32768 65536" \
  "m4096f|LNTUNE_SWEEP_M=4096|bwd fp32 12288 16384" \
  "big||bwd bf16 16384 65536 262144" \
  "bigf||bwd fp32 65536 262144" 2>&1 | tail -40
use s58b
f=Norms.FusedBackwardOfNineToFifteenWarpsStagesRows
s plain
timeout 200 $D/gpu_norms_test --gtest_filter=$f > $O/stage_rows.log 2>&1; echo "plain rc=$?"
grep -hE "^\[ (configs|  PASSED|  FAILED)|Failure|SKIPPED" $O/stage_rows.log | head
s sanitizers
for tool in memcheck racecheck synccheck; do
  ( timeout 300 compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 10 $D/gpu_norms_test \
      --gtest_filter=$f --gtest_brief=1 > $O/san_$tool.log 2>&1; echo "$tool rc=$?" >> $O/san_rc.txt ) &
done
wait
sort $O/san_rc.txt
grep -hE "ERROR SUMMARY|RACECHECK SUMMARY|configs  \]|PASSED|FAILED" $O/san_*.log | head -20
s done
