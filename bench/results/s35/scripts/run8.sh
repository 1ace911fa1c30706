#!/usr/bin/env bash
# Call 8 (session 35, H200). f35e = f35d + the wide forward's variance of
# exactly 0 for constant rows whatever the slab's column count (call 7:
# Gpu.DegenerateRowsAreExact failed at 16-bit N = 20000, the wide forward's
# last CTA of 3616 columns; the fast-memory default made it the default
# there). The failing test and every wide/smem forward config against the
# reference; then f35d against f35e (the same instructions a row, in
# another order), two rounds.
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/f35e
s "tests"
timeout 60 $B/f35e/gpu_test --gtest_filter='Gpu.DegenerateRowsAreExact' --gtest_brief=1 > $O/gpu_test_call8.log 2>&1; echo "degenerate rc=$?"
timeout 150 $B/f35e/gpu_norms_test --gtest_filter='Norms/SmemForward.*' --gtest_brief=1 > $O/gpu_norms_test_call8.log 2>&1; echo "smem/wide forward rc=$?"
grep -hE "PASSED|FAILED|tests ran" $O/gpu_test_call8.log $O/gpu_norms_test_call8.log
unset LD_LIBRARY_PATH
s "A/B f35d -> f35e"
timeout 150 bash bench/gpu_ab.sh ab_call8 2 $B/f35d $B/f35e -- "fwd||fwd bf16 32768 131072 262144" "fwd32||fwd fp32 65536 262144"
s done
