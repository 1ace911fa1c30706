#!/usr/bin/env bash
# Call 2 (session 43). s43b = s43a + the 16-bit forward's single tiles of
# other than a power of two as defaults over more than 8192 rows (from
# call 1's sweeps) and the tile cases' test fixed (every forward config,
# registers too, at least one tile of other than a power of two; call 1's
# test ran the shared-memory configs alone and found none at 2560). The
# tests and memcheck, then the A/B s43a -> s43b, 2 rounds; every config
# at M = 4096 (the rule's threshold is M > 8192).
source bench/gpu_call.sh
use s43b
s "cases"
F1='Norms/SmemForward.EveryConfigIsCorrect/ln_*:Norms/SmemForward.EveryConfigIsCorrect/rms_bf16_wfp32_N2560:Norms/VariantSpace.EveryConfigIsCorrect/*12288_fwd*'
F2='*M8200_N5120*:*M8200_N9216*:*M8193_N18432*:*M8200_N2304*:*M8200_N10240*:*M8200_N4608*:*M8200_N2560*'
timeout 200 $D/gpu_norms_test --gtest_filter="$F1" > $O/cases1.log 2>&1 & p1=$!
timeout 200 $D/gpu_norms_test --gtest_filter="$F2" > $O/cases2.log 2>&1 & p2=$!
timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 --print-limit 5 $D/gpu_norms_test --gtest_filter='Norms/SmemForward.EveryConfigIsCorrect/ln_bf16_N5120_pad8:Norms/SmemForward.EveryConfigIsCorrect/rms_bf16_wfp32_N2560:Norms/SmemForward.EveryConfigIsCorrect/ln_bf16_N9216:*M8200_N5120*:*M8200_N2304*' --gtest_brief=1 > $O/san_memcheck.log 2>&1 & p3=$!
wait $p1; echo "cases1 rc=$?"; wait $p2; echo "cases2 rc=$?"; wait $p3; echo "memcheck rc=$?"
grep -hE "configs checked|FAILED|PASSED|ERROR SUMMARY" $O/cases*.log $O/san_memcheck.log | head -40
s "A/B"
N="2304 2560 4608 5120 6144 7168 9216 10240 11264 12288 18432 20480"
OUT=$O bash bench/gpu_ab.sh ab2 2 $B/s43a $D -- "fwd||fwd bf16 $N" "fwd||fwd fp16 2304 5120 9216 12288" \
  "rms|LNTUNE_SWEEP_OP=rmsnorm|fwd bf16 2304 2560 2816 4608 5120 5632 6144 9216 10240 12288" \
  "rms|LNTUNE_SWEEP_OP=rmsnorm|fwd fp16 2304 5120 9216" \
  "m16k|LNTUNE_SWEEP_M=16384|fwd bf16 2304 4608 5120 9216 12288" \
  "rms16k|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=16384|fwd bf16 2304 5120 9216"; echo "ab rc=$?"
s "M = 4096, every config"
LNTUNE_SWEEP_M=4096 sw m4k 60 fwd bf16 2304 5120 9216 12288
LNTUNE_SWEEP_M=4096 LNTUNE_SWEEP_OP=rmsnorm sw rms4k 40 fwd bf16 2304 5120 9216
s done
