#!/usr/bin/env bash
# Call 10 (session 35, H200). f35g = ac81e68, the session's last code (the
# shared-memory forward tests' common preamble): those tests, and call 7's
# failing test, once more.
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/f35g
s "tests"
timeout 200 $B/f35g/gpu_norms_test --gtest_filter='Norms/SmemForward.*:SmemForwardExactness.*' --gtest_brief=1 > $O/gpu_norms_test_call10.log 2>&1; echo "smem forward rc=$?"
timeout 60 $B/f35g/gpu_test --gtest_filter='Gpu.DegenerateRowsAreExact' --gtest_brief=1 > $O/gpu_test_call10.log 2>&1; echo "degenerate rc=$?"
grep -hE "PASSED|FAILED|exact  " $O/gpu_norms_test_call10.log $O/gpu_test_call10.log
s done
