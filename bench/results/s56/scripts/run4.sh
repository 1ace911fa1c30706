#!/usr/bin/env bash
# Call 4 (session 56). What call 3 left: synccheck over .ci/gpu_sanitize.sh's
# gpu_test filter without the N = 100000 rows (call 3's stopped at the wide
# backward's known "Missing wait" there, and the context it aborted failed
# the tests after it), and racecheck over every 32nd wide backward config
# (every 8th ran past 500 s), side by side.
source bench/gpu_call.sh
use s56a
g='Gpu.DwdbRowSplits*:Gpu.DegenerateRows*:Gpu/Sweep.*M1_*:Gpu/Sweep.*M3_N*:Gpu/Sweep.*N40001*:Gpu/Sweep.*M64_N12288*:Gpu.NanAndInf*:Gpu.ZeroRows*-Gpu/Sweep.*N100000*'
s sanitizers
( timeout 420 compute-sanitizer --tool synccheck --error-exitcode 9 --print-limit 10 $D/gpu_test --gtest_filter="$g" \
    --gtest_brief=1 > $O/san_gpu_synccheck.log 2>&1; echo "gpu synccheck rc=$?" >> $O/san_rc.txt ) &
( LNTUNE_TEST_WIDE_STRIDE=32 timeout 420 compute-sanitizer --tool racecheck --error-exitcode 9 --print-limit 10 \
    $D/gpu_test --gtest_filter='Gpu.WideBackward*' > $O/san_wide_racecheck.log 2>&1; echo "wide racecheck rc=$?" >> $O/san_rc.txt ) &
wait
sort $O/san_rc.txt
grep -hE "ERROR SUMMARY|RACECHECK SUMMARY|tests? ran|FAILED|PASSED|wide" $O/san_*.log | head -30
s done
