#!/usr/bin/env bash
# Call 8 (session 42). s42f = main with every rule of calls 1-7 and
# gpu_norms_test's cases at them. Those cases, compute-sanitizer on the
# wide ones (memcheck, racecheck) and on two register ones (memcheck), then
# the GPU suites.
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s42f
T=$B/s42f/gpu_norms_test
F='*M8200_N*:*M9_N30720*:*M7_N150000*:*M5_N170000*:*M5_N150000*'
s "new cases"
timeout 120 $T --gtest_filter="$F" --gtest_brief=1 > $O/cases.log 2>&1; echo "cases rc=$?"; tail -3 $O/cases.log
s "sanitizers"
W='*M9_N30720*:*M7_N150000*:*M5_N170000*'
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 5 $T --gtest_filter="$W" --gtest_brief=1 > $O/san_$tool.log 2>&1
  echo "$tool rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" $O/san_$tool.log | head -3
done
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 --print-limit 5 $T --gtest_filter='*M8200_N1152*:*M8200_N4608*:*M8200_N640*' --gtest_brief=1 > $O/san_memcheck_reg.log 2>&1
echo "memcheck (register) rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $O/san_memcheck_reg.log | head -3
s "suites"
OUT=$O bash bench/gpu_suites.sh $B/s42f s42f; echo "suites rc=$?"
s done
