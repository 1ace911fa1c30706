#!/usr/bin/env bash
# Session 21, GPU call 12 (issue 10): every config of the space for the
# fp32 backward at N <= 2048 and the 16-bit backward at N = 8192, where the
# defaults reach 82-87% of copy (call 8), against the copy.
set -uo pipefail
D=$PWD/.devbuild/s21
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
LNTUNE_CACHE=off timeout 200 $D/lntune_sweep bwd fp32 256 512 1024 2048 2>&1 | tail -6
LNTUNE_CACHE=off timeout 150 $D/lntune_sweep bwd bf16 8192 2>&1 | tail -3
