#!/usr/bin/env bash
# Call 11 (session 42; the last device minutes). s42h = s42g + the wide
# backward's equal slabs just above 8192 columns (16-bit 8193-12288: two of
# 6144; fp32 8193-11264: three of a multiple of 512 in 4 warps), timed
# outside the space in call 6 (N = 9216: bf16 80.2 against 69.4, fp32 94.6
# against 74.2). gpu_norms_test's cases there (and memcheck), then the A/B
# s42g -> s42h, 2 rounds, also at M = 4096 (train) and M = 8.
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s42h
F='*M37_N9216*:*M29_N12288*:*M37_N10240*:*M23_N9216*'
s "cases"
timeout 60 $B/s42h/gpu_norms_test --gtest_filter="$F" --gtest_brief=1 > $O/cases.log 2>&1; echo "cases rc=$?"; tail -2 $O/cases.log
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 --print-limit 5 $B/s42h/gpu_norms_test --gtest_filter="$F" --gtest_brief=1 > $O/san_memcheck.log 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $O/san_memcheck.log | head -3
s "A/B"
OUT=$O bash bench/gpu_ab.sh ab11 2 $B/s42g $B/s42h -- "bwd||bwd bf16 9216 10240 11264 12288" "bwd||bwd fp16 10240" \
  "bwd||bwd fp32 9216 10240 11264" "rms|LNTUNE_SWEEP_OP=rmsnorm|bwd bf16 9216" "rms|LNTUNE_SWEEP_OP=rmsnorm|bwd fp32 9216" \
  "m4096|LNTUNE_SWEEP_M=4096|train bf16 9216 12288" "m4096|LNTUNE_SWEEP_M=4096|train fp32 9216 10240" \
  "m8|LNTUNE_SWEEP_M=8|bwd bf16 9216" "m8|LNTUNE_SWEEP_M=8|bwd fp32 9216"
s done
