#!/usr/bin/env bash
# Call 10 (session 37). s37h = main after the review (the finish test's
# shapes as Cases; no kernel change since s37g): the finish tests.
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s37h
s "tests"
timeout 120 $B/s37h/gpu_test --gtest_filter='Gpu.WarpFinish*:Gpu.*Finish*:Gpu.UnalignedGrads*' > $O/tests_call10.log 2>&1; echo "gpu_test rc=$?"
grep -E "OK \]|FAILED|Failure|finish   " $O/tests_call10.log | head
s done
