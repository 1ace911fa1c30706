#!/usr/bin/env bash
# Session 22, GPU call 12: tuner_gpu_test after its GPU-build fixture was
# shared by three tests (a test-only refactor).
set -uo pipefail
D=$PWD/.devbuild/s22
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
LNTUNE_CACHE=off timeout 150 $D/tuner_gpu_test --gtest_brief=1 2>&1 | grep -hE "PASSED|FAILED|Failure|\[ (GPU|hand)" | head -10
