#!/usr/bin/env bash
# Call 6 (session 41; the device budget's last minutes). s41s = s41r with
# the slabs in shared memory over gap clusters of up to 13 CTAs only (fp16
# N = 230000, 15 CTAs, lost 84.8 -> 75.9 that way in call 5) and bf16
# LayerNorm's rows of 229377-245760 columns on the wide forward over 15 CTAs
# (not 32768-column slabs over clusters of 8). A/B s41r -> s41s (one
# round), the tables (bandwidth regime and the gap
# lengths), then synccheck on the forward and backward at N = 150000.
source bench/gpu_call.sh
s "A/B"
OUT=$O bash bench/gpu_ab.sh ab6 1 $B/s41r $B/s41s -- "fwd||fwd bf16 230000 240000 200000" "fwd||fwd fp16 230000"
s "tables"
STEP_SECONDS=100 TABLES="ext bandwidth gaps" OUT=$O bash bench/gpu_tables.sh $B/s41s s41s; echo "tables rc=$?"
s "synccheck"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s41s
timeout 45 compute-sanitizer --tool synccheck --error-exitcode 9 --print-limit 5 $B/s41s/gpu_norms_test \
  --gtest_filter='*M5_N150000*' --gtest_brief=1 > $O/san_sync.log 2>&1
echo "synccheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $O/san_sync.log | head -3
s done
