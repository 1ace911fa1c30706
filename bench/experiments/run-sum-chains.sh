#!/usr/bin/env bash
# A device call for sum-chains.patch (bench/experiments/README.md): the
# forward's and the single-tile backward's per-thread sums in two
# independent chains. Every Variants case (the patch touches every
# single-tile forward and backward) and the determinism tests, memcheck on
# a sample, then an A/B against main, two rounds, where a row's latency is
# the time (decode, M = 4096) and where bytes are (x = 512 MiB, which must
# stay level).
#   OUT=$OUT bash bench/experiments/run-sum-chains.sh MAIN PATCHED
# MAIN, PATCHED: carried builds under .devbuild (scripts/stage.sh NAME).
# About five minutes of device time.
source bench/gpu_call.sh
main=${1:?usage: run-sum-chains.sh MAIN PATCHED} patched=${2:?usage: run-sum-chains.sh MAIN PATCHED}
use $patched
s tests
timeout 200 $D/gpu_norms_test --gtest_filter='*Variants*' --gtest_brief=1 > $O/variants.log 2>&1 & p1=$!
timeout 200 $D/gpu_test --gtest_filter='*Determin*:*Finish*' --gtest_brief=1 > $O/gpu_test.log 2>&1 & p2=$!
timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 --print-limit 5 $D/gpu_norms_test --gtest_filter='*Variants*M5_N12000*:*Variants*M4001_N1024_pad8*:*Variants*M3001_N3072*' --gtest_brief=1 > $O/san_memcheck.log 2>&1 & p3=$!
wait $p1; echo "variants rc=$?"; wait $p2; echo "gpu_test rc=$?"; wait $p3; echo "memcheck rc=$?"
grep -hE "PASSED|FAILED|Failure|ERROR SUMMARY" $O/variants.log $O/gpu_test.log $O/san_memcheck.log | head -20
s ab
R=LNTUNE_SWEEP_RESIDUAL
OUT=$O bash bench/gpu_ab.sh ab 2 $B/$main $B/$patched -- \
  "d1|LNTUNE_SWEEP_M=1|fwd bf16 4096" "d1b|LNTUNE_SWEEP_M=1|fwd bf16 8192" "d1c|LNTUNE_SWEEP_M=1|fwd bf16 16384" \
  "d64|LNTUNE_SWEEP_M=64|fwd bf16 16384" "d1f|LNTUNE_SWEEP_M=1|fwd fp32 16384" "d1r|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=1|fwd bf16 4096" \
  "f4k|LNTUNE_SWEEP_M=4096|fwd bf16 1024" "f4kb|LNTUNE_SWEEP_M=4096|fwd bf16 2048" "f4kc|LNTUNE_SWEEP_M=4096|fwd bf16 4096" "f4kf|LNTUNE_SWEEP_M=4096|fwd fp32 1024" \
  "fbw||fwd bf16 1024" "fbwb||fwd bf16 16384" "fbwf||fwd fp32 4096" \
  "b4k|LNTUNE_SWEEP_M=4096|bwd bf16 1024" "b4kb|LNTUNE_SWEEP_M=4096|bwd bf16 2048" "b4kc|LNTUNE_SWEEP_M=4096|bwd bf16 4096" \
  "b4kf|LNTUNE_SWEEP_M=4096|bwd fp32 1024" "b4ka|$R=1 LNTUNE_SWEEP_M=4096|bwd bf16 1024" \
  "bbw||bwd bf16 1024" "bbwb||bwd bf16 4096"
s done
