#!/usr/bin/env bash
# Session 26, GPU call 6 (issues 10, 11): the new fused variants of
# gpu_norms_test (16-bit rows over more than 8192 rows: the new defaults and
# early dz); compute-sanitizer memcheck on the fused variants, racecheck and
# synccheck on the wide kernels' variants; every wide config of the fp32
# fused backward at N = 16384 (90.5-91.3% of copy in call 5); tuner_gpu_test.
set -uo pipefail
D=$PWD/.devbuild/s26
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
export LNTUNE_CACHE=off
s() { echo "=== $1 ($(date +%T))"; }
NEW='*M8193_N1000*:*M8193_N8000*:*M8193_N4096_pad8*:*M9001_N200*'
s "new variants"
timeout 120 $D/gpu_norms_test --gtest_filter="$NEW" --gtest_brief=1 > $O/variants_new.log 2>&1; echo "rc=$?"; grep -E "PASSED|FAILED" $O/variants_new.log
s "memcheck (fused variants)"
timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 $D/gpu_norms_test --gtest_filter="$NEW:*res*M67_N37*:*res*M33_N4099*" --gtest_brief=1 > $O/memcheck.log 2>&1; echo "rc=$?"; grep -E "PASSED|FAILED|ERROR SUMMARY" $O/memcheck.log | tail -3
WIDE='*M21_N65536*:*M9_N262144*:*M8_N262144*:*M33_N16384*'
for tool in racecheck synccheck; do
  s "$tool (wide variants)"
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $D/gpu_norms_test --gtest_filter="$WIDE" --gtest_brief=1 > $O/$tool.log 2>&1; echo "rc=$?"; grep -E "PASSED|FAILED|ERROR SUMMARY|hazard" $O/$tool.log | tail -3
done
s "fp32 fused bwd N=16384, wide configs"
LNTUNE_SWEEP_WIDE=1 LNTUNE_SWEEP_RESIDUAL=1 timeout 120 $D/new/lntune_sweep bwd fp32 16384 > $O/wide_res_ln_fp32.txt 2>&1; grep -v "^ " $O/wide_res_ln_fp32.txt
LNTUNE_SWEEP_WIDE=1 LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=rmsnorm timeout 120 $D/new/lntune_sweep bwd fp32 16384 > $O/wide_res_rms_fp32.txt 2>&1; grep -v "^ " $O/wide_res_rms_fp32.txt
s tuner_gpu_test
timeout 100 $D/tuner_gpu_test --gtest_brief=1 > $O/tuner_gpu_test.log 2>&1; echo "rc=$?"; grep -E "PASSED|FAILED" $O/tuner_gpu_test.log | head -3
s done
