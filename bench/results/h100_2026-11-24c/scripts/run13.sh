#!/usr/bin/env bash
# Session 21, GPU call 13 (issue 10): the fp32 backward's new default for many
# rows of 256-2048 columns (512 threads, one 16-byte access per thread and
# row, two CTAs per SM): the sweep (default against the best of the space),
# then gpu_test.
set -uo pipefail
D=$PWD/.devbuild/s21
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
LNTUNE_CACHE=off timeout 150 $D/lntune_sweep bwd fp32 256 512 1024 1536 2048 2>&1 | tail -6
LNTUNE_CACHE=off timeout 100 $D/lntune_sweep train fp32 1024 2>&1 | tail -4
LNTUNE_CACHE=off timeout 300 $D/gpu_test --gtest_brief=1 2>&1 | tail -4; echo "gpu_test rc=${PIPESTATUS[0]}"
