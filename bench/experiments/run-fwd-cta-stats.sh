#!/usr/bin/env bash
# A device call for fwd-cta-stats.patch (bench/experiments/README.md): the
# forward's row statistics (mean, rstd) of a CTA of several rows stored by
# warp 0 as runs of consecutive floats, behind named barrier 1, instead of
# 4 bytes a row by each row's lane 0. First the cases that failed on the
# patch's first version (session 54, call 11: rstd unwritten in the last,
# partly filled CTA) and every forward config at M = 300, with memcheck and
# synccheck (the named barrier), then the A/B against main, two rounds, on
# the shapes session 54 measured (calls 5, 9, 10).
#   OUT=$OUT bash bench/experiments/run-fwd-cta-stats.sh MAIN PATCHED
# MAIN, PATCHED: carried builds under .devbuild (scripts/stage.sh NAME).
# About four minutes of device time; the whole GPU suites on PATCHED
# (bench/gpu_suites.sh, two calls) before it is committed.
source bench/gpu_call.sh
main=${1:?usage: run-fwd-cta-stats.sh MAIN PATCHED} patched=${2:?usage: run-fwd-cta-stats.sh MAIN PATCHED}
use $patched
s tests
timeout 240 $D/gpu_test --gtest_filter='*Sweep*M1_*:*Sweep*M257_*:*InKernelDwdbFinish*' --gtest_brief=1 > $O/gpu_test.log 2>&1 & gt=$!
cases 240 '*Variants*M67_*:*Variants*M1_*:*VariantSpace*fwd' '*Variants*/layernorm_bf16_wbf16_WB_M67_N37_pad5:*VariantSpace*v0_N1000_fwd'
wait $gt; echo "gpu_test rc=$?"; grep -hE "PASSED|FAILED|Failure" $O/gpu_test.log | head
timeout 120 compute-sanitizer --tool synccheck --error-exitcode 9 --print-limit 5 $D/gpu_norms_test --gtest_filter='*Variants*/rmsnorm_bf16_wbf16_WnoB_resbf16_M67_N37_pad5:*VariantSpace*v1_N1000_fwd' --gtest_brief=1 > $O/san_synccheck.log 2>&1
echo "synccheck rc=$?"; grep -h "ERROR SUMMARY" $O/san_synccheck.log
s ab
OUT=$O bash bench/gpu_ab.sh ab 2 $B/$main $B/$patched -- \
  "ln||fwd bf16 256 512 4096" "lnh||fwd fp16 256 512" "ln32||fwd fp32 256 512" \
  "rms|LNTUNE_SWEEP_OP=rmsnorm|fwd bf16 256 512" "add|LNTUNE_SWEEP_RESIDUAL=1|fwd bf16 256 4096" \
  "m4k|LNTUNE_SWEEP_M=4096|fwd bf16 256 1024" "d1|LNTUNE_SWEEP_M=64|fwd bf16 1024"
s done
