#!/usr/bin/env bash
# Call 11 (session 55). The launcher's and tuner's GPU suites on s55e (the
# session's last library: the kernels of s55b, which passed every suite in
# calls 2-3, and the new defaults), with gpu_norms_test's whole-call cases
# (NaN/Inf, M*N > 2^31 with a residual, single-element rows), in one call.
source bench/gpu_call.sh
use s55e
s suites
timeout 230 $D/gpu_test --gtest_brief=1 > $O/gpu_test.log 2>&1 & a=$!
timeout 230 $D/tuner_gpu_test --gtest_brief=1 > $O/tuner_gpu_test.log 2>&1 & b=$!
timeout 230 $D/gpu_norms_test --gtest_filter='GpuNorms.*:Norms.Wide*' --gtest_brief=1 > $O/norms.log 2>&1 & c=$!
wait $a; echo "gpu_test rc=$?"; wait $b; echo "tuner_gpu_test rc=$?"; wait $c; echo "norms rc=$?"
grep -hE "^\[  PASSED|FAILED|Failure" $O/gpu_test.log $O/tuner_gpu_test.log $O/norms.log | head -20
s done
