#!/usr/bin/env bash
# Call 7 (session 41; the last device minutes). s41t = main at 78fb893:
# bf16 LayerNorm rows of 237569-245760 columns back on the slabs
# in shared memory over clusters of 8. A/B s41s -> s41t (one round) at
# 235000/240000; racecheck on the forward and backward at N = 150000 (the
# slabs in shared memory over 10 CTAs).
source bench/gpu_call.sh
s "A/B"
OUT=$O bash bench/gpu_ab.sh ab7 1 $B/s41s $B/s41t -- "fwd||fwd bf16 235000 240000"
s "racecheck"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s41t
timeout 100 compute-sanitizer --tool racecheck --error-exitcode 9 --print-limit 5 $B/s41t/gpu_norms_test \
  --gtest_filter='*M5_N150000*' --gtest_brief=1 > $O/san_race.log 2>&1
echo "racecheck rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" $O/san_race.log | head -3
s done
