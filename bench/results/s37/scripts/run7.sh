#!/usr/bin/env bash
# Call 7 (session 37). s37g = s37f with the finish test's last mistake
# mended (bf16 N = 4096 in 8 warps has more items than warps: not this
# path). The test; memcheck, racecheck and synccheck of the finish by warps
# and of the backward whose row slots step apart (the training default).
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s37g
G=$B/s37g/gpu_test
s "test"
timeout 60 $G --gtest_filter='Gpu.WarpFinish*' > $O/test_call7.log 2>&1; echo "test rc=$?"; grep -E "OK|FAILED|Failure" $O/test_call7.log | head -5
for tool in memcheck racecheck synccheck; do
  s "$tool"
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $G --gtest_filter='Gpu.WarpFinish*' > $O/${tool}_call7.log 2>&1; echo "$tool rc=$?"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|OK \]|FAILED" $O/${tool}_call7.log | head -4
done
s done
