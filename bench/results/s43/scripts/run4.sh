#!/usr/bin/env bash
# Call 4 (session 43). s43d = s43c + call 3's rules: the fp32 backward's
# tile of 6144 columns at 4097-6144 (4608: 100.9 against 88.8), RMSNorm's
# 16-bit forward in 1536 at 1025-1535 and in the 8192-column tile of 8 warps
# at 6145-8191, LayerNorm's tiles in shared memory up to 22528. The cases
# at the rules and memcheck, the A/B s43c -> s43d, then the GPU suites.
source bench/gpu_call.sh
use s43d
s "cases"
F='*M8193_N22528*:*M8200_N1280*:*M8200_N7168*:*M8200_N4608*'
timeout 120 $D/gpu_norms_test --gtest_filter="$F" --gtest_brief=1 > $O/cases.log 2>&1; echo "cases rc=$?"; tail -2 $O/cases.log
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 --print-limit 5 $D/gpu_norms_test --gtest_filter='*fp32*M8200_N4608*:*M8200_N1280*' --gtest_brief=1 > $O/san_memcheck.log 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $O/san_memcheck.log | head -3
s "A/B"
OUT=$O bash bench/gpu_ab.sh ab4 2 $B/s43c $D -- "bwd||bwd fp32 4608 5120 5632 6144" "rmsb|LNTUNE_SWEEP_OP=rmsnorm|bwd fp32 4608 5120" \
  "rms|LNTUNE_SWEEP_OP=rmsnorm|fwd bf16 1152 1280 1408 6656 7168 7680" "rms|LNTUNE_SWEEP_OP=rmsnorm|fwd fp16 1280 7168" \
  "fwd||fwd bf16 21000 22528" "m16k|LNTUNE_SWEEP_M=16384|bwd fp32 4608 5120" | grep -v copy; echo "ab rc=$?"
s "suites"
OUT=$O timeout 420 bash bench/gpu_suites.sh $D s43d; echo "suites rc=$?"
s done
