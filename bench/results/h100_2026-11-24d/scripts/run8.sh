#!/usr/bin/env bash
# Session 22, GPU call 8: tuner_gpu_test after the ToolModule refactor (the
# check, fill and reference kernels loaded by one class), a warm tune of a
# few keys through the CLI; then issue 10's forward gaps: the space against
# the default at bf16/fp16 N = 256 and 16384, fp32 N = 65536.
set -uo pipefail
D=$PWD/.devbuild/s22
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s() { echo "=== $1 ($(date +%T))"; }
s tuner_gpu_test
LNTUNE_CACHE=off timeout 150 $D/tuner_gpu_test --gtest_brief=1 > $O/tuner_gpu_test.log 2>&1; echo "tuner_gpu_test rc=$?"
grep -hE "PASSED|FAILED|Failure|\[ (GPU|hand)" $O/tuner_gpu_test.log | head -10
s sweeps
LNTUNE_CACHE=off timeout 120 $D/lntune_sweep fwd bf16 256 16384 2>&1 | tail -2
LNTUNE_CACHE=off timeout 100 $D/lntune_sweep fwd fp16 256 16384 2>&1 | tail -2
LNTUNE_CACHE=off timeout 100 $D/lntune_sweep fwd fp32 65536 2>&1 | tail -1
s done
