#!/usr/bin/env bash
# Session 27, GPU call 7 (review, f68a8f0): gpu_norms_test's Variants with
# the tuned switch restored by a guard: the first 40 variants, then the
# GpuNorms tests after them in the same process.
set -uo pipefail
D=$PWD/.devbuild/s27
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
export LNTUNE_CACHE=off
f=$($D/gpu_norms_test --gtest_list_tests --gtest_filter='Norms/Variants.*' | grep -E '^  ' | head -40 | sed 's/^ *//; s/ .*//' | sed 's|^|Norms/Variants.|' | paste -sd: -)
timeout 400 $D/gpu_norms_test --gtest_brief=1 --gtest_filter="$f:GpuNorms.*" > $O/gpu_norms_review.log 2>&1; echo "rc=$?"; grep -hE "PASSED|FAILED" $O/gpu_norms_review.log | head
