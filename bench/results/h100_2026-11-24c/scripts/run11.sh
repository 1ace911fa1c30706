#!/usr/bin/env bash
# Session 21, GPU call 11: the tuner's GPU tests at the final tuner code (c980dbd and after).
set -uo pipefail
D=$PWD/.devbuild/s21
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
LNTUNE_CACHE=off timeout 150 $D/tuner_gpu_test --gtest_brief=1 2>&1 | tail -4; echo "tuner_gpu_test rc=${PIPESTATUS[0]}"
LNTUNE_CACHE=off timeout 90 $D/tuner_devices_gpu_test --gtest_brief=1 2>&1 | tail -4; echo "tuner_devices_gpu_test rc=${PIPESTATUS[0]}"
