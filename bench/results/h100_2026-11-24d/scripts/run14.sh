#!/usr/bin/env bash
# Session 22, GPU call 14: after the review (the oracle's mean/rstd check
# through count_ulps; the wide backward's dy address computed in one place):
# tuner_gpu_test and the wide-backward test.
set -uo pipefail
D=$PWD/.devbuild/s22
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
LNTUNE_CACHE=off timeout 150 $D/tuner_gpu_test --gtest_brief=1 2>&1 | grep -hE "PASSED|FAILED|Failure" | head -5
LNTUNE_CACHE=off timeout 150 $D/gpu_test --gtest_brief=1 --gtest_filter='Gpu.WideBackward*' 2>&1 | grep -hE "PASSED|FAILED|Failure|wide" | head -5
