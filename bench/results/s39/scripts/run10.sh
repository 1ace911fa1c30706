#!/usr/bin/env bash
# Call 10 (session 39). s39g = main after the review (the two exactness
# tests share one loop over the shared-memory and wide forward configs):
# those tests again.
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s39g
timeout 200 $B/s39g/gpu_norms_test --gtest_filter='SmemForwardExactness.*' > $O/exactness_call10.log 2>&1; echo "rc=$?"
grep -E "exact|offset|FAILED|Failure|PASSED" $O/exactness_call10.log
