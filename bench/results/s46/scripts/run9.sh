#!/usr/bin/env bash
# Call 9 (session 46). s46h (HEAD 58fd33c, the session's last code): the GPU
# suites (gpu_norms_test in 4 shards, gpu_test, tuner_gpu_test) and
# compute-sanitizer memcheck on the session's new cases.
source bench/gpu_call.sh
use s46h
s "suites"
OUT=$O bash bench/gpu_suites.sh $D s46h; echo "suites rc=$?"
grep -hE "tests ran|PASSED|FAILED" $O/*_s46h.log | head -20
s "memcheck"
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 --print-limit 5 $D/gpu_norms_test --gtest_brief=1 \
  --gtest_filter='*WideBackwardOddWarps*:*Variants*res*N32768*:*Variants*res*N262144*:*DresidualInPlace*' > $O/san_memcheck.log 2>&1; echo "memcheck rc=$?"
grep -hE "ERROR SUMMARY|PASSED|FAILED" $O/san_memcheck.log
s done
