#!/usr/bin/env bash
# Session 22, GPU call 13 (issue 10): the 16-bit forward's new default for
# rows of 129-512 columns (512-thread CTAs): the default against the space
# (LayerNorm bf16/fp16, RMSNorm bf16), then gpu_test but its two whole-space
# tests (the defaults' tests) and gpu_norms_test's variants.
set -uo pipefail
D=$PWD/.devbuild/s22
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s() { echo "=== $1 ($(date +%T))"; }
s sweeps
LNTUNE_CACHE=off timeout 100 $D/lntune_sweep fwd bf16 200 256 512 2>&1 | tail -3
LNTUNE_CACHE=off timeout 100 $D/lntune_sweep fwd fp16 256 512 2>&1 | tail -2
LNTUNE_CACHE=off LNTUNE_SWEEP_OP=rmsnorm timeout 100 $D/lntune_sweep fwd bf16 256 512 2>&1 | tail -2
s tests
LNTUNE_CACHE=off timeout 200 $D/gpu_test --gtest_brief=1 --gtest_filter='-Gpu.EverySearchSpaceConfigIsCorrect:Gpu.WideBackward*' 2>&1 | grep -E "PASSED|FAILED|Failure" | head -5
LNTUNE_CACHE=off timeout 200 $D/gpu_norms_test --gtest_brief=1 --gtest_filter='*Variants*' 2>&1 | grep -E "PASSED|FAILED|Failure" | head -5
s done
