#!/usr/bin/env bash
# Call 5 (session 58). compute-sanitizer on the bwd_dwdb configs of the new
# default for wide rows (s58c = s58b + Gpu.DwdbRowSplitsAreCorrectAndDeterministic
# over 16 warps too: 64-256 columns, 8-64 row groups): that test plain, then
# memcheck, racecheck and synccheck over it and over the backward tests that
# launch the new default (the bitwise test at 12288 columns, every 32nd wide
# backward config with the default bwd_dwdb after it), each its own process.
source bench/gpu_call.sh
use s58c
s plain
timeout 120 $D/gpu_test --gtest_filter='Gpu.DwdbRowSplits*' > $O/dwdb_plain.log 2>&1; echo "plain rc=$?"
grep -hE "^\[ (dwdb|  PASSED|  FAILED)|Failure" $O/dwdb_plain.log | head
s sanitizers
f='Gpu.DwdbRowSplits*:Gpu.BackwardIsBitwiseDeterministic*'
for tool in memcheck racecheck synccheck; do
  ( timeout 400 compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 10 $D/gpu_test \
      --gtest_filter="$f" --gtest_brief=1 > $O/san_dwdb_$tool.log 2>&1; echo "dwdb $tool rc=$?" >> $O/san_rc.txt ) &
done
for tool in memcheck racecheck; do
  ( LNTUNE_TEST_WIDE_STRIDE=32 timeout 400 compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 10 \
      $D/gpu_test --gtest_filter='Gpu.WideBackward*' --gtest_brief=1 > $O/san_wide_$tool.log 2>&1
    echo "wide $tool rc=$?" >> $O/san_rc.txt ) &
done
wait
sort $O/san_rc.txt
grep -hE "ERROR SUMMARY|RACECHECK SUMMARY|tests? ran|PASSED|FAILED|dwdb  " $O/san_*.log | sort | uniq -c | head -20
s done
