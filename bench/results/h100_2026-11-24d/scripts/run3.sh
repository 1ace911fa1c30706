#!/usr/bin/env bash
# Session 22, GPU call 3 (issue 10): the wide backward keeping x's stages
# alone, now with the weight in registers (3 stages of fp32 16384-column
# slabs), against 2 stages with the weight slab: correctness, then the sweep.
set -uo pipefail
D=$PWD/.devbuild/s22
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s() { echo "=== $1 ($(date +%T))"; }
s wide_test
LNTUNE_CACHE=off timeout 200 $D/gpu_test --gtest_filter='Gpu.WideBackward*' 2>&1 | tail -3
s sweep_wide_fp32
LNTUNE_CACHE=off LNTUNE_SWEEP_EVERY=1 LNTUNE_SWEEP_WIDE=1 timeout 90 $D/lntune_sweep bwd fp32 262144 2>&1 | tee $O/sweep_wide_fp32.txt | grep -v "^   wide" | tail -14
LNTUNE_CACHE=off LNTUNE_SWEEP_WIDE=1 LNTUNE_SWEEP_OP=rmsnorm timeout 90 $D/lntune_sweep bwd fp32 262144 2>&1 | tail -1
s done
